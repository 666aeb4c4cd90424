"""Set or remove one ``section.key`` in ``config.yaml`` by a minimal line edit.

The same technique as `hermes_memory_cli._configedit` (which sets ``memory.provider``),
for any scalar key two levels deep: only the key's own line(s) change, so comments, blank
lines, key order, quoting and every other section stay byte for byte. The result is parsed
again and compared with the intended change; anything else (flow-style sections, anchors,
duplicate keys) is refused with `ConfigEditError` saying what to change by hand, and nothing
is written. No round-trip YAML library is needed for this.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

import yaml

from hermes_memory_cli._configedit import ConfigEditError
from hermes_memory_cli._i18n import cli_gettext as _

__all__ = ["render_scalar", "with_key", "without_key"]

_BLANK_OR_COMMENT = re.compile(r"^\s*(#.*)?$")
_PLAIN = re.compile(r"[A-Za-z0-9_/~.][A-Za-z0-9_./~@:+\-]*")


def render_scalar(value: Any) -> str:
    """``value`` (bool, int, float or str) as a YAML scalar that reads back as itself."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigEditError(_("{value!r} is not a finite number").format(value=value))
        return repr(value)
    text = str(value)
    if _PLAIN.fullmatch(text) and yaml.safe_load(text) == text and ": " not in text:
        return text
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML string


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _section_span(lines: list[str], section: str) -> tuple[int, int, str | None] | None:
    """(header line, end of block, indentation of its keys) of top-level ``section:``."""
    header = re.compile(rf"^{re.escape(section)}\s*:(?P<rest>.*)$")
    for start, line in enumerate(lines):
        match = header.match(line.rstrip("\r\n"))
        if not match:
            continue
        inline = match.group("rest").split("#", 1)[0].strip()
        if inline:
            raise ConfigEditError(
                _(
                    "the {section}: section is written inline ({inline!r}); "
                    "change it to a block and edit it by hand"
                ).format(section=section, inline=inline)
            )
        end = start + 1
        block: str | None = None
        while end < len(lines):
            text = lines[end].rstrip("\r\n")
            if _BLANK_OR_COMMENT.match(text):
                end += 1
                continue
            indent = _indent(text)
            if not indent:
                break
            if block is None:
                block = indent
            end += 1
        # trailing blank/comment lines belong to whatever follows, not to this block
        while end > start + 1 and _BLANK_OR_COMMENT.match(lines[end - 1].rstrip("\r\n")):
            end -= 1
        return start, end, block
    return None


def _key_span(lines: list[str], start: int, end: int, block: str | None, key: str) -> Any:
    """(first, last+1, match) of ``key:`` and its nested lines inside a section, or None."""
    if block is None:
        return None
    pattern = re.compile(
        rf"^(?P<indent>{re.escape(block)}){re.escape(key)}\s*:(?P<value>[^#\r\n]*?)"
        r"(?P<comment>\s+#.*)?(?P<nl>\r?\n?)$"
    )
    for i in range(start + 1, end):
        match = pattern.match(lines[i])
        if not match:
            continue
        j = i + 1
        while j < end:
            text = lines[j].rstrip("\r\n")
            if text.strip() and len(_indent(text)) <= len(block):
                break
            j += 1
        while j > i + 1 and _BLANK_OR_COMMENT.match(lines[j - 1].rstrip("\r\n")):
            j -= 1
        return i, j, match
    return None


def _newline(lines: list[str]) -> str:
    return "\r\n" if lines and lines[0].endswith("\r\n") else "\n"


def with_key(text: str, section: str, key: str, value: Any) -> str:
    """The text of a config file with ``section.key`` set to ``value`` (a scalar).

    :raises ConfigEditError: when the edit cannot be done without touching anything else.
    """
    lines = text.splitlines(keepends=True)
    nl = _newline(lines)
    scalar = render_scalar(value)
    span = _section_span(lines, section)
    if span is None:
        prefix = text if not text or text.endswith("\n") else text + nl
        return _verify(text, f"{prefix}{section}:{nl}  {key}: {scalar}{nl}", section, key, value)
    start, end, block = span
    found = _key_span(lines, start, end, block, key)
    if found is not None:
        first, last, match = found
        comment = match.group("comment") or ""
        ending = match.group("nl") or (nl if last > first + 1 else "")
        lines[first:last] = [f"{match.group('indent')}{key}: {scalar}{comment}{ending}"]
        return _verify(text, "".join(lines), section, key, value)
    indent = block or "  "
    if end > 0 and not lines[end - 1].endswith("\n"):
        lines[end - 1] += nl
    lines.insert(end, f"{indent}{key}: {scalar}{nl}")
    return _verify(text, "".join(lines), section, key, value)


_REMOVED = object()


def without_key(text: str, section: str, key: str) -> str | None:
    """The text with ``section.key`` removed, or None when the file does not set it.

    :raises ConfigEditError: when the edit cannot be done without touching anything else.
    """
    lines = text.splitlines(keepends=True)
    span = _section_span(lines, section)
    if span is None:
        return None
    start, end, block = span
    found = _key_span(lines, start, end, block, key)
    if found is None:
        return None
    first, last, _match = found
    del lines[first:last]
    return _verify(text, "".join(lines), section, key, _REMOVED)


def _load(text: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigEditError(
            _("the file is not valid YAML: {error}").format(error=" ".join(str(exc).split()))
        ) from None
    if not isinstance(data, dict):
        raise ConfigEditError(_("the top level of config.yaml is not a mapping; fix it by hand"))
    return data


def _verify(before: str, after: str, section: str, key: str, value: Any) -> str:
    old = _load(before)
    new = _load(after)
    expected = copy.deepcopy(old)
    part = expected.get(section)
    if part is None:
        part = expected[section] = {}
    if not isinstance(part, dict):
        raise ConfigEditError(
            _("'{section}' in config.yaml is not a mapping; fix it by hand").format(section=section)
        )
    if value is _REMOVED:
        part.pop(key, None)
    else:
        part[key] = value
    if isinstance(new.get(section), type(None)) and expected.get(section) == {}:
        new[section] = {}  # `section:` left with no keys reads as null: the same thing here
    if new != expected:
        problem = (
            _(
                "editing the file would change more than {name}; "
                "remove it under '{section}:' by hand"
            )
            if value is _REMOVED
            else _(
                "editing the file would change more than {name}; "
                "set '{line}' under '{section}:' by hand"
            )
        )
        raise ConfigEditError(
            problem.format(
                name=f"{section}.{key}",
                section=section,
                line=f"{key}: {render_scalar(value)}" if value is not _REMOVED else "",
            )
        )
    return after
