"""`RetainDBProvider`: RetainDB (https://retaindb.com) as the external tier of hermes-memory.

* **Recall** — at session start the user's profile is read in the background; each turn's
  `prefetch` adds the memories RetainDB's context query finds for the message (the
  "overlay": profile + relevant memories, without what the curated tier already shows).
* **Writes** — each finished turn is handed to ``/v1/memory/ingest/session`` and each curated
  addition mirrored to ``/v1/memory``, through a write-behind queue journaled to disk as each
  write is queued (`JournaledWrites`): a crash loses nothing, the next start replays it.
* **Tools** — ``retaindb_profile``, ``retaindb_search``, ``retaindb_context``,
  ``retaindb_remember``, ``retaindb_forget``, and the file store: ``retaindb_upload_file``,
  ``retaindb_list_files``, ``retaindb_read_file``, ``retaindb_ingest_file``,
  ``retaindb_delete_file`` (uploads confined as `hermes_memory_retaindb.files` describes).

Every call goes through the kit's `Guard` (breaker, failure taxonomy, health record read by
``hermes-memory provider status``); a failing RetainDB costs a turn at most its timeouts.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory_core import kit
from hermes_memory_core.provider import RecallStatus
from hermes_memory_core.toolresult import tool_error, tool_result
from hermes_memory_core.worker import SerialWorker
from hermes_memory_retaindb.journal import JournaledWrites
from hermes_memory_retaindb.settings import RetainDBSettings

if TYPE_CHECKING:
    from hermes_memory_retaindb.client import RetainDBClient

__all__ = ["TOOL_SCHEMAS", "RetainDBProvider"]

logger = logging.getLogger("hermes_memory_retaindb")

MEMORY_TYPES = ("factual", "preference", "goal", "instruction", "event", "opinion")


def _schema(
    name: str, description: str, props: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    params = {"type": "object", "properties": props, "required": required}
    return {"name": name, "description": description, "parameters": params}


_QUERY = {"type": "string", "description": "What to look for."}
_FILE_ID = {"type": "string", "description": "The file's id (from upload or list)."}
SCOPES = ("PROJECT", "USER", "ORG")
FILE_TOOLS = frozenset({"retaindb_upload_file", "retaindb_list_files", "retaindb_read_file",
                        "retaindb_ingest_file", "retaindb_delete_file"})  # fmt: skip
TOOL_SCHEMAS: tuple[dict[str, Any], ...] = (
    _schema("retaindb_profile", "The user's stable profile from RetainDB: preferences, facts "
            "and patterns.", {}, []),
    _schema("retaindb_search", "Search RetainDB memories; ranked results with their ids.",
            {"query": _QUERY, "top_k": {"type": "integer", "description": "1-20 (default 8)."}},
            ["query"]),
    _schema("retaindb_context", "What RetainDB holds that matters for a task: the profile and "
            "the memories relevant to it.", {"query": _QUERY}, ["query"]),
    _schema("retaindb_remember", "Store a fact, preference or decision in RetainDB.",
            {"content": {"type": "string", "description": "The fact to remember."},
             "memory_type": {"type": "string", "enum": list(MEMORY_TYPES),
                             "description": "Category (default factual)."},
             "importance": {"type": "number", "description": "0-1 (default 0.7)."}},
            ["content"]),
    _schema("retaindb_forget", "Delete one RetainDB memory by id (from retaindb_search).",
            {"memory_id": {"type": "string", "description": "The memory's id."}},
            ["memory_id"]),
    _schema("retaindb_upload_file", "Upload a local file (inside the working directory, "
            "regular file, at most 10 MiB) to the RetainDB file store; returns its id and "
            "rdb:// URI.",
            {"local_path": {"type": "string", "description": "The file, relative to the "
                            "working directory."},
             "remote_path": {"type": "string", "description": "Destination, e.g. "
                             "/reports/q1.md (default /<file name>)."},
             "scope": {"type": "string", "enum": list(SCOPES),
                       "description": "Who can see it (default PROJECT)."},
             "ingest": {"type": "boolean", "description": "Also extract memories from it "
                        "(default false)."}},
            ["local_path"]),
    _schema("retaindb_list_files", "List files in the RetainDB file store.",
            {"prefix": {"type": "string", "description": "Only paths starting with this."},
             "limit": {"type": "integer", "description": "1-200 (default 50)."}}, []),
    _schema("retaindb_read_file", "The text of a stored file (at most 32,000 characters).",
            {"file_id": _FILE_ID}, ["file_id"]),
    _schema("retaindb_ingest_file", "Chunk, embed and extract memories from a stored file so "
            "its contents become searchable.", {"file_id": _FILE_ID}, ["file_id"]),
    _schema("retaindb_delete_file", "Delete a stored file.", {"file_id": _FILE_ID},
            ["file_id"]),
)  # fmt: skip
TOOL_NAMES = frozenset(s["name"] for s in TOOL_SCHEMAS)


def _accept(write: kit.Write) -> bool:
    """Whether a replayed spool row is a write this version can send."""
    if not (isinstance(write.get("user_id"), str) and isinstance(write.get("session_id"), str)):
        return False
    if write.get("op") == "ingest":
        return isinstance(write.get("messages"), list)
    return write.get("op") == "remember" and isinstance(write.get("content"), str)


def _classify(exc: BaseException) -> kit.Failure:
    from hermes_memory_retaindb.client import classify  # httpx: only once a call failed

    return classify(exc)


def _public(memory: dict[str, Any]) -> dict[str, Any]:
    """The fields of a memory shown to the model."""
    keys = ("id", "content", "memory_type", "score", "importance", "created_at")
    return {k: memory[k] for k in keys if memory.get(k) is not None}


class RetainDBProvider(kit.RemoteProvider):
    """RetainDB as a hermes-memory provider. Settings: the ``retaindb:`` section of
    ``config.yaml``, then ``RETAINDB_API_KEY``, ``RETAINDB_BASE_URL``, ``RETAINDB_PROJECT``.

    :param hermes_home: the hermes home (health record, write journal).
    :param config: the whole parsed ``config.yaml``.
    :param transport: replaces the network under the httpx client (tests).
    :param environ: environment mapping to read instead of ``os.environ``.

    Constructing is cheap: no I/O, no network, no httpx import.
    """

    name = "retaindb"
    settings_class = RetainDBSettings  # validated by core; unavailable_reason from it
    settings: RetainDBSettings
    _init_error = "the provider is not initialised"
    _client: RetainDBClient | None = None
    _recall: SerialWorker | None = None
    _session = "default"
    _user = "default"
    _profile: list[str] | None = None
    _profile_at = 0.0
    _last_count = 0
    _cwd: Path | None = None

    # ------------------------------------------------------------------ settings
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """The ten ``retaindb_*`` tools (five memory tools, five file-store tools)."""
        return [dict(s) for s in TOOL_SCHEMAS]

    # ------------------------------------------------------------------ lifecycle
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Connect lazily, replay writes left by an earlier crash or shutdown, and start
        reading the user's profile in the background. Never waits on the network.

        Recognised kwargs: ``hermes_home``, ``agent_context`` (writes only for
        ``"primary"``), ``user_id``, ``curated_entries``, ``cwd`` (the working directory
        uploads are confined to; default: the process's current directory at each call).
        """
        self._begin(kwargs)
        self._cwd = Path(str(kwargs["cwd"])) if kwargs.get("cwd") else None
        self._session = session_id or "default"
        s = self.settings
        guard = self._make_guard(
            _classify,
            threshold=s.breaker_threshold, cooldown=s.breaker_cooldown,
            label="RetainDB", logger=logger,
        )  # fmt: skip
        guard.retries = s.retries
        reason = self.unavailable_reason()
        if reason:
            self._init_error = reason
            logger.warning("RetainDB provider inactive: %s", reason)
            guard.report("degraded", reason)
            return
        from hermes_memory_retaindb.client import RetainDBClient  # httpx: only when used

        self._user = s.user_id or str(kwargs.get("user_id") or "") or "default"
        self._client = RetainDBClient(
            api_key=s.api_key, base_url=s.base_url, project=s.project,
            timeout=s.timeout, transport=self._transport,
        )  # fmt: skip
        self._init_error = ""
        self._recall = SerialWorker("retaindb-recall")
        self._pending = JournaledWrites(guard, self._send, home=self._home,
                                        max_pending=s.max_pending, accept=_accept)  # fmt: skip
        if self._writes_enabled:
            self._pending.restore()
        self._recall.submit(self._refresh_profile)

    @property
    def active(self) -> bool:
        """Initialised with a client and not shut down (RetainDB may still be failing)."""
        return self._client is not None and not self._closed

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        """Later turns and tools belong to ``new_session_id``."""
        self._session = new_session_id or self._session

    def _flush_timeout(self) -> float:
        return float(self.settings.flush_timeout)

    def _shutdown_timeout(self) -> float:
        return float(self.settings.shutdown_timeout)

    def _release(self, drained: bool) -> None:
        recall, writer = self._recall, self._pending.worker if self._pending else None
        if recall is not None:
            recall.close(0)
        client = self._client
        if client is None:
            return

        def idle() -> bool:
            return not ((recall and recall.pending) or (writer and writer.pending))

        if drained and idle():
            client.close()
            return
        # A call is still in flight: close the pool once it returned (its timeout bounds it).
        deadline = time.monotonic() + 3 * float(self.settings.timeout) + 5

        def later() -> None:
            while time.monotonic() < deadline and not idle():
                time.sleep(0.05)
            client.close()

        threading.Thread(target=later, name="retaindb-close", daemon=True).start()

    # ------------------------------------------------------------------ writes
    def _send(self, write: kit.Write) -> None:
        client, guard = self._client, self._guard
        if client is None or guard is None:
            raise kit.Unavailable("RetainDB is not connected")
        if write.get("op") == "ingest":
            guard.call("ingest", lambda: client.ingest(write))
        else:
            guard.call("remember", lambda: client.add(write))
            self._profile_at = 0.0  # the profile may have changed

    def _write(self, op: str, **fields: Any) -> kit.Write:
        return {"op": op, "user_id": self._user, "session_id": self._session, **fields}

    def sync_turn(self, user_content: str, assistant_content: str, **kwargs: Any) -> None:
        """Queue the turn for RetainDB's session ingest (journaled; returns at once)."""
        if not self.active or not user_content.strip():
            return
        now = datetime.now(UTC).isoformat()
        row = self._write(
            "ingest",
            messages=[{"role": "user", "content": user_content, "timestamp": now},
                      {"role": "assistant", "content": assistant_content, "timestamp": now}],
        )  # fmt: skip
        if kwargs.get("session_id"):
            row["session_id"] = str(kwargs["session_id"])
        self._enqueue(row)

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """Mirror curated additions as RetainDB memories (``user`` ones as preferences)."""
        if action != "add" or not content.strip():
            return
        self._known_facts.add(kit.fact_key(content))
        if self.active:
            kind = "preference" if target == "user" else "factual"
            self._enqueue(self._write("remember", content=content.strip(), memory_type=kind,
                                      importance=0.7))  # fmt: skip

    # ------------------------------------------------------------------ recall
    def system_prompt_block(self) -> str:
        """One short paragraph naming the tools (empty when inactive)."""
        if not self.active or self._client is None:
            return ""
        return (
            f"# RetainDB memory\nActive (project {self._client.project}). Relevant memories "
            "are recalled into each turn; use retaindb_search to look further, "
            "retaindb_remember to store a fact, retaindb_profile for the user's profile."
        )

    def _refresh_profile(self, *, inline: bool = False) -> list[str]:
        client, guard = self._client, self._guard
        if client is None or guard is None:
            return []
        wait = self.settings.recall_timeout
        try:
            items = guard.call("profile", lambda: client.profile(self._user, timeout=wait))
        except (kit.Unavailable, kit.CallFailed):
            return self._profile or []
        self._profile = [str(m["content"]) for m in items]
        self._profile_at = time.monotonic()
        return self._profile

    def _profile_stale(self) -> bool:
        return time.monotonic() - self._profile_at > float(self.settings.profile_refresh)

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Refresh the profile in the background when it is older than ``profile_refresh``."""
        if self.active and self._recall is not None and self._profile_stale():
            self._recall.submit(self._refresh_profile)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """The overlay for this turn: the profile (fetched at session start) and the memories
        RetainDB's context query finds for ``query``, without the curated facts.

        At most one request of ``recall_timeout`` seconds when the profile is cached, two when
        it is not; ``""`` when RetainDB fails (the failure is on the health record).
        """
        client, guard = self._client, self._guard
        self._last_count = 0
        if not self.active or client is None or guard is None or not query.strip():
            return ""
        profile = self._profile
        if profile is None:
            profile = self._refresh_profile()
        wait = self.settings.recall_timeout
        session = session_id or self._session
        try:
            found = guard.call("context", lambda: client.context(self._user, session, query,
                                                                   timeout=wait))  # fmt: skip
        except (kit.Unavailable, kit.CallFailed):
            found = []
        head, used = kit.bullet_block("## RetainDB profile", profile, exclude=self._known_facts,
                                      max_items=8, max_chars=700)  # fmt: skip
        shown = self._known_facts | {kit.fact_key(p) for p in profile}
        body, more = kit.bullet_block("## Relevant memories", [str(m["content"]) for m in found],
                                      exclude=shown, max_items=8, max_chars=900)  # fmt: skip
        self._last_count = used + more
        return "\n\n".join(part for part in (head, body) if part)

    def recall_status(self) -> RecallStatus | None:
        """How many memories the last `prefetch` recalled (None when none)."""
        count = self._last_count
        return RecallStatus(provider_label="RetainDB", count=count) if count > 0 else None

    # ------------------------------------------------------------------ tools
    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run a ``retaindb_*`` tool; always a JSON string, errors as ``{"error": …}``."""
        problem = kit.check_tool_call(tool_name, args, TOOL_NAMES)
        if problem:
            return tool_error(problem)
        client, guard = self._client, self._guard
        if not self.active or client is None or guard is None:
            return tool_error(f"RetainDB is not available: {self._init_error}")
        try:
            return tool_result(self._tool(tool_name, args, client, guard))
        except ValueError as exc:
            return tool_error(f"{tool_name}: {exc}")
        except (kit.Unavailable, kit.CallFailed) as exc:  # already counted and reported
            return tool_error(str(exc))

    def _tool(
        self, tool: str, args: dict[str, Any], client: RetainDBClient, guard: kit.Guard
    ) -> dict[str, Any]:
        if tool in FILE_TOOLS:
            return self._file_tool(tool, args, client, guard)
        if tool == "retaindb_profile":
            found = guard.call("profile", lambda: client.profile(self._user))
            self._profile = [str(m["content"]) for m in found]
            self._profile_at = time.monotonic()
            return {"memories": [_public(m) for m in found]}
        if tool == "retaindb_search":
            query = kit.required_text(args, "query")
            top_k = kit.int_arg(args, "top_k", 8, low=1, high=20)
            found = guard.call("search", lambda: client.search(self._user, self._session,
                                                                 query, top_k))  # fmt: skip
            return {"results": [_public(m) for m in found[:top_k]]}
        if tool == "retaindb_context":
            query = kit.required_text(args, "query")
            found = guard.call("context", lambda: client.context(self._user, self._session,
                                                                   query))  # fmt: skip
            profile = self._profile or []
            return {"profile": profile, "memories": [_public(m) for m in found]}
        if tool == "retaindb_forget":
            from hermes_memory_retaindb.client import path_segment

            memory = kit.required_text(args, "memory_id", max_chars=300)
            path_segment(memory, "memory id")  # refused before any request
            guard.call("forget", lambda: client.delete(memory))
            self._profile_at = 0.0
            return {"deleted": memory}
        return self._remember(args, client, guard)

    def _remember(
        self, args: dict[str, Any], client: RetainDBClient, guard: kit.Guard
    ) -> dict[str, Any]:
        if not self._writes_enabled:
            raise ValueError("this agent context is read-only (only the primary agent writes)")
        content = kit.required_text(args, "content", max_chars=8000)
        kind = kit.choice_arg(args, "memory_type", MEMORY_TYPES, "factual")
        importance = args.get("importance", 0.7)
        if isinstance(importance, bool) or not isinstance(importance, int | float):
            raise ValueError("'importance' must be a number from 0 to 1")
        row = self._write("remember", content=content, memory_type=kind,
                          importance=max(0.0, min(1.0, float(importance))))  # fmt: skip
        try:
            answer = guard.call("remember", lambda: client.add(row))
        except kit.CallFailed as exc:
            if not exc.failure.trips_breaker:
                raise
            self._enqueue(row)
            return {"queued": True, "note": f"RetainDB is unreachable; saved and sent later "
                    f"({exc.failure.message})"}  # fmt: skip
        except kit.Unavailable as exc:
            self._enqueue(row)
            return {"queued": True, "note": f"saved and sent later ({exc})"}
        from hermes_memory_retaindb.client import memory_id

        self._profile_at = 0.0
        return {"stored": True, "id": memory_id(answer)}

    def _file_tool(
        self, tool: str, args: dict[str, Any], client: RetainDBClient, guard: kit.Guard
    ) -> dict[str, Any]:
        from hermes_memory_retaindb import files
        from hermes_memory_retaindb.client import path_segment

        wait = float(self.settings.file_timeout)
        if tool == "retaindb_list_files":
            prefix = kit.optional_text(args, "prefix")
            limit = kit.int_arg(args, "limit", 50, low=1, high=200)
            found = guard.call("list_files", lambda: client.list_files(prefix, limit))
            return {"files": [files.public_file(f) for f in found[:limit]]}
        if tool == "retaindb_upload_file":
            return self._upload(args, client, guard, wait)
        file_id = kit.required_text(args, "file_id", max_chars=300)
        path_segment(file_id, "file id")  # refused before any request
        if tool == "retaindb_read_file":
            meta = guard.call("read_file", lambda: client.get_file(file_id))
            data, complete = guard.call(
                "read_file", lambda: client.file_content(file_id, files.MAX_READ_BYTES,
                                                         timeout=wait))  # fmt: skip
            shown: dict[str, Any] = {"file": files.public_file(meta)}
            if not files.is_text(meta, data):
                shown["content"] = None
                shown["note"] = "binary file: use retaindb_ingest_file to extract its text"
                return shown
            text, cut = files.decode_text(data, complete)
            return {**shown, "content": text, "truncated": cut}
        if not self._writes_enabled:
            raise ValueError("this agent context is read-only (only the primary agent writes)")
        if tool == "retaindb_ingest_file":
            answer = guard.call(
                "ingest_file", lambda: client.ingest_file(file_id, self._user, timeout=wait)
            )
            return {"ingested": file_id, "result": answer}
        guard.call("delete_file", lambda: client.delete_file(file_id))
        return {"deleted": file_id}

    def _upload(
        self, args: dict[str, Any], client: RetainDBClient, guard: kit.Guard, wait: float
    ) -> dict[str, Any]:
        from hermes_memory_retaindb import files

        if not self._writes_enabled:
            raise ValueError("this agent context is read-only (only the primary agent writes)")
        local = kit.required_text(args, "local_path", max_chars=4096)
        scope = kit.choice_arg(args, "scope", SCOPES, "PROJECT")
        ingest = args.get("ingest", False)
        if not isinstance(ingest, bool):
            raise ValueError("'ingest' must be true or false")
        destination = kit.optional_text(args, "remote_path")
        found = files.read_local_file(local, self._cwd or Path(os.getcwd()))
        target = files.remote_path(destination, found.name)
        stored = guard.call("upload_file", lambda: client.upload_file(
            found.name, found.data, found.mime_type, target, scope, timeout=wait))  # fmt: skip
        shown: dict[str, Any] = {"file": files.public_file(stored), "bytes": len(found.data)}
        file_id = str(stored.get("id") or "")
        if ingest and file_id:
            try:
                shown["ingest"] = guard.call("ingest_file", lambda: client.ingest_file(
                    file_id, self._user, timeout=wait))  # fmt: skip
            except (kit.Unavailable, kit.CallFailed) as exc:  # the upload itself worked
                shown["ingest_error"] = str(exc)
        return shown
