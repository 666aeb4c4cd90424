"""Running the ``brv`` CLI: one subprocess per call, in its own process group, with a deadline.

``brv <command> … --format json`` prints one JSON object per line
(``{"command", "data", "success", "timestamp"}``; a query may print a ``response`` event before
its ``completed`` one). `run_brv` returns the ``data`` of the last such line. Past the deadline
the whole process group is killed (``SIGKILL``), so a CLI stuck on a daemon or the network, and
any helper it started in its group, cannot outlive the call.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_memory_core import kit

__all__ = ["BrvError", "classify", "run_brv"]

#: Output kept from one call (a runaway CLI cannot fill the memory).
MAX_OUTPUT_BYTES = 4 * 1024 * 1024


class BrvError(Exception):
    """The CLI failed: ``kind`` says how (a `kit.FailureKind`)."""

    def __init__(self, message: str, kind: kit.FailureKind = kit.FailureKind.OTHER) -> None:
        super().__init__(message)
        self.kind = kind


def classify(exc: BaseException) -> kit.Failure:
    """A `BrvError` (or anything else) in the kit's failure taxonomy."""
    if isinstance(exc, BrvError):
        return kit.Failure(exc.kind, kit.one_line(exc))
    if isinstance(exc, FileNotFoundError | PermissionError):
        return kit.Failure(kit.FailureKind.UNAVAILABLE, f"cannot run brv: {kit.one_line(exc)}")
    return kit.classify_common(exc) or kit.Failure(
        kit.FailureKind.OTHER, f"{type(exc).__name__}: {kit.one_line(exc)}"
    )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if sys.platform == "win32":  # pragma: no cover - no process groups there
        proc.kill()
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _message(data: Any) -> str:
    if isinstance(data, Mapping):
        for key in ("error", "message"):
            if isinstance(data.get(key), str) and data[key].strip():
                return str(data[key])
    return "brv reported a failure"


def _kind_of(message: str) -> kit.FailureKind:
    low = message.lower()
    if "network" in low or "connect" in low or "internet" in low:
        return kit.FailureKind.CONNECTION
    if "auth" in low or "login" in low or "api key" in low or "unauthor" in low:
        return kit.FailureKind.AUTH
    if "timed out" in low or "timeout" in low:
        return kit.FailureKind.TIMEOUT
    if "required" in low or "invalid" in low:
        return kit.FailureKind.INVALID
    return kit.FailureKind.SERVER


def run_brv(
    command: Sequence[str],
    args: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run ``command + args`` in ``cwd`` and return the ``data`` of its last JSON line.

    :param command: the CLI (``["brv"]`` or a path, possibly with leading arguments).
    :param timeout: seconds before the process group is killed.
    :raises BrvError: timed out (``timeout``), exited non-zero without a JSON answer, printed
        no JSON line (``other``), or answered ``success: false`` (kind from its message).
    :raises OSError: the CLI cannot be started.
    """
    argv = [*command, *args]
    proc = subprocess.Popen(
        argv,
        cwd=str(cwd),
        env=dict(env) if env is not None else None,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=sys.platform != "win32",  # its own process group, killable as one
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=2.0)
        raise BrvError(
            f"brv {args[0] if args else ''} did not answer within {timeout:g} s (killed)",
            kit.FailureKind.TIMEOUT,
        ) from None
    finally:
        if proc.poll() is None:  # pragma: no cover - an exception while waiting
            _kill_group(proc)
    _kill_group(proc)  # helpers it left behind in its group
    text = out[:MAX_OUTPUT_BYTES].decode("utf-8", errors="replace")
    answer: dict[str, Any] | None = None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            parsed = json.loads(line)
        except ValueError:
            continue
        if isinstance(parsed, dict) and "success" in parsed:
            answer = parsed
    if answer is None:
        tail = kit.one_line(err[-2000:].decode("utf-8", errors="replace") or text[-300:], 300)
        if proc.returncode:
            raise BrvError(f"brv exited with status {proc.returncode}: {tail or 'no output'}")
        raise BrvError(f"brv printed no JSON answer: {tail or 'no output'}")
    data = answer.get("data")
    if answer.get("success") is not True:
        message = _message(data)
        raise BrvError(f"brv: {kit.one_line(message)}", _kind_of(message))
    return data if isinstance(data, dict) else {"value": data}
