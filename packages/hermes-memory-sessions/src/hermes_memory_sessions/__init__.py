"""SQLite FTS5 session archive and the session_search tool for hermes-memory.

* `SessionStore` — every message of every session in one SQLite file, with a word index
  and a CJK index (``hermes_memory_sessions.storage``).
* `session_search` / `SESSION_SEARCH_SCHEMA` — the agent tool (discovery, scroll, browse).
* `SessionArchiveProvider` — the ``"sessions"`` memory provider for `MemoryManager`.
* `load_conversation` / `undo` — resume a conversation at its compression tip, take back
  the last exchanges (``hermes_memory_sessions._conversation``).
"""

from hermes_memory_sessions._conversation import (
    Conversation,
    SessionNotFoundError,
    UndoResult,
    load_conversation,
    undo,
)
from hermes_memory_sessions.provider import SessionArchiveProvider
from hermes_memory_sessions.storage._store import SessionStore
from hermes_memory_sessions.tool import SESSION_SEARCH_SCHEMA, session_search

__all__ = [
    "SESSION_SEARCH_SCHEMA",
    "Conversation",
    "SessionArchiveProvider",
    "SessionNotFoundError",
    "SessionStore",
    "UndoResult",
    "load_conversation",
    "session_search",
    "undo",
]
