"""``hermes-memory memory show|add|replace|remove|edit``: the curated MEMORY.md / USER.md.

The writes go through the same `MemoryStore` methods as the agent's ``memory`` tool (same
rules: duplicates, near-duplicates, the budget, the threat scan, the lock). The words are
the CLI's own: the tool's messages are written for a model ("retry this add — all in this
turn"), a person gets the cause and the exact command to run. ``--json`` prints the tool's
JSON answer unchanged, so scripts see what the agent would see.
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hermes_memory_cli._context import CLIError, Context
from hermes_memory_cli._i18n import cli_gettext as _
from hermes_memory_core.kit import make_private_dirs

TARGETS = ("memory", "user")
_FILES = {"memory": "MEMORY.md", "user": "USER.md"}
_CONFIG_KEYS = {"memory": "memory_enabled", "user": "user_profile_enabled"}
_DELIMITER_LINE = re.compile(r"(?m)^[ \t]*§[ \t]*$")
_HANDLE_MAX = 40


def _usage_bar(used: int, limit: int, width: int = 30) -> str:
    filled = min(width, round(width * used / limit)) if limit > 0 else 0
    return "[" + "█" * filled + "░" * (width - filled) + "]"


# ---------------------------------------------------------------------- show
def show(ctx: Context) -> int:
    """Entries with metadata, usage, and the snapshot the next session will be given.

    A read command: it creates nothing, fails on a missing home, and exits 1 (after
    printing what it could) when a memory file cannot be read.
    """
    from hermes_memory_cli._files import explain_unreadable

    store = ctx.memory_store(create=False)
    targets = [ctx.args.target] if ctx.args.target else list(TARGETS)
    report = {t: _target_report(store, t) for t in targets}
    if ctx.json:
        ctx.emit_json(report)
    else:
        for target in targets:
            _print_target(ctx, target, report[target])
    problems = [
        explain_unreadable(Path(report[t]["file"]), report[t]["load_error"])
        for t in targets
        if report[t]["load_error"]
    ]
    if problems:
        raise CLIError("; ".join(problems))
    return 0


def _target_report(store: Any, target: str) -> dict[str, Any]:
    from hermes_memory_builtin import char_count

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
    name = Path(info["file"]).name
    state = "" if info["enabled"] else "  " + _("(writes disabled in config)")
    ctx.say(f"{name}  {info['file']}{state}", style="bold")
    if info["load_error"]:
        ctx.say("  " + _("cannot be read (see the error below)"))
    ctx.say(f"  {_usage_bar(info['chars'], info['limit'])} {info['usage']}")
    if not info["entries"]:
        ctx.say("  " + _("(no entries)"))
    for number, meta in enumerate(info["entries"], 1):
        updated = str(meta.get("updated", ""))[:16].replace("T", " ")
        origin = meta.get("origin", "")
        ctx.say(f"  {number:>2}. {meta['entry']}")
        line = (
            _("updated {updated} by {origin}, approved by a human despite the threat scan")
            if meta.get("human_approved")
            else _("updated {updated} by {origin}")
        ).format(updated=updated, origin=origin)
        ctx.say(f"      {line}", style="dim")
    ctx.say("  " + _("Snapshot for the next session's system prompt:"))
    snapshot = info["snapshot"]
    if snapshot is None:
        ctx.say("    " + _("(empty: nothing is added to the prompt)"))
    else:
        for line in snapshot.splitlines():
            ctx.say(f"    {line}")
    ctx.say()


# ---------------------------------------------------------------------- helpers
def _content_arg(value: str) -> str:
    if value == "-":
        return sys.stdin.read()
    return value


def _prog(ctx: Context) -> str:
    """``hermes-memory`` with the --home / --profile of this run, ready to paste."""
    parts = ["hermes-memory"]
    home = getattr(ctx.args, "home", None)
    if home is not None:
        parts += ["--home", shlex.quote(str(home))]
    profile = getattr(ctx.args, "profile", None)
    if profile:
        parts += ["--profile", shlex.quote(profile)]
    return " ".join(parts)


def _cmd(ctx: Context, target: str, action: str, *words: str) -> str:
    """A complete ``hermes-memory memory ACTION ...`` command line (shell-quoted)."""
    tail = " --target user" if target == "user" else ""
    quoted = " ".join(shlex.quote(w) for w in words)
    return f"{_prog(ctx)} memory {action}{tail} {quoted}".rstrip()


def handle_for(entry: str, entries: list[str]) -> str:
    """A short part of ``entry`` that identifies it among ``entries`` (for a command line).

    The whole entry when it is short; otherwise the shortest prefix (cut at a space, or
    anywhere in CJK text) of at least 12 characters that no other entry contains.
    """
    if len(entry) <= _HANDLE_MAX:
        return entry
    others = [e for e in entries if e != entry]
    for end in range(12, len(entry) + 1):
        if end < len(entry) and not (entry[end].isspace() or ord(entry[end]) > 0x2E7F):
            continue
        part = entry[:end].strip()
        if part and part not in others and not any(part in other for other in others):
            return part
    return entry


def _locate(entries: list[str], old_text: str) -> list[str]:
    """The distinct entries ``old_text`` names: an exact entry wins over substrings."""
    if old_text in entries:
        return [old_text]
    return list(dict.fromkeys(e for e in entries if old_text in e))


def _writable_store(ctx: Context, target: str, *, create: bool) -> Any:
    """A loaded store whose ``target`` file is readable and writable by config, else `CLIError`."""
    from hermes_memory_cli._files import explain_unreadable

    store = ctx.memory_store(create=create)
    error = store.load_errors.get(target)
    if error:
        raise CLIError(
            _("{reason}; nothing was changed").format(
                reason=explain_unreadable(store.path(target), error)
            )
        )
    if not store.is_enabled(target):
        key = _CONFIG_KEYS[target]
        raise CLIError(
            _(
                "{name} writes are disabled in {config} (memory.{key}: false); "
                "set it to true to write {name}"
            ).format(name=_FILES[target], config=ctx.config.path, key=key)
        )
    return store


def _check_content(content: str) -> str:
    text = content.strip()
    if not text:
        raise CLIError(_("the entry is empty; nothing was changed"), code=2)
    if _DELIMITER_LINE.search(text):
        raise CLIError(
            _(
                "the text contains a line holding only '§', which separates entries in the "
                "file: add each entry with its own command; nothing was changed"
            ),
            code=2,
        )
    return text


def _supports_approval(method: Any) -> bool:
    return "approved_by_human" in inspect.signature(method).parameters


def _call(ctx: Context, method: Any, *args: str) -> dict[str, Any]:
    """Call a store write; with ``--allow-flagged`` as a human-approved write.

    A write the threat scan only *holds* (vocabulary or the learned signal, never a
    structural signal) is kept as approved by the person running the command: a hold waits
    for a person, and the person at the command line is the most trusted source (the trust
    table of docs/reference/security.md). What matched is said on stderr.
    """
    if getattr(ctx.args, "allow_flagged", False):
        if not _supports_approval(method):
            raise CLIError(
                _(
                    "this hermes-memory-builtin cannot record a human approval; upgrade it "
                    "to use --allow-flagged"
                )
            )
        result: dict[str, Any] = method(*args, approved_by_human=True)
        return result
    result = method(*args)
    if result.get("threat_verdict") != "hold" or not _supports_approval(method):
        return result
    kept: dict[str, Any] = method(*args, approved_by_human=True)
    if kept.get("success"):
        target, content = args[0], args[-1]
        entries: list[str] = method.__self__.entries(target)
        handle = handle_for(content, entries) if content in entries else "text"
        _say_kept(ctx, content, _cmd(ctx, target, "remove", handle))
    return kept


def _say_kept(ctx: Context, content: str, command: str) -> None:
    """Tell the person which findings their kept text had (stderr), and how to undo it."""
    from hermes_memory_guard import threat_verdict

    matched = ", ".join(threat_verdict(content).ids)
    if not matched:  # flagged only when read together with the entry next to it
        matched = _("only read together with the entry next to it")
    ctx.note(
        _(
            "Note: the threat scan's word lists matched this text ({matched}). An agent's "
            "write of it would wait for a person's approval; you wrote it, so it is kept and "
            "recorded as approved by you. If it is not your text, remove it with `{command}`."
        ).format(matched=matched, command=command)
    )


def _emit_json(ctx: Context, result: dict[str, Any]) -> None:
    from hermes_memory_core import tool_result

    sys.stdout.write(tool_result(result) + "\n")
    sys.stdout.flush()


def _list_entries(ctx: Context, title: str, entries: list[str]) -> None:
    if ctx.json:
        return
    ctx.say(title)
    if not entries:
        ctx.say("  " + _("(no entries)"))
    for number, entry in enumerate(entries, 1):
        ctx.say(f"  {number:>2}. {entry}")


def _room_hint(ctx: Context, target: str, result: dict[str, Any], entries: list[str]) -> None:
    """List entries whose removal would make room, each with the command that removes it."""
    suggested = [e for e in result.get("suggested_removals") or [] if e in entries]
    if not suggested or ctx.json:
        return
    ctx.say(_("Least recently updated entries; removing these would make room:"))
    for entry in suggested:
        ctx.say(f"  {_cmd(ctx, target, 'remove', handle_for(entry, entries))}")
        size = _("{count:,} chars: {entry}").format(count=len(entry), entry=entry)
        ctx.say(f"      {size}", style="dim")


def _refusal(
    ctx: Context,
    store: Any,
    target: str,
    result: dict[str, Any],
    *,
    content: str = "",
    entries: list[str],
) -> CLIError:
    """The human words for a refused write (details on stdout, the reason as the error)."""
    from hermes_memory_builtin import char_count

    name = _FILES[target]
    limit = store.limit(target)
    used = char_count(entries)
    error = str(result.get("error") or "")
    if result.get("drift_backup"):
        return CLIError(
            _(
                "{name} was changed outside hermes-memory and is no longer a clean list of "
                "entries separated by '§' lines; nothing was changed. A copy is at "
                "{backup}. Tidy the file with `{command}`, then run this command again"
            ).format(
                name=name,
                backup=result["drift_backup"],
                command=f"{_prog(ctx)} memory edit{' --target user' if target == 'user' else ''}",
            )
        )
    if result.get("similar_entry"):
        similar = str(result["similar_entry"])
        _list_entries(ctx, _("Entries in {name}:").format(name=name), entries)
        return CLIError(
            _(
                "not added: {name} already has a nearly identical entry: {similar!r}. To "
                "update it run: `{command}`"
            ).format(
                name=name,
                similar=similar,
                command=_cmd(ctx, target, "replace", handle_for(similar, entries), content),
            )
        )
    if "chars_to_free" in result:
        needed = int(result["chars_to_free"])
        if len(content) > limit:
            return CLIError(
                _(
                    "the entry is {size:,} chars but {name} holds at most {limit:,}: "
                    "shorten it; nothing was changed"
                ).format(size=len(content), name=name, limit=limit)
            )
        _room_hint(ctx, target, result, entries)
        return CLIError(
            _(
                "{name} is full ({used:,}/{limit:,} chars): free {needed:,} characters with "
                "`{remove}` or `{replace}`, then add again (or shorten the new entry)"
            ).format(
                name=name,
                used=used,
                limit=limit,
                needed=needed,
                remove=_cmd(ctx, target, "remove", "old text"),
                replace=_cmd(ctx, target, "replace", "old text", "shorter text"),
            )
        )
    if error.startswith("Blocked"):
        reason = error.removeprefix("Blocked:").strip()
        return CLIError(
            _(
                "refused by the threat scan: {reason} If you wrote this yourself and trust "
                "it, run the same command with --allow-flagged (your approval is recorded)"
            ).format(reason=reason)
        )
    if error.startswith("Could not lock"):
        return CLIError(
            _(
                "{name} is locked by another process (an agent writing memory?); nothing was "
                "changed: try again when it has finished, or see `{command}`"
            ).format(name=name, command=f"{_prog(ctx)} doctor")
        )
    return CLIError(" ".join(error.split()) or _("{name} was not changed").format(name=name))


# ---------------------------------------------------------------------- writes
def add(ctx: Context) -> int:
    """``memory add CONTENT [--allow-flagged]``: the ``memory`` tool's add, in human words."""
    target: str = ctx.args.target
    content = _check_content(_content_arg(ctx.args.content))
    store = _writable_store(ctx, target, create=True)
    entries = store.entries(target)
    result = _call(ctx, store.add, target, content)
    if ctx.json:
        _emit_json(ctx, result)
    if not result.get("success"):
        raise _refusal(ctx, store, target, result, content=content, entries=entries)
    if not ctx.json:
        name = _FILES[target]
        if len(store.entries(target)) == len(entries):
            ctx.say(
                _("{name} already has this entry; nothing was added ({usage}).").format(
                    name=name, usage=result.get("usage")
                )
            )
        else:
            added = (
                _("Added to {name} (flagged by the threat scan; kept as approved by you): {entry}")
                if result.get("human_approved")
                else _("Added to {name}: {entry}")
            )
            ctx.say(added.format(name=name, entry=content))
            ctx.say(_("{name} now uses {usage}.").format(name=name, usage=result.get("usage")))
            ctx.say(
                _("The agent sees it from its next session on (the prompt is frozen per session).")
            )
    return 0


