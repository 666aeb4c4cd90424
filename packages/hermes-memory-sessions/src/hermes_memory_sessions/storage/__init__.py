"""The SQLite archive: connection, schema, writes, reads, titles, maintenance.

`SessionStore` is assembled here from parts with one job each (``_connection``, ``_writes``,
``_imports``, ``_browse``, ``_titles``, ``_maintenance``, ``_reads``, ``_rewind``); the other
names are the message-row and title rules the PostgreSQL backend shares, and the guards that
tell our archive from Hermes Agent's own ``state.db`` (``_hermesdb``).
"""

from hermes_memory_sessions.storage._connection import ArchiveReadOnly, cjk_document
from hermes_memory_sessions.storage._hermesdb import (
    DatabaseInfo,
    HermesDatabaseError,
    check_not_hermes,
    inspect_database,
    legacy_archive_notice,
    readonly,
)
from hermes_memory_sessions.storage._maintenance import STALE_END_REASON
from hermes_memory_sessions.storage._message_rows import (
    MESSAGE_DATA_FIELDS,
    MESSAGE_FIELDS,
    PREVIEW_ELIGIBLE,
    check_id,
    count_tool_calls,
    encode_content,
    encode_json,
    schema_columns,
    scrub_messages,
)
from hermes_memory_sessions.storage._schema import TOOL_INDEX_PREFIX, ArchiveBusy
from hermes_memory_sessions.storage._store import SessionStore
from hermes_memory_sessions.storage._titles import (
    TITLE_MAX_CHARS,
    TITLE_SOURCES,
    clean_title,
    sanitize_title,
)

__all__ = [
    "MESSAGE_DATA_FIELDS",
    "MESSAGE_FIELDS",
    "PREVIEW_ELIGIBLE",
    "STALE_END_REASON",
    "TITLE_MAX_CHARS",
    "TITLE_SOURCES",
    "TOOL_INDEX_PREFIX",
    "ArchiveBusy",
    "ArchiveReadOnly",
    "DatabaseInfo",
    "HermesDatabaseError",
    "SessionStore",
    "check_id",
    "check_not_hermes",
    "cjk_document",
    "clean_title",
    "count_tool_calls",
    "encode_content",
    "encode_json",
    "inspect_database",
    "legacy_archive_notice",
    "readonly",
    "sanitize_title",
    "schema_columns",
    "scrub_messages",
]
