"""`BulkIngest`: imports into the archive — one session, many by ``COPY``, and the
bookkeeping of incremental imports (per source: a watermark and each session's last id)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.copy import QueuedLibpqWriter

from hermes_memory_postgres._connection import Database
from hermes_memory_postgres._schema import BULK_DEFERRED, drop_deferred_sql, missing_deferred
from hermes_memory_postgres.archive._rows import copy_row, normal_message, session_columns
from hermes_memory_postgres.archive._termstats import add_frequencies
from hermes_memory_postgres.archive._writes import COPY_MESSAGES, TurnWrites
from hermes_memory_sessions.storage import check_id, sanitize_title

__all__ = ["BulkIngest"]

#: ``gin_pending_list_limit`` (kB) during `BulkIngest.bulk_import`.
_BULK_GIN_PENDING_KB = 65536
_COPY_SESSIONS = (
    b"COPY hm_sessions (owner, id, source, model, title, parent_session_id,"
    b" started_at, ended_at, end_reason, message_count, last_activity_at) FROM STDIN"
)


class BulkIngest(TurnWrites):
    """Imports of whole sessions and incremental imports of one owner."""

    def import_session(
        self,
        session: Mapping[str, Any],
        messages: Iterable[Mapping[str, Any]],
        *,
        keep_ids: bool = False,
        import_source: str | None = None,
        source_last_id: int | None = None,
    ) -> str:
        """Insert one complete session (row + messages, by ``COPY``) in one transaction.

        Same contract as `SessionStore.import_session`: every given column kept, messages in
        order with their timestamps, ``keep_ids`` keeps message ids (an id already used by
        this owner is a ValueError and nothing is imported).
        """
        sid = check_id(session.get("id"))
        msgs = [normal_message(m, keep_id=keep_ids) for m in messages]
        if keep_ids:
            wanted = [m.get("id") for m in msgs]
            if any(not isinstance(i, int) or isinstance(i, bool) for i in wanted):
                raise ValueError("keep_ids=True needs an integer 'id' on every message")
            if len(set(wanted)) != len(wanted):
                raise ValueError("duplicate message ids in the imported session")

        def run(conn: psycopg.Connection[Any]) -> str:
            given = self._insert_session_row(conn, sid, session, msgs)
            if keep_ids and msgs:
                taken = conn.execute(
                    "SELECT id FROM hm_messages WHERE owner = %s AND id = ANY(%s) LIMIT 1",
                    (self.owner, [m["id"] for m in msgs]),
                ).fetchone()
                if taken:
                    raise ValueError(f"message id {taken['id']} already exists in the archive")
            self._insert(conn, sid, msgs, keep_ids=keep_ids)
            sets = {k: v for k, v in given.items() if v is not None}
            if sets:
                conn.execute(
                    f"UPDATE hm_sessions SET {', '.join(f'{k} = %s' for k in sets)}"  # noqa: S608
                    " WHERE owner = %s AND id = %s",
                    [*sets.values(), self.owner, sid],
                )
            if import_source is not None:
                self._record_import(conn, import_source, sid, source_last_id)
            return sid

        return self._write(run)

    def _insert_session_row(
        self,
        conn: psycopg.Connection[Any],
        sid: str,
        session: Mapping[str, Any],
        msgs: Sequence[Mapping[str, Any]],
    ) -> dict[str, Any]:
        """Insert the row of an imported session; returns its given counters, which are
        set after the messages (whose insert adds to them)."""
        if conn.execute(
            "SELECT 1 FROM hm_sessions WHERE owner = %s AND id = %s", (self.owner, sid)
        ).fetchone():
            raise ValueError(f"session {sid!r} already exists in the archive")
        columns = session_columns(conn)
        row = {k: v for k, v in session.items() if k in columns and k != "owner"}
        row["id"] = sid
        row["source"] = row.get("source") or "cli"
        if row.get("started_at") is None:
            first = next((m.get("timestamp") for m in msgs if m.get("timestamp")), None)
            row["started_at"] = float(first) if first is not None else time.time()
        if row.get("title") is not None:
            row["title"] = sanitize_title(row["title"])
            if row["title"] is not None:
                self._check_title_free(conn, row["title"], sid)
        nul = next((k for k, v in row.items() if isinstance(v, str) and "\x00" in v), None)
        if nul is not None:  # message text keeps NUL exactly; session columns cannot
            raise ValueError(
                f"session {sid!r}: column {nul} holds a NUL character (U+0000), which"
                " PostgreSQL cannot store; nothing of this session was imported"
            )
        counters = ("message_count", "tool_call_count", "last_activity_at")
        given = {k: row.pop(k, None) for k in counters}
        cols = ["owner", *row]
        conn.execute(
            f"INSERT INTO hm_sessions({', '.join(cols)})"  # noqa: S608
            f" VALUES ({', '.join(['%s'] * len(cols))})",
            [self.owner, *row.values()],
        )
        return given

    def bulk_import(
        self, sessions: Iterable[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]]
    ) -> int:
        """Import many new sessions with their messages in one transaction (one ``COPY`` for
        all messages); returns how many messages were written. For migrations and benchmarks.
        """
        batch = _normal_batch(sessions)
        return int(self._write(lambda conn: self._bulk_copy(conn, batch, None)))

    def bulk_import_batches(
        self,
        batches: Iterable[Iterable[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]]],
        *,
        streams: int = 2,
    ) -> int:
        """Import batches of new sessions, each batch as one `bulk_import` (its own
        transaction), with up to ``streams`` batches in flight on separate connections:
        while the server checks, indexes and commits one batch, this process builds the
        rows of the next. Returns how many messages were written.

        Message ids are the same as with sequential `bulk_import` calls in batch order:
        every id of a batch is below every id of a later batch, and a session's messages
        ascend in the order given (ids are drawn for each batch before it starts).

        A batch is atomic. On an error (a bad message, a duplicate session id) no further
        batch is started; the batches in flight finish (they may commit), then the first
        error is raised. ``streams`` must be 1-8 (each stream holds a pooled connection:
        keep it below the pool's size).
        """
        if isinstance(streams, bool) or not isinstance(streams, int) or not 1 <= streams <= 8:
            raise ValueError("streams must be an integer from 1 to 8")
        total = 0
        error: BaseException | None = None
        pending: set[Future[int]] = set()
        with ThreadPoolExecutor(max_workers=streams, thread_name_prefix="hm-bulk") as pool:
            for sessions in batches:
                try:
                    batch = _normal_batch(sessions)
                    n = sum(len(ms) for _, ms in batch)
                    ids = self._draw_ids(n)
                except Exception as exc:  # raised below, once the batches in flight finish
                    error = exc
                    break
                pending.add(pool.submit(self._bulk_stream, batch, ids))
                if len(pending) >= streams:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    total, error = _collect(done, total, error)
                    if error is not None:
                        break
            done, pending = wait(pending)
            total, error = _collect(done, total, error)
        if error is not None:
            raise error
        return total

    def _draw_ids(self, n: int) -> list[int]:
        if not n:
            return []
        return self._write(lambda conn: self._new_ids(conn, n))

    def _bulk_stream(self, batch: _Batch, ids: list[int]) -> int:
        return int(self._write(lambda conn: self._bulk_copy(conn, batch, ids)))

    def _bulk_copy(
        self, conn: psycopg.Connection[Any], batch: _Batch, ids: list[int] | None
    ) -> int:
        """Write one batch of new sessions and their messages (``ids``: drawn already, or
        None to draw them here)."""
        # GIN entries go to the pending list and are merged in larger sorted batches.
        conn.execute(f"SET LOCAL gin_pending_list_limit = {_BULK_GIN_PENDING_KB}")
        total = sum(len(ms) for _, ms in batch)
        if ids is None:
            ids = self._new_ids(conn, total)
        with conn.cursor().copy(_COPY_SESSIONS) as copy:
            for s, ms in batch:
                started = s.get("started_at") or (ms[0]["timestamp"] if ms else time.time())
                copy.write_row(
                    (self.owner, check_id(s.get("id")), s.get("source") or "cli",
                     s.get("model"), sanitize_title(s.get("title")),
                     s.get("parent_session_id"), float(started), s.get("ended_at"),
                     s.get("end_reason"), len(ms),
                     max((m["timestamp"] for m in ms), default=None))
                )  # fmt: skip
        pos = 0
        cur = conn.cursor()
        df: Counter[str] = Counter()
        # A writer thread sends the data while this one tokenises the next rows.
        owner = self.owner
        with cur.copy(COPY_MESSAGES, writer=QueuedLibpqWriter(cur)) as copy:
            write = copy.write_row
            for s, ms in batch:
                sid = str(s["id"])
                for m in ms:
                    write(copy_row(owner, ids[pos], sid, m, df))
                    pos += 1
        add_frequencies(conn, self.owner, df)
        # Merge the pending GIN entries now, in one sorted pass: left in the pending
        # list, every later search would scan it linearly. (No index: a bulk load
        # builds them at its end.) The names resolve through the search path, as the
        # archive's tables do: a same-named index of another schema (another deployment,
        # perhaps another role's, perhaps being dropped) is not this archive's.
        conn.execute(
            "SELECT gin_clean_pending_list(c.oid) FROM unnest(%s::text[]) AS n"
            " JOIN pg_class c ON c.oid = to_regclass(n)"
            " WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'gin')",
            (list(BULK_DEFERRED),),
        )
        return total

    @contextmanager
    def bulk_loading(self, *, build_budget_s: float = 3600.0) -> Iterator[bool]:
        """Fill an empty database faster: within, `bulk_import` updates no secondary index
        and checks no foreign key row by row; the indexes are built (two at once on two
        connections: `PARALLEL_BUILDS`) and the key validated at exit, then ``VACUUM (ANALYZE)``:
        see `hermes_memory_postgres._schema.BULK_DEFERRED`.

        Only when ``hm_messages`` holds no row of any owner (a fresh database, a migration
        target): the indexes are shared by every owner, so with rows present nothing is
        dropped and the context does nothing. Yields whether anything was deferred.
        Searches during the load stay correct (they scan the table); writes of other hosts
        go on and are indexed by the build. A load killed before the build leaves them
        missing: the next process to open the database as the schema owner restores them
        (`migrate`).
        """
        deferred = bool(self._write(_drop_deferred_if_empty))
        try:
            yield deferred
        finally:
            if deferred:
                _build_deferred(self.db, build_budget_s)

    def _record_import(
        self, conn: psycopg.Connection[Any], source: str, sid: str, last_id: int | None
    ) -> None:
        conn.execute(
            "INSERT INTO hm_import_sessions(owner, source, session_id, last_message_id)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (owner, source, session_id) DO UPDATE SET"
            " last_message_id = GREATEST(hm_import_sessions.last_message_id,"
            " excluded.last_message_id)",
            (self.owner, source, sid, int(last_id or 0)),
        )

    def import_more(
        self,
        session_id: str,
        messages: Iterable[Mapping[str, Any]],
        *,
        import_source: str,
        source_last_id: int,
        ended_at: float | None = None,
        end_reason: str | None = None,
    ) -> bool:
        """Append messages an import source added to a session it created earlier."""
        rows = [normal_message(m) for m in messages]

        def run(conn: psycopg.Connection[Any]) -> bool:
            ids = self._append(conn, session_id, rows)
            changed = bool(ids)
            if ended_at is not None:
                cur = conn.execute(
                    "UPDATE hm_sessions SET ended_at = %s, end_reason = COALESCE(%s, end_reason)"
                    " WHERE owner = %s AND id = %s AND ended_at IS NULL",
                    (float(ended_at), end_reason, self.owner, session_id),
                )
                changed = changed or cur.rowcount > 0
            self._record_import(conn, import_source, session_id, source_last_id)
            return changed

        return bool(self._write(run))

    def import_state(self, source: str) -> tuple[int, dict[str, int]]:
        """``(watermark, {session_id: last source message id})`` of earlier imports."""

        def run(conn: psycopg.Connection[Any]) -> tuple[int, dict[str, int]]:
            row = conn.execute(
                "SELECT last_message_id FROM hm_import_sources WHERE owner = %s AND source = %s",
                (self.owner, source),
            ).fetchone()
            sessions = {
                str(r["session_id"]): int(r["last_message_id"])
                for r in conn.execute(
                    "SELECT i.session_id, i.last_message_id FROM hm_import_sessions i"
                    " JOIN hm_sessions s ON s.owner = i.owner AND s.id = i.session_id"
                    " WHERE i.owner = %s AND i.source = %s",
                    (self.owner, source),
                ).fetchall()
            }
            return (int(row["last_message_id"]) if row else 0), sessions

        return self._read(run)

    def set_import_watermark(
        self, source: str, message_id: int, *, sessions: int = 0, messages: int = 0
    ) -> None:
        """Record that every message of ``source`` up to ``message_id`` has been looked at."""
        self._write(
            lambda conn: conn.execute(
                "INSERT INTO hm_import_sources(owner, source, last_message_id, imported_at,"
                " sessions, messages) VALUES (%s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (owner, source) DO UPDATE SET"
                " last_message_id = excluded.last_message_id,"
                " imported_at = excluded.imported_at,"
                " sessions = hm_import_sources.sessions + excluded.sessions,"
                " messages = hm_import_sources.messages + excluded.messages",
                (self.owner, source, int(message_id), time.time(), int(sessions), int(messages)),
            )
        )

    def forget_import_source(self, source: str) -> None:
        """Drop the bookkeeping of ``source`` (its sessions stay)."""

        def run(conn: psycopg.Connection[Any]) -> None:
            for table in ("hm_import_sources", "hm_import_sessions"):
                conn.execute(
                    f"DELETE FROM {table} WHERE owner = %s AND source = %s",  # noqa: S608
                    (self.owner, source),
                )

        self._write(run)


_Batch = list[tuple[dict[str, Any], list[dict[str, Any]]]]


def _normal_batch(
    sessions: Iterable[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]],
) -> _Batch:
    """Sessions as dicts and their messages normalised (a bad message: ValueError)."""
    return [(dict(s), [normal_message(m) for m in ms]) for s, ms in sessions]


def _collect(
    done: Iterable[Future[int]], total: int, error: BaseException | None
) -> tuple[int, BaseException | None]:
    """Add the finished batches' counts to ``total``; keep the first error."""
    for fut in done:
        exc = fut.exception()
        if exc is None:
            total += fut.result()
        elif error is None:
            error = exc
    return total, error


def _drop_deferred_if_empty(conn: psycopg.Connection[Any]) -> bool:
    """Drop `BULK_DEFERRED` when ``hm_messages`` is empty; True if dropped.

    False, with nothing changed, when the table has rows, is busy (other writers hold it
    for more than 2 s) or the role may not drop the indexes (an agent role without
    ownership: its loads keep the indexes).
    """
    conn.execute("SET LOCAL lock_timeout = '2s'")
    try:
        with conn.transaction():  # a savepoint: a refusal leaves the transaction usable
            conn.execute("LOCK TABLE hm_messages IN ACCESS EXCLUSIVE MODE")
            if conn.execute("SELECT 1 FROM hm_messages LIMIT 1").fetchone() is not None:
                return False
            for name in reversed(list(BULK_DEFERRED)):
                conn.execute(drop_deferred_sql(name).encode())
    except (psycopg.errors.LockNotAvailable, psycopg.errors.InsufficientPrivilege):
        return False
    return True


#: The index builds at the end of `BulkIngest.bulk_loading`, in two groups run at once on
#: two connections (``CREATE INDEX`` locks the table in SHARE mode, which two builds may
#: hold together): the conversation's word GIN alone, which takes longest, and the others.
PARALLEL_BUILDS: tuple[tuple[str, ...], ...] = (
    ("hm_messages_words",),
    ("hm_messages_tools", "hm_messages_session", "hm_messages_cjk", "hm_messages_cjk_recent"),
)


def _builder(names: Sequence[str] | None) -> Callable[[psycopg.Connection[Any]], None]:
    """A transaction building the missing ones of ``names`` (None: all, then ``ANALYZE``)."""

    def build(conn: psycopg.Connection[Any]) -> None:
        conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
        conn.execute("SET LOCAL statement_timeout = 0")
        for name in missing_deferred(conn):
            if names is None or name in names:
                conn.execute(BULK_DEFERRED[name].encode())
        if names is None:
            conn.execute("ANALYZE hm_messages")

    return build


def _build_deferred(db: Database, budget: float) -> None:
    """Build what `bulk_loading` deferred: the indexes of `PARALLEL_BUILDS` at once, then
    the foreign key (which waits for no build: it locks the table against them) and
    anything still missing, then ``ANALYZE``. A failed build is raised after the other
    one finishes; whatever is left missing is restored by `migrate` later."""
    with ThreadPoolExecutor(max_workers=len(PARALLEL_BUILDS)) as pool:
        builds = [pool.submit(db.run, _builder(g), budget=budget) for g in PARALLEL_BUILDS]
        wait(builds)
    for fut in builds:
        fut.result()
    db.run(_builder(None), budget=budget)
    # Not only statistics: until the table's pages are marked all-visible, plans that read
    # the primary key must visit the heap, and the natural-language fallback ran 4x slower
    # right after a 1M load, until autovacuum came by.
    db.vacuum("hm_messages")