def _pick(ctx: Context, store: Any, target: str, old_text: str, verb: str) -> str | None:
    """The one entry ``old_text`` names, or `CLIError`; ``None`` lets the store answer (JSON)."""
    old = old_text.strip()
    if not old:
        raise CLIError(_("give part of the entry to {verb}").format(verb=verb), code=2)
    entries = store.entries(target)
    matches = _locate(entries, old)
    if len(matches) == 1:
        return matches[0]
    if ctx.json:
        return None
    name = _FILES[target]
    if not matches:
        _list_entries(ctx, _("Entries in {name}:").format(name=name), entries)
        raise CLIError(
            _(
                "no entry of {name} contains {old!r} (its entries are listed above); nothing "
                "was changed"
            ).format(name=name, old=old)
        )
    _list_entries(
        ctx, _("Entries of {name} containing {old!r}:").format(name=name, old=old), matches
    )
    raise CLIError(
        _(
            "{old!r} is part of {count} entries (listed above): give more of the one "
            "to {verb}, e.g. `{command}`"
        ).format(
            old=old,
            count=len(matches),
            verb=verb,
            command=_cmd(ctx, target, verb, handle_for(matches[0], entries)),
        )
    )


def _confirm_change(ctx: Context, old_text: str, entry: str, question: str) -> None:
    """Ask before a change that was named by a substring, not by the whole entry."""
    if entry == old_text.strip():
        return
    ctx.confirm(question)


