"""The three ways to reach mem0, behind one small interface.

* `PlatformBackend` — the real ``mem0.MemoryClient`` (hosted API), given our own httpx client.
* `SelfHostedBackend` — mem0's REST server (``POST /search``, ``POST /memories``,
  ``PUT|DELETE /memories/{id}``); ``MemoryClient`` cannot talk to it (it sends
  ``Authorization: Token`` and pings ``/v1/ping/``, which that server does not have).
* `OSSBackend` — the in-process ``mem0.Memory`` library with a local vector store.

Every backend method may block on I/O; the provider calls them from its worker threads (or
from a tool call, which the model asked for explicitly).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import httpx

from hermes_memory_core.kit import make_private_dirs
from hermes_memory_mem0._errors import BackendError, FailureKind, kind_for_status
from hermes_memory_mem0._settings import Mem0Settings

__all__ = [
    "Backend",
    "OSSBackend",
    "PlatformBackend",
    "SelfHostedBackend",
    "build_http_client",
    "build_oss_config",
    "normalize_results",
]

logger = logging.getLogger(__name__)

CLIENT_HEADER = "hermes-memory-mem0"


class Backend(Protocol):
    """What the provider needs from a mem0 deployment."""

    #: "platform", "selfhosted" or "oss".
    mode: str

    def search(self, query: str, *, user_id: str, top_k: int, rerank: bool) -> list[dict[str, Any]]:
        """Memories of ``user_id`` relevant to ``query``, best first."""

    def add(
        self,
        messages: list[dict[str, str]],
        *,
        user_id: str,
        agent_id: str,
        infer: bool,
        metadata: dict[str, Any],
    ) -> dict[str, Any]:
        """Store ``messages`` (verbatim with ``infer=False``, as extracted facts otherwise)."""

    def update(self, memory_id: str, text: str) -> dict[str, Any]:
        """Replace the text of one memory."""

    def delete(self, memory_id: str) -> dict[str, Any]:
        """Delete one memory."""

    def close(self) -> None:
        """Release connections, files and locks."""


def build_http_client(
    settings: Mem0Settings,
    *,
    base_url: str = "",
    headers: dict[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> httpx.Client:
    """The adapter's one httpx client: short timeouts and deliberate retries.

    Retries: only failed TCP connects are retried (``connect_retries``, default 1) — safe
    because nothing reached the server. A request the server received is never re-sent by
    us: a re-sent ``add`` would store a memory twice, and the circuit breaker, not a retry
    loop, is what copes with a struggling service. Read/write timeout ``timeout`` (10 s),
    connect timeout ``connect_timeout`` (3 s); mem0's own default is 300 s.
    """
    timeout = httpx.Timeout(settings.timeout, connect=settings.connect_timeout)
    if transport is None:
        transport = httpx.HTTPTransport(retries=settings.connect_retries)
    return httpx.Client(
        base_url=base_url,
        timeout=timeout,
        transport=transport,
        headers=headers or {},
        follow_redirects=False,
    )


def normalize_results(payload: Any) -> list[dict[str, Any]]:
    """Search/get_all answers as a list of memory dicts (``{"results": [...]}`` or a list)."""
    items = payload.get("results", []) if isinstance(payload, dict) else payload
    if not isinstance(items, list):
        return []
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("memory"), str):
            out.append(item)
    return out


# --------------------------------------------------------------------------- platform
class PlatformBackend:
    """mem0's hosted Platform through the real ``mem0.MemoryClient``.

    Construct it with `connect` on a background thread: ``MemoryClient.__init__`` performs
    a blocking ``GET /v1/ping/`` to validate the key.
    """

    mode = "platform"

    def __init__(self, client: Any, http: httpx.Client) -> None:
        self.client = client
        self._http = http

    @classmethod
    def connect(cls, mem0: Any, settings: Mem0Settings, http: httpx.Client) -> PlatformBackend:
        """Build ``MemoryClient`` (pings the API) on the shared httpx client."""
        client = mem0.MemoryClient(api_key=settings.api_key, host=settings.host, client=http)
        backend = cls(client, http)
        for key, expected in (("org_id", settings.org_id), ("project_id", settings.project_id)):
            actual = getattr(client, key, None)
            if expected and actual and expected != actual:
                logger.warning(
                    "mem0: the API key belongs to %s %r but config says %r; memories go to %r",
                    key,
                    actual,
                    expected,
                    actual,
                )
        return backend

    def search(self, query: str, *, user_id: str, top_k: int, rerank: bool) -> list[dict[str, Any]]:
        """Platform search; identity goes in ``filters`` (top-level ids are rejected)."""
        result = self.client.search(query, filters={"user_id": user_id}, top_k=top_k, rerank=rerank)
        return normalize_results(result)

    def add(
        self,
        messages: list[dict[str, str]],
        *,
        user_id: str,
        agent_id: str,
        infer: bool,
        metadata: dict[str, Any],
    ) -> dict[str, Any]:
        """Platform add (``infer=True`` is processed asynchronously by mem0)."""
        result = self.client.add(
            messages, user_id=user_id, agent_id=agent_id, infer=infer, metadata=metadata
        )
        return result if isinstance(result, dict) else {"results": result}

    def update(self, memory_id: str, text: str) -> dict[str, Any]:
        """``PUT /v1/memories/{id}/``."""
        result = self.client.update(memory_id, text=text)
        return result if isinstance(result, dict) else {}

    def delete(self, memory_id: str) -> dict[str, Any]:
        """``DELETE /v1/memories/{id}/``."""
        result = self.client.delete(memory_id)
        return result if isinstance(result, dict) else {}

    def close(self) -> None:
        """Close the shared httpx client."""
        self._http.close()


# --------------------------------------------------------------------------- self-hosted
class SelfHostedBackend:
    """mem0's self-hosted REST server over our own httpx client.

    ``X-API-Key`` is sent only when a key is configured: a server running with
    ``AUTH_DISABLED=true`` answers 401 to any key.
    """

    mode = "selfhosted"

    def __init__(self, http: httpx.Client) -> None:
        self._http = http

    @classmethod
    def create(
        cls, settings: Mem0Settings, transport: httpx.BaseTransport | None = None
    ) -> SelfHostedBackend:
        """A backend for ``settings.host`` (no network until the first call)."""
        headers = {"X-Mem0-Client": CLIENT_HEADER}
        if settings.api_key:
            headers["X-API-Key"] = settings.api_key
        http = build_http_client(
            settings, base_url=settings.host or "", headers=headers, transport=transport
        )
        return cls(http)

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        response = self._http.request(method, path, json=body)
        if response.status_code >= 400:
            detail: Any = response.text
            try:
                data = response.json()
                if isinstance(data, dict) and "detail" in data:
                    detail = data["detail"]
            except ValueError:
                pass
            if not isinstance(detail, str):
                detail = str(detail)
            detail = " ".join(detail.split())[:300] or response.reason_phrase
            raise BackendError(
                kind_for_status(response.status_code),
                f"mem0 server answered {response.status_code}: {detail}",
                response.status_code,
            )
        if not response.content:
            return {}
        try:
            return response.json()
        except ValueError:
            raise BackendError(
                FailureKind.SERVER, "mem0 server answered with something that is not JSON"
            ) from None

    def search(self, query: str, *, user_id: str, top_k: int, rerank: bool) -> list[dict[str, Any]]:
        """``POST /search {query, filters: {user_id}, top_k}`` (rerank is Platform-only)."""
        body = {"query": query, "filters": {"user_id": user_id}, "top_k": top_k}
        return normalize_results(self._request("POST", "/search", body))

    def add(
        self,
        messages: list[dict[str, str]],
        *,
        user_id: str,
        agent_id: str,
        infer: bool,
        metadata: dict[str, Any],
    ) -> dict[str, Any]:
        """``POST /memories``."""
        body = {
            "messages": messages,
            "user_id": user_id,
            "agent_id": agent_id,
            "infer": infer,
            "metadata": metadata,
        }
        result = self._request("POST", "/memories", body)
        return result if isinstance(result, dict) else {"results": result}

    def update(self, memory_id: str, text: str) -> dict[str, Any]:
        """``PUT /memories/{id} {text}``."""
        result = self._request("PUT", f"/memories/{quote(memory_id, safe='')}", {"text": text})
        return result if isinstance(result, dict) else {}

    def delete(self, memory_id: str) -> dict[str, Any]:
        """``DELETE /memories/{id}``."""
        result = self._request("DELETE", f"/memories/{quote(memory_id, safe='')}")
        return result if isinstance(result, dict) else {}

    def close(self) -> None:
        """Close the httpx client."""
        self._http.close()


# --------------------------------------------------------------------------- OSS
def build_oss_config(settings: Mem0Settings, home: Path) -> dict[str, Any]:
    """The ``Memory.from_config`` dict: the user's ``oss`` block plus local defaults.

    Defaults: qdrant on disk under ``<home>/mem0/qdrant`` (collection ``hermes_memory``)
    and the history database at ``<home>/mem0/history.db``.
    """
    oss = dict(settings.oss)
    base = home / "mem0"
    config: dict[str, Any] = {
        key: value
        for key, value in oss.items()
        if key in ("llm", "embedder", "reranker", "custom_instructions", "version")
    }
    store = dict(oss.get("vector_store") or {"provider": "qdrant"})
    store_conf = dict(store.get("config") or {})
    if store.get("provider", "qdrant") == "qdrant":
        store["provider"] = "qdrant"
        if not any(store_conf.get(k) for k in ("path", "host", "url", "client")):
            store_conf["path"] = str(base / "qdrant")
            store_conf.setdefault("on_disk", True)
        store_conf.setdefault("collection_name", "hermes_memory")
    store["config"] = store_conf
    config["vector_store"] = store
    config["history_db_path"] = str(oss.get("history_db_path") or base / "history.db")
    return config


def _keyword_search_from_cache_only(memory: Any) -> None:
    """Give mem0's qdrant store its BM25 encoder from fastembed's local cache, never the network.

    mem0 (2.x) loads fastembed's ``Qdrant/bm25`` model lazily inside the first ``add`` or
    ``search``; when the model is not cached, fastembed downloads it and, offline, retries
    with sleeps of 3, 9 and 27 s: every memory call of an offline process stalls ~40 s. We
    load it from the cache only; without it keyword search stays off (dense search works)
    and one warning says how to fetch the model once.
    """
    store = getattr(memory, "vector_store", None)
    if store is None or getattr(store, "_bm25_encoder", False) is not None:
        return  # another store, or mem0 changed how it loads the encoder: leave it alone
    try:
        from fastembed import SparseTextEmbedding  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return  # mem0 says itself that keyword search needs fastembed
    try:
        encoder: Any = SparseTextEmbedding(model_name=_BM25_MODEL, local_files_only=True)
    except Exception:
        logger.warning(
            "mem0 keyword (BM25) search is off: fastembed's %s model is not in its local "
            'cache (fetch it once, online: python -c "from fastembed import '
            "SparseTextEmbedding; SparseTextEmbedding('%s')\")",
            _BM25_MODEL,
            _BM25_MODEL,
        )
        encoder = False  # mem0's own "tried and failed" value
    store._bm25_encoder = encoder


_BM25_MODEL = "Qdrant/bm25"


class OSSBackend:
    """The in-process ``mem0.Memory`` (open-source library mode)."""

    mode = "oss"

    def __init__(self, memory: Any) -> None:
        self.memory = memory

    @classmethod
    def create(cls, mem0: Any, settings: Mem0Settings, home: Path) -> OSSBackend:
        """Build ``mem0.Memory.from_config`` (opens the local store; may take a second)."""
        config = build_oss_config(settings, home)
        store_path = config["vector_store"]["config"].get("path")
        if store_path:  # the project's directories are private (0700), like every other
            make_private_dirs(store_path)
        make_private_dirs(Path(config["history_db_path"]).parent)
        memory = mem0.Memory.from_config(config)
        _keyword_search_from_cache_only(memory)
        return cls(memory)

    def search(self, query: str, *, user_id: str, top_k: int, rerank: bool) -> list[dict[str, Any]]:
        """``Memory.search(query, filters={"user_id": ...}, top_k=...)``."""
        result = self.memory.search(query, filters={"user_id": user_id}, top_k=top_k)
        return normalize_results(result)

    def add(
        self,
        messages: list[dict[str, str]],
        *,
        user_id: str,
        agent_id: str,
        infer: bool,
        metadata: dict[str, Any],
    ) -> dict[str, Any]:
        """``Memory.add`` (``infer=True`` runs one extraction call through the LLM)."""
        result = self.memory.add(
            messages, user_id=user_id, agent_id=agent_id, infer=infer, metadata=metadata
        )
        return result if isinstance(result, dict) else {"results": result}

    def update(self, memory_id: str, text: str) -> dict[str, Any]:
        """``Memory.update(id, text=...)``; an unknown id raises."""
        if self.memory.vector_store.get(vector_id=memory_id) is None:
            raise BackendError(FailureKind.NOT_FOUND, f"Memory with id {memory_id} not found")
        result = self.memory.update(memory_id, text=text)
        return result if isinstance(result, dict) else {}

    def delete(self, memory_id: str) -> dict[str, Any]:
        """``Memory.delete(id)``; an unknown id raises."""
        result = self.memory.delete(memory_id)
        return result if isinstance(result, dict) else {}

    def close(self) -> None:
        """Close the history database and the local vector store (releases qdrant's lock)."""
        try:
            self.memory.close()
        finally:
            client = getattr(getattr(self.memory, "vector_store", None), "client", None)
            close = getattr(client, "close", None)
            if callable(close):
                close()
