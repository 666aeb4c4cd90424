"""Setting or removing one ``section.key`` of ``config.yaml`` by a minimal line edit.

The approach of `hermes_memory_cli.configedit` (which does it for ``memory.provider``),
for any scalar key of a block-style section: the line is replaced in place (indentation
and a trailing comment kept), inserted as the block's first key, or the section appended;
removing deletes the key's line. The result is parsed again and must equal the original
with exactly that change, otherwise nothing is written and `ConfigEditError` says what to
change by hand.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import yaml

from hermes_memory_cli.configedit import ConfigEditError

__all__ = ["ConfigEditError", "with_values"]

_BLANK_OR_COMMENT = re.compile(r"^\s*(#.*)?$")


def _scalar(value: Any) -> str:
    """``value`` as a one-line YAML scalar that reads back as exactly that value."""
    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10_000)
    text = text.strip()
    if text.endswith("\n...") or text.endswith("..."):
        text = text.rsplit("\n", 1)[0].strip()
    if "\n" in text:
        raise ConfigEditError(f"the value {value!r} does not fit on one line")
    return text


def _block(lines: list[str], section: str) -> tuple[int | None, int, str | None]:
    """(header line, end of block, indentation of its keys) of top-level ``section:``."""
    header = re.compile(rf"^{re.escape(section)}\s*:(?P<rest>.*)$")
    start = next((i for i, line in enumerate(lines) if header.match(line.rstrip("\r\n"))), None)
    if start is None:
        return None, 0, None
    match = header.match(lines[start].rstrip("\r\n"))
    assert match is not None
    inline = match.group("rest").split("#", 1)[0].strip()
    if inline:
        raise ConfigEditError(
            f"the {section}: section is written inline ({inline!r}); change it to a block "
            "to edit it here"
        )
    end, indent = start + 1, None
    while end < len(lines):
        line = lines[end]
        if _BLANK_OR_COMMENT.match(line.rstrip("\r\n")):
            end += 1
            continue
        lead = line[: len(line) - len(line.lstrip(" \t"))]
        if not lead:
            break
        indent = indent or lead
        end += 1
    return start, end, indent


def _with_one(text: str, section: str, key: str, value: Any | None) -> str:
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    start, end, indent = _block(lines, section)
    if start is None:
        if value is None:
            return text
        prefix = text if not text or text.endswith("\n") else text + newline
        return f"{prefix}{section}:{newline}  {key}: {_scalar(value)}{newline}"
    pattern = re.compile(
        rf"^(?P<indent>[ \t]+){re.escape(key)}\s*:(?P<value>[^#\n]*?)"
        r"(?P<comment>\s+#.*)?(?P<nl>\r?\n?)$"
    )
    for i in range(start + 1, end):
        match = pattern.match(lines[i])
        if match and match.group("indent") == indent:
            if value is None:
                del lines[i]
            else:
                lines[i] = (
                    f"{indent}{key}: {_scalar(value)}{match.group('comment') or ''}"
                    f"{match.group('nl') or ''}"
                )
            return "".join(lines)
    if value is None:
        return text
    if not lines[start].endswith("\n"):
        lines[start] += newline
    lines.insert(start + 1, f"{indent or '  '}{key}: {_scalar(value)}{newline}")
    return "".join(lines)


def with_values(text: str, changes: dict[tuple[str, str], Any | None]) -> str:
    """``text`` with each ``(section, key)`` set to its value (``None``: removed).

    :raises ConfigEditError: the file is not valid YAML, or the edit would change more.
    """
    try:
        before = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigEditError(f"the file is not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(before, dict):
        raise ConfigEditError("the top level of config.yaml is not a mapping")
    expected: dict[str, Any] = copy.deepcopy(before)
    out = text
    for (section, key), value in changes.items():
        out = _with_one(out, section, key, value)
        part = expected.get(section)
        if part is None and value is not None:
            part = expected[section] = {}
        if isinstance(part, dict):
            if value is None:
                part.pop(key, None)
            else:
                part[key] = value
    after = yaml.safe_load(out) or {}
    if after != expected:
        raise ConfigEditError(
            "editing config.yaml here would change more than the keys asked for (an unusual "
            "layout?); change them by hand"
        )
    return out
