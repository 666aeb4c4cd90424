"""`SessionArchiveProvider`: the session archive as a hermes-memory provider (``"sessions"``).

It records every turn (``sync_turn``; with ``messages``, also the assistant tool calls and
tool results of the turn), ends the session on ``on_session_end``, follows session switches
(the new session is linked through ``parent_session_id``), and exposes ``session_search``.

The ``sessions:`` section of ``config.yaml`` is declared once, as `SessionsSettings`
(``settings_class``): core validates it when it creates the provider, as for every adapter.
The database is ``sessions.db_path`` (``~`` expanded; a relative path is taken relative to
the home directory), default ``<home>/hermes-memory/sessions.db`` (resolved by
`hermes_memory_core.config.sessions_db_path`). Hermes' own ``state.db`` is never used as the
archive. Nothing is opened before the first write or tool call.

The home is the constructor's ``hermes_home``; without one, the home `initialize` is given
(Hermes passes the active profile's home, ``<root>/profiles/<name>``), else core's
`hermes_memory_core.config.resolve_home`. A provider that follows `initialize` moves to the
new profile's archive when the profile changes.

The archive the provider opens does not mask credentials itself (``scrub_secrets=False``):
the `MemoryManager` masks everything it hands to providers, turns included, and its own
``scrub_secrets`` option keeps deciding for this path (no second pass over every turn).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from hermes_memory_core import MemoryProvider, tool_error
from hermes_memory_core.config import resolve_home, sessions_db_path
from hermes_memory_sessions._settings import SessionsSettings
from hermes_memory_sessions.protocol import ArchiveUnreachable, SessionArchive
from hermes_memory_sessions.storage._store import SessionStore
from hermes_memory_sessions.tool import SESSION_SEARCH_SCHEMA, session_search
from hermes_memory_sessions.vectors._embedding_config import attach_configured_embedder

__all__ = ["SessionArchiveProvider"]

logger = logging.getLogger(__name__)
_REMEMBERED = 200  # fingerprints per session kept to drop re-delivered messages


@functools.cache
def _sqlite_has_fts5() -> bool:
    """Whether the linked SQLite library can create an FTS5 table (probed once, in memory)."""
    import sqlite3

    try:
        conn = sqlite3.connect(":memory:")
        try:
            conn.execute("CREATE VIRTUAL TABLE temp.p USING fts5(x)")
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return True


def _text(content: Any) -> str | None:
    """Message content as text: strings as is, OpenAI part lists joined, others as JSON."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            str(p.get("text", ""))
            for p in content
            if isinstance(p, Mapping) and p.get("type") in ("text", "input_text", "output_text")
        ]
        if texts and len(texts) == len(content):
            return "\n".join(texts)
    return json.dumps(content, ensure_ascii=False, default=str)


def _normal_calls(tool_calls: Any) -> str | None:
    if not tool_calls:
        return None
    if isinstance(tool_calls, str):
        try:
            tool_calls = json.loads(tool_calls)
        except ValueError:
            return str(tool_calls)
    return json.dumps(tool_calls, ensure_ascii=False, sort_keys=True, default=str)