def _backup(path: Path, data: bytes | None) -> str | None:
    if data is None:
        return None
    from hermes_memory_builtin import save_backup

    backup = save_backup(path, data)
    return backup if "BACKUP FAILED" not in backup else None


def _file_bytes(path: Path) -> bytes | None:
    """The file's bytes for a backup, read as the store reads it (never through a link)."""
    from hermes_memory_builtin import read_raw

    return read_raw(path).data


def replace(ctx: Context) -> int:
    """``memory replace OLD_TEXT CONTENT``: shows the entry, asks, keeps a backup, replaces."""
    target: str = ctx.args.target
    new = _check_content(_content_arg(ctx.args.content))
    store = _writable_store(ctx, target, create=False)
    entries = store.entries(target)
    entry = _pick(ctx, store, target, ctx.args.old_text, "replace")
    if entry is None:
        result = _call(ctx, store.replace, target, ctx.args.old_text, new)
    else:
        if not ctx.json:
            ctx.say(_("Entry to replace in {name}:").format(name=_FILES[target]))
            ctx.say(f"  - {entry}")
            ctx.say(f"  + {new}")
        _confirm_change(ctx, ctx.args.old_text, entry, _("Replace this entry?"))
        before = _file_bytes(store.path(target))
        result = _call(ctx, store.replace, target, entry, new)
        if result.get("success"):
            result["backup"] = _backup(store.path(target), before)
    return _finish(ctx, store, target, result, entries, new, _("Replaced"))


