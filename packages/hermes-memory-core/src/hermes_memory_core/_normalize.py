"""Text normalisation for threat matching: see through invisible and look-alike characters.

The threat patterns are written for plain lower-case text. Attackers disguise a payload so
that it still reads the same to a model (or a human) but no longer matches a plain regex:

* look-alike letters from other scripts (Cyrillic ``о`` for Latin ``o``, mathematical
  alphabets, full-width forms);
* invisible characters inside or between words (soft hyphen, U+2061, U+034F, bidi marks,
  variation selectors, Hangul fillers);
* a whole payload written in Unicode *tag* characters (U+E0020–U+E007E mirror printable
  ASCII and render as nothing);
* combining marks stacked on letters (``ìgnöre``).

:func:`matching_forms` returns the text the patterns run on, built in this order:

1. runs of tag characters are decoded to ASCII and set off by spaces (other ignorable
   characters inside a run are dropped, so they cannot split the hidden text);
2. NFKC;
3. default-ignorable and format (``Cf``) code points are removed, or, in a second form that
   is only built when such a character was present, replaced by a space (an invisible
   character may stand in for a letter boundary *or* for the space between words); when
   Hangul fillers (drawn as blanks) and other invisibles are mixed, a third form reads the
   fillers as spaces and removes the rest; U+2800 BRAILLE PATTERN BLANK counts as a space;
4. combining diacritical marks are removed (NFD, drop the marks, NFC);
5. a restricted TR39 *skeleton*: every non-ASCII character whose confusable prototype in
   Unicode's ``confusables.txt`` is ASCII is replaced by that prototype (lower case). ASCII
   itself is never changed (``0`` stays ``0``, ``1`` stays ``1``), and CJK, kana, Hangul and
   Bopomofo are left alone, so Chinese, Japanese and Korean text keeps its meaning;
6. case folding (``str.casefold``), then the skeleton once more for small letters that only
   folding produced;
7. characters whose prototype is ``l`` (``ǀ``, ``∣``, ``ℓ``…) also stand in for a capital
   ``I``: when one occurs, a further form reads them as ``i``.

ASCII-only text takes a fast path: its only form is ``text.lower()``.

The confusable data comes from the ``confusable-homoglyphs`` package and is read on the first
call that needs it, so importing this module costs nothing.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import logging
import re
import unicodedata
from collections.abc import Iterable
from typing import Final, NamedTuple, cast

__all__ = [
    "PRINTABLE_TAG_RE",
    "TAG_PAYLOAD_RE",
    "Reading",
    "fold_keyword",
    "matching_forms",
    "matching_readings",
]

logger = logging.getLogger(__name__)

#: Default_Ignorable_Code_Point (Unicode DerivedCoreProperties) plus the other format (Cf)
#: characters, as regex class ranges. tests/core/test_threats_obfuscation.py checks that every
#: Cf code point of this Python's Unicode database is covered.
_IGNORABLE_RANGES: Final[tuple[tuple[int, int], ...]] = (
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x0600, 0x0605),  # Arabic number signs (Cf)
    (0x061C, 0x061C),  # Arabic letter mark
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),  # Hangul choseong / jungseong fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian free variation selectors, vowel separator
    (0x200B, 0x200F),  # zero-width space/non-joiner/joiner, LRM, RLM
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, bidi isolates, deprecated formats
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFEFF, 0xFEFF),  # zero-width no-break space / BOM
    (0xFFA0, 0xFFA0),  # half-width Hangul filler
    (0xFFF0, 0xFFFB),  # unassigned specials, interlinear annotation
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1345F),  # Egyptian hieroglyph format controls
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol format controls
    (0xE0000, 0xE0FFF),  # tags, variation selectors supplement, reserved
)

#: Blocks never folded by the skeleton: CJK ideographs and radicals, CJK symbols, kana,
#: Bopomofo, Hangul, half-width/full-width forms (NFKC has already handled those).
_CJK_RANGES: Final[tuple[tuple[int, int], ...]] = (
    (0x1100, 0x11FF),
    (0x2E80, 0x2FFF),
    (0x3000, 0x33FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7FF),
    (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFFEF),
    (0x1B000, 0x1B16F),
    (0x20000, 0x3FFFF),
)

#: Combining diacritical marks removed in step 5 (Latin, Cyrillic, extended, for symbols,
#: half marks). Kana voicing marks (U+3099, U+309A) are not in these blocks.
_MARK_RANGES: Final[tuple[tuple[int, int], ...]] = (
    (0x0300, 0x036F),
    (0x0483, 0x0489),
    (0x1AB0, 0x1AFF),
    (0x1DC0, 0x1DFF),
    (0x20D0, 0x20FF),
    (0xFE20, 0xFE2F),
)


def _char_class(ranges: Iterable[tuple[int, int]]) -> str:
    parts = []
    for low, high in ranges:
        parts.append(
            re.escape(chr(low)) if low == high else f"{re.escape(chr(low))}-{re.escape(chr(high))}"
        )
    return "[" + "".join(parts) + "]"


_IGNORABLE_CLASS: Final = _char_class(_IGNORABLE_RANGES)
_IGNORABLE_RE: Final = re.compile(_IGNORABLE_CLASS + "+")
_BETWEEN_WORDS_RE: Final = re.compile(r"(?<=\S)" + _IGNORABLE_CLASS + r"+(?=\S)")
#: Ignorable characters that are drawn as a blank (Hangul fillers).
_FILLERS: Final = frozenset("\u115f\u1160\u3164\uffa0")
_TAG_LOW, _TAG_HIGH = 0xE0000, 0xE007F
#: A run of tag characters, possibly interleaved with other ignorable characters.
_TAG_RUN_RE: Final = re.compile(f"[\U000e0000-\U000e007f]{_IGNORABLE_CLASS}*+")
#: Any tag character (a one-range class: as cheap to scan as a BMP class).
_TAG_CHAR_RE: Final = re.compile("[\U000e0000-\U000e007f]")
#: A printable tag character (what :data:`TAG_PAYLOAD_RE` is made of).
PRINTABLE_TAG_RE: Final = re.compile("[\U000e0020-\U000e007e]")
_MARKS_RE: Final = re.compile(_char_class(_MARK_RANGES) + "+")
#: Marks where an ignorable run was read as a space while the forms are built: a Unicode
#: noncharacter (never assigned, NFKC-stable, no case, no confusable prototype).
_SPACE_STAND_IN: Final = "\ufdd0"
_ASCII_RUNS_RE: Final = re.compile("[\x00-\x7f]+")
#: Per-character results kept (each cache is cleared when it reaches this size).
_CHAR_CACHE: Final = 1 << 16
#: At most this many distinct characters are replaced one by one (one pass each); more,
#: and the step runs on the whole text in one pass.
_MAX_REPLACED: Final = 24

#: Eight or more printable tag characters (optionally interleaved with ignorable ones): a
#: hidden ASCII payload. Flag emoji use at most six tag letters (``gbsct`` + cancel tag).
TAG_PAYLOAD_RE: Final = re.compile(
    f"[\U000e0020-\U000e007e](?:{_IGNORABLE_CLASS}*?[\U000e0020-\U000e007e]){{7}}"
)

#: A minimal table used only when the confusable data cannot be read (broken install).
_FALLBACK: Final[dict[str, str]] = {
    "а": "a", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j", "ӏ": "i",
    "о": "o", "р": "p", "ԛ": "q", "ѕ": "s", "ԝ": "w", "х": "x", "у": "y", "г": "r",
    "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "ı": "i", "ɡ": "g", "ɑ": "a",
}  # fmt: skip


def _in_ranges(code: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(low <= code <= high for low, high in ranges)


def _load_confusables() -> dict[str, str]:
    """``{non-ASCII char: ASCII prototype}`` from the confusable-homoglyphs data file."""
    try:
        data_file = importlib.resources.files("confusable_homoglyphs") / "confusables.json"
        data = json.loads(data_file.read_text(encoding="utf-8"))
    except (ImportError, OSError, ValueError) as exc:
        logger.warning(
            "threat scanner: confusable data unavailable (%s); using a minimal built-in table "
            "(reinstall confusable-homoglyphs)",
            exc,
        )
        return dict(_FALLBACK)
    direct: dict[str, str] = {}
    derived: dict[str, str] = {}
    for char, entries in data.items():
        if len(char) != 1 or char.isascii() or len(entries) != 1:
            continue  # prototypes list all their look-alikes; a look-alike lists one prototype
        target = unicodedata.normalize("NFKC", entries[0]["c"].replace("\u200e", "")).casefold()
        if not target or not target.isascii() or not target.isprintable() or " " in target:
            continue
        direct[char] = target
        folded = char.casefold()
        if len(folded) == 1 and not folded.isascii():
            derived.setdefault(folded, target)
    table = {**derived, **direct}
    return {
        char: target
        for char, target in table.items()
        if not _in_ranges(ord(char), _CJK_RANGES)
        and not _in_ranges(ord(char), _IGNORABLE_RANGES)
        and not _in_ranges(ord(char), _MARK_RANGES)
    }


def _ranges(chars: Iterable[str]) -> list[tuple[int, int]]:
    """Sorted code points merged into ``(low, high)`` runs."""
    runs: list[tuple[int, int]] = []
    for code in sorted({ord(c) for c in chars}):
        if runs and runs[-1][1] == code - 1:
            runs[-1] = (runs[-1][0], code)
        else:
            runs.append((code, code))
    return runs


def _bmp_class_regex(chars: Iterable[str]) -> re.Pattern[str]:
    """A character-class regex for the BMP members of ``chars``.

    Astral members are looked up one by one (see :data:`_ASTRAL_RE`): the regex engine tests a
    BMP class with a bitmap but walks a list of astral ranges at every position, which is a
    dozen times slower, and astral characters are rare after NFKC.
    """
    runs = [r for r in _ranges(chars) if r[1] <= 0xFFFF] or [(0xFFFF, 0xFFFF)]
    return re.compile(_char_class(runs))


_ASTRAL_RE: Final = re.compile("[\U00010000-\U0010ffff]")


class _Skeleton:
    """The confusable table compiled into class regexes, plus the ``l``/``I`` look-alikes."""

    def __init__(self, table: dict[str, str]) -> None:
        # The stand-in for an inserted space must pass through unchanged (it is not in
        # confusables.txt; this keeps that true whatever the data file holds).
        self.table = {c: t for c, t in table.items() if c != _SPACE_STAND_IN}
        table = self.table
        self.regex = _bmp_class_regex(table)
        self.l_like = frozenset(c for c, t in table.items() if t == "l")
        self.l_regex = _bmp_class_regex(self.l_like)
        self._folded: tuple[dict[str, str | None], dict[str, str | None]] = ({}, {})
        #: Characters that steps 4 to 6 leave as they are (most CJK): skipped at once.
        self.plain: set[str] = set()

    def learn(self, chars: Iterable[str]) -> None:
        """Remember which of ``chars`` steps 4 to 6 leave unchanged (whatever ``l_as_i``)."""
        if len(self.plain) >= _CHAR_CACHE:
            self.plain.clear()
        self.plain.update(
            c
            for c in chars
            if _without_marks(c) == c and self.fold_char(c, False) == c == self.fold_char(c, True)
        )

    def has_l_like(self, text: str) -> bool:
        """Whether ``text`` holds a character that reads as ``l`` (and maybe ``I``)."""
        if self.l_regex.search(text) is not None:
            return True
        return any(c in self.l_like for c in _ASTRAL_RE.findall(text))

    def apply(self, text: str, l_as_i: bool = False) -> str:
        """``text`` with every confusable replaced by its ASCII prototype."""
        table = self.table
        l_like = self.l_like
        if l_as_i:

            def swap(match: re.Match[str]) -> str:
                return "i" if match[0] in l_like else table[match[0]]
        else:

            def swap(match: re.Match[str]) -> str:
                return table[match[0]]

        text = self.regex.sub(swap, text)
        if _ASTRAL_RE.search(text) is not None:
            text = _ASTRAL_RE.sub(lambda m: swap(m) if m[0] in table else m[0], text)
        return text

    def fold_char(self, char: str, l_as_i: bool) -> str | None:
        """Steps 5 and 6 for one non-ASCII character, ``None`` if it cannot stand alone.

        The steps map each character on its own (the skeleton is a table, case folding has
        no context), so a text can be folded by replacing each distinct character with its
        result, then folding the ASCII letters, if replacing in any order gives the same
        text: the result must not change when folded again, and every non-ASCII character
        in it must fold to itself. A character where that fails is answered ``None`` (the
        caller then runs the steps on the whole text).
        """
        cache = self._folded[l_as_i]
        try:
            return cache[char]
        except KeyError:
            pass
        form = self.apply(char, l_as_i).casefold()
        if not form.isascii():
            form = self.apply(form, l_as_i)
        stable = form.casefold() == form and all(
            c.isascii() or self.apply(c, l_as_i).casefold() == c for c in form
        )
        if len(cache) >= _CHAR_CACHE:
            cache.clear()
        cache[char] = result = form if stable else None
        return result


@functools.cache
def _skeleton() -> _Skeleton:
    return _Skeleton(_load_confusables())


def _decode_tags(match: re.Match[str]) -> str:
    chars = [
        chr(code - _TAG_LOW)
        for code in map(ord, match[0])
        if _TAG_LOW + 0x20 <= code <= _TAG_LOW + 0x7E
    ]
    return " " + "".join(chars) + " " if chars else ""


def _strip_marks(text: str) -> str:
    """Step 4: remove combining marks (NFD, drop them, NFC)."""
    decomposed = unicodedata.normalize("NFD", text)
    if _MARKS_RE.search(decomposed) is None:
        return text
    return unicodedata.normalize("NFC", _MARKS_RE.sub("", decomposed))


@functools.lru_cache(maxsize=_CHAR_CACHE)
def _without_marks(char: str) -> str:
    """One character with the combining marks of its decomposition removed (NFC again)."""
    decomposed = unicodedata.normalize("NFD", char)
    if _MARKS_RE.search(decomposed) is None:
        return char
    return unicodedata.normalize("NFC", _MARKS_RE.sub("", decomposed))


def _overlap(replacements: list[tuple[str, str]]) -> bool:
    """Whether replacing one character after another could go wrong or take long.

    True when a replacement text holds a character that is itself replaced (a later
    replacement would change it), or when there are so many that a pass per character would
    cost more than the whole-text computation (each pass reads the whole text).
    """
    if len(replacements) > _MAX_REPLACED:
        return True
    replaced = {char for char, _ in replacements}
    return any(not replaced.isdisjoint(new) for _, new in replacements)


def _finish_whole(base: str, skeleton: _Skeleton) -> list[str]:
    """Steps 4 to 7 for one base text, run on the whole text (see :func:`_finish`)."""
    base = _strip_marks(base)
    if base.isascii():
        return [base.casefold()]
    # The skeleton runs before case folding (Greek capital Nu looks like N, its small form
    # like v) and again after it, for small forms that only folding produced.
    variants = [False, True] if skeleton.has_l_like(base) else [False]
    forms = []
    for l_as_i in variants:
        form = skeleton.apply(base, l_as_i).casefold()
        forms.append(form if form.isascii() else skeleton.apply(form, l_as_i))
    return forms


def _finish(base: str, skeleton: _Skeleton, chars: set[str]) -> list[str]:
    """Steps 4 to 7 for one base text: one form, or two when ``l``-like look-alikes occur.

    The same as :func:`_finish_whole`, computed per distinct non-ASCII character (a 2 KB
    note holds a few dozen), with each character's result cached:

    * step 4: NFD decomposes character by character and only reorders combining marks, and
      removing marks from a canonically ordered string leaves one canonically equivalent to
      removing them before ordering; equivalent strings have one NFC. So replacing each
      character whose decomposition holds a mark by that decomposition without marks, then
      NFC, gives the whole-text result (and a text where no character has a mark is
      returned unchanged by both);
    * steps 5 and 6: see :meth:`_Skeleton.fold_char`.

    ``chars`` must be exactly the distinct non-ASCII characters of ``base``.
    """
    if base.isascii():
        return [base.casefold()]
    todo = chars - skeleton.plain  # the characters that steps 4 to 6 may change
    stripped = [(c, bare) for c in todo if (bare := _without_marks(c)) != c]
    if _overlap(stripped):  # replacing in turn would change an earlier replacement
        return _finish_whole(base, skeleton)
    if stripped:
        for char, bare in stripped:
            base = base.replace(char, bare)
        composed = unicodedata.normalize("NFC", base)
        if composed != base:
            base, chars = composed, _distinct(composed)
        else:
            chars = chars.difference(c for c, _ in stripped)
            chars.update(_distinct("".join(bare for _, bare in stripped)))
        if base.isascii():
            return [base.casefold()]
        todo = chars - skeleton.plain
    variants = [False, True] if not todo.isdisjoint(skeleton.l_like) else [False]
    forms = []
    for l_as_i in variants:
        folds = [(c, folded) for c in todo if (folded := skeleton.fold_char(c, l_as_i)) != c]
        if len(folds) > _MAX_REPLACED or any(folded is None for _, folded in folds):
            return _finish_whole(base, skeleton)
        form = base
        for char, folded in folds:  # fold_char: no result holds a character folded here
            form = form.replace(char, cast(str, folded))
        forms.append(form.casefold())
    skeleton.learn(todo)
    return forms


class Reading(NamedTuple):
    """One normalised form of a text, and how it relates to an earlier form.

    ``parent`` is ``None``, or the index of an earlier reading that this one equals once the
    spaces at the offsets ``inserted`` (increasing, in ``form``) are deleted: the form where
    invisible characters are read as spaces, next to the form where they are removed. The
    scanner uses the relation to look only near those spaces (see ``threats``).
    """

    form: str
    parent: int | None = None
    inserted: tuple[int, ...] = ()


@functools.lru_cache(maxsize=_CHAR_CACHE)
def _nfkc_char(char: str) -> str:
    return unicodedata.normalize("NFKC", char)


def _nfkc(text: str, chars: set[str]) -> tuple[str, set[str]]:
    """Step 2 per distinct character: ``NFKC(text)`` and its distinct non-ASCII characters.

    NFKD decomposes character by character and then orders combining marks, which NFC's own
    decomposition does again, and a character's NFKC decomposes canonically to its NFKD; so
    replacing each character by its NFKC and applying NFC gives NFKC (NFC returns text that
    is already composed at once).
    """
    decomposed = [(c, d) for c in chars if (d := _nfkc_char(c)) != c]
    if _overlap(decomposed):  # replacing in turn would change an earlier replacement
        text = unicodedata.normalize("NFKC", text)
        return text, _distinct(text)
    for char, replacement in decomposed:
        text = text.replace(char, replacement)
    composed = unicodedata.normalize("NFC", text)
    if composed != text:
        return composed, _distinct(composed)
    if decomposed:
        chars = chars.difference(c for c, _ in decomposed)
        chars.update(_distinct("".join(d for _, d in decomposed)))
    return text, chars


def _distinct(text: str) -> set[str]:
    """The distinct non-ASCII characters of ``text``."""
    return set(_ASCII_RUNS_RE.sub("", text))


@functools.cache
def _ignorable_set() -> frozenset[str]:
    return frozenset(chr(c) for low, high in _IGNORABLE_RANGES for c in range(low, high + 1))


@functools.lru_cache(maxsize=256)
def _run_regexes(present: frozenset[str]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A run of the ``present`` ignorable characters, and such a run between two visible ones.

    In a text holding no other ignorable character these find what :data:`_IGNORABLE_RE`
    and :data:`_BETWEEN_WORDS_RE` find, with a small class instead of the full one (whose
    astral ranges the engine walks at every position).
    """
    cls = "[" + "".join(re.escape(c) for c in sorted(present)) + "]"
    return re.compile(cls + "+"), re.compile(r"(?<=\S)" + cls + r"+(?=\S)")


