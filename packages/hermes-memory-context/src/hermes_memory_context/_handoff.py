"""Carrying a compressed conversation forward in the session archive, through the manager.

Hermes' legacy compression ends the session with ``end_reason = "compression"`` and goes on
in a new one whose ``parent_session_id`` is the old session and whose title is the next of
the lineage (``"x"`` → ``"x #2"``). Here the manager's `on_session_switch` does the lineage
part (the ``sessions`` provider ends the old session and creates the continuation; external
providers learn the new id) and the compressed conversation (summary and kept tail) is
recorded as the continuation's first messages, so resuming the chain at its tip gives back
exactly what the model saw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ARCHIVE_PROVIDER", "continue_in_archive"]

#: The name of the session archive's provider in a `MemoryManager`.
ARCHIVE_PROVIDER = "sessions"


def continue_in_archive(
    manager: Any, session_id: str | None, messages: Sequence[Mapping[str, Any]]
) -> str | None:
    """Switch ``manager`` to a continuation of ``session_id`` holding ``messages``.

    Returns the continuation's id (the manager's `session_id` from now on), or None when
    the manager has no session archive or no current session. Raises what the manager
    raises, or `RuntimeError` for a manager already shut down. An archive that records
    nothing for this agent (a subagent's) still moves on to the new id.
    """
    from hermes_memory_core import new_session_id, scrub_secrets

    if getattr(manager, "closed", False):  # before the provider reopens its store for nothing
        raise RuntimeError("the memory manager was shut down (shutdown_all)")
    provider = manager.get_provider(ARCHIVE_PROVIDER)
    record = getattr(provider, "sync_turn", None)
    if provider is None or record is None:
        return None
    old = session_id or getattr(manager, "session_id", "") or ""
    if not old:
        return None
    store = getattr(provider, "store", None)
    reopen = getattr(store, "reopen_session", None)
    row = store.get_session(old) if store is not None else None
    if (
        reopen is not None
        and row
        and row.get("ended_at")
        and row.get("end_reason") != "compression"
    ):
        # A resumed session that was ended (``session_end`` at the last exit): the first end
        # written wins, so clear it for the compression's end to land and the lineage to hold.
        reopen(old)
    new = new_session_id()
    manager.on_session_switch(new, parent_session_id=old)
    rows: list[dict[str, Any]] = [dict(m) for m in messages if m.get("role") != "system"]
    if getattr(manager, "scrub", True):
        rows = scrub_secrets(rows)
    # Through the provider, so it knows these messages are recorded (a host that passes the
    # whole transcript to sync_all later does not record them twice).
    record("", "", session_id=new, messages=rows)
    return new
