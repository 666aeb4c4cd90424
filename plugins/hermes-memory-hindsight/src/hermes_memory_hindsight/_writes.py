"""What Hindsight is sent in the background — batches of turns and curated facts, the rows of
the kit's `PendingWrites` queue — and how each is retained."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_memory_core import kit

if TYPE_CHECKING:
    from hermes_memory_hindsight._client import HindsightClient

__all__ = ["accept", "send"]


def accept(write: kit.Write) -> bool:
    """A spooled retain this version can send (corrupt rows are skipped)."""
    return (
        isinstance(write.get("content"), str)
        and bool(write["content"].strip())
        and isinstance(write.get("document_id", ""), str)
        and isinstance(write.get("seq", 0), int)
    )


def send(client: HindsightClient | None, guard: kit.Guard | None, write: kit.Write) -> None:
    """Retain one queued write: appended to its session's document on servers that can
    append, else as a document of its own (``<session>.<n>``)."""
    if guard is None or client is None:
        raise kit.Unavailable("Hindsight is not initialised")

    def retain() -> None:
        document = str(write.get("document_id") or "")
        append = bool(document) and client.server_appends()
        if document and not append:
            document = f"{document}.{int(write.get('seq') or 0)}"
        client.retain(
            str(write["content"]),
            document_id=document or None,
            append=append,
            context=str(write.get("context") or "") or None,
            timestamp=str(write.get("at") or "") or None,
            metadata={"source": "hermes-memory"},
        )

    guard.call("retain", retain)
