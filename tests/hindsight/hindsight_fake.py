"""A loopback Hindsight server speaking the routes ``hindsight-client`` 1.1 calls.

Routes and shapes are those of the client's generated API (``hindsight_client_api``):
``GET /version`` → ``{api_version, features{…}}``; ``POST /v1/default/banks/{bank}/memories``
(``{items:[{content, timestamp, context, metadata, document_id, update_mode, …}], async}``
→ ``{success, bank_id, items_count, async}``); ``POST …/memories/recall`` (``{query, budget,
max_tokens, …}`` → ``{results:[{id, text, type, …}]}``); ``POST …/reflect`` (``{query,
budget, …}`` → ``{text}``). Every request is recorded (method, path, headers, JSON body) so
tests can assert on exactly what the real client sent. Faults: a list of statuses to
answer next, ``hold`` (requests held until the event is set), and ``version=None`` for a server without
``/version`` (404).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes_memory_testing import FakeService, Seen, SilentServer, refused_url

__all__ = ["Doc", "FakeHindsight", "Seen", "SilentServer", "refused_url"]

FEATURES = {
    "observations": False,
    "mcp": False,
    "worker": True,
    "bank_config_api": False,
    "bank_llm_health": False,
    "file_upload_api": False,
    "document_export_api": False,
    "document_import_api": False,
    "audit_log": False,
    "llm_trace": False,
    "store_document_text": True,
}


@dataclass
class Doc:
    bank: str
    document_id: str | None
    content: str
    context: str | None
    metadata: dict[str, str] | None


class FakeHindsight(FakeService):
    decode_paths = True

    def __init__(
        self, *, version: str | None = "0.6.2", fail: list[int] | None = None,
        reflect_text: str = "The user keeps bees.",
    ) -> None:  # fmt: skip
        super().__init__()
        self.version = version
        self.fail = list(fail or [])
        self.docs: list[Doc] = []
        self.reflect_text = reflect_text

    def error_body(self, status: int, message: str) -> Any:
        return {"detail": message}

    def route(self, seen: Seen) -> tuple[int, Any]:
        method, path, body = seen.method, seen.path, seen.body
        if method == "GET" and path == "/version":
            if self.version is None:
                return 404, {"detail": "Not Found"}
            return 200, {"api_version": self.version, "features": FEATURES}
        parts = path.strip("/").split("/")
        if len(parts) < 5 or parts[:3] != ["v1", "default", "banks"]:
            return 404, {"detail": "Not Found"}
        bank, rest = parts[3], parts[4:]
        if method == "POST" and rest == ["memories"]:
            self._retain(bank, body)
            return 200, {"success": True, "bank_id": bank, "items_count": len(body["items"]),
                         "async": bool(body.get("async"))}  # fmt: skip
        if method == "POST" and rest == ["memories", "recall"]:
            return 200, {"results": self._recall(bank, body["query"])}
        if method == "POST" and rest == ["reflect"]:
            return 200, {"text": self.reflect_text}
        return 404, {"detail": "Not Found"}

    def _retain(self, bank: str, body: dict[str, Any]) -> None:
        with self.lock:
            for item in body["items"]:
                doc_id = item.get("document_id")
                mode = item.get("update_mode")
                same = [
                    d for d in self.docs if d.bank == bank and doc_id and d.document_id == doc_id
                ]
                if same and mode == "append":
                    same[0].content += "\n\n" + item["content"]
                    continue
                if same:  # replace (the server's default for an existing document)
                    self.docs.remove(same[0])
                self.docs.append(Doc(bank, doc_id, item["content"], item.get("context"),
                                     item.get("metadata")))  # fmt: skip

    def _recall(self, bank: str, query: str) -> list[dict[str, Any]]:
        words = [w for w in query.casefold().split() if len(w) > 2] or [query.casefold()]
        out = []
        with self.lock:
            for n, doc in enumerate(self.docs):
                if doc.bank != bank:
                    continue
                for line in doc.content.split("\n"):
                    if any(w in line.casefold() for w in words):
                        out.append({"id": f"m{n}-{len(out)}", "text": line, "type": "world",
                                    "document_id": doc.document_id})  # fmt: skip
        return out
