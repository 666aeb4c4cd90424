"""``hermes-memory memory export DIR`` and ``memory import DIR``: Hermes-compatible files.

``export`` writes the configured curated store (files or PostgreSQL) as ``MEMORY.md`` and
``USER.md`` (entries joined by ``"\\n§\\n"``, as Hermes writes them) with their metadata
sidecars into a directory: a backup, or the files a Hermes agent on one host reads.
``import`` loads such files into ``memory.backend: postgres`` (the rows of ``postgres.owner``);
with the file backend the memory already *is* those files, so it is refused with the command
to copy them. Imported text goes through the checks of ``memory edit`` (budget, NUL, threat
scan; an entry a human approved, per the file's sidecar, is kept) and nothing changes when one
fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_memory_cli._context import CLIError, Context
from hermes_memory_cli._i18n import cli_gettext as _

_FILES = {"memory": "MEMORY.md", "user": "USER.md"}


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def export_(ctx: Context) -> int:
    """``memory export DIR [--force]``: write MEMORY.md / USER.md (+ sidecars) into DIR."""
    from hermes_memory_builtin import (
        FILE_MODE,
        ensure_memory_dir,
        load_sidecar,
        reconcile,
        save_sidecar,
        serialise,
    )
    from hermes_memory_core.kit import atomic_write_text

    out = Path(ctx.args.directory).expanduser()
    backend = ctx.config.memory.backend
    if backend != "postgres" and _same_dir(out, ctx.home / "memories"):
        raise CLIError(
            _("{path} is this home's memory folder itself; name another directory").format(path=out)
        )
    if out.exists() and not out.is_dir():
        raise CLIError(_("{path} exists and is not a directory").format(path=out))
    existing = [out / name for name in _FILES.values() if (out / name).exists()]
    if existing and not ctx.args.force:
        raise CLIError(
            _("{paths} already exist(s); nothing was written (add --force to overwrite)").format(
                paths=", ".join(str(p) for p in existing)
            )
        )
    for path in existing:
        if path.is_symlink() or not path.is_file():
            raise CLIError(_("{path} is not a regular file; nothing was written").format(path=path))
    store = ctx.memory_store()
    try:
        if hasattr(store, "export"):  # PostgresMemoryStore
            written = [Path(p) for p in store.export(out)]
        else:
            ensure_memory_dir(out)
            written = []
            for target, name in _FILES.items():
                entries = store.entries(target)
                src, dst = store.path(target), out / name
                atomic_write_text(dst, serialise(entries), tmp_prefix=".mem_", mode=FILE_MODE)
                save_sidecar(dst, entries, reconcile(load_sidecar(src), entries, dst))
                written.append(dst)
    except OSError as exc:
        raise CLIError(_("cannot write into {path}: {error}").format(path=out, error=exc)) from None
    except Exception as exc:  # ArchiveUnavailable and the like: one line, no traceback
        raise CLIError(_("export failed: {error}").format(error=exc)) from None
    counts = {t: len(store.entries(t)) for t in _FILES}
    if ctx.json:
        ctx.emit_json({"exported": [str(p) for p in written], "entries": counts})
    else:
        ctx.say(
            _("Wrote {memory} MEMORY.md and {user} USER.md entries to {path}.").format(
                memory=counts["memory"], user=counts["user"], path=out
            )
        )
    return 0


def import_(ctx: Context) -> int:
    """``memory import DIR [--yes]``: replace the PostgreSQL entries by DIR's files."""
    from hermes_memory_builtin import approved_entries, load_sidecar, parse_entries, read_raw
    from hermes_memory_cli._memedit import check_edit

    src = Path(ctx.args.directory).expanduser()
    if ctx.config.memory.backend != "postgres":
        memories = ctx.home / "memories"
        raise CLIError(
            _(
                "memory import loads files into memory.backend: postgres; with the file backend "
                "the memory is {memories}/MEMORY.md and USER.md: copy the files there "
                "({command}) or use 'memory edit'"
            ).format(
                memories=memories,
                command=f"cp {src}/MEMORY.md {src}/USER.md {memories}/",
            )
        )
    if not src.is_dir():
        raise CLIError(_("{path} is not a directory holding MEMORY.md / USER.md").format(path=src))
    store = ctx.memory_store(create=True)
    found: dict[str, list[str]] = {}
    problems: list[str] = []
    for target, name in _FILES.items():
        path = src / name
        if path.is_symlink():
            problems.append(_("{path} is a symbolic link; import a real file").format(path=path))
            continue
        raw = read_raw(path)
        if not raw.exists:
            continue
        if not raw.readable or raw.text is None:
            problems.append(
                str(
                    raw.problem
                    or _("cannot read {path}: {reason}").format(path=path, reason=raw.error)
                )
            )
            continue
        approved = approved_entries(parse_entries(raw.text), load_sidecar(path))
        check = check_edit(
            raw.text,
            limit=store.limit(target),
            filename=name,
            approved=approved,
            person_wrote=False,  # a file found on disk: its holds are not the person's words
        )
        if not check.ok:
            problems.extend(f"{name}: {p}" for p in check.problems)
        else:
            found[target] = check.entries
    if problems:
        raise CLIError(_("nothing was imported: {problems}").format(problems="; ".join(problems)))
    if not found:
        raise CLIError(
            _("{path} holds neither MEMORY.md nor USER.md; nothing was imported").format(path=src)
        )
    current = {t: len(store.entries(t)) for t in found}
    ctx.confirm(
        _("Replace {current} of owner {owner!r} by {new}?").format(
            current=_(" and ").join(
                _("{count} {name} entries").format(count=current[t], name=_FILES[t]) for t in found
            ),
            owner=getattr(store, "owner", "?"),
            new=_(" and ").join(
                _("{count} from {path}").format(count=len(e), path=src / _FILES[t])
                for t, e in found.items()
            ),
        )
    )
    try:
        counts: dict[str, Any] = store.import_files(src)
    except Exception as exc:  # ValueError, ArchiveUnavailable: one line, nothing changed
        raise CLIError(_("nothing was imported: {problems}").format(problems=exc)) from None
    if ctx.json:
        ctx.emit_json({"imported": counts, "directory": str(src)})
    else:
        parts = ", ".join(
            _("{count} {name} entries").format(count=n, name=_FILES[t]) for t, n in counts.items()
        )
        ctx.say(
            _("Imported {parts}. The agent sees them from its next session on.").format(parts=parts)
        )
    return 0
