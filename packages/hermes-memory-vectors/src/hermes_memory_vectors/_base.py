"""The `Embedder` protocol, the errors every embedder raises, and shared text hygiene.

An embedder turns text into fixed-length float vectors such that related texts have a high
cosine similarity. Documents (archived messages) and queries (what the agent searches for)
go through different methods because many retrieval models embed them differently (e5
models prefix ``"query: "`` / ``"passage: "``); an embedder that does not care may
implement both the same way.

Writing your own: any object with the four members of `Embedder` works; register a factory
under the entry-point group ``hermes_memory.embedders`` (see `hermes_memory_vectors._registry`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from hermes_memory_core.config import ConfigError

__all__ = [
    "Embedder",
    "EmbedderConfigError",
    "EmbedderError",
    "EmbedderUnavailable",
    "check_vectors",
    "clean_text",
    "clean_texts",
]


@runtime_checkable
class Embedder(Protocol):
    """Text → vector. Implementations must be safe to call from one thread at a time.

    ``name``
        Identifies the model *and* anything that changes its vectors (quantisation,
        pooling, prefixes). A vector index stores it next to the vectors and re-embeds when
        it changes, so two embedders with the same ``name`` must give comparable vectors.
    ``dim``
        Length of every vector returned. Remote embedders may learn it on first use.
    ``embed_documents(texts)``
        One vector per text, in order; ``[]`` for ``[]``.
    ``embed_query(text)``
        One vector for a search query.

    Vectors are plain ``list[float]``; the built-in embedders return them L2-normalised, so
    a dot product is the cosine similarity. Failures raise `EmbedderUnavailable` (the model
    cannot be loaded, a server is down or slow, an answer is malformed) — callers catch it
    and fall back to lexical search; nothing else is raised for bad luck at run time.
    """

    @property
    def name(self) -> str:
        """Stable identifier of the model and its settings that affect the vectors."""
        ...

    @property
    def dim(self) -> int:
        """Vector length."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed documents (archived messages), one vector per text."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """Embed one search query."""
        ...


class EmbedderError(Exception):
    """Base class of the errors raised by this package."""


class EmbedderUnavailable(EmbedderError):
    """The embedder cannot produce vectors now: missing model or library, server down,
    timeout, refused request, malformed answer.

    Catch it to fall back to lexical search. The message says what failed and never
    contains an API key.
    """


class EmbedderConfigError(ConfigError, EmbedderError):
    """A configuration value is unusable; the message names the key (``sessions.embedder_…``).

    A subclass of core's `ConfigError` (a `ValueError`), so hosts that already handle
    configuration errors handle this one too.
    """


# Lone surrogates cannot be encoded as UTF-8; NUL ends a C string early (the rest of the
# text would silently not be embedded by a C engine), other C0 controls carry no meaning.
_BAD_CHARS = re.compile(r"[\ud800-\udfff]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_text(text: str) -> str:
    """``text`` made safe for any tokenizer or C engine, without dropping content.

    Lone surrogates become U+FFFD; NUL and other control characters (except tab and line
    breaks) become spaces, so nothing after them is lost. Anything that is not a ``str``
    raises `TypeError` naming its type.
    """
    if not isinstance(text, str):
        raise TypeError(f"expected text (str), got {type(text).__name__}")
    return _BAD_CHARS.sub(_replacement, text)


def _replacement(match: re.Match[str]) -> str:
    return "\ufffd" if "\ud800" <= match.group() <= "\udfff" else " "


def clean_texts(texts: Iterable[str]) -> list[str]:
    """`clean_text` over a sequence; a bare ``str`` is refused (it would embed its letters)."""
    if isinstance(texts, str):
        raise TypeError("embed_documents takes a list of texts, not one str")
    return [clean_text(t) for t in texts]


def check_vectors(
    vectors: Sequence[Sequence[float]], count: int, dim: int | None, what: str
) -> int:
    """Check that ``vectors`` holds ``count`` finite vectors of one length; return the length.

    :raises EmbedderUnavailable: naming ``what`` (the embedder) and the problem.
    """
    if len(vectors) != count:
        raise EmbedderUnavailable(f"{what}: returned {len(vectors)} vectors for {count} texts")
    seen = dim
    for vector in vectors:
        if seen is None:
            seen = len(vector)
        if len(vector) != seen or seen == 0:
            raise EmbedderUnavailable(
                f"{what}: returned a vector of length {len(vector)}, expected {seen}"
            )
        if not all(math.isfinite(x) for x in vector):
            raise EmbedderUnavailable(f"{what}: returned a vector with NaN or infinity")
    return seen if seen is not None else 0
