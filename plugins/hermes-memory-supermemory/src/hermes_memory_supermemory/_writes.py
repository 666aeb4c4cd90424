"""What Supermemory is sent in the background — a session's turns as parts of one document,
curated facts as documents of their own, the rows of the kit's `PendingWrites` queue — and
how each is sent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_memory_core import kit
from hermes_memory_supermemory._tools import SOURCE

if TYPE_CHECKING:
    from hermes_memory_supermemory._client import SupermemoryClient

__all__ = ["accept", "parts", "send"]


def accept(write: kit.Write) -> bool:
    """A spooled write this version can send (corrupt rows are skipped)."""
    return (
        isinstance(write.get("content"), str)
        and bool(write["content"].strip())
        and isinstance(write.get("namespace"), str)
        and isinstance(write.get("document_id", ""), str)
        and isinstance(write.get("kind", ""), str)
    )


def parts(text: str, limit: int) -> list[str]:
    """``text`` cut into pieces of at most ``limit`` characters, at turn boundaries when
    possible (a single longer turn is cut where it must be)."""
    out: list[str] = []
    current = ""
    for turn in text.split("\n\n"):
        while len(turn) > limit:
            if current:
                out.append(current)
                current = ""
            out.append(turn[:limit])
            turn = turn[limit:]
        joined = f"{current}\n\n{turn}" if current else turn
        if len(joined) > limit:
            out.append(current)
            current = turn
        else:
            current = joined
    if current:
        out.append(current)
    return out


def send(client: SupermemoryClient | None, guard: kit.Guard | None, write: kit.Write) -> None:
    """Add one queued write to its namespace (a known document id appends)."""
    if guard is None or client is None:
        raise kit.Unavailable("Supermemory is not initialised")
    kind = str(write.get("kind") or "conversation")
    guard.call(
        "add",
        lambda: client.add(
            str(write["content"]),
            document_id=str(write.get("document_id") or "") or None,
            metadata={**SOURCE, "kind": kind},
            date=str(write.get("at") or "") or None,
            namespace=str(write["namespace"]),
        ),
    )