def _remove_runs(text: str, present: Iterable[str]) -> str:
    """``text`` without the ``present`` characters (one ``str.replace`` each: a fast pass)."""
    for char in present:
        text = text.replace(char, "")
    return text


def _mark_runs(text: str, present: Iterable[str]) -> str:
    """``text`` with each run of the ``present`` characters replaced by one stand-in.

    ``text`` must not hold :data:`_SPACE_STAND_IN`: runs of several characters first leave
    several stand-ins side by side, which are then squeezed into one.
    """
    for char in present:
        text = text.replace(char, _SPACE_STAND_IN)
    double = _SPACE_STAND_IN * 2
    while double in text:
        text = text.replace(double, _SPACE_STAND_IN)
    return text


#: Above this many ignorable characters, the between-visible test is left to a regex pass.
_FEW_IGNORABLES: Final = 64


def _between_visible(text: str, present: Iterable[str], between: re.Pattern[str]) -> bool:
    """``between.search(text) is not None``, decided from the few ignorable characters.

    ``between`` matches a run of the ``present`` characters with a non-space character on
    each side; those characters are not spaces themselves, so it matches exactly when one
    of them has a non-space character on each side.
    """
    present = tuple(present)
    if sum(text.count(char) for char in present) > _FEW_IGNORABLES:
        return between.search(text) is not None
    last = len(text) - 1
    for char in present:
        position = text.find(char)
        while position >= 0:
            if 0 < position < last and not (
                text[position - 1].isspace() or text[position + 1].isspace()
            ):
                return True
            position = text.find(char, position + 1)
    return False


