"""What a threat pattern can read and must contain, read off its regex source.

The scanner's fast paths need facts about each pattern: how far a match can read around its
start, how many spaces it can hold, which literals every match contains and starts with.
Kept by hand, such numbers drift from the expressions they describe; here they are
computed from the expression itself. This module parses the subset of Python's regex
syntax the patterns use (literals, escapes, classes, groups of every kind, look-arounds,
anchors, greedy/lazy/possessive quantifiers) into a small tree and answers those questions
conservatively: an unknown shape gives "unbounded" / "no literal", never a wrong bound.
Syntax outside the subset (back-references, conditionals) raises `ValueError`.

Every analysis reads the expression as the scanner applies it: case-insensitive, on a
lower-case probe, so literals are returned lower-case.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TypeAlias

__all__ = [
    "Group",
    "Node",
    "boundary_led",
    "collapsed",
    "exact",
    "first_class",
    "heads",
    "literal_groups",
    "parse",
    "reads",
    "spaces",
    "width",
]

#: Sets of literals larger than this are not enumerated (the analysis gives up on them).
_MAX_STRINGS: Final = 64
#: Character classes with more members than this are not enumerated.
_MAX_CLASS: Final = 8
#: Fixed repeats longer than this are not enumerated.
_MAX_FIXED_REPEAT: Final = 16
#: Ranges wider than this are assumed to hold letters with two cases.
_MAX_CASE_SCAN: Final = 4096
_ALNUM_CHARS: Final = "abcdefghijklmnopqrstuvwxyz0123456789"


@dataclass(frozen=True, eq=False)  # identity: the analyses are cached per node
class Char:
    """One character: a literal, a class, ``.`` or a class escape (``\\s``)."""

    source: str
    #: The lower-case characters it matches when they are few and none is whitespace.
    members: frozenset[str] | None
    #: What it matches: these characters, ranges and class escapes (or all others).
    chars: frozenset[str] = frozenset()
    ranges: tuple[tuple[str, str], ...] = ()
    escapes: frozenset[str] = frozenset()
    negated: bool = False

    def holds(self, char: str) -> bool:
        """Whether it matches ``char`` (case-insensitively)."""
        return _holds(self.chars, self.ranges, self.escapes, self.negated, char)

    @functools.cached_property
    def space(self) -> bool:
        """Whether it matches a space."""
        return self.holds(" ")

    @functools.cached_property
    def alnum(self) -> bool:
        """Whether it matches each of ``[a-z0-9]``."""
        return all(self.holds(c) for c in _ALNUM_CHARS)

    @functools.cached_property
    def cased(self) -> bool:
        """Whether case can matter: it may match a letter that has another case."""
        if self.negated or self.escapes - {"s", "d"}:
            return True
        chars = set(self.chars)
        for low, high in self.ranges:
            if ord(high) - ord(low) > _MAX_CASE_SCAN:
                return True
            chars.update(map(chr, range(ord(low), ord(high) + 1)))
        return any(c.lower() != c or c.upper() != c for c in chars)


@functools.cache  # the same classes recur in every pattern (\s, [a-z0-9], [^\w\s])
def _holds(
    chars: frozenset[str],
    ranges: tuple[tuple[str, str], ...],
    escapes: frozenset[str],
    negated: bool,
    char: str,
) -> bool:
    for c in {char, char.lower(), char.upper()}:
        if c in chars or any(low <= c <= high for low, high in ranges):
            return not negated
        if any(_ESCAPE_TESTS[escape](c) for escape in escapes):
            return not negated
    return negated


@dataclass(frozen=True, eq=False)  # identity: the analyses are cached per node
class Text:
    """Literal characters in a row, none of them whitespace (lower case)."""

    text: str


@dataclass(frozen=True, eq=False)  # identity: the analyses are cached per node
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True, eq=False)  # identity: the analyses are cached per node
class Alt:
    branches: tuple[Node, ...]


@dataclass(frozen=True, eq=False)  # identity: the analyses are cached per node
class Repeat:
    item: Node
    low: int
    high: int | None  # None: unbounded


@dataclass(frozen=True, eq=False)  # identity: the analyses are cached per node
class Look:
    item: Node
    behind: bool
    negative: bool


@dataclass(frozen=True, eq=False)  # identity: the analyses are cached per node
class Anchor:
    """A zero-width test that reads the character before the position (``^``, ``$``, ``\\b``)."""

    source: str


Node: TypeAlias = Char | Text | Seq | Alt | Repeat | Look | Anchor
#: Literals of which every match holds one, and the furthest a literal starts from the start.
Group: TypeAlias = tuple[frozenset[str], int | None]

_CLASS_ESCAPES: Final = frozenset("sSwWdD")
#: What each class escape matches.
_ESCAPE_TESTS: Final[dict[str, Callable[[str], bool]]] = {
    "s": str.isspace,
    "S": lambda c: not c.isspace(),
    "w": lambda c: c.isalnum() or c == "_",
    "W": lambda c: not (c.isalnum() or c == "_"),
    "d": str.isdigit,
    "D": lambda c: not c.isdigit(),
}
_QUANTIFIER_RE: Final = re.compile(r"\{(\d*)(,?)(\d*)\}")
_FLAGS_RE: Final = re.compile(r"[aiLmsux-]*")
#: Characters that stand for themselves (whitespace is kept apart: it is never a literal).
_PLAIN_RE: Final = re.compile(r"[^\\\[\](){}|.^$*+?\s]{2,}")
_ANCHOR_ESCAPES: Final = frozenset("bBAZ")
_CHAR_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0

    def error(self, message: str) -> ValueError:
        return ValueError(f"{message} at {self.pos} in {self.source[:60]!r}…")

    def peek(self, text: str) -> bool:
        return self.source.startswith(text, self.pos)

    def alternation(self) -> Node:
        branches = [self.sequence()]
        while self.peek("|"):
            self.pos += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else Alt(tuple(branches))

    def sequence(self) -> Node:
        items: list[Node] = []
        while self.pos < len(self.source) and self.source[self.pos] not in "|)":
            plain = _PLAIN_RE.match(self.source, self.pos)
            if plain is not None:
                # All but the last character: a quantifier after it applies to it alone.
                self.pos = plain.end() - 1
                text = Text(plain.group()[:-1].lower())
                if items and isinstance(items[-1], Text):
                    text = Text(items[-1].text + text.text)
                    items.pop()
                items.append(text)
            atom = self.atom()
            if atom is None:
                continue
            item = self.quantified(atom)
            if item is atom and isinstance(atom, Text) and items and isinstance(items[-1], Text):
                items[-1] = Text(items[-1].text + atom.text)  # one node per literal run
            else:
                items.append(item)
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def atom(self) -> Node | None:
        char = self.source[self.pos]
        if char == "(":
            return self.group()
        if char == "[":
            return self.char_class()
        self.pos += 1
        if char == ".":
            return Char(".", None, frozenset("\n"), negated=True)
        if char in "^$":
            return Anchor(char)
        if char == "\\":
            return self.escape()
        if char in "*+?":
            raise self.error("nothing to repeat")
        return _literal(char)

    def escape(self) -> Char | Text | Anchor:
        char = self.source[self.pos]
        self.pos += 1
        if char in _CLASS_ESCAPES:
            return Char("\\" + char, None, escapes=frozenset(char))
        if char in _ANCHOR_ESCAPES:
            return Anchor("\\" + char)
        if char.isdigit():
            raise self.error("back-references are outside the supported subset")
        return _literal(self.escaped_char(char))

    def escaped_char(self, char: str) -> str:
        """The character an escape (after its backslash) stands for."""
        sizes = {"x": 2, "u": 4, "U": 8}
        if char in sizes:
            digits = self.source[self.pos : self.pos + sizes[char]]
            self.pos += sizes[char]
            return chr(int(digits, 16))
        return _CHAR_ESCAPES.get(char, char)

    def group(self) -> Node | None:
        self.pos += 1  # "("
        look: tuple[bool, bool] | None = None
        if self.peek("?"):
            self.pos += 1
            for prefix, kind in (("<=", (True, False)), ("<!", (True, True))):
                if self.peek(prefix):
                    look = kind
                    self.pos += 2
                    break
            else:
                head = self.source[self.pos]
                if head in "=!":
                    look = (False, head == "!")
                    self.pos += 1
                elif head in ":>":
                    self.pos += 1
                else:
                    flags = _FLAGS_RE.match(self.source, self.pos)
                    assert flags is not None  # the pattern matches the empty string
                    self.pos = flags.end()
                    if self.peek(")"):  # a global flag such as "(?m)": no node
                        self.pos += 1
                        return None
                    if not self.peek(":"):
                        raise self.error("group syntax outside the supported subset")
                    self.pos += 1
        inner = self.alternation()
        if not self.peek(")"):
            raise self.error("missing )")
        self.pos += 1
        if look is not None:
            return Look(inner, behind=look[0], negative=look[1])
        return inner

    def char_class(self) -> Node:
        start = self.pos
        self.pos += 1  # "["
        negated = self.peek("^")
        if negated:
            self.pos += 1
        members: set[str] = set()
        ranges: list[tuple[str, str]] = []
        escapes: set[str] = set()
        enumerable = not negated
        first = True
        while first or not self.peek("]"):
            if self.pos >= len(self.source):
                raise self.error("missing ]")
            first = False
            char = self.source[self.pos]
            self.pos += 1
            if char == "\\":
                escaped = self.source[self.pos]
                self.pos += 1
                if escaped in _CLASS_ESCAPES:
                    escapes.add(escaped)
                    enumerable = False
                    continue
                char = self.escaped_char(escaped)
            if self.peek("-") and not self.peek("-]"):
                enumerable = False  # a range: read past its end character
                self.pos += 1
                end = self.source[self.pos]
                self.pos += 1
                if end == "\\":
                    letter = self.source[self.pos]
                    self.pos += 1
                    end = self.escaped_char(letter)
                ranges.append((char, end))
                continue
            members.add(char)
        self.pos += 1  # "]"
        source = self.source[start : self.pos]
        folded = frozenset(m.lower() for m in members)
        small = enumerable and len(folded) <= _MAX_CLASS
        exact = folded if small and not any(m.isspace() for m in folded) else None
        return Char(source, exact, frozenset(members), tuple(ranges), frozenset(escapes), negated)

    def quantified(self, atom: Node) -> Node:
        while True:
            bounds = self.bounds()
            if bounds is None:
                return atom
            if self.peek("?") or self.peek("+"):  # lazy / possessive: same reads
                self.pos += 1
            atom = Repeat(atom, *bounds)

    def bounds(self) -> tuple[int, int | None] | None:
        if self.pos >= len(self.source):
            return None
        char = self.source[self.pos]
        simple = {"*": (0, None), "+": (1, None), "?": (0, 1)}
        if char in simple:
            self.pos += 1
            return simple[char]
        found = _QUANTIFIER_RE.match(self.source, self.pos)
        if char != "{" or found is None or not (found.group(1) or found.group(3)):
            return None
        self.pos = found.end()
        low = int(found.group(1) or 0)
        if not found.group(2):
            return low, low
        return low, int(found.group(3)) if found.group(3) else None


def _literal(char: str) -> Char | Text:
    lowered = char.lower()
    if lowered.isspace():
        return Char(re.escape(char), None, frozenset(char))
    return Text(lowered)


@functools.cache
def parse(source: str) -> Node:
    """The tree of a regex ``source`` (see the module docstring for the subset)."""
    parser = _Parser(source)
    node = parser.alternation()
    if parser.pos != len(source):
        raise parser.error("unbalanced )")
    return node


@functools.cache
def collapsed(node: Node) -> Node:
    """``node`` as it reads whitespace-collapsed text: an unbounded ``\\s`` run is one
    character there (``\\s+`` reads as ``\\s``, ``\\s*`` as ``\\s?``)."""
    if isinstance(node, Repeat):
        item = collapsed(node.item)
        if node.high is None and isinstance(item, Char) and item.source == r"\s":
            return Repeat(item, min(node.low, 1), 1)
        return Repeat(item, node.low, node.high)
    if isinstance(node, Seq):
        return Seq(tuple(collapsed(item) for item in node.items))
    if isinstance(node, Alt):
        return Alt(tuple(collapsed(branch) for branch in node.branches))
    if isinstance(node, Look):
        return Look(collapsed(node.item), node.behind, node.negative)
    return node


# --- reads ----------------------------------------------------------------------------------


@functools.cache
def reads(node: Node) -> tuple[int, int, int] | None:
    """``(width, reach, left)`` of ``node`` (``None``: unbounded).

    ``width``: the most characters it consumes; ``reach``: the furthest it reads past its
    start (a look-ahead reads ahead of the position it tests without consuming: one inside
    a repeat adds its reach once, not once per repetition); ``left``: how far before its
    start a look-behind or an anchor reads.
    """
    if isinstance(node, Char):
        return 1, 1, 0
    if isinstance(node, Text):
        return len(node.text), len(node.text), 0
    if isinstance(node, Anchor):
        return 0, 0, 1
    if isinstance(node, Look):
        inner = reads(node.item)
        if inner is None:
            return None
        if node.behind:
            return 0, 0, inner[0] + inner[2]
        return 0, inner[1], inner[2]
    if isinstance(node, Alt):
        parts = [reads(branch) for branch in node.branches]
        bounded = [p for p in parts if p is not None]
        if len(bounded) != len(parts):
            return None
        return (
            max(p[0] for p in bounded),
            max(p[1] for p in bounded),
            max(p[2] for p in bounded),
        )
    if isinstance(node, Repeat):
        inner = reads(node.item)
        if inner is None or node.high is None:
            return None
        if node.high == 0:
            return 0, 0, inner[2]
        return inner[0] * node.high, inner[0] * (node.high - 1) + inner[1], inner[2]
    total, reach, left = 0, 0, 0
    for item in node.items:
        part = reads(item)
        if part is None:
            return None
        reach = max(reach, total + part[1])
        total += part[0]
        left = max(left, part[2])
    return total, reach, left


def width(node: Node) -> int | None:
    """The most characters ``node`` consumes (``None``: unbounded)."""
    found = reads(node)
    return None if found is None else found[0]


@functools.cache
def spaces(node: Node, lookahead: bool = True) -> int | None:
    """The most characters of a match that can be a space (``None``: unbounded).

    ``lookahead``: count the characters look-aheads read as if they were consumed.
    """
    if isinstance(node, Char):
        return int(node.space)
    if isinstance(node, (Text, Anchor)):
        return 0
    if isinstance(node, Look):
        return spaces(node.item, lookahead) if lookahead and not node.behind else 0
    if isinstance(node, Alt):
        parts = [spaces(branch, lookahead) for branch in node.branches]
        bounded = [p for p in parts if p is not None]
        return max(bounded) if len(bounded) == len(parts) else None
    if isinstance(node, Repeat):
        inner = spaces(node.item, lookahead)
        if inner is None or (inner and node.high is None):
            return None
        return inner * node.high if inner and node.high is not None else 0
    total = 0
    for item in node.items:
        part = spaces(item, lookahead)
        if part is None:
            return None
        total += part
    return total


def boundary_led(node: Node) -> bool:
    """Whether every way through ``node`` starts with a negative look-behind that refuses
    each of ``[a-z0-9]`` (so no match starts glued to an ASCII letter or digit)."""
    if isinstance(node, Look):
        item = node.item
        return node.behind and node.negative and isinstance(item, Char) and item.alnum
    if isinstance(node, Alt):
        return all(boundary_led(branch) for branch in node.branches)
    if isinstance(node, Seq):
        return bool(node.items) and boundary_led(node.items[0])
    return False


def first_class(node: Node) -> Char | None:
    """A character class every match starts with (``None``: none known)."""
    if isinstance(node, Char):
        return node
    if isinstance(node, Repeat):
        return first_class(node.item) if node.low >= 1 else None
    if isinstance(node, Seq):
        for item in node.items:
            if not isinstance(item, (Look, Anchor)):  # zero width: the next item leads
                return first_class(item)
    return None


# --- literals -------------------------------------------------------------------------------


def _product(left: frozenset[str], right: frozenset[str]) -> frozenset[str] | None:
    if len(left) * len(right) > _MAX_STRINGS:
        return None
    return frozenset(a + b for a in left for b in right)


@functools.cache
def exact(node: Node) -> frozenset[str] | None:
    """Every string ``node`` can match (lower case), when they are few and hold no
    whitespace; zero-width tests match the empty string. ``None`` otherwise."""
    if isinstance(node, Char):
        return node.members
    if isinstance(node, Text):
        return frozenset((node.text,))
    if isinstance(node, (Anchor, Look)):
        return frozenset(("",))
    if isinstance(node, Alt):
        found: set[str] = set()
        for branch in node.branches:
            strings = exact(branch)
            if strings is None:
                return None
            found |= strings
        return frozenset(found) if len(found) <= _MAX_STRINGS else None
    if isinstance(node, Repeat):
        inner = exact(node.item)
        if inner is None or node.high is None or node.high > _MAX_FIXED_REPEAT:
            return None
        if node.low == 0 and node.high == 1:
            return inner | {""}
        if node.low != node.high:
            return None
        out: frozenset[str] | None = frozenset(("",))
        for _ in range(node.low):
            out = _product(out, inner) if out is not None else None
        return out
    out = frozenset(("",))
    for item in node.items:
        strings = exact(item)
        joined = None if strings is None else _product(out, strings)
        if joined is None:
            return None
        out = joined
    return out


def _unprefixed(strings: frozenset[str]) -> frozenset[str]:
    """``strings`` without those starting with another one (either is found where the
    longer is, at the same offset)."""
    kept: list[str] = []
    for string in sorted(strings):  # a prefix sorts first, and so does all that holds it
        if not kept or not string.startswith(kept[-1]):
            kept.append(string)
    return frozenset(kept)


def score(literals: frozenset[str]) -> int:
    """How selective a literal group is: the length of its shortest literal."""
    return min(map(len, literals))


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


@functools.cache
def literal_groups(node: Node) -> list[Group]:
    """Literal groups every match of ``node`` holds, in order: each ``(literals, offset)``
    says the match (or a look-ahead of it) holds one of ``literals`` starting at most
    ``offset`` characters after the match start (``None``: unbounded)."""
    if isinstance(node, Look):
        return [] if node.behind or node.negative else literal_groups(node.item)
    strings = exact(node)
    if strings is not None:
        return [] if "" in strings else [(_unprefixed(strings), 0)]
    if isinstance(node, Alt):
        picks = [_best(literal_groups(branch)) for branch in node.branches]
        if any(pick is None for pick in picks):
            return []
        chosen = [pick for pick in picks if pick is not None]
        literals = _unprefixed(frozenset().union(*(lits for lits, _ in chosen)))
        offsets = [offset for _, offset in chosen]
        return [(literals, None if None in offsets else max(o for o in offsets if o is not None))]
    if isinstance(node, Repeat):
        return literal_groups(node.item) if node.low >= 1 else []
    if not isinstance(node, Seq):
        return []
    groups: list[Group] = []
    prefix: int | None = 0  # the most characters the items so far consume
    run, run_start = frozenset(("",)), prefix

    def flush() -> None:
        if "" not in run:
            groups.append((_unprefixed(run), run_start))

    for item in node.items:
        if isinstance(item, Look):  # zero width: the run of literals goes on past it
            groups.extend((lits, _add(prefix, off)) for lits, off in literal_groups(item))
        strings = exact(item)
        joined = None if strings is None else _product(run, strings)
        if joined is not None:
            run = joined
        else:
            flush()
            groups.extend((lits, _add(prefix, off)) for lits, off in literal_groups(item))
        prefix = _add(prefix, width(item))
        if joined is None:
            run, run_start = frozenset(("",)), prefix
    flush()
    return groups


def _best(groups: list[Group]) -> Group | None:
    """The most selective of ``groups`` (the earliest among equals)."""
    best: Group | None = None
    for group in groups:
        if best is None or score(group[0]) > score(best[0]):
            best = group
    return best


@functools.cache
def heads(node: Node) -> frozenset[str] | None:
    """Literals of which every match of ``node`` starts with one (``None``: not known)."""
    if isinstance(node, Alt):
        found: set[str] = set()
        for branch in node.branches:
            branch_heads = heads(branch)
            if branch_heads is None:
                return None
            found |= branch_heads
        return _unprefixed(frozenset(found))
    items = node.items if isinstance(node, Seq) else (node,)
    run = frozenset(("",))
    for item in items:
        strings = exact(item)
        joined = None if strings is None else _product(run, strings)
        if joined is None:
            if "" not in run:
                break
            if run != frozenset(("",)):
                return None  # an optional start: which literal leads is not known
            inner = heads(item) if isinstance(item, (Alt, Seq)) else None
            if inner is None:
                return None
            return _unprefixed(inner)
        run = joined
    if "" in run:
        return None
    return _unprefixed(run)
