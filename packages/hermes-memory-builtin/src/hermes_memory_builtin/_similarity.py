"""Near-duplicate detection for new entries, character by character (so CJK works).

Two entries are near-duplicates when, after normalisation (NFKC, case folding, punctuation
and whitespace removed), they are equal, or their character-level edit distance is at most
10 % of the longer one (similarity ≥ 0.9). Numbers are facts: two entries whose digit
sequences differ ("port 8080" / "port 8081", "Python 3.11" / "Python 3.12") are never
near-duplicates unless they normalise to the same text — an update of such a fact should be
a ``replace``, and the model sees both entries in its snapshot.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter

__all__ = ["SIMILARITY_THRESHOLD", "find_near_duplicate", "normalize_for_compare", "similarity"]

#: Minimum similarity (1 − distance / longer length) for two different texts to count.
SIMILARITY_THRESHOLD = 0.9

_DIGITS_RE = re.compile(r"\d+")


@functools.cache
def _drop_table() -> dict[int, None]:
    # Punctuation and whitespace of the Basic Multilingual Plane, dropped by str.translate.
    return {
        cp: None
        for cp in range(0x10000)
        if chr(cp).isspace() or unicodedata.category(chr(cp)).startswith("P")
    }


@functools.lru_cache(maxsize=8192)
def normalize_for_compare(text: str) -> str:
    """NFKC-fold, case-fold and drop punctuation and whitespace."""
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_drop_table())
    if folded.isascii():
        return folded
    return "".join(
        ch
        for ch in folded
        if ord(ch) < 0x10000 or not (ch.isspace() or unicodedata.category(ch).startswith("P"))
    )


def _bounded_distance(a: str, b: str, bound: int) -> int:
    """Levenshtein distance of ``a`` and ``b`` if it is ≤ ``bound``, else ``bound + 1``.

    Only a diagonal band of width ``2 * bound + 1`` is computed, and the scan stops as soon
    as a whole row exceeds the bound, so unrelated texts cost almost nothing.
    """
    if abs(len(a) - len(b)) > bound:
        return bound + 1
    if len(a) > len(b):
        a, b = b, a
    over = bound + 1
    previous = [j if j <= bound else over for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        lo, hi = max(1, i - bound), min(len(b), i + bound)
        current = [over] * (len(b) + 1)
        if i <= bound:
            current[0] = i
        ch = a[i - 1]
        row_min = current[0]
        for j in range(lo, hi + 1):
            cost = 0 if b[j - 1] == ch else 1
            value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if value > over:
                value = over
            current[j] = value
            if value < row_min:
                row_min = value
        if row_min > bound:
            return over
        previous = current
    return min(previous[len(b)], over)


def similarity(a: str, b: str) -> float:
    """Character-level similarity ``1 - distance / longer length`` of two texts, in [0, 1]."""
    longest = max(len(a), len(b))
    if longest == 0:
        return 1.0
    return 1 - _bounded_distance(a, b, longest) / longest


def _is_near(new_norm: str, new_digits: list[str], old: str) -> bool:
    old_norm = normalize_for_compare(old)
    if not new_norm or not old_norm:
        return False
    if new_norm == old_norm:
        return True
    if _DIGITS_RE.findall(old_norm) != new_digits:
        return False
    longest = max(len(new_norm), len(old_norm))
    bound = int(longest * (1 - SIMILARITY_THRESHOLD) + 1e-9)
    if bound == 0 or abs(len(new_norm) - len(old_norm)) > bound:
        return False
    # Cheap lower bound first: characters one text has and the other lacks.
    surplus = Counter(new_norm)
    surplus.subtract(Counter(old_norm))
    extra = sum(v for v in surplus.values() if v > 0)
    missing = -sum(v for v in surplus.values() if v < 0)
    if max(extra, missing) > bound:
        return False
    return _bounded_distance(new_norm, old_norm, bound) <= bound


def find_near_duplicate(content: str, entries: list[str]) -> str | None:
    """The first of ``entries`` that ``content`` nearly duplicates (not exactly), or ``None``."""
    new_norm = normalize_for_compare(content)
    new_digits = _DIGITS_RE.findall(new_norm)
    for entry in entries:
        if entry != content and _is_near(new_norm, new_digits, entry):
            return entry
    return None
