"""The ten ``retaindb_*`` tools (five memory tools, five file-store tools): their schemas,
what each does, and the kit's `ToolTable` that runs them (argument checks, read-only agent
contexts, failures as JSON tool errors)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hermes_memory_core import kit
from hermes_memory_retaindb import _files as files
from hermes_memory_retaindb._client import memory_id, path_segment

if TYPE_CHECKING:
    from hermes_memory_retaindb._client import RetainDBClient

__all__ = ["MEMORY_TYPES", "SCOPES", "TOOLS", "TOOL_NAMES", "TOOL_SCHEMAS", "ToolContext"]

MEMORY_TYPES = ("factual", "preference", "goal", "instruction", "event", "opinion")
SCOPES = ("PROJECT", "USER", "ORG")
Args = dict[str, Any]
Answer = dict[str, Any]


class ToolContext(Protocol):
    """What the tools may use of their provider, and nothing else (the provider builds it:
    see ``RetainDBProvider.handle_tool_call``)."""

    @property
    def user(self) -> str:
        """The RetainDB user the memories belong to."""

    @property
    def session(self) -> str:
        """The current session id."""

    @property
    def profile(self) -> list[str]:
        """The cached profile (empty before the first read)."""

    @property
    def file_timeout(self) -> float:
        """Seconds a file transfer may take."""

    @property
    def cwd(self) -> Path:
        """The directory uploads are confined to."""

    def keep_profile(self, profile: list[str]) -> None:
        """Cache a profile just read."""

    def profile_changed(self) -> None:
        """Mark the cached profile stale (a write or a delete may have changed it)."""

    def write(self, op: str, **fields: Any) -> kit.Write:
        """A write record for ``op``, stamped with the user and session."""

    def enqueue(self, row: kit.Write) -> None:
        """Queue ``row`` for the write worker (sent later, spooled at shutdown)."""


def _public(memory: dict[str, Any]) -> dict[str, Any]:
    """The fields of a memory shown to the model."""
    keys = ("id", "content", "memory_type", "score", "importance", "created_at")
    return {k: memory[k] for k in keys if memory.get(k) is not None}


# ---------------------------------------------------------------------- memory tools
def profile(ctx: ToolContext, args: Args, client: RetainDBClient, guard: kit.Guard) -> Answer:
    """The user's profile memories (and the provider's cached profile refreshed)."""
    found = guard.call("profile", lambda: client.profile(ctx.user))
    ctx.keep_profile([str(m["content"]) for m in found])
    return {"memories": [_public(m) for m in found]}


def search(ctx: ToolContext, args: Args, client: RetainDBClient, guard: kit.Guard) -> Answer:
    """Ranked memories matching ``query``."""
    query = kit.required_text(args, "query")
    top_k = kit.int_arg(args, "top_k", 8, low=1, high=20)
    found = guard.call("search", lambda: client.search(ctx.user, ctx.session, query, top_k))
    return {"results": [_public(m) for m in found[:top_k]]}


def context(ctx: ToolContext, args: Args, client: RetainDBClient, guard: kit.Guard) -> Answer:
    """The cached profile and the memories relevant to ``query``."""
    query = kit.required_text(args, "query")
    found = guard.call("context", lambda: client.context(ctx.user, ctx.session, query))
    return {"profile": ctx.profile, "memories": [_public(m) for m in found]}


def forget(ctx: ToolContext, args: Args, client: RetainDBClient, guard: kit.Guard) -> Answer:
    """Delete one memory by id (the id checked before any request)."""
    memory = kit.required_text(args, "memory_id", max_chars=300)
    path_segment(memory, "memory id")
    guard.call("forget", lambda: client.delete(memory))
    ctx.profile_changed()
    return {"deleted": memory}


def remember(ctx: ToolContext, args: Args, client: RetainDBClient, guard: kit.Guard) -> Answer:
    """Store a memory now, or queue it while RetainDB is unreachable."""
    content = kit.required_text(args, "content", max_chars=8000)
    kind = kit.choice_arg(args, "memory_type", MEMORY_TYPES, "factual")
    importance = args.get("importance", 0.7)
    if isinstance(importance, bool) or not isinstance(importance, int | float):
        raise ValueError("'importance' must be a number from 0 to 1")
    weight = max(0.0, min(1.0, float(importance)))
    row = ctx.write("remember", content=content, memory_type=kind, importance=weight)
    answer = kit.call_or_queue(guard, "remember", lambda: client.add(row), lambda: ctx.enqueue(row))
    ctx.profile_changed()
    return {"stored": True, "id": memory_id(answer)}


# ---------------------------------------------------------------------- file-store tools
def _file_id(args: Args) -> str:
    file_id = kit.required_text(args, "file_id", max_chars=300)
    path_segment(file_id, "file id")  # refused before any request
    return file_id


def list_files(ctx: ToolContext, args: Args, client: RetainDBClient, guard: kit.Guard) -> Answer:
    """Stored files, optionally under ``prefix``."""
    prefix = kit.optional_text(args, "prefix")
    limit = kit.int_arg(args, "limit", 50, low=1, high=200)
    found = guard.call("list_files", lambda: client.list_files(prefix, limit))
    return {"files": [files.public_file(f) for f in found[:limit]]}


def read_file(ctx: ToolContext, args: Args, client: RetainDBClient, guard: kit.Guard) -> Answer:
    """A stored file's text (capped), or a note that it is binary."""
    file_id, wait = _file_id(args), ctx.file_timeout
    meta = guard.call("read_file", lambda: client.get_file(file_id))
    data, complete = guard.call(
        "read_file", lambda: client.file_content(file_id, files.MAX_READ_BYTES, timeout=wait)
    )
    shown: dict[str, Any] = {"file": files.public_file(meta)}
    if not files.is_text(meta, data):
        shown["content"] = None
        shown["note"] = "binary file: use retaindb_ingest_file to extract its text"
        return shown
    text, cut = files.decode_text(data, complete)
    return {**shown, "content": text, "truncated": cut}


