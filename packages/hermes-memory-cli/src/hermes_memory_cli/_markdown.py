"""A session as Markdown a person reads: title, dates, who said what, tool calls folded.

Tool calls and tool results sit in ``<details>`` blocks (folded on GitHub, in most Markdown
viewers and editors), so the conversation reads straight through. Messages that were taken
back (rewound: ``active = 0`` and not compacted) are left out and counted in the header;
messages compression summarised away are kept, marked. Code fences are made longer than
any run of backticks inside the text, so no message can break the layout.
"""

from __future__ import annotations

import contextlib
import json
import re
from datetime import datetime
from typing import Any

from hermes_memory_cli._i18n import cli_gettext as _

__all__ = ["file_name", "session_markdown"]


def _when(ts: Any) -> str:
    try:
        return datetime.fromtimestamp(float(ts)).astimezone().strftime("%Y-%m-%d %H:%M %Z").strip()
    except (TypeError, ValueError, OverflowError, OSError):
        return "-"


def _fence(text: str, lang: str = "") -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def _calls(raw: Any) -> list[tuple[str, str]]:
    """(tool name, arguments pretty-printed) of each call in a ``tool_calls`` value."""
    try:
        calls = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return [("?", str(raw))]
    out = []
    for call in calls if isinstance(calls, list) else [calls]:
        if not isinstance(call, dict):
            out.append(("?", json.dumps(call, ensure_ascii=False)))
            continue
        inner = call.get("function")
        fn: dict[str, Any] = inner if isinstance(inner, dict) else call
        name = str(fn.get("name") or "?")
        args = fn.get("arguments")
        if isinstance(args, str):
            with contextlib.suppress(ValueError):
                args = json.loads(args)
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, indent=2)
        out.append((name, text))
    return out


def _role(role: str) -> str:
    names = {
        "user": _("User"),
        "assistant": _("Assistant"),
        "tool": _("Tool"),
        "system": _("System"),
    }
    return names.get(role, role)


def session_markdown(session: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    """The Markdown of one session."""
    sid = str(session.get("id"))
    title = " ".join(str(session.get("title") or "").split()) or sid
    shown = [m for m in messages if m.get("active", 1) or m.get("compacted")]
    rewound = len(messages) - len(shown)
    lines = [f"# {title}", ""]
    facts = [
        (_("Session"), f"`{sid}`"),
        (_("Source"), str(session.get("source") or "-")),
        (_("Model"), str(session.get("model") or "-")),
        (_("Started"), _when(session.get("started_at"))),
    ]
    if session.get("ended_at"):
        facts.append((_("Ended"), _when(session.get("ended_at"))))
    if session.get("parent_session_id"):
        facts.append((_("Continues"), f"`{session['parent_session_id']}`"))
    count = f"{len(shown)}"
    if rewound:
        count += " " + _("({n} taken back, not shown)").format(n=rewound)
    facts.append((_("Messages"), count))
    lines += [f"- **{k}:** {v}" for k, v in facts]
    lines.append("")
    for msg in shown:
        role = str(msg.get("role") or "?")
        head = f"## {_role(role)} · {_when(msg.get('timestamp'))}"
        if msg.get("compacted") and not msg.get("active", 1):
            head += " · " + _("(summarised away by compression)")
        content = str(msg.get("content") or "")
        if role == "tool":
            name = msg.get("tool_name") or "?"
            lines += [
                "<details>",
                "<summary>" + _("Tool result: {name}").format(name=name) + "</summary>",
                "",
                _fence(content),
                "",
                "</details>",
                "",
            ]
            continue
        lines += [head, ""]
        if content.strip():
            lines += [content.rstrip(), ""]
        for name, args in _calls(msg.get("tool_calls")) if msg.get("tool_calls") else []:
            lines += [
                "<details>",
                "<summary>" + _("Tool call: {name}").format(name=name) + "</summary>",
                "",
                _fence(args, "json"),
                "",
                "</details>",
                "",
            ]
    return "\n".join(lines).rstrip() + "\n"


def file_name(session: dict[str, Any]) -> str:
    """``<id>.md`` with anything a file system dislikes replaced."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", str(session.get("id"))) + ".md"
