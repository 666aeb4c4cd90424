"""The official ``supermemory`` SDK (5.x) with our timeout, headers and no SDK retries.

Calls used (all scoped by the namespace in the path; ``Authorization: Bearer <key>``):

* ``client.add(ns, content=, id=, metadata=, date=)`` → ``POST /ns/{ns}/document``
  (re-using a document id appends to that document);
* ``client.search(ns, query=, limit=, search_mode=)`` → ``POST /ns/{ns}/search``;
* ``client.profile(ns)`` → ``POST /ns/{ns}/profile``;
* ``client.memories.forget(ns, ids=)`` → ``DELETE /ns/{ns}/memories``;
* ``client.memories.forget_matching(ns, query=, dry_run=)`` →
  ``DELETE /ns/{ns}/memories/semantic``.

The SDK's own retries (2 by default, honouring ``Retry-After``) are switched off: the kit's
`Guard` retries instead, with bounded back-off. Every request carries
``x-sm-source: hermes-memory``. The SDK has no telemetry.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from hermes_memory_core.kit import (
    Failure,
    FailureKind,
    classify_common,
    kind_for_status,
    one_line,
    user_agent,
)
from hermes_memory_supermemory._config import SupermemorySettings

__all__ = ["SOURCE_HEADER", "Found", "SupermemoryClient", "classify"]

#: Sent with every request so Supermemory can tell where a document came from.
SOURCE_HEADER = ("x-sm-source", "hermes-memory")


def _reason(body: Any) -> str:
    if isinstance(body, dict):
        for key in ("error", "message", "detail"):
            if body.get(key):
                return one_line(str(body[key]), 200)
    return one_line(str(body), 200) if body not in (None, "") else "no detail"


def classify(exc: BaseException, *, base_url: str = "") -> Failure:
    """Map what a ``supermemory`` call raised to the kit's `Failure` taxonomy.

    Messages never quote request headers (the API key travels in one).
    """
    where = f" ({base_url})" if base_url else ""
    if type(exc).__module__.startswith("supermemory"):
        import supermemory

        if isinstance(exc, supermemory.APITimeoutError):
            return Failure(FailureKind.TIMEOUT, f"Supermemory did not answer in time{where}")
        if isinstance(exc, supermemory.APIConnectionError):
            cause = exc.__cause__ or exc
            return Failure(
                FailureKind.CONNECTION, f"Cannot reach Supermemory{where}: {one_line(cause)}"
            )
    status = getattr(exc, "status_code", None)
    if type(exc).__module__.startswith("supermemory") and isinstance(status, int):
        reason = _reason(getattr(exc, "body", None))
        kind = kind_for_status(status)
        if kind is FailureKind.AUTH:
            return Failure(
                kind,
                f"Supermemory rejected the credentials{where}: HTTP {status} {reason}. "
                "Check SUPERMEMORY_API_KEY (or supermemory.api_key).",
                status,
            )
        if status == 402:
            kind = FailureKind.AUTH  # out of credits: no point retrying soon
        return Failure(kind, f"Supermemory answered HTTP {status}{where}: {reason}", status)
    common = classify_common(exc)
    if common is not None:
        if common.kind is FailureKind.TIMEOUT:
            return Failure(common.kind, f"Supermemory did not answer in time{where}")
        if common.kind is FailureKind.CONNECTION:
            return Failure(common.kind, f"Cannot reach Supermemory{where}: {common.message}")
        return Failure(common.kind, f"Supermemory{where}: {common.message}", common.status)
    if type(exc).__name__ in ("ValidationError", "JSONDecodeError"):
        return Failure(
            FailureKind.OTHER,
            f"Supermemory sent an answer this client cannot read{where}: {one_line(exc, 200)}",
        )
    return Failure(
        FailureKind.OTHER,
        f"Supermemory call failed{where}: {type(exc).__name__}: {one_line(exc)}",
    )


@dataclass(frozen=True)
class Found:
    """One search result: a learned memory (or a source passage) and its score."""

    id: str
    text: str
    similarity: float = 0.0
    updated_at: str = ""

    def as_json(self) -> dict[str, Any]:
        """The tool-result shape."""
        out: dict[str, Any] = {"id": self.id, "memory": self.text}
        out["similarity"] = round(self.similarity, 3)
        if self.updated_at:
            out["updated_at"] = self.updated_at
        return out


def _text(value: Any) -> str:
    return " ".join(str(value or "").split())


class SupermemoryClient:
    """The calls this adapter makes in one namespace, each bounded by ``settings.timeout``.

    Each method raises whatever the SDK raised (classify it with `classify`); callers go
    through the provider's `Guard`.

    :param transport: an ``httpx`` transport to use instead of the network (tests).
    """

    def __init__(
        self, settings: SupermemorySettings, namespace: str, transport: Any = None
    ) -> None:
        self.settings = settings
        self.namespace = namespace
        self._transport = transport
        self._sdk: Any = None
        self._http: Any = None
        self._lock = threading.Lock()

    @property
    def sdk(self) -> Any:
        """The ``supermemory.Supermemory`` instance, built (and the SDK imported) on first use."""
        with self._lock:
            if self._sdk is None:
                import httpx
                from supermemory import Supermemory

                s = self.settings
                self._http = httpx.Client(
                    timeout=httpx.Timeout(s.timeout),
                    follow_redirects=False,
                    transport=self._transport,
                )
                # timeout= must be given: without it the SDK sends its own default
                # (60 s) with every request, overriding the client's.
                self._sdk = Supermemory(
                    api_key=s.api_key,
                    base_url=s.base_url,
                    timeout=httpx.Timeout(s.timeout),
                    max_retries=0,
                    default_headers={
                        SOURCE_HEADER[0]: SOURCE_HEADER[1],
                        "User-Agent": user_agent("hermes-memory-supermemory"),
                    },
                    http_client=self._http,
                )
            return self._sdk

    def add(
        self,
        content: str,
        *,
        document_id: str | None = None,
        metadata: dict[str, str] | None = None,
        date: str | None = None,
        namespace: str | None = None,
    ) -> str:
        """Store ``content`` (appended to ``document_id`` when it exists) in ``namespace``
        (default: this client's); the document id."""
        kwargs: dict[str, Any] = {"content": content}
        if document_id:
            kwargs["id"] = document_id
        if metadata:
            kwargs["metadata"] = metadata
        if date:
            kwargs["date"] = date
        ref = self.sdk.add(namespace or self.namespace, **kwargs)
        return str(getattr(ref, "id", "") or "")

    def search(self, query: str, *, limit: int, mode: str | None = None) -> list[Found]:
        """Memories matching ``query``, best first."""
        answer = self.sdk.search(
            self.namespace, query=query, limit=limit, search_mode=mode or self.settings.search_mode
        )
        out: list[Found] = []
        for item in answer.results or []:
            text = _text(item.memory or item.chunk)
            if text:
                system = getattr(item, "system", None)
                updated = str(getattr(system, "updated_at", "") or "")
                out.append(Found(str(item.id), text, float(item.similarity or 0.0), updated))
        return out

    def profile(self) -> tuple[list[str], list[str]]:
        """The namespace profile: (static facts, dynamic context)."""
        answer = self.sdk.profile(self.namespace)
        profile = answer.profile
        static = [t for t in (_text(f.memory) for f in profile.static or []) if t]
        dynamic = [t for t in (_text(f.memory) for f in profile.dynamic or []) if t]
        return static, dynamic

    def forget(self, memory_id: str) -> dict[str, Any]:
        """Forget one memory by id: ``{"count", "errors"}``."""
        answer = self.sdk.memories.forget(self.namespace, ids=[memory_id])
        return {
            "count": int(answer.count),
            "errors": [{"id": e.id, "error": e.error} for e in answer.errors or []],
        }

    def forget_matching(self, query: str, *, dry_run: bool) -> dict[str, Any]:
        """Forget (or, with ``dry_run``, list) the memories matching ``query``."""
        answer = self.sdk.memories.forget_matching(self.namespace, query=query, dry_run=dry_run)
        return {
            "count": int(answer.count),
            "matches": [{"id": m.id, "memory": m.memory} for m in answer.matches or []],
        }

    def close(self) -> None:
        """Close the HTTP connection pool (idempotent)."""
        with self._lock:
            http, self._http, self._sdk = self._http, None, None
        if http is not None:
            http.close()
