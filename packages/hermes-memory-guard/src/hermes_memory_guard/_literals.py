"""Where the threat scanner's keywords occur in a text: one Aho–Corasick pass per text.

The scanner decides most patterns from where their keywords are (a pattern whose keywords
are absent cannot match; the others are tried only at their keywords). Looking each keyword
up with ``str.find`` reads the whole text once per keyword — about a hundred passes over a
2 KB note. :class:`LiteralIndex` reads it once, with ``pyahocorasick``'s automaton (C), and
answers every later question from the positions it recorded.

Literals are matched exactly: a space in a literal matches one space, so literals holding
whitespace are only looked up in whitespace-collapsed text (the scanner checks that).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from typing import Final, Protocol

__all__ = ["Keywords", "LiteralIndex"]

#: Above this many inserted spaces, an index is built afresh rather than mapped.
_FEW_INSERTIONS: Final = 64

#: What ``[a-z0-9]`` matches (in a lower-case probe).
_ALNUM: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


class _Automaton(Protocol):
    """The part of ``ahocorasick.Automaton`` used here (the package ships no types)."""

    def iter(self, text: str) -> Iterator[tuple[int, str]]: ...


class Keywords:
    """A fixed set of literals, compiled once for :class:`LiteralIndex`."""

    def __init__(self, literals: Iterable[str]) -> None:
        import ahocorasick  # type: ignore[import-not-found]  # a C module without stubs

        automaton = ahocorasick.Automaton()
        with_space = []
        for literal in dict.fromkeys(literals):
            if not literal:
                raise ValueError("an empty literal would match everywhere")
            automaton.add_word(literal, literal)
            if " " in literal:
                with_space.append((literal, [i for i, c in enumerate(literal) if c == " "]))
        automaton.make_automaton()
        self.automaton: _Automaton = automaton
        #: The literals holding a space, with the offsets of their spaces.
        self.with_space: tuple[tuple[str, list[int]], ...] = tuple(with_space)

    def index(self, probe: str) -> LiteralIndex:
        """Where these literals occur in ``probe`` (one pass of the automaton)."""
        at: dict[str, list[int]] = {}
        for end, literal in self.automaton.iter(probe):
            start = end - len(literal) + 1
            found = at.get(literal)
            if found is None:
                at[literal] = [start]
            else:
                found.append(start)  # the automaton reports ends in increasing order
        return LiteralIndex(probe, self, at)


class LiteralIndex:
    """The start offsets of every occurrence (overlaps included) of each literal in a probe.

    Made by :meth:`Keywords.index`; literals not among the keywords are reported absent, so
    every literal asked about must be one of them.
    """

    __slots__ = ("_at", "_keywords", "probe")

    def __init__(self, probe: str, keywords: Keywords, at: dict[str, list[int]]) -> None:
        self.probe = probe
        self._keywords = keywords
        self._at = at

    def with_spaces(self, probe: str, inserted: tuple[int, ...]) -> LiteralIndex | None:
        """The index of ``probe`` if it is this probe with a space inserted at each offset.

        ``inserted``: increasing offsets in ``probe``. An occurrence there that holds none
        of the inserted spaces is an occurrence here, shifted by the insertions before it;
        an occurrence here that an insertion falls inside is gone; a new one must hold an
        inserted space, so only literals with a space can gain one, and each is checked
        where it would lie. ``None`` when ``probe`` is not this probe with those spaces, or
        when the insertions are so many (more than :data:`_FEW_INSERTIONS`) that mapping from
        Python would cost more than a fresh automaton pass.
        """
        if len(inserted) > _FEW_INSERTIONS:
            return None
        cuts = [position - k for k, position in enumerate(inserted)]  # offsets here
        old = self.probe
        pieces: list[str] = []
        previous = 0
        for cut in cuts:
            pieces += (old[previous:cut], " ")
            previous = cut
        pieces.append(old[previous:])
        if "".join(pieces) != probe:
            return None
        at: dict[str, list[int]] = {}
        for literal, positions in self._at.items():
            size = len(literal)
            moved = []
            for position in positions:
                shift = bisect.bisect_right(cuts, position)
                if shift < len(cuts) and cuts[shift] < position + size:
                    continue  # a space was inserted inside this occurrence
                moved.append(position + shift)
            if moved:
                at[literal] = moved
        for literal, spaces in self._keywords.with_space:
            gained = {
                start
                for position in inserted
                for offset in spaces
                if (start := position - offset) >= 0 and probe.startswith(literal, start)
            }
            if gained:
                at[literal] = sorted(gained.union(at.get(literal, ())))
        return LiteralIndex(probe, self._keywords, at)

    def present(self, literals: Iterable[str]) -> list[str]:
        """Those of ``literals`` that occur (a large set is intersected from the other side)."""
        at = self._at
        if isinstance(literals, frozenset | set) and len(literals) > len(at):
            return [literal for literal in at if literal in literals]
        return [literal for literal in literals if literal in at]

    def starting_in(self, windows: Iterable[tuple[int, int]]) -> set[str]:
        """The literals with an occurrence starting in one of the ``[low, high]`` windows."""
        windows = tuple(windows)
        found = set()
        for literal, positions in self._at.items():
            for low, high in windows:
                index = bisect.bisect_left(positions, low)
                if index < len(positions) and positions[index] <= high:
                    found.add(literal)
                    break
        return found

    def has(self, literal: str) -> bool:
        """Whether ``literal`` occurs in the probe."""
        return literal in self._at

    def has_any(self, literals: Iterable[str]) -> bool:
        """Whether one of ``literals`` occurs in the probe."""
        at = self._at
        return any(literal in at for literal in literals)

    def count(self, literals: Iterable[str]) -> int:
        """How many occurrences ``literals`` have (overlapping ones counted)."""
        at = self._at
        return sum(len(at[literal]) for literal in self.present(literals))

    def first(self, literal: str, start: int) -> int:
        """The first occurrence of ``literal`` starting at ``start`` or later, or ``-1``."""
        found = self._at.get(literal)
        if found is None:
            return -1
        index = bisect.bisect_left(found, start)
        return found[index] if index < len(found) else -1

    def last(self, literal: str) -> int:
        """The start of the last occurrence of ``literal``, or ``-1``."""
        found = self._at.get(literal)
        return found[-1] if found else -1

    def starts(
        self, literals: Iterable[str], start: int = 0, end: int = -1, boundary: bool = False
    ) -> list[int]:
        """Sorted distinct starts of the occurrences lying wholly in ``probe[start:end]``.

        With ``boundary``, an occurrence of a literal that begins with an ASCII character is
        left out when it follows an ASCII letter or digit (``[a-z0-9]`` in the probe).
        """
        at = self._at
        probe = self.probe
        if end < 0:
            end = len(probe)
        found: list[int] = []
        for literal in self.present(literals):
            positions = at[literal]
            low = bisect.bisect_left(positions, start) if start else 0
            high = bisect.bisect_right(positions, end - len(literal))
            if low >= high:
                continue
            chosen = positions[low:high]
            if boundary and literal[0].isascii():
                chosen = [s for s in chosen if s == 0 or probe[s - 1] not in _ALNUM]
            found.extend(chosen)
        if len(found) > 1:
            found = sorted(set(found))
        return found

    def spans(self, literals: Iterable[str], boundary: bool = False) -> list[tuple[int, int]]:
        """``(start, end)`` of the longest occurrence at each start :meth:`starts` reports."""
        probe = self.probe
        longest: dict[int, int] = {}
        for literal in self.present(literals):
            size = len(literal)
            glued = boundary and literal[0].isascii()
            for start in self._at[literal]:
                if glued and start and probe[start - 1] in _ALNUM:
                    continue
                if longest.get(start, 0) < start + size:
                    longest[start] = start + size
        return sorted(longest.items())
