"""Honcho writes as kit `Write` rows: a turn's messages, a conclusion about the user, or the
removal of one.

A row is ``{"kind": "messages" | "conclusion" | "forget", "session": key, "items": [[peer,
text], ...], "sent": n}``; ``sent`` counts messages the server already accepted, so a partial
batch resumes where it stopped. A ``forget`` row deletes the conclusions holding a curated
entry that was removed (`hermes_memory_honcho._conclusions`). Queueing, ordering, spooling
and replay are the kit's (`hermes_memory_core.kit.PendingWrites`).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from hermes_memory_core.kit import Write
from hermes_memory_honcho._conclusions import ConclusionIndex, delete_entry, record_created
from hermes_memory_honcho._config import ID_PATTERN

if TYPE_CHECKING:
    from hermes_memory_honcho._client import HonchoClient

__all__ = [
    "MESSAGES_PER_BATCH",
    "accept",
    "conclusion",
    "forget",
    "messages",
    "send",
    "split_message",
    "turn",
]

#: Messages per ``add_messages`` request (the server's batch limit).
MESSAGES_PER_BATCH = 100
_CONTINUED = "[continued] "


def messages(session: str, items: list[tuple[str, str]]) -> Write:
    """A turn's messages (``(peer_id, text)`` pairs) for ``session.add_messages``."""
    return {"kind": "messages", "session": session, "items": [list(i) for i in items], "sent": 0}


def conclusion(session: str, peer_id: str, text: str) -> Write:
    """A conclusion about ``peer_id`` (a mirrored curated-memory write)."""
    return {"kind": "conclusion", "session": session, "items": [[peer_id, text]], "sent": 0}


def forget(session: str, peer_id: str, text: str) -> Write:
    """The removal of curated entry ``text`` about ``peer_id``: its conclusions are deleted."""
    return {"kind": "forget", "session": session, "items": [[peer_id, text]], "sent": 0}


def turn(client: HonchoClient, session: str, user: str, assistant: str) -> Write | None:
    """A finished turn as one ``messages`` row (split at the server's size limit), or None.

    A recall block a host left in the user's text is never stored back.
    """
    if "<memory-context" in user.lower():
        from hermes_memory_guard import sanitize_context  # loads the scanner

        user = sanitize_context(user)
    limit = client.cfg.message_max_chars
    items = [
        (peer, chunk)
        for peer, text in ((client.user_id, user), (client.ai_id, assistant))
        for chunk in split_message(text, limit)
    ]
    return messages(session, items) if items else None


def accept(write: Write) -> bool:
    """Whether a replayed row is well formed (a corrupt one is skipped)."""
    items = write.get("items")
    return (
        write.get("kind") in ("messages", "conclusion", "forget")
        and isinstance(write.get("session"), str)
        and bool(ID_PATTERN.match(write["session"]))
        and isinstance(items, list)
        and all(isinstance(i, list | tuple) and len(i) == 2 for i in items)
        and isinstance(write.get("sent", 0), int)
    )


def send(client: HonchoClient, index: ConclusionIndex, write: Write) -> None:
    """Send one row through the client's guard (raises the kit's failures).

    Conclusions created are recorded in ``index``; a ``forget`` row deletes the ones
    holding its entry (already gone counts as done).
    """
    items = [(str(p), str(c)) for p, c in write["items"]]
    if write["kind"] == "forget":
        for _, text in items[write.get("sent", 0) :]:
            delete_entry(client, index, text)
            write["sent"] = write.get("sent", 0) + 1
        return
    session, user, ai = client.ensure(write["session"])
    if write["kind"] == "conclusion":
        payload = [{"content": c, "session_id": write["session"]} for _, c in items]
        created = client.call("conclusions.create", lambda: ai.conclusions_of(user).create(payload))
        record_created(index, client, created, [c for _, c in items])
        return
    peers: dict[str, Any] = {client.user_id: user, client.ai_id: ai}
    while write.get("sent", 0) < len(items):
        start = write.get("sent", 0)
        batch = items[start : start + MESSAGES_PER_BATCH]
        msgs = [peers.get(p, user).message(c) for p, c in batch if c.strip()]
        if msgs:
            client.call("session.add_messages", partial(session.add_messages, msgs))
        write["sent"] = start + len(batch)


def split_message(content: str, max_chars: int) -> list[str]:
    """Split ``content`` into pieces of at most ``max_chars``; later pieces say [continued].

    Cuts prefer a paragraph, line or sentence end in the second half of the window. Empty
    or whitespace-only content gives ``[]``.
    """
    text = content.strip()
    if not text:
        return []
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    while text:
        room = max_chars - (len(_CONTINUED) if pieces else 0)
        if len(text) <= room:
            piece, text = text, ""
        else:
            cut = -1
            for sep in ("\n\n", "\n", ". ", "。", " "):
                cut = text.rfind(sep, room // 2, room)
                if cut != -1:
                    cut += len(sep)
                    break
            if cut <= 0:
                cut = room
            piece, text = text[:cut].rstrip(), text[cut:].lstrip()
        if piece:
            pieces.append(f"{_CONTINUED}{piece}" if pieces else piece)
    return pieces