def _spaced_readings(
    marked: str, removed: list[str], chars: set[str], skeleton: _Skeleton
) -> list[Reading]:
    """The readings of a text with every ignorable run read as a space.

    ``marked``: the text with each run replaced by :data:`_SPACE_STAND_IN` (see
    :func:`_mark_runs`). The steps run on that; the stand-in is then turned into a space.
    That is the same form as running the steps on the text with spaces: like a space, the
    stand-in is a starter that no normalisation composes, decomposes, reorders, folds or
    maps (the skeleton table never holds it). Where the stand-ins, deleted, give the
    removed reading exactly, the reading records that relation (it is checked here, never
    assumed).
    """
    readings = []
    forms = _finish(marked, skeleton, chars | {_SPACE_STAND_IN})
    for index, form in enumerate(forms):
        spaced = form.replace(_SPACE_STAND_IN, " ")
        if len(forms) == len(removed) and form.replace(_SPACE_STAND_IN, "") == removed[index]:
            inserted = []
            position = form.find(_SPACE_STAND_IN)
            while position >= 0:
                inserted.append(position)
                position = form.find(_SPACE_STAND_IN, position + 1)
            readings.append(Reading(spaced, index, tuple(inserted)))
        else:
            readings.append(Reading(spaced))
    return readings