def ingest_file(ctx: ToolContext, args: Args, client: RetainDBClient, guard: kit.Guard) -> Answer:
    """Have RetainDB extract memories from a stored file."""
    file_id, wait = _file_id(args), ctx.file_timeout
    answer = guard.call("ingest_file", lambda: client.ingest_file(file_id, ctx.user, timeout=wait))
    return {"ingested": file_id, "result": answer}


def delete_file(ctx: ToolContext, args: Args, client: RetainDBClient, guard: kit.Guard) -> Answer:
    """Delete a stored file."""
    file_id = _file_id(args)
    guard.call("delete_file", lambda: client.delete_file(file_id))
    return {"deleted": file_id}


def upload_file(ctx: ToolContext, args: Args, client: RetainDBClient, guard: kit.Guard) -> Answer:
    """Upload a local file confined to the working directory (see `files`), and optionally
    ingest it."""
    local = kit.required_text(args, "local_path", max_chars=4096)
    scope = kit.choice_arg(args, "scope", SCOPES, "PROJECT")
    ingest = args.get("ingest", False)
    if not isinstance(ingest, bool):
        raise ValueError("'ingest' must be true or false")
    destination = kit.optional_text(args, "remote_path")
    found = files.read_local_file(local, ctx.cwd)
    target = files.remote_path(destination, found.name)
    wait = ctx.file_timeout
    stored = guard.call(
        "upload_file",
        lambda: client.upload_file(
            found.name, found.data, found.mime_type, target, scope, timeout=wait
        ),
    )
    shown: dict[str, Any] = {"file": files.public_file(stored), "bytes": len(found.data)}
    file_id = str(stored.get("id") or "")
    if ingest and file_id:
        try:
            shown["ingest"] = guard.call(
                "ingest_file", lambda: client.ingest_file(file_id, ctx.user, timeout=wait)
            )
        except (kit.Unavailable, kit.CallFailed) as exc:  # the upload itself worked
            shown["ingest_error"] = str(exc)
    return shown


