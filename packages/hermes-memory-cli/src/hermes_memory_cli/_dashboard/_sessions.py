"""``/sessions`` (list, filters, search) and ``/sessions/<id>`` (transcript and actions).

Search uses `SessionArchive.discover_messages`, the discovery policy of the agent's
``session_search`` tool (implicit AND, the natural-language fallback, fused with dense
similarity when ``sessions.embedder`` is configured); CJK queries work as typed. Text shown
from the archive passes `scrub_secrets` first, as everywhere else text leaves the archive.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator, Mapping
from datetime import date, datetime, time, timedelta
from typing import Any

from starlette.responses import Response

from hermes_memory_cli._commands.sessions import resolve, when
from hermes_memory_cli._context import CLIError
from hermes_memory_cli._dashboard._frame import Dashboard, Page, Redirect
from hermes_memory_cli._dashboard._web import N_, Flash, Problem

__all__ = ["delete", "export", "rename", "session_page", "sessions_page"]

#: Message roles as a person reads them.
ROLES = {
    "user": N_("user"),
    "assistant": N_("assistant"),
    "tool": N_("tool"),
    "system": N_("system"),
}
PAGE_SIZE = 50
SEARCH_LIMIT = 50
#: Messages shown each side of a search hit before "show the whole conversation".
AROUND = 8
_SNIPPET = 90


def _scrub(text: Any) -> str:
    from hermes_memory_core import scrub_secrets

    return scrub_secrets(str(text or ""))


def _day(text: str | None, *, end: bool) -> float | None:
    """``YYYY-MM-DD`` as epoch seconds (start of that day, or the start of the next)."""
    if not text:
        return None
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        return None
    if end:
        day += timedelta(days=1)
    return datetime.combine(day, time()).timestamp()


def _segments(text: str, terms: list[str]) -> list[tuple[str, bool]]:
    """A short excerpt of ``text`` around the first term found, as (piece, is_match) parts."""
    flat = " ".join(text.split())
    lower = flat.lower()
    hits = [(lower.find(t.lower()), t) for t in terms if t and lower.find(t.lower()) >= 0]
    if not hits:
        cut = flat[: 2 * _SNIPPET]
        return [(cut + ("…" if len(flat) > len(cut) else ""), False)]
    start, term = min(hits)
    left = max(0, start - _SNIPPET)
    right = min(len(flat), start + len(term) + _SNIPPET)
    window = flat[left:right]
    pattern = re.compile(
        "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True) if t), re.I
    )
    parts: list[tuple[str, bool]] = [("…", False)] if left else []
    pos = 0
    for match in pattern.finditer(window):
        if match.start() > pos:
            parts.append((window[pos : match.start()], False))
        parts.append((match.group(0), True))
        pos = match.end()
    parts.append((window[pos:], False))
    if right < len(flat):
        parts.append(("…", False))
    return parts


def _terms(query: str) -> list[str]:
    words = re.findall(r'"([^"]+)"|(\S+)', query)
    found = [a or b for a, b in words]
    return [w.strip("*()") for w in found if w.upper() not in {"AND", "OR", "NOT"}]


def _filtered(
    store: Any, source: str | None, since: float | None, until: float | None, offset: int
) -> tuple[list[dict[str, Any]], bool]:
    """One page of sessions, newest first, started within [since, until)."""
    rows: list[dict[str, Any]] = []
    skipped = 0
    for row in _newest_first(store, source):
        started = float(row.get("started_at") or 0)
        if until is not None and started >= until:
            continue
        if since is not None and started < since:
            break
        if skipped < offset:
            skipped += 1
            continue
        rows.append(row)
        if len(rows) > PAGE_SIZE:
            return rows[:PAGE_SIZE], True
    return rows, False


def _newest_first(store: Any, source: str | None) -> Iterator[dict[str, Any]]:
    batch, offset = 200, 0
    while True:
        rows = store.list_sessions(source=source, limit=batch, offset=offset)
        yield from rows
        if len(rows) < batch:
            return
        offset += batch


def sessions_page(dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str]) -> Page:
    q = (query.get("q") or "").strip()
    source = (query.get("source") or "").strip() or None
    since_text, until_text = query.get("since") or "", query.get("until") or ""
    since, until = _day(since_text, end=False), _day(until_text, end=True)
    try:
        offset = max(0, int(query.get("offset") or 0))
    except ValueError:
        offset = 0
    values: dict[str, Any] = {
        "title": N_("Sessions"),
        "q": q,
        "source": source or "",
        "since": since_text if since is not None else "",
        "until": until_text if until is not None else "",
        "bad_date": bool((since_text and since is None) or (until_text and until is None)),
        "sources": [],
        "rows": [],
        "hits": [],
        "more": False,
        "offset": offset,
        "page_size": PAGE_SIZE,
        "exists": False,
        "hybrid": False,
        "when": when,
        "roles": ROLES,
    }
    with dash.archive() as store:
        if store is None:
            return Page("sessions.html", values)
        values["exists"] = True
        values["sources"] = sorted((store.stats().get("by_source") or {}).keys())
        if q:
            from hermes_memory_sessions.vectors import await_embedder, recall_state

            await_embedder(store)  # the first search of the page waits for the model, bounded
            values["hits"] = _search(store, q, source, since, until)
            state = recall_state(store)
            values["hybrid"] = state is not None and state[0] == "hybrid"
            values["embedder_late"] = state is not None and state[0] != "hybrid"
        else:
            rows, more = _filtered(store, source, since, until, offset)
            for row in rows:
                row["title"] = _scrub(row.get("title"))
            values["rows"], values["more"] = rows, more
    return Page("sessions.html", values)


def _search(
    store: Any, q: str, source: str | None, since: float | None, until: float | None
) -> list[dict[str, Any]]:
    terms = _terms(q) or [q]
    hits = []
    titles: dict[str, str] = {}
    for row in store.discover_messages(q, limit=SEARCH_LIMIT):
        if source and row.get("source") != source:
            continue
        stamp = float(row.get("timestamp") or 0)
        if (since is not None and stamp < since) or (until is not None and stamp >= until):
            continue
        sid = str(row["session_id"])
        view = store.get_messages_around(sid, int(row["id"]), 0)
        content = _scrub(view["window"][0].get("content")) if view.get("window") else ""
        if sid not in titles:
            titles[sid] = _scrub((store.get_session(sid) or {}).get("title"))
        hits.append({**row, "title": titles[sid], "parts": _segments(content, terms)})
    return hits


def _message_view(msg: dict[str, Any]) -> dict[str, Any]:
    calls = msg.get("tool_calls")
    return {
        **msg,
        "content": _scrub(msg.get("content")),
        "calls": _scrub(json.dumps(calls, ensure_ascii=False, indent=2)) if calls else "",
    }


def _find(store: Any, session_id: str) -> str:
    try:
        return resolve(store, session_id)
    except CLIError:
        raise Problem(N_("No session matches this id."), status=404) from None


def session_page(dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str]) -> Page:
    with dash.archive() as store:
        if store is None:
            raise Problem(N_("No session matches this id."), status=404)
        sid = _find(store, params["session_id"])
        session = dict(store.get_session(sid) or {})
        around: int | None = None
        try:
            around = int(query["around"]) if query.get("around") else None
        except ValueError:
            around = None
        before = after = 0
        windowed = around is not None and not query.get("all")
        if windowed and around is not None:
            view = store.get_messages_around(sid, around, AROUND)
            messages = view.get("window") or []
            before, after = (
                int(view.get("messages_before") or 0),
                int(view.get("messages_after") or 0),
            )
            if not messages:
                around, windowed, messages = None, False, store.get_messages(sid)
        else:
            messages = store.get_messages(sid)
        root, tip = store.lineage_root(sid), store.compression_tip(sid)
        parent = session.get("parent_session_id")
        children = (
            [r["id"] for r in _newest_first(store, None) if r.get("parent_session_id") == sid]
            if _small(store)
            else []
        )
    session["title"] = _scrub(session.get("title"))
    return Page(
        "session.html",
        {
            "title": N_("Session"),
            "session": session,
            "sid": sid,
            "messages": [_message_view(m) for m in messages],
            "around": around,
            "windowed": windowed,
            "before": before,
            "after": after,
            "root": root if root != sid else None,
            "tip": tip if tip != sid else None,
            "parent": parent,
            "children": children,
            "when": when,
            "roles": ROLES,
            "q": query.get("q", ""),
        },
    )


def _small(store: Any) -> bool:
    """Whether listing child sessions by a scan is cheap enough for a page view."""
    return int(store.stats().get("sessions") or 0) <= 5000


def rename(
    dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str], form: Mapping[str, str]
) -> Redirect:
    title = (form.get("title") or "").strip()
    with dash.archive() as store:
        if store is None:
            raise Problem(N_("No session matches this id."), status=404)
        sid = _find(store, params["session_id"])
        try:
            store.set_title(sid, title or None)
        except ValueError as exc:
            return Redirect(
                f"/sessions/{sid}",
                [Flash("error", N_("Not renamed: %(detail)s"), {"detail": str(exc)})],
            )
    text = N_("Renamed to “%(title)s”.") if title else N_("Title cleared.")
    return Redirect(f"/sessions/{sid}", [Flash("ok", text, {"title": title})])


def delete(
    dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str], form: Mapping[str, str]
) -> Redirect:
    with dash.archive() as store:
        if store is None:
            raise Problem(N_("No session matches this id."), status=404)
        sid = _find(store, params["session_id"])
        store.delete_session(sid)
    return Redirect(
        "/sessions", [Flash("ok", N_("Deleted session %(id)s and its messages."), {"id": sid})]
    )


def export(dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str]) -> Response:
    """The session as a JSONL download (the format of ``hermes-memory sessions export``)."""
    from hermes_memory_sessions.importers import export_jsonl

    buffer = io.BytesIO()
    with dash.archive() as store:
        if store is None:
            raise Problem(N_("No session matches this id."), status=404)
        sid = _find(store, params["session_id"])
        export_jsonl(store, buffer, session_ids=[sid])
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", sid)[:80]
    return Response(
        buffer.getvalue(),
        media_type="application/x-ndjson",
        headers={"content-disposition": f'attachment; filename="session-{safe}.jsonl"'},
    )
