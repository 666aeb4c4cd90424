"""What OpenViking is sent in the background: turns as session messages, session commits and
curated facts as memory files — the rows of the kit's `PendingWrites` queue and how each
is sent."""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from hermes_memory_core import kit

if TYPE_CHECKING:
    from hermes_memory_openviking._client import OpenVikingClient

__all__ = ["accept", "memory_uri", "ov_session_id", "send"]

_SAFE_SESSION = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def ov_session_id(session_id: str) -> str:
    """The OpenViking session id for a hermes session id: itself when it is plain ASCII
    (letters, digits, ``_.-``, at most 128), else ``hermes-`` and a digest of it."""
    if _SAFE_SESSION.fullmatch(session_id) and session_id not in (".", ".."):
        return session_id
    return "hermes-" + hashlib.sha256(session_id.encode()).hexdigest()[:32]


def memory_uri(root: str, content: str) -> str:
    """Where a curated fact is stored: one file per fact under ``<root>/hermes/``."""
    digest = hashlib.sha256(kit.fact_key(content).encode()).hexdigest()[:24]
    return f"{root.rstrip('/')}/hermes/{digest}.md"


def accept(write: kit.Write) -> bool:
    """Whether a replayed spool row is a write this version can send."""
    op = write.get("op")
    if op == "messages":
        return isinstance(write.get("session_id"), str) and isinstance(write.get("messages"), list)
    if op == "commit":
        return isinstance(write.get("session_id"), str)
    return (
        op == "remember"
        and isinstance(write.get("uri"), str)
        and isinstance(write.get("content"), str)
    )


def send(client: OpenVikingClient | None, guard: kit.Guard | None, write: kit.Write) -> None:
    """Send one queued write through ``guard`` (a fact already stored, 409, is done)."""
    if client is None or guard is None:
        raise kit.Unavailable("OpenViking is not connected")
    session = str(write.get("session_id", ""))
    if write.get("op") == "messages":
        guard.call("session write", lambda: client.add_messages(session, write["messages"]))
    elif write.get("op") == "commit":
        guard.call("session commit", lambda: client.commit(session))
    else:
        try:
            guard.call("remember", lambda: client.write(write["uri"], write["content"]))
        except kit.CallFailed as exc:
            if exc.failure.status != 409:  # 409: the same fact is already stored
                raise
