"""``/memory`` (MEMORY.md and USER.md) and ``/pending`` (proposals waiting for a person).

Writes go through the same `MemoryStore` methods as the agent's ``memory`` tool and the
CLI (lock, drift check, budget, threat scan, near-duplicates); the tool's JSON answer is
shown to the person under a message in their language. Replacements and removals keep a
backup of the previous file, as ``hermes-memory memory replace|remove`` do.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hermes_memory_cli._commands.memory import (
    _DELIMITER_LINE,
    TARGETS,
    _backup,
    _file_bytes,
    _target_report,
)
from hermes_memory_cli._context import CLIError
from hermes_memory_cli._dashboard._frame import Dashboard, Page, Redirect
from hermes_memory_cli._dashboard._web import N_, Flash

__all__ = ["add", "approve", "edit", "memory_page", "pending_page", "reject", "remove"]

_FILES = {"memory": "MEMORY.md", "user": "USER.md"}
#: Who wrote an entry (sidecar ``origin``), as shown to a person.
ORIGINS = {
    "assistant": N_("the agent"),
    "cli": N_("you, at the command line"),
    "dashboard": N_("you, in the dashboard"),
    "background_review": N_("a background review"),
    "external": N_("an edit outside hermes-memory"),
}
#: Why a proposal waits (its ``reason``).
REASONS = {
    "background_review": N_(
        "An unattended background review proposed it; it may add but not replace or remove."
    ),
    "write_approval": N_("memory.write_approval is on: every write of the agent waits for you."),
}
ORIGIN = "dashboard"


# ---------------------------------------------------------------------- reading
def _target_view(store: Any, target: str) -> dict[str, Any]:
    from hermes_memory_builtin import check_drift, read_raw

    info = _target_report(store, target)
    path = Path(info["file"])
    drift: tuple[str, ...] = ()
    raw = read_raw(path)
    if raw.readable and raw.text:
        drift = check_drift(raw.text, store.entries(target), store.limit(target)).reasons
    backups = (
        sorted(path.parent.glob(f"{path.name}.bak.*"), reverse=True) if path.parent.is_dir() else []
    )
    limit = int(info["limit"]) or 1
    return {
        **info,
        "target": target,
        "name": _FILES[target],
        "percent": min(100, round(100 * int(info["chars"]) / limit)),
        "drift": list(drift),
        "backups": [{"name": b.name, "size": b.stat().st_size} for b in backups[:10]],
    }


def memory_page(dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str]) -> Page:
    ctx = dash.context()
    store = ctx.memory_store(create=False)
    targets = [_target_view(store, t) for t in TARGETS]
    return Page("memory.html", {"targets": targets, "origins": ORIGINS, "title": N_("Memory")})


# ---------------------------------------------------------------------- writing
def _answer(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False, indent=2, default=str)


def _problem(text: str, **params: Any) -> Redirect:
    return Redirect("/memory", [Flash("error", text, params)])


def _open(dash: Dashboard, target: str) -> tuple[Any, Redirect | None]:
    """A loaded store whose ``target`` can be written, or the redirect saying why not."""
    if target not in TARGETS:
        return None, _problem(N_("Unknown file %(target)s."), target=target)
    ctx = dash.context()
    try:
        store = ctx.memory_store(create=False)
    except CLIError as exc:
        return None, _problem(N_("The memory cannot be opened: %(detail)s"), detail=str(exc))
    name = _FILES[target]
    if store.load_errors.get(target):
        return None, _problem(
            N_("%(file)s cannot be read, so nothing was changed: %(detail)s"),
            file=name,
            detail=store.load_errors[target],
        )
    if not store.is_enabled(target):
        key = "memory_enabled" if target == "memory" else "user_profile_enabled"
        return None, _problem(
            N_("Writes to %(file)s are turned off (memory.%(key)s: false in config.yaml)."),
            file=name,
            key=key,
        )
    return store, None


def _content(form: Mapping[str, str]) -> tuple[str, Redirect | None]:
    text = (form.get("content") or "").replace("\r\n", "\n").strip()
    if not text:
        return "", _problem(N_("The entry is empty; nothing was changed."))
    if _DELIMITER_LINE.search(text):
        return "", _problem(
            N_(
                "A line holding only “§” separates entries in the file: add each entry on "
                "its own; nothing was changed."
            )
        )
    return text, None


def _refused(name: str, result: dict[str, Any], content: str, limit: int) -> Flash:
    """The reason a write was refused, in the person's words (the tool's answer folded)."""
    answer = _answer(result)
    error = str(result.get("error") or "")
    if result.get("drift_backup"):
        return Flash(
            "error",
            N_(
                "%(file)s was changed outside hermes-memory and is no longer a clean list of "
                "entries; nothing was changed. A copy is at %(backup)s: tidy the file, then "
                "try again."
            ),
            {"file": name, "backup": result["drift_backup"]},
            answer,
        )
    if result.get("similar_entry"):
        return Flash(
            "error",
            N_(
                "Not added: %(file)s already has a nearly identical entry: “%(entry)s”. "
                "Edit it instead."
            ),
            {"file": name, "entry": result["similar_entry"]},
            answer,
        )
    if "chars_to_free" in result:
        if len(content) > limit:
            return Flash(
                "error",
                N_("The entry has %(size)s characters but %(file)s holds at most %(limit)s."),
                {"size": len(content), "file": name, "limit": limit},
                answer,
            )
        return Flash(
            "error",
            N_("%(file)s is full: free %(needed)s characters (remove or shorten an entry) first."),
            {"file": name, "needed": result["chars_to_free"]},
            answer,
        )
    if error.startswith("Blocked"):
        return Flash(
            "error",
            N_(
                "Refused by the threat scan: %(reason)s If you wrote this yourself and trust "
                "it, tick “I wrote this and trust it” and save again (your approval is "
                "recorded)."
            ),
            {"reason": error.removeprefix("Blocked:").strip()},
            answer,
        )
    if error.startswith("Could not lock"):
        return Flash(
            "error",
            N_("%(file)s is locked by another process (an agent writing?); try again shortly."),
            {"file": name},
            answer,
        )
    return Flash(
        "error", N_("Not changed: %(detail)s"), {"detail": " ".join(error.split())}, answer
    )


def add(
    dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str], form: Mapping[str, str]
) -> Redirect:
    target = form.get("target", "")
    store, problem = _open(dash, target)
    if problem is not None:
        return problem
    content, problem = _content(form)
    if problem is not None:
        return problem
    name = _FILES[target]
    before = len(store.entries(target))
    result, kept = _as_the_person(
        lambda approved: store.add(target, content, origin=ORIGIN, approved_by_human=approved),
        form.get("allow_flagged") == "1",
    )
    if not result.get("success"):
        return Redirect("/memory", [_refused(name, result, content, store.limit(target))])
    if len(store.entries(target)) == before:
        text = N_("%(file)s already has this entry; nothing was added (%(usage)s).")
    else:
        text = N_(
            "Added to %(file)s; it now uses %(usage)s. The agent sees it from its next session on."
        )
    usage = result.get("usage")
    flashes = [Flash("ok", text, {"file": name, "usage": usage}, _answer(result))]
    return Redirect("/memory", flashes + _kept_note(kept, content))


def _as_the_person(write: Callable[[bool], dict[str, Any]], approved: bool) -> tuple[Any, bool]:
    """Run ``write(approved)``; a write the threat scan only *holds* (vocabulary, never a
    structural signal) is written again as approved: a hold waits for a person, and the
    person is here (docs/reference/security.md, the trust table). Also says if it was."""
    result = write(approved)
    if approved or result.get("threat_verdict") != "hold":
        return result, False
    kept = write(True)
    return kept, bool(kept.get("success"))


def _kept_note(kept: bool, content: str) -> list[Flash]:
    """What the scan matched in a hold kept for the person (empty when nothing was kept)."""
    if not kept:
        return []
    from hermes_memory_guard import threat_verdict

    text = N_(
        "The threat scan's word lists matched this text (%(matched)s). An agent's write of it "
        "would wait for your approval; you wrote it, so it is kept and recorded as approved by "
        "you. Remove it below if it is not your text."
    )
    matched = ", ".join(threat_verdict(content).ids)
    if not matched:  # flagged only when read together with the entry next to it
        text = N_(
            "The threat scan flagged this text read together with the entry next to it. An "
            "agent's write of it would wait for your approval; you wrote it, so it is kept and "
            "recorded as approved by you. Remove it below if it is not your text."
        )
    return [Flash("ok", text, {"matched": matched})]


def edit(
    dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str], form: Mapping[str, str]
) -> Redirect:
    target = form.get("target", "")
    store, problem = _open(dash, target)
    if problem is not None:
        return problem
    content, problem = _content(form)
    if problem is not None:
        return problem
    name = _FILES[target]
    entry = form.get("entry", "")
    if entry not in store.entries(target):
        return _problem(
            N_("That entry is no longer in %(file)s (changed meanwhile?); nothing was changed."),
            file=name,
        )
    if entry == content:
        return Redirect("/memory", [Flash("ok", N_("No change to save."), {})])
    before = _file_bytes(store.path(target))
    result, kept = _as_the_person(
        lambda approved: store.replace(
            target, entry, content, origin=ORIGIN, approved_by_human=approved
        ),
        form.get("allow_flagged") == "1",
    )
    if not result.get("success"):
        return Redirect("/memory", [_refused(name, result, content, store.limit(target))])
    result["backup"] = _backup(store.path(target), before)
    saved = _saved(N_("Saved; %(file)s now uses %(usage)s."), name, result)
    return Redirect("/memory", [saved, *_kept_note(kept, content)])


def remove(
    dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str], form: Mapping[str, str]
) -> Redirect:
    target = form.get("target", "")
    store, problem = _open(dash, target)
    if problem is not None:
        return problem
    name = _FILES[target]
    entry = form.get("entry", "")
    if entry not in store.entries(target):
        return _problem(
            N_("That entry is no longer in %(file)s (changed meanwhile?); nothing was changed."),
            file=name,
        )
    before = _file_bytes(store.path(target))
    result = store.remove(target, entry, origin=ORIGIN)
    if not result.get("success"):
        return Redirect("/memory", [_refused(name, result, "", store.limit(target))])
    result["backup"] = _backup(store.path(target), before)
    return Redirect("/memory", [_saved(N_("Removed; %(file)s now uses %(usage)s."), name, result)])


def _saved(text: str, name: str, result: dict[str, Any]) -> Flash:
    flash = Flash("ok", text, {"file": name, "usage": result.get("usage")}, _answer(result))
    if result.get("backup"):
        flash.params["backup"] = result["backup"]
    return flash


# ---------------------------------------------------------------------- pending
def _pending_store(dash: Dashboard) -> tuple[Any, Any]:
    from hermes_memory_builtin import PendingStore

    store = dash.context().memory_store(create=False)
    return store, PendingStore(store.memory_dir)


def pending_page(dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str]) -> Page:
    from hermes_memory_builtin import PendingError

    _store, pending = _pending_store(dash)
    error = None
    try:
        records = pending.proposals()
    except PendingError as exc:
        records, error = [], str(exc)
    for record in records:
        record["file"] = _FILES.get(str(record.get("target")), "?")
        record["editable"] = len(record["operations"]) == 1 and record["operations"][0][
            "action"
        ] in ("add", "replace")
    return Page(
        "pending.html",
        {
            "records": records,
            "reasons": REASONS,
            "origins": ORIGINS,
            "error": error,
            "title": N_("Pending"),
        },
    )


def _unknown_proposal(pending_id: str) -> Redirect:
    """Back to /pending saying no proposal has that id (handled in another tab, say)."""
    return Redirect(
        "/pending",
        [
            Flash(
                "error",
                N_("No pending proposal has the id %(id)s (already handled?)."),
                {"id": pending_id},
            )
        ],
    )


def approve(
    dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str], form: Mapping[str, str]
) -> Redirect:
    """Apply a proposal as the person's decision; with edited text, apply that instead."""
    from hermes_memory_builtin import PendingError

    pending_id = form.get("id", "")
    store, pending = _pending_store(dash)
    try:
        record = pending.get(pending_id)
    except PendingError as exc:
        return Redirect(
            "/pending", [Flash("error", N_("Not applied: %(detail)s"), {"detail": str(exc)})]
        )
    if record is None:
        return _unknown_proposal(pending_id)
    target = str(record["target"])
    name = _FILES.get(target, "?")
    _writable, problem = _open(dash, target)
    if problem is not None:
        problem.to = "/pending"
        return problem
    path = store.path(target)
    destructive = any(op["action"] != "add" for op in record["operations"])
    before = _file_bytes(path) if destructive else None
    edited = (form.get("content") or "").replace("\r\n", "\n").strip()
    ops = record["operations"]
    try:
        if len(ops) == 1 and ops[0]["action"] in ("add", "replace"):
            # One entry to write: the person's (possibly edited) text, recorded as theirs.
            text = edited or str(ops[0].get("content") or "")
            result = _apply_edited(store, pending, record, text)
        else:
            result = pending.apply(pending_id, store, origin=ORIGIN)
    except PendingError as exc:
        return Redirect(
            "/pending", [Flash("error", N_("Not applied: %(detail)s"), {"detail": str(exc)})]
        )
    if not result.get("success"):
        if result.get("stale_entry"):
            flash = Flash(
                "error",
                N_(
                    "Not applied: the entry “%(entry)s” changed since this was proposed; "
                    "reject the proposal."
                ),
                {"entry": result["stale_entry"]},
                _answer(result),
            )
        else:
            flash = _refused(name, result, edited, store.limit(target))
            flash.text = N_("Not applied, the proposal stays pending: %(detail)s")
            flash.params = {"detail": " ".join(str(result.get("error") or "").split())}
        return Redirect("/pending", [flash])
    if destructive:
        result["backup"] = _backup(path, before)
    return Redirect(
        "/pending",
        [
            Flash(
                "ok",
                N_("Approved; %(file)s now uses %(usage)s."),
                {"file": name, "usage": result.get("usage")},
                _answer(result),
            )
        ],
    )


