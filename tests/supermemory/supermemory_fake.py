"""A loopback Supermemory server speaking the routes the ``supermemory`` 5.x SDK calls.

Routes and shapes are those of the SDK's generated client: ``POST /ns/{ns}/document``
(``{content, id?, metadata?, date?}`` → ``{id, status}``; a known id appends),
``POST /ns/{ns}/search`` (``{query, limit, searchMode}`` → ``{results:[{id, memory,
metadata, similarity, isLatest, isInference, system{updatedAt}}], searchTime}``),
``POST /ns/{ns}/profile`` (→ ``{profile:{static, dynamic, buckets}}``),
``DELETE /ns/{ns}/memories`` (``{ids}``) and ``DELETE /ns/{ns}/memories/semantic``
(``{query, dryRun}``) → ``{count, errors, matches}``. Every request is recorded (method,
path, headers, JSON body). Faults: statuses to answer next, ``hold`` (requests held until
the event is set) and ``garbage`` (every answer 200 with these bytes).
A memory here is one line of a stored document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes_memory_testing import FakeService, Raw, Seen, SilentServer, refused_url

__all__ = ["Doc", "FakeSupermemory", "Seen", "SilentServer", "refused_url"]


@dataclass
class Doc:
    ns: str
    id: str
    content: str
    metadata: dict[str, Any] | None = None
    adds: int = 1


class FakeSupermemory(FakeService):
    decode_paths = True

    def __init__(self, *, fail: list[int] | None = None) -> None:
        super().__init__()
        self.fail = list(fail or [])
        self.garbage = b""  # answer every request 200 with these bytes instead
        self.docs: list[Doc] = []
        self.forgotten: set[str] = set()
        self.static = ["Lives in 京都"]
        self.dynamic = ["Planning a trip to Oslo"]
        self._n = 0

    def route(self, seen: Seen) -> tuple[int, Any]:
        if self.garbage:
            return 200, Raw(self.garbage, None)
        method, body = seen.method, seen.body
        parts = seen.path.strip("/").split("/")
        if len(parts) < 3 or parts[0] != "ns":
            return 404, {"error": "Not Found"}
        ns, rest = parts[1], parts[2:]
        if method == "POST" and rest == ["document"]:
            return 200, {"id": self._add(ns, body), "status": "queued"}
        if method == "POST" and rest == ["search"]:
            found = self._search(ns, body["query"], int(body.get("limit") or 10))
            return 200, {"results": found, "searchTime": 1.5}
        if method == "POST" and rest == ["profile"]:
            return 200, {"profile": self._profile()}
        if method == "DELETE" and rest == ["memories"]:
            return 200, self._forget(ns, ids=body["ids"])
        if method == "DELETE" and rest == ["memories", "semantic"]:
            return 200, self._forget(ns, query=body["query"], dry=bool(body["dryRun"]))
        return 404, {"error": "Not Found"}

    def _add(self, ns: str, body: dict[str, Any]) -> str:
        with self.lock:
            doc_id = body.get("id")
            for doc in self.docs:
                if doc_id and doc.ns == ns and doc.id == doc_id:
                    doc.content += "\n" + body["content"]
                    doc.adds += 1
                    return doc.id
            self._n += 1
            doc = Doc(ns, doc_id or f"doc{self._n}", body["content"], body.get("metadata"))
            self.docs.append(doc)
            return doc.id

    def _memories(self, ns: str) -> list[tuple[str, str]]:
        out = []
        for d, doc in enumerate(self.docs):
            if doc.ns == ns:
                for n, line in enumerate(doc.content.split("\n")):
                    mid = f"m{d}.{n}"
                    if line.strip() and mid not in self.forgotten:
                        out.append((mid, line))
        return out

    def _matches(self, ns: str, query: str) -> list[tuple[str, str]]:
        words = [w for w in query.casefold().split() if len(w) > 2] or [query.casefold()]
        return [(i, t) for i, t in self._memories(ns) if any(w in t.casefold() for w in words)]

    def _search(self, ns: str, query: str, limit: int) -> list[dict[str, Any]]:
        with self.lock:
            found = self._matches(ns, query)[:limit]
        return [{"id": i, "memory": t, "metadata": {}, "similarity": 0.9, "isLatest": True,
                 "isInference": False, "system": {"updatedAt": "2026-01-01T00:00:00Z"}}
                for i, t in found]  # fmt: skip

    def _profile(self) -> dict[str, Any]:
        def facts(items: list[str]) -> list[dict[str, str]]:
            return [{"id": f"p{n}", "memory": t} for n, t in enumerate(items)]

        return {"static": facts(self.static), "dynamic": facts(self.dynamic), "buckets": {}}

    def _forget(self, ns: str, *, ids: list[str] | None = None, query: str = "",
                dry: bool = False) -> dict[str, Any]:  # fmt: skip
        with self.lock:
            known = dict(self._memories(ns))
            if ids is not None:
                hit = [(i, known[i]) for i in ids if i in known]
                errors = [{"id": i, "error": "not found"} for i in ids if i not in known]
            else:
                hit, errors = self._matches(ns, query), []
            if not dry:
                self.forgotten.update(i for i, _ in hit)
        return {"count": len(hit), "errors": errors,
                "matches": [{"id": i, "memory": t} for i, t in hit]}  # fmt: skip