def _fingerprint(role: Any, content: Any, tool_call_id: Any, tool_calls: Any) -> str:
    raw = json.dumps(
        [role, content, tool_call_id or None, _normal_calls(tool_calls)],
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha1(raw.encode("utf-8"), usedforsecurity=False).hexdigest()


def _already_recorded(recorded: list[str], prints: list[str]) -> int:
    """How many leading entries of ``prints`` are already in the archive.

    ``prints`` either repeats the recorded history and continues it (a host passing the
    whole transcript), starts with a re-delivery of the last recorded messages, or is all
    new. Returns the index where the new messages start.
    """
    if not recorded:
        return 0
    last = recorded[-1]
    for j in range(len(prints), 0, -1):
        if prints[j - 1] != last:
            continue
        m = min(len(recorded), j)
        if prints[j - m : j] == recorded[-m:] and (m == len(recorded) or j == m):
            return j
    return 0


class SessionArchiveProvider(MemoryProvider):
    """Record every message in the SQLite session archive and serve ``session_search``.

    :param store: an open `SessionStore` to use (not closed by `shutdown`; it masks what it
        records as its own ``scrub_secrets`` says); by default the provider opens
        ``sessions.db_path`` itself on first use, with ``scrub_secrets=False`` (the manager
        masks what it hands over).
    :param hermes_home: the home directory (default: the one ``initialize(hermes_home=…)``
        is given, the active profile's; else ``$HERMES_HOME`` or ``~/.hermes``).
    :param config: the parsed ``config.yaml`` (its ``sessions:`` section is validated as
        `SessionsSettings`; ``sessions.backend: postgres`` hands the whole mapping to the
        PostgreSQL backend).
    """

    name = "sessions"
    #: A local tier (trusted because the class comes from this project's distribution).
    tier = "local"
    settings_class: ClassVar[type[SessionsSettings]] = SessionsSettings
    settings: SessionsSettings  # for the type checker: set by `configure`

    def __init__(
        self,
        store: SessionArchive | None = None,
        *,
        hermes_home: str | Path | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        self._store = store
        self._owns_store = store is None
        #: What `shutdown` did about messages without vectors: ``{"embedded", "left",
        #: "seconds"}`` (``left`` -1 when unknown), None when no embedder is configured.
        self.last_shutdown: dict[str, Any] | None = None
        self._home = Path(hermes_home).expanduser() if hermes_home else None
        #: A home given to the constructor stays; otherwise `initialize` sets it.
        self._home_fixed = self._home is not None
        self._store_home: Path | None = None  # the home the owned archive was opened for
        self._config = dict(config or {})
        self._session_id = ""
        self._source = "cli"
        self._model: str | None = None
        self._parent = ""
        self._writable = True
        self._created: set[str] = set()
        self._recorded: dict[str, list[str]] = {}
        self._lock = threading.RLock()
        self._follower: threading.Thread | None = None

    # ------------------------------------------------------------------ configuration

    def _settings_source(self) -> tuple[Mapping[str, Any] | None, Mapping[str, str] | None]:
        # A provider built directly (not by core's registry) validates its own ``config``.
        return self._config, None

    @property
    def home(self) -> Path:
        """The home directory the provider works in, resolved now (see the module doc)."""
        return resolve_home(self._home)

    @property
    def db_path(self) -> Path:
        """Where the archive lives: ``sessions.db_path``, else the default of
        `hermes_memory_core.config.sessions_db_path` (``<home>/hermes-memory/sessions.db``)."""
        return sessions_db_path(self.home, self.settings.db_path or None)

    @property
    def store(self) -> SessionArchive:
        """The archive, opened on first use (``sessions.backend: postgres`` opens the
        PostgreSQL archive of ``postgres.owner``; package hermes-memory-postgres), with
        ``scrub_secrets=False``: what the manager hands over is masked already."""
        with self._lock:
            if self._store is None:
                home = self.home
                if self.settings.backend == "postgres":
                    # found by entry point: hermes-memory-postgres depends on this package
                    from hermes_memory_core import load_backend

                    factory = load_backend("sessions", "postgres")
                    self._store = factory(self._config, self._home, scrub_secrets=False)
                else:
                    self._store = SessionStore(self.db_path, scrub_secrets=False)
                    # sessions.embedder: loaded off this thread; lexical until it is ready.
                    attach_configured_embedder(self._store, self.settings.embedder)
                self._store_home = home
            return self._store

    def _use_home(self, home: Path) -> None:
        """Work in ``home`` from now on: an archive this provider opened for another home
        (another profile) is closed, and the next use opens this home's."""
        with self._lock:
            if self._owns_store and self._store is not None and self._store_home != home:
                self._store.close()
                self._store = None
                self._created.clear()
                self._recorded.clear()
                if self._follower is not None and not self._follower.is_alive():
                    self._follower = None  # the new profile's history is followed too
            self._home = home

    def is_available(self) -> bool:
        """True when the ``sessions:`` settings are valid and the linked SQLite has FTS5
        (probed once per process; no network)."""
        return not self.settings_error and _sqlite_has_fts5()

    def unavailable_reason(self) -> str:
        """Why the archive cannot run (invalid settings, or no FTS5)."""
        if reason := super().unavailable_reason():
            return reason
        return "" if _sqlite_has_fts5() else "the linked SQLite library lacks FTS5"

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Remember the session; ``agent_context`` other than ``"primary"`` disables writes."""
        self._session_id = session_id or ""
        given = kwargs.get("hermes_home")
        if given and not self._home_fixed:
            self._use_home(Path(str(given)).expanduser())
        self._source = str(kwargs.get("platform") or "cli")
        self._model = kwargs.get("model") if isinstance(kwargs.get("model"), str) else None
        self._parent = str(kwargs.get("parent_session_id") or "")
        context = kwargs.get("agent_context")
        self._writable = context in (None, "", "primary")
        if self._writable and self._follows_hermes():
            self._start_following()

    # ------------------------------------------------------------------ following Hermes

    def _follows_hermes(self) -> bool:
        return self.settings.follow_hermes

    def _start_following(self) -> None:
        """``sessions.follow_hermes``: import what is new in ``<home>/state.db`` on a
        background thread (bounded by `importers.PROVIDER_FOLLOW_BUDGET_S`), once per provider;
        the turn never waits for it. Hermes' file is only read."""
        with self._lock:
            if self._follower is not None:
                return
            self._follower = threading.Thread(
                target=self._follow, args=(self.home,), name="hermes-memory-follow", daemon=True
            )
            self._follower.start()

    def _follow(self, home: Path) -> None:
        from hermes_memory_sessions.importers._follow import PROVIDER_FOLLOW_BUDGET_S, follow_hermes

        store: SessionArchive | None = None
        try:
            # a connection of its own: the turn's connection is never held by the import
            if self.settings.backend == "postgres":
                from hermes_memory_core import load_backend

                store = load_backend("sessions", "postgres")(self._config, home)
            else:
                store = SessionStore(self.db_path)
            report = follow_hermes(
                home, store, time_budget_s=PROVIDER_FOLLOW_BUDGET_S, lock_dir=self.db_path.parent
            )
            if report is not None and (report.sessions_imported or report.sessions_updated):
                logger.info("followed Hermes' state.db: %s", report.summary())
        except Exception as exc:  # best effort: never reaches the host
            logger.warning("following Hermes' state.db failed: %s", exc)
        finally:
            if store is not None:
                store.close()

    def wait_following(self, timeout: float | None = None) -> bool:
        """Wait for the background import started by `initialize` (tests, tools); True
        when none is running any more."""
        thread = self._follower
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """The ``session_search`` tool."""
        return [SESSION_SEARCH_SCHEMA]

    def get_config_schema(self) -> list[dict[str, Any]]:
        """`SessionsSettings`, each key written with its section (``sessions.db_path``)."""
        fields = SessionsSettings.schema()
        for field in fields:
            field["key"] = f"sessions.{field['key']}"
            if field["key"] == "sessions.db_path":
                field["default"] = "<home>/hermes-memory/sessions.db"
        return fields

    def backup_paths(self) -> list[str]:
        """The database file when it lives outside the home directory."""
        path = self.db_path
        if self.home in path.parents:
            return []
        return [str(path)]

    # ------------------------------------------------------------------ tool

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run ``session_search`` (the caller's own lineage is excluded from results)."""
        if tool_name != "session_search":
            return tool_error(f"Unknown tool: {tool_name}", success=False)
        current = kwargs.get("current_session_id") or self._session_id or None
        try:
            store = self.store
        except Exception as exc:
            return tool_error(f"session archive unavailable: {exc}", success=False)
        return session_search(args, store=store, current_session_id=current, home=self.home)

    # ------------------------------------------------------------------ recording

    def _ensure_session(self, session_id: str, parent: str = "") -> None:
        if session_id in self._created:
            return
        store = self.store
        try:
            known = store.get_session(session_id)
        except ArchiveUnreachable:
            # The server is down: the archive spools writes, and creating a session that
            # exists is a no-op when replayed, so the turn is kept rather than lost.
            known = None
        if known is None:
            store.create_session(
                session_id,
                source=self._source,
                model=self._model,
                parent_session_id=parent or None,
            )
            self._recorded[session_id] = []
        else:
            tail = store.tail_messages(session_id, _REMEMBERED)
            self._recorded[session_id] = [
                _fingerprint(m["role"], m["content"], m["tool_call_id"], m["tool_calls"])
                for m in tail
            ]
        self._created.add(session_id)

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Append the turn's messages (tool calls and results too when ``messages`` is given).

        Messages already recorded — the same turn delivered twice, or a ``messages`` list
        that repeats earlier turns — are not stored again. ``system`` messages are skipped.
        """
        if not self._writable:
            return
        sid = session_id or self._session_id
        if not sid:
            return
        if messages:
            rows = self._rows_from_messages(messages)
        else:
            rows = [
                {"role": role, "content": text}
                for role, text in (("user", user_content), ("assistant", assistant_content))
                if text
            ]
        if not rows:
            return
        with self._lock:
            self._ensure_session(sid, self._parent if sid == self._session_id else "")
            recorded = self._recorded.setdefault(sid, [])
            prints = [
                _fingerprint(r["role"], r["content"], r.get("tool_call_id"), r.get("tool_calls"))
                for r in rows
            ]
            overlap = _already_recorded(recorded, prints)
            new_rows = rows[overlap:]
            if not new_rows:
                return
            self.store.append_messages(sid, new_rows)
            recorded.extend(prints[overlap:])
            del recorded[:-_REMEMBERED]

    @staticmethod
    def _rows_from_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        names: dict[str, str] = {}
        rows: list[dict[str, Any]] = []
        items: list[object] = list(messages)
        for m in items:
            if not isinstance(m, Mapping):
                continue
            role = m.get("role")
            if not isinstance(role, str) or role == "system":
                continue
            calls = m.get("tool_calls") or None
            if isinstance(calls, list):
                for call in calls:
                    if isinstance(call, Mapping):
                        fn = call.get("function")
                        fname = fn.get("name") if isinstance(fn, Mapping) else call.get("name")
                        if call.get("id") and fname:
                            names[str(call["id"])] = str(fname)
            call_id = m.get("tool_call_id")
            tool_name = m.get("tool_name") or m.get("name")
            if role == "tool" and not tool_name and call_id:
                tool_name = names.get(str(call_id))
            rows.append(
                {
                    "role": role,
                    "content": _text(m.get("content")),
                    "tool_calls": _normal_calls(calls) if calls else None,
                    "tool_call_id": call_id,
                    "tool_name": tool_name,
                    "timestamp": m.get("timestamp"),
                }
            )
        return rows

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """End the current session (first writer wins; nothing happens for unknown ids)."""
        if not self._writable or not self._session_id:
            return
        with self._lock:
            store = self.store
            if store.get_session(self._session_id) is not None:
                store.end_session(self._session_id, "session_end")

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        """Move to ``new_session_id``: the old session ends, the new one is created.

        The new row's ``parent_session_id`` is ``parent_session_id`` (a continuation such as
        compression or ``/branch``); without one — ``/new``, ``/reset``, ``/resume`` — the
        new session starts its own lineage, so the old conversation stays findable from it.
        An existing session (``/resume``) is reused as is. The old session ends with
        ``session_reset`` when ``reset`` is true; with ``compression`` when the new session
        continues it (``parent_session_id`` is the old session), so a titled conversation's
        continuation gets the next numbered title (``"x"`` → ``"x #2"``); else with
        ``session_switch``. An ``end_reason=`` keyword overrides this (``"branched"`` for a
        ``/branch``, which keeps the parent's title to itself).
        """
        old = self._session_id
        if not new_session_id or new_session_id == old:
            return
        parent = parent_session_id or ""
        self._session_id = new_session_id
        self._parent = parent
        if not self._writable:
            return
        with self._lock:
            store = self.store
            if old and store.get_session(old) is not None:
                reason = kwargs.get("end_reason")
                if not isinstance(reason, str) or not reason.strip():
                    if reset:
                        reason = "session_reset"
                    elif parent and parent == old:
                        reason = "compression"
                    else:
                        reason = "session_switch"
                store.end_session(old, reason.strip())
            if parent and store.get_session(parent) is None:
                parent = ""
            self._ensure_session(new_session_id, parent)

    #: Seconds `shutdown` spends embedding what is still pending (a short-lived process
    #: would otherwise leave its newest messages without vectors).
    SHUTDOWN_EMBED_S = 5.0

    def shutdown(self) -> None:
        """Embed pending messages within `SHUTDOWN_EMBED_S` (when an embedder is configured),
        report what is left (``last_shutdown``, and a log line), then close the archive if
        the provider opened it."""
        with self._lock:
            if self._owns_store and self._store is not None:
                self.last_shutdown = _finish_embedding(self._store, self.SHUTDOWN_EMBED_S)
                self._store.close()
                self._store = None
            self._created.clear()


def _finish_embedding(store: Any, budget_s: float) -> dict[str, Any] | None:
    """``{"embedded", "left", "seconds"}`` of the last embedding before close, or None when
    no embedder is configured for ``store``; logs what is left."""
    from hermes_memory_sessions.vectors._embedding_config import await_embedder, recall_state

    if recall_state(store) is None:
        return None
    started = time.monotonic()
    await_embedder(store, budget_s)
    finish = getattr(store, "_embed_before_close", None)
    if finish is None:
        return None
    remaining = max(0.0, budget_s - (time.monotonic() - started))
    report: dict[str, Any] = dict(finish(remaining))
    report["seconds"] = round(time.monotonic() - started, 3)
    for tier in report.get("tiers") or ():  # two tiers: what each one left, said plainly
        if tier["left"]:
            logger.warning(
                "session archive: %d message(s) left without a vector of the %s tier at"
                " shutdown (embedded %d); hermes-memory sessions embed finishes them",
                tier["left"],
                tier["tier"],
                tier["embedded"],
            )
    if report["left"] and not report.get("tiers"):
        logger.warning(
            "session archive: %s message(s) left without vectors at shutdown (embedded %d"
            " in %.1f s); they are embedded next time, or now with: hermes-memory sessions embed",
            report["left"] if report["left"] > 0 else "some",
            report["embedded"],
            report["seconds"],
        )
    elif report["embedded"]:
        logger.info(
            "session archive: embedded %d pending message(s) at shutdown", report["embedded"]
        )
    return report
