"""Resume and undo: a stored conversation as OpenAI chat messages, and ``/undo [N]``.

Both work on any `hermes_memory_sessions.protocol.SessionArchive` (the SQLite `SessionStore`
and the PostgreSQL archive) and on the conversation's *compression tip*: when compression
carried a conversation forward into continuation sessions (``end_reason = "compression"``),
the latest continuation is where it goes on, and it starts with the summary.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hermes_memory_sessions.storage._message_rows import SUMMARY_PREFIXES

if TYPE_CHECKING:
    from hermes_memory_sessions.protocol import SessionArchive

__all__ = [
    "Conversation",
    "SessionNotFoundError",
    "UndoResult",
    "load_conversation",
    "undo",
]

#: Sessions looked at by ``latest=True`` before giving up on finding one with messages.
_LATEST_SCAN = 500
#: Sources never picked by ``latest=True`` unless asked for (as ``session_search`` hides them).
_HIDDEN_SOURCES = ("subagent", "tool")


class SessionNotFoundError(LookupError):
    """No session matches what was asked for (the message says what and why)."""


class Conversation(list[dict[str, Any]]):
    """The messages of a conversation (OpenAI chat format), with where they came from.

    :ivar session_id: the session the messages are from (the compression tip): record the
        next turns there.
    :ivar title: that session's title, or None.
    :ivar root_session_id: the first session of the conversation's lineage.
    """

    session_id: str
    title: str | None
    root_session_id: str

    def __init__(
        self,
        messages: Sequence[dict[str, Any]] = (),
        *,
        session_id: str = "",
        title: str | None = None,
        root_session_id: str = "",
    ) -> None:
        super().__init__(messages)
        self.session_id = session_id
        self.title = title
        self.root_session_id = root_session_id or session_id


@dataclass(frozen=True)
class UndoResult:
    """What `undo` took back.

    :ivar session_id: the session the exchanges were taken from (the compression tip).
    :ivar exchanges: how many exchanges were undone (fewer than asked when the session
        has fewer).
    :ivar messages: how many messages were marked inactive.
    :ivar user_messages: the undone user messages' text, oldest first (a host may put the
        last one back in the input box).
    """

    session_id: str
    exchanges: int
    messages: int
    user_messages: list[str] = field(default_factory=list)


def is_summary(row: Mapping[str, Any]) -> bool:
    """Whether a stored message is a compression summary."""
    content = row.get("content")
    return isinstance(content, str) and content.startswith(SUMMARY_PREFIXES)


def _openai_calls(calls: Any) -> Any:
    """Stored tool calls in OpenAI's shape: ``type`` set, ``arguments`` as JSON text."""
    if not isinstance(calls, list):
        return calls
    out: list[Any] = []
    for call in calls:
        if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping):
            function = dict(call["function"])
            args = function.get("arguments")
            if args is not None and not isinstance(args, str):
                function["arguments"] = json.dumps(args, ensure_ascii=False)
            out.append({**call, "type": call.get("type") or "function", "function": function})
        else:
            out.append(call)
    return out


def openai_message(row: Mapping[str, Any]) -> dict[str, Any]:
    """A stored message as an OpenAI chat message (``role``, ``content``, and ``tool_calls``
    / ``tool_call_id`` / ``name`` where the row has them)."""
    message: dict[str, Any] = {"role": row["role"], "content": row.get("content")}
    calls = row.get("tool_calls")
    if isinstance(calls, str) and calls:
        try:
            calls = json.loads(calls)
        except ValueError:
            calls = None
    if calls:
        message["tool_calls"] = _openai_calls(calls)
    if row.get("tool_call_id"):
        message["tool_call_id"] = row["tool_call_id"]
    if row["role"] == "tool" and row.get("tool_name"):
        message["name"] = row["tool_name"]
    return message


def _resolve(store: SessionArchive, id_or_prefix: str) -> str:
    try:
        found = store.resolve_session_id(id_or_prefix)
    except ValueError as exc:
        raise SessionNotFoundError(str(exc)) from None
    if found is not None:
        return found
    candidates = store.matching_session_ids(id_or_prefix, 6) if id_or_prefix else []
    if len(candidates) > 1:
        more = ", …" if len(candidates) > 5 else ""
        raise SessionNotFoundError(
            f"session id prefix {id_or_prefix!r} is ambiguous: {', '.join(candidates[:5])}{more}"
        )
    raise SessionNotFoundError(f"no session matches {id_or_prefix!r}")


