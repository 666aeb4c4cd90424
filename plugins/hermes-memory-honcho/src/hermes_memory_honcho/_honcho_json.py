"""Hermes Agent's own Honcho settings file, ``honcho.json``, read the way Hermes reads it.

Where: ``$HERMES_HOME/honcho.json`` (the hermes home this provider runs with); if there is
none, ``~/.honcho/config.json`` (``~`` is ``$HOME``, or ``%USERPROFILE%`` on Windows). The
first file that exists is the one used; a broken one is an error, never silently skipped.

What: a JSON object. Settings at its root apply to every host; the block
``hosts.<host>`` (host = ``$HERMES_HONCHO_HOST``, default ``"hermes"``) overrides the root
for that host. Keys are Hermes' camelCase names (`JSON_KEYS`: ``apiKey``, ``baseUrl`` or
``endpoint.baseUrl``, ``workspace``, ``peerName``, ``aiPeer``, ``recallMode``,
``timeout``/``requestTimeout``, ...); this adapter's own snake_case names are accepted too.
Hermes keys this adapter has no use for (`IGNORED_KEYS`: ``sessionStrategy``,
``writeFrequency``, ...) are ignored quietly; any other key is logged as unknown (by name,
never by value).

Refused, with a message naming the file (and the key), never the value of ``apiKey``: a file
that is not valid UTF-8 JSON, whose root, ``hosts`` or host block is not an object, a value
of the wrong type, a symbolic link that leads outside the directory it must live in
(``$HERMES_HOME`` for ``honcho.json``, the home directory for ``~/.honcho/config.json``), a
file that is not a regular file, cannot be read, or is larger than 1 MiB.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_memory_core.kit import Field, SettingsError

__all__ = [
    "DEFAULT_HOST",
    "HOST_ENV",
    "IGNORED_KEYS",
    "JSON_KEYS",
    "FileSettings",
    "HonchoJsonError",
    "read_honcho_json",
]

logger = logging.getLogger("hermes_memory_honcho")

#: Environment variable naming the host block to use.
HOST_ENV = "HERMES_HONCHO_HOST"
#: Host block used when `HOST_ENV` is unset.
DEFAULT_HOST = "hermes"
_MAX_BYTES = 1024 * 1024

#: Hermes' key → this adapter's setting.
JSON_KEYS: dict[str, str] = {
    "enabled": "enabled",
    "apiKey": "api_key",
    "baseUrl": "base_url",
    "environment": "environment",
    "workspace": "workspace",
    "peerName": "peer_name",
    "aiPeer": "ai_peer",
    "recallMode": "recall_mode",
    "timeout": "timeout",
    "requestTimeout": "timeout",
    "contextTokens": "context_tokens",
    "contextCadence": "context_cadence",
    "dialecticCadence": "dialectic_cadence",
    "dialecticReasoningLevel": "dialectic_reasoning_level",
    "dialecticMaxChars": "dialectic_max_chars",
    "messageMaxChars": "message_max_chars",
}
#: Hermes keys with no counterpart here (read by Hermes only; ignored without a warning).
IGNORED_KEYS = frozenset(
    {
        "pinUserPeer",
        "userPeerAliases",
        "runtimePeerPrefix",
        "writeFrequency",
        "dialecticDynamic",
        "dialecticDepth",
        "dialecticDepthLevels",
        "reasoningHeuristic",
        "reasoningLevelCap",
        "dialecticMaxInputChars",
        "injectionFrequency",
        "observationMode",
        "observation",
        "sessionStrategy",
        "initOnSessionStart",
        "saveMessages",
        "linkedHosts",
    }
)
_STRUCTURE = frozenset({"hosts", "endpoint"})


class HonchoJsonError(ValueError):
    """``honcho.json`` (or ``~/.honcho/config.json``) cannot be used; the message says why."""


@dataclass(frozen=True)
class FileSettings:
    """What the settings file gave.

    :param path: the file read (None: there was none).
    :param host: the host block consulted.
    :param values: typed values by this adapter's key names.
    :param labels: for each key, where it was set (``"<path> hosts.hermes.timeout"``).
    """

    path: Path | None
    host: str
    values: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)


def candidates(home: Path | None, environ: Mapping[str, str]) -> list[tuple[Path, Path]]:
    """The files looked at, in order, each with the directory it must stay inside."""
    found: list[tuple[Path, Path]] = []
    if home is not None:
        found.append((home / "honcho.json", home))
    user = str(environ.get("HOME") or environ.get("USERPROFILE") or "").strip()
    if user:
        found.append((Path(user) / ".honcho" / "config.json", Path(user)))
    return found


def read_honcho_json(
    home: Path | None,
    environ: Mapping[str, str],
    fields: tuple[Field, ...],
    validate: Callable[[str, Any], str] = lambda key, value: "",
) -> FileSettings:
    """Read the first settings file that exists and resolve its host block.

    :param fields: the adapter's settings (for types, choices and minimums).
    :param validate: ``(key, typed value) -> problem`` for rules beyond the type
        (``"must be greater than 0"``); ``""`` when the value is fine.
    :raises HonchoJsonError: the file exists but cannot be used.
    """
    host = str(environ.get(HOST_ENV) or "").strip() or DEFAULT_HOST
    for path, jail in candidates(home, environ):
        if not os.path.lexists(path):
            continue
        data = _parse(path, _read(path, jail))
        return _resolve(path, data, host, {f.key: f for f in fields}, validate)
    return FileSettings(None, host)


def _read(path: Path, jail: Path) -> bytes:
    if path.is_symlink():
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError):
            raise HonchoJsonError(f"{path} is a symbolic link to a missing file") from None
        if not target.is_relative_to(jail.resolve()):
            raise HonchoJsonError(
                f"{path} is a symbolic link to {target}, outside {jail}; refusing to read it "
                "(copy the file there instead)"
            )
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise HonchoJsonError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise HonchoJsonError(f"{path} is not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= _MAX_BYTES:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        if exc.errno in (errno.EISDIR,):
            raise HonchoJsonError(f"{path} is not a regular file") from None
        raise HonchoJsonError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if size > _MAX_BYTES:
        raise HonchoJsonError(f"{path} is larger than 1 MiB; it cannot be a settings file")
    return b"".join(chunks)


def _parse(path: Path, raw: bytes) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise HonchoJsonError(f"{path} is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HonchoJsonError(
            f"{path} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise HonchoJsonError(f"{path} is nested too deeply") from None
    if not isinstance(data, dict):
        raise HonchoJsonError(f"{path} must hold a JSON object, got {_kind(data)}")
    return data


def _resolve(
    path: Path,
    data: dict[str, Any],
    host: str,
    fields: dict[str, Field],
    validate: Callable[[str, Any], str],
) -> FileSettings:
    hosts = data.get("hosts", {})
    if not isinstance(hosts, dict):
        raise HonchoJsonError(f"{path}: 'hosts' must be an object, got {_kind(hosts)}")
    block = hosts.get(host, {})
    if not isinstance(block, dict):
        raise HonchoJsonError(f"{path}: 'hosts.{host}' must be an object, got {_kind(block)}")
    values: dict[str, Any] = {}
    labels: dict[str, str] = {}
    unknown: list[str] = []
    for prefix, layer in (("", data), (f"hosts.{host}.", block)):  # the host block wins
        flat = dict(layer)
        endpoint = flat.get("endpoint")
        if endpoint is not None:
            if not isinstance(endpoint, dict):
                raise HonchoJsonError(
                    f"{path}: '{prefix}endpoint' must be an object, got {_kind(endpoint)}"
                )
            if "baseUrl" in endpoint and "baseUrl" not in flat:
                flat["endpoint.baseUrl"] = endpoint["baseUrl"]
        # the more specific spelling wins within one layer
        order = sorted(flat, key=lambda k: (k == "requestTimeout", k == "endpoint.baseUrl"))
        seen: set[str] = set()
        for key in order:
            value = flat[key]
            name = "base_url" if key == "endpoint.baseUrl" else JSON_KEYS.get(key, key)
            if key in _STRUCTURE or key in IGNORED_KEYS:
                continue
            if name not in fields:
                unknown.append(f"{prefix}{key}")
                continue
            if value is None or name in seen:
                continue
            seen.add(name)
            label = f"{path} {prefix}{key}"
            typed = _typed(fields[name], value, label)
            if problem := validate(name, typed):
                raise HonchoJsonError(f"{label} {problem}")
            values[name] = typed
            labels[name] = label
    for key in unknown:
        logger.warning("%s: %s is not a known Honcho setting; ignored", path, key)
    return FileSettings(path, host, values, labels)


def _typed(spec: Field, value: Any, label: str) -> Any:
    if spec.secret:
        if not isinstance(value, str):
            raise HonchoJsonError(f"{label} must be a string, got {_kind(value)}")
        return value.strip()
    if spec.type is str and not isinstance(value, str):
        raise HonchoJsonError(f"{label} must be a string, got {_kind(value)}")
    try:
        return spec.parse(value, "x")
    except SettingsError as exc:
        reason = str(exc).split(" ", 1)[1] if " " in str(exc) else str(exc)
        raise HonchoJsonError(f"{label} {reason}") from None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, int | float) else type(value).__name__
    )
