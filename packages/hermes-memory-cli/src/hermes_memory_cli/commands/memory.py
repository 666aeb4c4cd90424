"""``hermes-memory memory show|add|replace|remove|edit``: the curated MEMORY.md / USER.md."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hermes_memory_cli._context import CLIError, Context

TARGETS = ("memory", "user")
_DETAIL_KEYS = ("matches", "similar_entry", "suggested_removals", "current_entries")


def _usage_bar(used: int, limit: int, width: int = 30) -> str:
    filled = min(width, round(width * used / limit)) if limit > 0 else 0
    return "[" + "█" * filled + "░" * (width - filled) + "]"


def show(ctx: Context) -> int:
    """Entries with metadata, usage, and the snapshot the next session will be given."""
    store = ctx.memory_store()
    targets = [ctx.args.target] if ctx.args.target else list(TARGETS)
    report = {t: _target_report(store, t) for t in targets}
    if ctx.json:
        ctx.emit_json(report)
        return 0
    for target in targets:
        _print_target(ctx, target, report[target])
    return 0


def _target_report(store: Any, target: str) -> dict[str, Any]:
    from hermes_memory_builtin.format import char_count

    entries = store.entries(target)
    return {
        "file": str(store.path(target)),
        "enabled": store.is_enabled(target),
        "entries": store.entry_metadata(target),
        "entry_count": len(entries),
        "chars": char_count(entries),
        "limit": store.limit(target),
        "usage": store.usage(target),
        "snapshot": store.format_for_system_prompt(target),
        "load_error": store.load_errors.get(target),
    }


def _print_target(ctx: Context, target: str, info: dict[str, Any]) -> None:
    from rich.text import Text

    name = Path(info["file"]).name
    state = "" if info["enabled"] else "  (writes disabled in config)"
    ctx.console.print(Text(f"{name}  {info['file']}{state}", style="bold"))
    if info["load_error"]:
        ctx.say(f"  cannot read it: {info['load_error']}")
    ctx.say(f"  {_usage_bar(info['chars'], info['limit'])} {info['usage']}")
    if not info["entries"]:
        ctx.say("  (no entries)")
    for number, meta in enumerate(info["entries"], 1):
        updated = str(meta.get("updated", ""))[:16].replace("T", " ")
        origin = meta.get("origin", "")
        ctx.say(f"  {number:>2}. {meta['entry']}")
        ctx.say(f"      updated {updated} by {origin}", style="dim")
    ctx.say("  Snapshot for the next session's system prompt:")
    snapshot = info["snapshot"]
    if snapshot is None:
        ctx.say("    (empty: nothing is added to the prompt)")
    else:
        for line in snapshot.splitlines():
            ctx.say(f"    {line}")
    ctx.say()


def _content_arg(value: str) -> str:
    if value == "-":
        return sys.stdin.read()
    return value


def _run_tool(ctx: Context, args: dict[str, Any]) -> int:
    from hermes_memory_builtin.tool import memory_tool

    store = ctx.memory_store()
    answer = memory_tool(args, store)
    result = json.loads(answer)
    if ctx.json:
        sys.stdout.write(answer + "\n")
        return 0 if result.get("success") else 1
    if not result.get("success"):
        details = [(k, result[k]) for k in _DETAIL_KEYS if result.get(k)]
        for key, value in details:
            ctx.say(f"{key.replace('_', ' ')}:")
            for item in value if isinstance(value, list) else [value]:
                ctx.say(f"  - {item}")
        raise CLIError(str(result.get("error") or "the memory tool refused the change"))
    ctx.say(f"{result.get('message', 'Done.')} ({result.get('usage', '')})")
    if result.get("drift_backup"):
        ctx.say(f"backup of the previous file: {result['drift_backup']}")
    ctx.say("The agent sees this from its next session on (the snapshot is frozen per session).")
    return 0


def add(ctx: Context) -> int:
    """``memory add CONTENT``: the ``memory`` tool's add."""
    content = _content_arg(ctx.args.content)
    return _run_tool(ctx, {"action": "add", "target": ctx.args.target, "content": content})


def replace(ctx: Context) -> int:
    """``memory replace OLD_TEXT CONTENT``: the ``memory`` tool's replace."""
    return _run_tool(
        ctx,
        {
            "action": "replace",
            "target": ctx.args.target,
            "old_text": ctx.args.old_text,
            "content": _content_arg(ctx.args.content),
        },
    )


def remove(ctx: Context) -> int:
    """``memory remove OLD_TEXT``: the ``memory`` tool's remove."""
    return _run_tool(
        ctx, {"action": "remove", "target": ctx.args.target, "old_text": ctx.args.old_text}
    )


def edit(ctx: Context) -> int:
    """``memory edit``: open the file in ``$EDITOR``, validate, then replace it."""
    from hermes_memory_cli import memedit
    from hermes_memory_builtin.format import read_raw

    store = ctx.memory_store()
    target = ctx.args.target
    path: Path = store.path(target)
    raw = read_raw(path)
    if not raw.readable:
        raise CLIError(f"cannot read {path}: {raw.error}; nothing was changed")
    original_text = raw.text or ""
    expected = raw.data if raw.exists else None
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, buffer_name = tempfile.mkstemp(prefix=f".{path.name}.edit-", suffix=".md", dir=path.parent)
    buffer = Path(buffer_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(original_text)
        editor = memedit.editor_command()
        try:
            status = subprocess.call([*shlex.split(editor), str(buffer)])
        except OSError as exc:
            raise CLIError(f"cannot start the editor {editor!r}: {exc}; set $EDITOR") from None
        try:
            edited = buffer.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CLIError(f"cannot read the edited text back: {exc}; nothing changed") from None
        if status != 0:
            kept = memedit.keep_rejected(path, edited)
            raise CLIError(
                f"the editor exited with status {status}; nothing was changed "
                f"(your text is kept at {kept})"
            )
        if edited.replace("\r\n", "\n").rstrip("\n") == original_text.rstrip("\n"):
            _edit_report(ctx, path, "unchanged", [], [])
            return 0
        check = memedit.check_edit(edited, limit=store.limit(target), filename=path.name)
        if not check.ok:
            kept = memedit.keep_rejected(path, edited)
            raise CLIError(
                f"edit rejected, {path.name} unchanged: {'; '.join(check.problems)} "
                f"(your text is kept at {kept})"
            )
        try:
            memedit.apply_edit(path, check.entries, expected=expected)
        except memedit.ConcurrentChange as exc:
            kept = memedit.keep_rejected(path, edited)
            raise CLIError(f"edit not applied: {exc} (your text is kept at {kept})") from None
        except OSError as exc:
            kept = memedit.keep_rejected(path, edited)
            raise CLIError(f"cannot write {path}: {exc} (your text is kept at {kept})") from None
        _edit_report(ctx, path, "saved", check.entries, check.notes)
        return 0
    finally:
        buffer.unlink(missing_ok=True)


def _edit_report(
    ctx: Context, path: Path, status: str, entries: list[str], notes: list[str]
) -> None:
    if ctx.json:
        ctx.emit_json(
            {"status": status, "file": str(path), "entry_count": len(entries), "notes": notes}
        )
        return
    if status == "unchanged":
        ctx.say(f"No changes; {path.name} left as it was.")
        return
    ctx.say(f"Saved {path.name}: {len(entries)} entries.")
    for note in notes:
        ctx.say(f"note: {note}")
    ctx.say("The agent sees this from its next session on.")