def matching_readings(text: str) -> list[Reading]:
    """:func:`matching_forms`, each with its relation to an earlier form (see :class:`Reading`)."""
    if text.isascii():
        return [Reading(text.lower())]
    if _TAG_CHAR_RE.search(text) is not None:  # five times faster than max(text)
        text = _TAG_RUN_RE.sub(_decode_tags, text)
    text, chars = _nfkc(text, _distinct(text))
    if "\u2800" in chars:
        text = text.replace("\u2800", " ")
        chars.discard("\u2800")
    skeleton = _skeleton()
    present = _ignorable_set().intersection(chars)
    if not present:
        return [Reading(form) for form in _finish(text, skeleton, chars)]
    runs, between = _run_regexes(present)
    visible = chars - present
    removed = _finish(_remove_runs(text, present), skeleton, visible)
    readings = [Reading(form) for form in removed]
    # Only an invisible character between two visible ones can stand for a space.
    if _SPACE_STAND_IN in text:  # cannot tell the stand-in from the text: no relation
        if between.search(text) is not None:
            readings += [Reading(f) for f in _finish(runs.sub(" ", text), skeleton, visible)]
    elif _between_visible(text, present, between):
        readings += _spaced_readings(_mark_runs(text, present), removed, visible, skeleton)
    fillers = present.intersection(_FILLERS)
    if fillers and fillers != present:
        # Hangul fillers render as a blank: read them as spaces while the zero-width
        # characters around them are removed (fillers between words, soft hyphens inside).
        for filler in fillers:
            text = text.replace(filler, " ")
        filled = _remove_runs(text, present - fillers)
        readings += [Reading(form) for form in _finish(filled, skeleton, visible)]
    return readings


def matching_forms(text: str) -> list[str]:
    """The normalised forms of ``text`` that threat patterns are matched against.

    Usually one string; more (at most six) when the text contains invisible characters
    (removed in one form, read as spaces in another, and Hangul fillers read as spaces while
    the other invisibles are removed in a third) or ``l``-like look-alikes (also read as ``i``).
    Every form is lower case (case-folded). See the module docstring for the steps.
    """
    return [reading.form for reading in matching_readings(text)]


def fold_keyword(keyword: str) -> str:
    """``keyword`` as it appears in the first of :func:`matching_forms` (for building patterns)."""
    return matching_forms(keyword)[0]
