"""``hermes-memory config get|set|unset|list``: read and change ``config.yaml`` safely.

Every key is typed (`hermes_memory_cli._config_keys`); ``set`` checks the value, then edits
only that key's line (comments, order and other sections are kept, see
`hermes_memory_cli._yamledit`); an unknown key is refused with the closest known one.
Secrets (``postgres.dsn``, providers' API keys) are never printed back.
"""

from __future__ import annotations

import stat
from typing import Any

from hermes_memory_cli._config_keys import KeySpec, known_keys, suggest, unknown_keys
from hermes_memory_cli._context import CLIError, Context
from hermes_memory_cli._i18n import cli_gettext as _

_MISSING = object()
_HIDDEN = "<set, not shown>"


def _spec(ctx: Context, name: str) -> KeySpec:
    keys = known_keys()
    spec = keys.get(name)
    if spec is not None:
        return spec
    close = suggest(name, sorted(keys))
    hint = _(" (did you mean {key}?)").format(key=close) if close else ""
    raise CLIError(
        _("unknown key {key}{hint}; 'hermes-memory config list' shows every key").format(
            key=name, hint=hint
        )
    )


def _raw(ctx: Context) -> dict[str, Any]:
    """``config.yaml`` as written (no defaults); a broken file is a one-line error."""
    import yaml

    path = ctx.home / "config.yaml"
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CLIError(
            _("cannot read {path}: {reason}").format(path=path, reason=" ".join(str(exc).split()))
        ) from None
    if not isinstance(data, dict):
        raise CLIError(_("{path}: the top level must be a mapping").format(path=path))
    return data


def _stored(raw: dict[str, Any], spec: KeySpec) -> Any:
    section = raw.get(spec.section)
    if isinstance(section, dict) and spec.key in section and section[spec.key] is not None:
        return section[spec.key]
    return _MISSING


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "(unset)"
    if value == "":
        return '""'
    return str(value)


def get(ctx: Context) -> int:
    """``config get KEY``: the value in effect (from the file, else the default)."""
    spec = _spec(ctx, ctx.args.key)
    stored = _stored(_raw(ctx), spec)
    value = spec.default if stored is _MISSING else stored
    origin = "default" if stored is _MISSING else "file"
    shown: Any = _HIDDEN if spec.secret and stored is not _MISSING else value
    if ctx.json:
        ctx.emit_json({"key": spec.name, "value": shown, "source": origin})
    else:
        ctx.plain(_show(shown))
    return 0


def list_(ctx: Context) -> int:
    """``config list [PREFIX]``: every key with its value, then unknown keys."""
    raw = _raw(ctx)
    keys = known_keys()
    prefix = ctx.args.prefix or ""
    rows = []
    for name in sorted(keys):
        if prefix and not (name == prefix or name.startswith(prefix.rstrip(".") + ".")):
            continue
        spec = keys[name]
        stored = _stored(raw, spec)
        value = spec.default if stored is _MISSING else stored
        if spec.secret and stored is not _MISSING:
            value = _HIDDEN
        rows.append((name, value, "default" if stored is _MISSING else "file", spec))
    if prefix and not rows:
        _spec(ctx, prefix)  # an unknown prefix: the error names the closest key
    unknown = unknown_keys(raw, keys)
    if ctx.json:
        ctx.emit_json(
            {
                "path": str(ctx.home / "config.yaml"),
                "keys": [
                    {"key": n, "value": v, "source": o, "type": s.type_name} for n, v, o, s in rows
                ],
                "unknown": [{"key": u.name, "did_you_mean": u.suggestion} for u in unknown],
            }
        )
        return 0
    for name, value, origin, _kind in rows:
        mark = "" if origin == "file" else _("  (default)")
        ctx.plain(f"{name} = {_show(value)}{mark}")
    for item in unknown:
        ctx.note(
            _("warning: {path}: {problem}").format(
                path=ctx.home / "config.yaml", problem=_describe(item.name, item.suggestion)
            )
        )
    return 0


def _describe(name: str, suggestion: str | None) -> str:
    if suggestion:
        return _("unknown key {key} is ignored (did you mean {other}?)").format(
            key=name, other=suggestion
        )
    return _("unknown key {key} is ignored").format(key=name)


def _write(ctx: Context, text: str) -> None:
    from hermes_memory_core.kit import atomic_write_text

    path = ctx.home / "config.yaml"
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o600
    try:
        atomic_write_text(path, text, tmp_prefix=".tmp_config_", mode=mode)
    except OSError as exc:
        raise CLIError(
            _("cannot write {path}: {reason}").format(path=path, reason=exc.strerror or exc)
        ) from None


def _text(ctx: Context) -> str:
    path = ctx.home / "config.yaml"
    try:
        return path.read_text(encoding="utf-8-sig") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise CLIError(_("cannot read {path}: {reason}").format(path=path, reason=exc)) from None


def set_(ctx: Context) -> int:
    """``config set KEY VALUE``: checked, then only that line of the file changes."""
    import yaml

    from hermes_memory_cli._configedit import ConfigEditError
    from hermes_memory_cli._yamledit import with_key
    from hermes_memory_core.config import ConfigError, parse_config

    spec = _spec(ctx, ctx.args.key)
    try:
        value = spec.parse_text(ctx.args.value)
    except ValueError as exc:
        raise CLIError(
            _("{key} {problem}, got {value!r}").format(
                key=spec.name, problem=exc, value=ctx.args.value
            ),
            code=2,
        ) from None
    ctx.ensure_home()
    before = _text(ctx)
    try:
        after = with_key(before, spec.section, spec.key, value)
    except ConfigEditError as exc:
        raise CLIError(str(exc)) from None
    try:
        parse_config(yaml.safe_load(after) or {}, ctx.home)
    except ConfigError as exc:
        if spec.name in str(exc):
            raise CLIError(str(exc), code=2) from None
        ctx.note(_("warning: {problem}").format(problem=exc))  # another key's problem
    _write(ctx, after)
    shown = _HIDDEN if spec.secret else _show(value)
    if ctx.json:
        ctx.emit_json({"key": spec.name, "value": shown, "path": str(ctx.home / "config.yaml")})
    else:
        ctx.say(
            _("Set {key} = {value} in {path}.").format(
                key=spec.name, value=shown, path=ctx.home / "config.yaml"
            )
        )
    return 0


def unset(ctx: Context) -> int:
    """``config unset KEY``: the key's line(s) removed; the default applies again."""
    from hermes_memory_cli._configedit import ConfigEditError
    from hermes_memory_cli._yamledit import without_key

    spec = _spec(ctx, ctx.args.key)
    ctx.require_home()
    before = _text(ctx)
    try:
        after = without_key(before, spec.section, spec.key)
    except ConfigEditError as exc:
        raise CLIError(str(exc)) from None
    if after is not None:
        _write(ctx, after)
    if ctx.json:
        ctx.emit_json({"key": spec.name, "removed": after is not None})
    elif after is None:
        ctx.say(
            _("{key} is not set in {path}; nothing changed.").format(
                key=spec.name, path=ctx.home / "config.yaml"
            )
        )
    else:
        ctx.say(
            _("Removed {key} from {path} (the default applies).").format(
                key=spec.name, path=ctx.home / "config.yaml"
            )
        )
    return 0