# ---------------------------------------------------------------------- the table
_schema = kit.tool_schema
_QUERY = {"type": "string", "description": "What to look for."}
_FILE_ID = {"type": "string", "description": "The file's id (from upload or list)."}
TOOLS = kit.ToolTable(
    kit.Tool(
        _schema(
            "retaindb_profile",
            "The user's stable profile from RetainDB: preferences, facts and patterns.",
            {},
            [],
        ),
        profile,
    ),
    kit.Tool(
        _schema(
            "retaindb_search",
            "Search RetainDB memories; ranked results with their ids.",
            {"query": _QUERY, "top_k": {"type": "integer", "description": "1-20 (default 8)."}},
            ["query"],
        ),
        search,
    ),
    kit.Tool(
        _schema(
            "retaindb_context",
            "What RetainDB holds that matters for a task: the "
            "profile and the memories relevant to it.",
            {"query": _QUERY},
            ["query"],
        ),
        context,
    ),
    kit.Tool(
        _schema(
            "retaindb_remember",
            "Store a fact, preference or decision in RetainDB.",
            {
                "content": {"type": "string", "description": "The fact to remember."},
                "memory_type": {
                    "type": "string",
                    "enum": list(MEMORY_TYPES),
                    "description": "Category (default factual).",
                },
                "importance": {"type": "number", "description": "0-1 (default 0.7)."},
            },
            ["content"],
        ),
        remember,
        writes=True,
    ),
    kit.Tool(
        _schema(
            "retaindb_forget",
            "Delete one RetainDB memory by id (from retaindb_search).",
            {"memory_id": {"type": "string", "description": "The memory's id."}},
            ["memory_id"],
        ),
        forget,
        writes=True,
    ),
    kit.Tool(
        _schema(
            "retaindb_upload_file",
            "Upload a local file (inside the working "
            "directory, regular file, at most 10 MiB) to the RetainDB file store; "
            "returns its id and rdb:// URI.",
            {
                "local_path": {
                    "type": "string",
                    "description": "The file, relative to the working directory.",
                },
                "remote_path": {
                    "type": "string",
                    "description": "Destination, e.g. /reports/q1.md (default /<file name>).",
                },
                "scope": {
                    "type": "string",
                    "enum": list(SCOPES),
                    "description": "Who can see it (default PROJECT).",
                },
                "ingest": {
                    "type": "boolean",
                    "description": "Also extract memories from it (default false).",
                },
            },
            ["local_path"],
        ),
        upload_file,
        writes=True,
    ),
    kit.Tool(
        _schema(
            "retaindb_list_files",
            "List files in the RetainDB file store.",
            {
                "prefix": {"type": "string", "description": "Only paths starting with this."},
                "limit": {"type": "integer", "description": "1-200 (default 50)."},
            },
            [],
        ),
        list_files,
    ),
    kit.Tool(
        _schema(
            "retaindb_read_file",
            "The text of a stored file (at most 32,000 characters).",
            {"file_id": _FILE_ID},
            ["file_id"],
        ),
        read_file,
    ),
    kit.Tool(
        _schema(
            "retaindb_ingest_file",
            "Chunk, embed and extract memories from a stored "
            "file so its contents become searchable.",
            {"file_id": _FILE_ID},
            ["file_id"],
        ),
        ingest_file,
        writes=True,
    ),
    kit.Tool(
        _schema(
            "retaindb_delete_file", "Delete a stored file.", {"file_id": _FILE_ID}, ["file_id"]
        ),
        delete_file,
        writes=True,
    ),
    service="RetainDB",
)
TOOL_SCHEMAS: tuple[dict[str, Any], ...] = tuple(TOOLS.schemas())
TOOL_NAMES = TOOLS.names