def _latest(store: SessionArchive, source: str | None) -> str:
    """The most recently active conversation (of ``source``) that has live messages."""
    seen = 0
    while seen < _LATEST_SCAN:
        page = store.list_sessions(
            source=source,
            exclude_sources=None if source else list(_HIDDEN_SOURCES),
            limit=50,
            offset=seen,
            order="last_active",
        )
        if not page:
            break
        seen += len(page)
        for row in page:
            tip = store.compression_tip(str(row["id"]))
            tip_row = row if tip == row["id"] else store.get_session(tip) or {}
            if tip_row.get("message_count"):
                return str(row["id"])
    where = f" from source {source!r}" if source else ""
    raise SessionNotFoundError(f"no session{where} with messages to resume")


def load_conversation(
    store: SessionArchive,
    session_id: str | None = None,
    *,
    title: str | None = None,
    latest: bool = False,
    source: str | None = None,
) -> Conversation:
    """The messages to resume a conversation with, in OpenAI chat format.

    Give one of: ``session_id`` (an id or a unique prefix), ``title`` (the session it
    names: its latest ``"<title> #N"`` continuation, else the exact title) or
    ``latest=True`` (the most recently active session that has messages, of ``source``
    when given; ``subagent`` and ``tool`` sessions only when asked for by ``source``).
    ``source`` with an id or a title must match that session's source.

    The messages are those of the compression tip — the latest continuation when the
    conversation was compressed, starting with the summary — and only live ones (undone
    and compacted messages are left out). System messages are not stored: prepend your own.

    :returns: a `Conversation` (a list of message dicts with ``session_id``, ``title`` and
        ``root_session_id``).
    :raises SessionNotFoundError: nothing matches, or a prefix is ambiguous.
    :raises ValueError: not exactly one of ``session_id``, ``title``, ``latest``.
    """
    if (session_id is not None) + (title is not None) + bool(latest) != 1:
        raise ValueError("give exactly one of session_id, title= or latest=True")
    if session_id is not None:
        found = _resolve(store, session_id)
    elif title is not None:
        by_title = store.session_by_title(title)
        if by_title is None:
            raise SessionNotFoundError(f"no session is titled {title!r}")
        found = by_title
    else:
        found = _latest(store, source)
    if source and not latest:
        row = store.get_session(found) or {}
        if row.get("source") != source:
            raise SessionNotFoundError(
                f"session {found} is from source {row.get('source')!r}, not {source!r}"
            )
    tip = store.compression_tip(found)
    tip_row = store.get_session(tip) or {}
    rows = store.live_messages(tip)
    return Conversation(
        [openai_message(r) for r in rows],
        session_id=tip,
        title=tip_row.get("title"),
        root_session_id=store.lineage_root(tip),
    )


def undo(store: SessionArchive, session_id: str, n: int = 1) -> UndoResult:
    """Take back the last ``n`` exchanges of a conversation (``/undo [N]``).

    An exchange is a user message and everything after it up to the next user message
    (replies, tool calls, tool results). The messages stay in the archive marked inactive
    (``active = 0``, as Hermes marks rewound rows), so search, browse and resume ignore them.
    ``session_id`` (an id or a unique prefix) may name any session of a compressed
    conversation: the exchanges are taken from its compression tip, never from the summary.

    :raises SessionNotFoundError: no session matches.
    :raises ValueError: ``n`` is not a positive integer.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    tip = store.compression_tip(_resolve(store, session_id))
    rows = store.live_messages(tip)
    starts = [i for i, r in enumerate(rows) if r["role"] == "user" and not is_summary(r)]
    if not starts:
        return UndoResult(session_id=tip, exchanges=0, messages=0)
    cut = starts[-min(n, len(starts))]
    undone = rows[cut:]
    marked = store.rewind_messages(tip, [int(r["id"]) for r in undone])
    return UndoResult(
        session_id=tip,
        exchanges=min(n, len(starts)),
        messages=marked,
        user_messages=[
            str(r.get("content") or "") for r in undone if r["role"] == "user" and not is_summary(r)
        ],
    )
