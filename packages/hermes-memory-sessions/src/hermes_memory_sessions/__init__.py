"""SQLite FTS5 session archive and the session_search tool for hermes-memory.

* `SessionStore` — every message of every session in one SQLite file, with a word index
  and a CJK index (``hermes_memory_sessions.store``).
* `session_search` / `SESSION_SEARCH_SCHEMA` — the agent tool (discovery, scroll, browse).
* `SessionArchiveProvider` — the ``"sessions"`` memory provider for `MemoryManager`.
"""

from hermes_memory_sessions.provider import SessionArchiveProvider
from hermes_memory_sessions.store import SessionStore
from hermes_memory_sessions.tool import SESSION_SEARCH_SCHEMA, session_search

__all__ = ["SESSION_SEARCH_SCHEMA", "SessionArchiveProvider", "SessionStore", "session_search"]
