"""Setting ``memory.provider`` in ``config.yaml`` by a minimal line edit.

Hermes' ``config.yaml`` is the user's file: it holds comments, other sections and keys this
package knows nothing about. A YAML round trip through PyYAML would drop every comment, so
the value is changed in place instead:

* an existing block-style ``provider:`` line directly under ``memory:`` gets its value
  replaced (indentation and a trailing ``# comment`` are kept);
* otherwise a ``provider:`` line is inserted as the first key of the ``memory:`` block
  (using the block's indentation, two spaces when the block is empty);
* a file without a ``memory:`` section gets one appended.

The result is parsed again and compared with the original: everything except
``memory.provider`` must be unchanged, otherwise nothing is written and `ConfigEditError`
explains what to change by hand (flow-style ``memory: {...}`` sections, for instance).
The file is replaced atomically and keeps its permission bits.
"""

from __future__ import annotations

import copy
import json
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from hermes_memory_cli._i18n import cli_gettext as _
from hermes_memory_core.kit import atomic_write_text, make_private_dirs

__all__ = ["ConfigEditError", "set_memory_provider", "with_memory_provider"]

_TOP_KEY = re.compile(r"^memory\s*:(?P<rest>.*)$")
_BLANK_OR_COMMENT = re.compile(r"^\s*(#.*)?$")
_PROVIDER = re.compile(
    r"^(?P<indent>[ \t]+)provider\s*:(?P<value>[^#\n]*?)(?P<comment>\s+#.*)?(?P<nl>\r?\n?)$"
)


class ConfigEditError(ValueError):
    """The file cannot be edited safely; the message says what to change by hand."""


def _scalar(value: str) -> str:
    """``value`` as a YAML scalar that reads back as exactly that string."""
    return json.dumps(value, ensure_ascii=False) if value == "" or not _plain_ok(value) else value


def _plain_ok(value: str) -> bool:
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*", value):
        return False
    return bool(yaml.safe_load(value) == value)


def with_memory_provider(text: str, provider: str) -> str:
    """The text of a config file with ``memory.provider`` set to ``provider``.

    :raises ConfigEditError: when the edit cannot be done without touching anything else.
    """
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    value = _scalar(provider)
    start = next((i for i, line in enumerate(lines) if _TOP_KEY.match(line.rstrip("\r\n"))), None)
    if start is None:
        prefix = text if not text or text.endswith("\n") else text + newline
        out = f"{prefix}memory:{newline}  provider: {value}{newline}"
        return _verify(text, out, provider)
    rest = _TOP_KEY.match(lines[start].rstrip("\r\n"))
    assert rest is not None
    inline = rest.group("rest").split("#", 1)[0].strip()
    if inline:
        raise ConfigEditError(
            _(
                "the memory: section is written inline ({inline!r}); "
                "change it to a block and set 'provider: {value}' by hand"
            ).format(inline=inline, value=value)
        )
    end = start + 1
    block_indent: str | None = None
    while end < len(lines):
        line = lines[end]
        if _BLANK_OR_COMMENT.match(line.rstrip("\r\n")):
            end += 1
            continue
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if not indent:
            break
        if block_indent is None:
            block_indent = indent
        end += 1
    for i in range(start + 1, end):
        match = _PROVIDER.match(lines[i])
        if match and match.group("indent") == block_indent:
            comment = match.group("comment") or ""
            nl = match.group("nl") or ""
            lines[i] = f"{block_indent}provider: {value}{comment}{nl}"
            return _verify(text, "".join(lines), provider)
    indent = block_indent or "  "
    if not lines[start].endswith("\n"):
        lines[start] += newline
    lines.insert(start + 1, f"{indent}provider: {value}{newline}")
    return _verify(text, "".join(lines), provider)


def _verify(before: str, after: str, provider: str) -> str:
    try:
        old = yaml.safe_load(before) or {}
        new = yaml.safe_load(after) or {}
    except yaml.YAMLError as exc:
        raise ConfigEditError(
            _("the file is not valid YAML: {error}").format(error=" ".join(str(exc).split()))
        ) from None
    if not isinstance(new, dict) or not isinstance(new.get("memory"), dict):
        raise ConfigEditError(_("set memory.provider by hand: the file layout is not understood"))
    expected: Any = copy.deepcopy(old) if isinstance(old, dict) else {}
    section = expected.get("memory")
    if section is None:
        section = expected["memory"] = {}
    if not isinstance(section, dict):
        raise ConfigEditError(_("'memory' in config.yaml is not a mapping; fix it by hand"))
    section["provider"] = provider
    if new != expected:
        raise ConfigEditError(
            _(
                "editing the file would change more than memory.provider; set 'provider: "
                "{value}' under 'memory:' by hand"
            ).format(value=_scalar(provider))
        )
    return after


def set_memory_provider(path: Path, provider: str) -> None:
    """Set ``memory.provider`` in the config file at ``path`` (created when missing).

    :raises ConfigEditError: the file cannot be read, parsed, or edited safely.
    """
    try:
        text = path.read_text(encoding="utf-8-sig") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigEditError(
            _("cannot read {path}: {reason}").format(path=path, reason=exc)
        ) from None
    new_text = with_memory_provider(text, provider)
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o600
    make_private_dirs(path.parent)
    atomic_write_text(path, new_text, tmp_prefix=".tmp_config_", mode=mode)