def remove(ctx: Context) -> int:
    """``memory remove OLD_TEXT``: shows the entry, asks, keeps a backup, removes it."""
    target: str = ctx.args.target
    store = _writable_store(ctx, target, create=False)
    entries = store.entries(target)
    entry = _pick(ctx, store, target, ctx.args.old_text, "remove")
    if entry is None:
        result = store.remove(target, ctx.args.old_text)
    else:
        if not ctx.json:
            ctx.say(_("Entry to remove from {name}:").format(name=_FILES[target]))
            ctx.say(f"  - {entry}")
        _confirm_change(ctx, ctx.args.old_text, entry, _("Remove this entry?"))
        before = _file_bytes(store.path(target))
        result = store.remove(target, entry)
        if result.get("success"):
            result["backup"] = _backup(store.path(target), before)
    return _finish(ctx, store, target, result, entries, "", _("Removed"))


def _finish(
    ctx: Context,
    store: Any,
    target: str,
    result: dict[str, Any],
    entries: list[str],
    content: str,
    verb: str,
) -> int:
    if ctx.json:
        _emit_json(ctx, result)
    if not result.get("success"):
        raise _refusal(ctx, store, target, result, content=content, entries=entries)
    if not ctx.json:
        name = _FILES[target]
        ctx.say(
            _("{verb}; {name} now uses {usage}.").format(
                verb=verb, name=name, usage=result.get("usage")
            )
        )
        if result.get("backup"):
            ctx.say(
                _("The previous {name} is kept at {path}.").format(name=name, path=result["backup"])
            )
        ctx.say(_frozen())
    return 0


