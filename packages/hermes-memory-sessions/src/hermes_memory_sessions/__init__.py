"""SQLite FTS5 session archive and the session_search tool for hermes-memory."""
