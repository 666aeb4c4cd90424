"""mem0 writes as kit `Write` rows, sent in order by `PendingWrites` (spooled at shutdown,
replayed at the next start).

Rows: ``{"op": "add", "messages": [...], "infer": bool, ...}`` for a synced turn or a
mirrored curated add; ``{"op": "replace", "old": text, "content": text, ...}`` updates the
matching fact (or adds it); ``{"op": "remove", "content": text, ...}`` deletes matches.
Every row carries ``what`` (its name in logs), ``user_id``, ``agent_id`` and ``metadata``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_memory_core.kit import Write, fact_key, truncate_text

if TYPE_CHECKING:
    from hermes_memory_mem0._backends import Backend
    from hermes_memory_mem0._connection import Connection
    from hermes_memory_mem0._settings import Mem0Settings

__all__ = ["accept", "mirror_fields", "previous_text", "row", "send", "turn_messages"]

_OPS = ("add", "replace", "remove")


def row(op: str, what: str, **fields: Any) -> Write:
    """A write row (see the module docstring)."""
    return {"op": op, "what": what, **fields}


def turn_messages(user: str, assistant: str, settings: Mem0Settings) -> list[dict[str, str]]:
    """A finished turn as mem0 messages, each cut at a sentence end (``sync_max_chars``)."""
    limit = settings.sync_max_chars
    batch = [
        {"role": role, "content": truncate_text(text or "", limit)}
        for role, text in (("user", user), ("assistant", assistant))
    ]
    return [m for m in batch if m["content"]]


def previous_text(metadata: dict[str, Any] | None) -> str:
    """The entry a curated replace or remove changed (``previous_content`` or ``old_text``)."""
    meta = metadata or {}
    return str(meta.get("previous_content") or meta.get("old_text") or "")


def mirror_fields(action: str, content: str) -> dict[str, Any]:
    """Extra row fields of a mirrored curated write (an add stores the entry verbatim)."""
    if action != "add":
        return {}
    return {"messages": [{"role": "user", "content": content}], "infer": False}


def accept(write: Write) -> bool:
    """Whether a replayed row is well formed (a corrupt one is skipped)."""
    return (
        write.get("op") in _OPS
        and isinstance(write.get("user_id"), str)
        and isinstance(write.get("metadata", {}), dict)
        and (isinstance(write.get("messages"), list) or isinstance(write.get("content"), str))
    )


def send(conn: Connection, write: Write) -> None:
    """Perform one row through the connection's guard (raises the kit's failures)."""
    conn.call(str(write.get("what") or write["op"]), lambda b: _apply(b, write),
              wait=conn.background_wait())  # fmt: skip


def _apply(b: Backend, w: Write) -> object:
    user_id, agent_id, meta = (
        w["user_id"],
        str(w.get("agent_id") or "hermes"),
        w.get("metadata", {}),
    )

    def add(messages: list[dict[str, str]], infer: bool) -> object:
        return b.add(messages, user_id=user_id, agent_id=agent_id, infer=infer, metadata=meta)

    def matching(text: str) -> list[str]:
        key = fact_key(text)
        hits = b.search(text, user_id=user_id, top_k=5, rerank=False)
        return [str(h["id"]) for h in hits if h.get("id") and fact_key(h["memory"]) == key]

    if w["op"] == "add":
        return add(w["messages"], bool(w.get("infer")))
    content = str(w["content"])
    if w["op"] == "replace":
        old = str(w.get("old") or "")
        ids = matching(old) if old.strip() else []
        if not ids:
            return add([{"role": "user", "content": content}], False)
        return b.update(ids[0], content)
    for memory_id in matching(content):
        b.delete(memory_id)
    return None
