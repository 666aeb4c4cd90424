"""Any server speaking OpenAI's ``POST /v1/embeddings``: OpenAI, Ollama, vLLM, LM Studio, TEI.

Bounded in time whatever the server does: each request has one wall-clock deadline
(``timeout``, covering connect, upload and a slowly trickled answer), failed requests are
retried at most ``retries`` times (connection errors, timeouts, 429 and 5xx only), and after a
call fails a circuit breaker refuses further calls for ``cooldown`` seconds, so a dead server
costs nothing per search. Every failure is an `EmbedderUnavailable`.

The API key comes from the caller (the configuration layer reads it from an environment
variable); it is sent only as ``Authorization: Bearer``, never logged, never in an error.
"""

from __future__ import annotations

import base64
import logging
import math
import random
import struct
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from hermes_memory_core.kit import CircuitBreaker
from hermes_memory_vectors._base import EmbedderUnavailable, check_vectors, clean_text, clean_texts

__all__ = ["OpenAIEmbedder", "embeddings_endpoint"]

logger = logging.getLogger(__name__)

_LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]"}
_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
_MAX_BACKOFF = 4.0


def embeddings_endpoint(url: str) -> str:
    """The full ``…/v1/embeddings`` URL for a server base URL.

    ``http://localhost:11434`` → ``http://localhost:11434/v1/embeddings``;
    ``https://api.openai.com/v1`` → ``https://api.openai.com/v1/embeddings``; a URL already
    ending in ``/embeddings`` is kept.

    :raises ValueError: not an ``http(s)://host`` URL, or it carries credentials.
    """
    if not isinstance(url, str):
        raise ValueError("must be an http:// or https:// URL")
    text = url.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise ValueError("must not carry credentials (put the API key in an environment variable)")
    if parts.query or parts.fragment:
        raise ValueError("must not have a query string or fragment")
    path = parts.path.rstrip("/")
    if not path.endswith("/embeddings"):
        path += "/embeddings" if path.endswith("/v1") else "/v1/embeddings"
    return f"{parts.scheme}://{parts.netloc}{path}"


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint.

    :param url: server base URL (``http://localhost:11434`` for Ollama,
        ``https://api.openai.com/v1``) or the full endpoint; see `embeddings_endpoint`.
    :param model: the ``model`` field of the request (``text-embedding-3-small``,
        ``nomic-embed-text``, ...).
    :param api_key: sent as a bearer token; ``None`` for local servers without auth.
    :param dimensions: ask for shorter vectors (models that support it); also the known `dim`.
    :param batch_size: texts per request.
    :param timeout: seconds one request may take in total, answer included.
    :param retries: extra attempts per request after a retryable failure (0 = none).
    :param cooldown: seconds to refuse calls after a call failed (0 disables the breaker).
    :param max_chars: characters of one text that are sent; the rest is cut (servers refuse
        over-long inputs, and the whole batch with them).
    :param query_prefix: / :param document_prefix: text put before queries / documents, for
        models that need it (``"search_query: "`` / ``"search_document: "`` for nomic).
    :param normalize: L2-normalise what the server returns (Ollama's models may not).
    :param max_response_bytes: answers larger than this are refused.
    :param transport: an `httpx.BaseTransport` to use instead of the network (tests).
    :raises ValueError: a bad URL, model or number (the message says which).
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 64,
        timeout: float = 10.0,
        retries: int = 2,
        cooldown: float = 30.0,
        max_chars: int = 6000,
        query_prefix: str = "",
        document_prefix: str = "",
        normalize: bool = True,
        max_response_bytes: int = 64 * 1024 * 1024,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.endpoint = embeddings_endpoint(url)
        if not isinstance(model, str) or not model.strip():
            raise ValueError("model must be a non-empty model name")
        if dimensions is not None and dimensions < 1:
            raise ValueError("dimensions must be at least 1")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if not (timeout > 0 and math.isfinite(timeout)):
            raise ValueError("timeout must be a positive number of seconds")
        if retries < 0 or retries > 10:
            raise ValueError("retries must be between 0 and 10")
        if cooldown < 0:
            raise ValueError("cooldown must not be negative")
        if max_chars < 1:
            raise ValueError("max_chars must be at least 1")
        if api_key is not None and (not api_key.strip() or any(c in api_key for c in "\r\n")):
            raise ValueError("api_key must be a non-empty single-line string")
        self.model = model.strip()
        self.batch_size = batch_size
        self.timeout = float(timeout)
        self.retries = retries
        self.max_chars = max_chars
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self.normalize = normalize
        self.max_response_bytes = max_response_bytes
        self._dimensions = dimensions
        self._dim: int | None = dimensions
        self._api_key = api_key.strip() if api_key else None
        self.name = f"openai:{self.model}" + (f":{dimensions}" if dimensions else "")
        host = urlsplit(self.endpoint).hostname or ""
        if self._api_key and self.endpoint.startswith("http://") and host not in _LOOPBACK:
            logger.warning(
                "the embedder API key is sent without TLS to %s (use https:// off this machine)",
                host,
            )
        headers = {"Accept": "application/json", "User-Agent": "hermes-memory-vectors"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(self.timeout),
            transport=transport,
            follow_redirects=False,
        )
        self._breaker = CircuitBreaker(threshold=1, cooldown=cooldown) if cooldown > 0 else None

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"OpenAIEmbedder({self.endpoint!r}, model={self.model!r}, api_key={key})"

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    @property
    def dim(self) -> int:
        """Vector length: ``dimensions`` if given, else learnt from the first answer.

        :raises EmbedderUnavailable: it had to be learnt and the server did not answer.
        """
        if self._dim is None:
            self.embed_query("dimension probe")
        assert self._dim is not None
        return self._dim

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed documents, `batch_size` texts per request."""
        cleaned = [self._prepare(self.document_prefix, t) for t in clean_texts(texts)]
        out: list[list[float]] = []
        for start in range(0, len(cleaned), self.batch_size):
            out.extend(self._call(cleaned[start : start + self.batch_size]))
        return out

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return self._call([self._prepare(self.query_prefix, clean_text(text))])[0]

    # ------------------------------------------------------------------ internals
    def _prepare(self, prefix: str, text: str) -> str:
        text = (prefix + text)[: self.max_chars]
        return text if text.strip() else " "  # OpenAI refuses empty strings

    def _call(self, batch: list[str]) -> list[list[float]]:
        if not batch:
            return []
        if self._breaker is not None and not self._breaker.allow():
            raise EmbedderUnavailable(
                f"{self.name}: {self.endpoint} failed recently; "
                f"not retried for another {self._breaker.retry_in():.0f} s"
            )
        try:
            vectors = self._request_with_retries(batch)
        except EmbedderUnavailable:
            if self._breaker is not None:
                self._breaker.record_failure(open_now=True)
            raise
        if self._breaker is not None:
            self._breaker.record_success()
        return vectors

    def _request_with_retries(self, batch: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {"model": self.model, "input": batch}
        if self._dimensions is not None:
            body["dimensions"] = self._dimensions
        attempt = 0
        while True:
            retry_after: float | None = None
            try:
                status, payload = self._post(body)
            except (httpx.TimeoutException, _DeadlineExceeded):
                error = f"no answer from {self.endpoint} within {self.timeout:g} s"
            except httpx.HTTPError as exc:
                error = f"cannot reach {self.endpoint}: {_one_line(exc)}"
            else:
                if status == 200:
                    return self._parse(payload, len(batch))
                message = f"{self.endpoint} answered HTTP {status}{_error_excerpt(payload)}"
                if status not in _RETRY_STATUS:
                    raise EmbedderUnavailable(f"{self.name}: {self._scrub(message)}")
                error = message
                retry_after = _retry_after(payload)
            if attempt >= self.retries:
                raise EmbedderUnavailable(
                    f"{self.name}: {self._scrub(error)}"
                    + (f" (after {attempt + 1} attempts)" if attempt else "")
                )
            attempt += 1
            backoff = min(_MAX_BACKOFF, 0.25 * 2**attempt) * (0.5 + random.random() / 2)  # noqa: S311
            time.sleep(min(_MAX_BACKOFF, retry_after) if retry_after is not None else backoff)

    def _post(self, body: dict[str, Any]) -> tuple[int, _Answer]:
        deadline = time.monotonic() + self.timeout
        with self._client.stream("POST", self.endpoint, json=body) as response:
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > self.max_response_bytes:
                    raise EmbedderUnavailable(
                        f"{self.name}: answer from {self.endpoint} is larger than "
                        f"{self.max_response_bytes} bytes"
                    )
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise _DeadlineExceeded
            return response.status_code, _Answer(b"".join(chunks), response.headers)

    def _parse(self, answer: _Answer, count: int) -> list[list[float]]:
        try:
            payload = answer.json()
        except ValueError:
            raise EmbedderUnavailable(
                f"{self.name}: {self.endpoint} answered 200 with something that is not JSON"
            ) from None
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise EmbedderUnavailable(f"{self.name}: answer has no 'data' list")
        vectors: list[list[float] | None] = [None] * count
        for position, item in enumerate(data):
            if not isinstance(item, dict):
                raise EmbedderUnavailable(f"{self.name}: answer item {position} is not an object")
            index = item.get("index", position)
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
                raise EmbedderUnavailable(f"{self.name}: answer item has a bad index {index!r}")
            if vectors[index] is not None:
                raise EmbedderUnavailable(f"{self.name}: answer repeats index {index}")
            vectors[index] = _vector(item.get("embedding"), self.name)
        if any(v is None for v in vectors):
            raise EmbedderUnavailable(
                f"{self.name}: answer has {len(data)} embeddings for {count} texts"
            )
        result = [v for v in vectors if v is not None]
        self._dim = check_vectors(result, count, self._dim, self.name)
        if self.normalize:
            result = [_normalized(v) for v in result]
        return result

    def _scrub(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text


class _DeadlineExceeded(Exception):
    pass


class _Answer:
    def __init__(self, content: bytes, headers: httpx.Headers) -> None:
        self.content = content
        self.headers = headers

    def json(self) -> Any:
        import json

        return json.loads(self.content.decode("utf-8", errors="replace"))


def _vector(raw: Any, what: str) -> list[float]:
    if isinstance(raw, str):  # encoding_format=base64: little-endian float32
        try:
            blob = base64.b64decode(raw, validate=True)
        except ValueError:
            raise EmbedderUnavailable(f"{what}: embedding is not valid base64") from None
        if len(blob) % 4:
            raise EmbedderUnavailable(f"{what}: base64 embedding is not float32 data")
        return [float(x) for x in struct.unpack(f"<{len(blob) // 4}f", blob)]
    if not isinstance(raw, list):
        raise EmbedderUnavailable(f"{what}: embedding is not a list of numbers")
    out: list[float] = []
    for x in raw:
        if isinstance(x, bool) or not isinstance(x, int | float):
            raise EmbedderUnavailable(f"{what}: embedding holds a non-number")
        out.append(float(x))
    return out


def _normalized(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else vector


def _retry_after(answer: _Answer) -> float | None:
    value = answer.headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def _error_excerpt(answer: _Answer) -> str:
    try:
        payload = answer.json()
    except ValueError:
        payload = None
    message: Any = None
    if isinstance(payload, dict):
        error = payload.get("error")
        message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str):
        message = answer.content[:200].decode("utf-8", errors="replace")
    text = " ".join(message.split())[:200]
    return f": {text}" if text else ""


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