def _frozen() -> str:
    return _("The agent sees this from its next session on (the prompt is frozen per session).")


# ---------------------------------------------------------------------- edit
def edit(ctx: Context) -> int:
    """``memory edit``: open the file in ``$EDITOR``, validate, then replace it.

    Needs a terminal. The edited text is kept beside the file as ``*.rejected-<time>``
    only when it differs from the file and could not be saved.
    """
    from hermes_memory_builtin import read_raw
    from hermes_memory_cli import _memedit as memedit

    if not sys.stdin.isatty():
        raise CLIError(
            _(
                "memory edit opens $EDITOR and needs a terminal; in a script use "
                "`hermes-memory memory add|replace|remove` instead"
            )
        )
    target: str = ctx.args.target
    store = _writable_store(ctx, target, create=True)
    path: Path = store.path(target)
    raw = read_raw(path)
    if not raw.readable:
        from hermes_memory_cli._files import explain_unreadable

        raise CLIError(
            _("{reason}; nothing was changed").format(reason=explain_unreadable(path, raw.error))
        )
    original_text = raw.text or ""
    expected = raw.data if raw.exists else None
    make_private_dirs(path.parent)
    fd, buffer_name = tempfile.mkstemp(prefix=f".{path.name}.edit-", suffix=".md", dir=path.parent)
    buffer = Path(buffer_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(original_text)
        editor = memedit.editor_command()
        try:
            status = subprocess.call([*shlex.split(editor), str(buffer)])
        except (OSError, ValueError) as exc:
            raise CLIError(
                _("cannot start the editor {editor!r}: {error}; set $EDITOR").format(
                    editor=editor, error=exc
                )
            ) from None
        try:
            edited = buffer.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CLIError(
                _("cannot read the edited text back: {error}; nothing changed").format(error=exc)
            ) from None
        changed = edited.replace("\r\n", "\n").rstrip("\n") != original_text.rstrip("\n")

        def kept_note() -> str:
            kept = memedit.keep_rejected(path, edited)
            return " " + _("(your text is kept at {path})").format(path=kept)

        if status != 0:
            note = kept_note() if changed else ""
            raise CLIError(
                _("the editor exited with status {status}; nothing was changed").format(
                    status=status
                )
                + note
            )
        if not changed:
            _edit_report(ctx, path, "unchanged", [], [])
            return 0
        allow = bool(getattr(ctx.args, "allow_flagged", False))
        check = memedit.check_edit(
            edited,
            limit=store.limit(target),
            filename=path.name,
            approved=_approved(path, store.entries(target)),
            allow_flagged=allow,
        )
        if not check.ok:
            hint = (
                "; "
                + _(
                    "if you wrote the flagged text yourself and trust it, run "
                    "`hermes-memory memory edit --allow-flagged`"
                )
                if check.flagged and not allow
                else ""
            )
            raise CLIError(
                _("edit rejected, {name} unchanged: {problems}").format(
                    name=path.name, problems="; ".join(check.problems)
                )
                + hint
                + kept_note()
            )
        try:
            memedit.apply_edit(path, check.entries, expected=expected, approved=check.approved)
        except memedit.ConcurrentChange as exc:
            raise CLIError(_("edit not applied: {error}").format(error=exc) + kept_note()) from None
        except OSError as exc:
            raise CLIError(
                _("cannot write {path}: {error}").format(path=path, error=exc) + kept_note()
            ) from None
        _edit_report(ctx, path, "saved", check.entries, check.notes)
        return 0
    finally:
        buffer.unlink(missing_ok=True)


def _approved(path: Path, entries: list[str]) -> set[str]:
    """Entries the sidecar records as approved by a human (none with an older builtin)."""
    try:
        from hermes_memory_builtin import approved_entries, load_sidecar
    except ImportError:
        return set()
    return approved_entries(entries, load_sidecar(path))


def _edit_report(
    ctx: Context, path: Path, status: str, entries: list[str], notes: list[str]
) -> None:
    if ctx.json:
        ctx.emit_json(
            {"status": status, "file": str(path), "entry_count": len(entries), "notes": notes}
        )
        return
    if status == "unchanged":
        ctx.say(_("No changes; {name} left as it was.").format(name=path.name))
        return
    ctx.say(_("Saved {name}: {count} entries.").format(name=path.name, count=len(entries)))
    for note in notes:
        ctx.say(_("note: {note}").format(note=note))
    ctx.say(_("The agent sees this from its next session on."))


# ---------------------------------------------------------------------- pending
_PENDING_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")


def pending(ctx: Context) -> int:
    """``memory pending [list | apply ID | reject ID]``: proposals staged by the write gates.

    An unattended background review may add entries but its replace/remove steps are staged;
    with ``memory.write_approval: true`` every write of the agent is. ``list`` (the default)
    is a read command; ``apply`` writes through the store's checks and refuses a step whose
    entry changed since it was staged; ``reject`` drops a proposal.
    """
    action: str = ctx.args.pending_action or "list"
    pending_id: str | None = ctx.args.pending_id
    if action == "list":
        if pending_id is not None:
            raise CLIError(_("'memory pending list' takes no id"), code=2)
        return _pending_list(ctx)
    if pending_id is None:
        raise CLIError(
            _("give the id of the proposal to {action} (see `{command}`)").format(
                action=action, command=f"{_prog(ctx)} memory pending"
            ),
            code=2,
        )
    if not _PENDING_ID.fullmatch(pending_id):
        raise CLIError(
            _("{id!r} is not a proposal id (see `{command}`)").format(
                id=pending_id, command=f"{_prog(ctx)} memory pending"
            )
        )
    if action == "apply":
        return _pending_apply(ctx, pending_id)
    return _pending_reject(ctx, pending_id)


def _pending_store(ctx: Context, *, create: bool) -> tuple[Any, Any]:
    from hermes_memory_builtin import PendingStore

    store = ctx.memory_store(create=create)
    return store, PendingStore(store.memory_dir)


def _proposals(pending_store: Any) -> list[dict[str, Any]]:
    from hermes_memory_builtin import PendingError

    try:
        records: list[dict[str, Any]] = pending_store.proposals()
    except PendingError as exc:
        raise CLIError(str(exc)) from None
    return records


def _pending_list(ctx: Context) -> int:
    _store, pending_store = _pending_store(ctx, create=False)
    records = _proposals(pending_store) if pending_store.memory_dir.is_dir() else []
    if ctx.json:
        ctx.emit_json({"file": str(pending_store.path), "count": len(records), "pending": records})
        return 0
    if not records:
        ctx.say(_("No pending memory proposals."))
        return 0
    ctx.say(
        _("{count} pending proposal(s) in {path}:").format(
            count=len(records), path=pending_store.path
        ),
        style="bold",
    )
    for record in records:
        _print_proposal(ctx, record)
    return 0


def N_(message: str) -> str:  # gettext's name for "mark now, translate when shown"
    return message


_REASONS = {
    "background_review": N_("an unattended background review (it may not replace or remove)"),
    "write_approval": N_("the agent (memory.write_approval is on)"),
    "threat_review": N_("the agent, held by the threat scan (apply only if you trust the text)"),
}


def _print_proposal(ctx: Context, record: dict[str, Any]) -> None:
    created = str(record.get("created", ""))[:16].replace("T", " ")
    name = _FILES.get(str(record.get("target")), "?")
    known = _REASONS.get(str(record.get("reason")))
    reason = _(known) if known else str(record.get("reason", ""))
    ctx.say()
    ctx.say(
        _("[{id}] {name}, {created}, from {reason}").format(
            id=record["id"], name=name, created=created, reason=reason
        ),
        style="bold",
    )
    for op in record["operations"]:
        action = op["action"]
        if action == "add":
            ctx.say("  " + _("add:     {entry}").format(entry=op.get("content", "")))
        elif action == "remove":
            old = op.get("matched_entry", op.get("old_text", ""))
            ctx.say("  " + _("remove:  {entry}").format(entry=old))
        else:
            old = op.get("matched_entry", op.get("old_text", ""))
            ctx.say("  " + _("replace: {entry}").format(entry=old))
            ctx.say("  " + _("   with: {entry}").format(entry=op.get("content", "")))
    command = f"{_prog(ctx)} memory pending"
    apply_line = _("apply:  {command}").format(command=f"{command} apply {record['id']}")
    reject_line = _("reject: {command}").format(command=f"{command} reject {record['id']}")
    ctx.say(f"  {apply_line}", style="dim")
    ctx.say(f"  {reject_line}", style="dim")


def _pending_apply(ctx: Context, pending_id: str) -> int:
    from hermes_memory_builtin import PendingError

    store, pending_store = _pending_store(ctx, create=False)
    record = next((r for r in _proposals(pending_store) if r.get("id") == pending_id), None)
    if record is None:
        raise CLIError(_unknown_proposal(ctx, pending_id))
    target = str(record["target"])
    _writable_store(ctx, target, create=False)
    path = store.path(target)
    destructive = any(op["action"] != "add" for op in record["operations"])
    before = _file_bytes(path) if destructive else None
    try:
        result: dict[str, Any] = pending_store.apply(pending_id, store)
    except PendingError as exc:
        raise CLIError(str(exc)) from None
    if result.get("success") and destructive:
        result["backup"] = _backup(path, before)
    if ctx.json:
        _emit_json(ctx, result)
    name = _FILES[target]
    if not result.get("success"):
        if result.get("stale_entry"):
            raise CLIError(
                _(
                    "not applied: the entry {entry!r} changed in {name} since this change was "
                    "proposed, so it was not applied; nothing was changed. Reject it with "
                    "`{command}`"
                ).format(
                    entry=result["stale_entry"],
                    name=name,
                    command=f"{_prog(ctx)} memory pending reject {pending_id}",
                )
            )
        error = " ".join(str(result.get("error") or "").split())
        raise CLIError(
            _(
                "not applied: {error}; the proposal stays pending (reject it with `{command}`)"
            ).format(
                error=error or _("refused"),
                command=f"{_prog(ctx)} memory pending reject {pending_id}",
            )
        )
    if not ctx.json:
        ctx.say(
            _("Applied proposal {id}; {name} now uses {usage}.").format(
                id=pending_id, name=name, usage=result.get("usage")
            )
        )
        if result.get("backup"):
            ctx.say(
                _("The previous {name} is kept at {path}.").format(name=name, path=result["backup"])
            )
        ctx.say(_frozen())
    return 0


def _pending_reject(ctx: Context, pending_id: str) -> int:
    from hermes_memory_builtin import PendingError

    _store, pending_store = _pending_store(ctx, create=False)
    _proposals(pending_store)  # a broken file is reported as such, not as an unknown id
    try:
        record = pending_store.reject(pending_id)
    except PendingError as exc:
        raise CLIError(str(exc)) from None
    if record is None:
        raise CLIError(_unknown_proposal(ctx, pending_id))
    if ctx.json:
        ctx.emit_json({"success": True, "rejected": record})
    else:
        ctx.say(_("Rejected proposal {id}; memory is unchanged.").format(id=pending_id))
    return 0


def _unknown_proposal(ctx: Context, pending_id: str) -> str:
    return _("no pending proposal has the id {id!r} (see `{command}`)").format(
        id=pending_id, command=f"{_prog(ctx)} memory pending"
    )