def _apply_edited(store: Any, pending: Any, record: dict[str, Any], content: str) -> dict[str, Any]:
    """Apply a one-step proposal with the person's text, then drop the proposal."""
    op = record["operations"][0]
    target = str(record["target"])
    if _DELIMITER_LINE.search(content):
        return {"success": False, "error": "The text contains a line holding only '§'."}
    if op["action"] == "add":
        result: dict[str, Any] = store.add(target, content, origin=ORIGIN, approved_by_human=True)
    else:
        entry = str(op.get("matched_entry") or "")
        if not entry or entry not in store.entries(target):
            return {"success": False, "stale_entry": entry or op.get("old_text", "")}
        result = store.replace(target, entry, content, origin=ORIGIN, approved_by_human=True)
    if result.get("success"):
        pending.reject(str(record["id"]))
    return result


def reject(
    dash: Dashboard, query: Mapping[str, str], params: Mapping[str, str], form: Mapping[str, str]
) -> Redirect:
    from hermes_memory_builtin import PendingError

    pending_id = form.get("id", "")
    _store, pending = _pending_store(dash)
    try:
        record = pending.reject(pending_id)
    except PendingError as exc:
        return Redirect(
            "/pending", [Flash("error", N_("Not rejected: %(detail)s"), {"detail": str(exc)})]
        )
    if record is None:
        return _unknown_proposal(pending_id)
    return Redirect("/pending", [Flash("ok", N_("Rejected; memory is unchanged."), {})])
