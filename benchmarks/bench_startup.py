"""Startup cost of the entry points a user waits for (prints figures).

Each figure is the median of several fresh processes (nothing is cached between runs except
the operating system's file cache), as wall time and as the process's CPU time (user +
system: far less sensitive to other work on a shared machine):

- ``hermes-memory --version`` and ``hermes-memory plugins`` (the CLI console script);
- ``MemoryManager.from_config(home)`` with every installed plugin discoverable, and with the
  external adapters denied (``HERMES_MEMORY_DISABLE_PLUGINS``), measured inside the process;
- ``import hermes_memory_mcp_server`` (inside the process);
- the MCP server from launch to the answer of ``tools/list`` (raw JSON-RPC over stdio).

The CLI and the MCP server are started as ``python -c "from … import main; main()"`` (what
their console scripts do), so ``PYTHONPATH`` can point the same script at another checkout.

Run: ``uv run --all-packages python benchmarks/bench_startup.py [--runs N]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

FROM_CONFIG = """
import sys, time
t, c = time.perf_counter(), time.process_time()
from hermes_memory_core import MemoryManager
m = MemoryManager.from_config(sys.argv[1])
print((time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000)
m.shutdown_all()
"""

IMPORT_MCP = """
import time
t, c = time.perf_counter(), time.process_time()
import hermes_memory_mcp_server
print((time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000)
"""

CLI = "import sys; from hermes_memory_cli._cli import main; sys.exit(main())"
MCP = "import sys; from hermes_memory_mcp_server._cli import main; sys.exit(main())"


Sample = tuple[float, float]  # (wall ms, cpu ms)


def _median(samples: list[Sample]) -> str:
    wall_ms = statistics.median(s[0] for s in samples)
    cpu_ms = statistics.median(s[1] for s in samples)
    return f"wall {wall_ms:7.1f} ms   cpu {cpu_ms:7.1f} ms   ({len(samples)} runs)"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def wall(cmd: list[str], env: dict[str, str], runs: int) -> list[Sample]:
    out = []
    for _ in range(runs):
        started, cpu = time.perf_counter(), _children_cpu()
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        out.append(((time.perf_counter() - started) * 1000, _children_cpu() - cpu))
    return out


def inner(code: str, args: list[str], env: dict[str, str], runs: int) -> list[Sample]:
    out = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", code, *args], env=env, check=True, capture_output=True, text=True
        )
        wall_ms, cpu_ms = done.stdout.strip().splitlines()[-1].split()
        out.append((float(wall_ms), float(cpu_ms)))
    return out


def mcp_tools_list(home: Path, env: dict[str, str], runs: int) -> list[Sample]:
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    out = []
    for _ in range(runs):
        started, cpu = time.perf_counter(), _children_cpu()
        proc = subprocess.Popen(
            [sys.executable, "-c", MCP, "--home", str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        assert proc.stdin is not None
        assert proc.stdout is not None
        for req in requests:
            proc.stdin.write(json.dumps(req) + "\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("MCP server closed before answering tools/list")
            if json.loads(line).get("id") == 2:
                break
        elapsed = (time.perf_counter() - started) * 1000
        proc.stdin.close()
        proc.wait(timeout=30)
        out.append((elapsed, _children_cpu() - cpu))  # cpu: the whole run, shutdown included
    return out


def _path_for(root: Path, extra: str) -> str:
    srcs = sorted([*root.glob("packages/*/src"), *root.glob("plugins/*/src")])
    return os.pathsep.join([*map(str, srcs), *filter(None, extra.split(os.pathsep))])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--compare",
        metavar="PATH",
        help="another checkout (e.g. a git worktree of an older commit): every figure is "
        "measured for both, alternating run by run, so load on the machine hits both alike",
    )
    parser.add_argument(
        "--extra-path",
        default="",
        help="more PYTHONPATH entries for the --compare checkout (packages it needs that this "
        "environment no longer installs)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        base = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
        base["HERMES_HOME"] = str(home)
        envs = {"this checkout": base}
        if args.compare:
            # Both sides get the same PYTHONPATH shape, so sys.path lengths are alike.
            here = Path(__file__).resolve().parents[1]
            envs = {
                "compared": dict(base, PYTHONPATH=_path_for(Path(args.compare), args.extra_path)),
                "this checkout": dict(base, PYTHONPATH=_path_for(here, args.extra_path)),
            }
        Case = Callable[[dict[str, str]], list[Sample]]
        cases: list[tuple[str, Case]] = [
            ("hermes-memory --version", lambda env: wall([sys.executable, "-c", CLI, "--version"], env, 1)),
            ("hermes-memory plugins", lambda env: wall([sys.executable, "-c", CLI, "plugins"], env, 1)),
            ("from_config, all plugins", lambda env: inner(FROM_CONFIG, [str(home)], env, 1)),
            ("from_config, adapters denied", lambda env: inner(FROM_CONFIG, [str(home)], dict(env, HERMES_MEMORY_DISABLE_PLUGINS="mem0,honcho,example"), 1)),
            ("import hermes_memory_mcp_server", lambda env: inner(IMPORT_MCP, [], env, 1)),
            ("MCP launch to tools/list", lambda env: mcp_tools_list(home, env, 1)),
        ]  # fmt: skip
        for label, measure in cases:
            samples: dict[str, list[Sample]] = {name: [] for name in envs}
            for _ in range(args.runs):
                for name, env in envs.items():
                    samples[name] += measure(env)
            for name in envs:
                print(f"  {label:<34} {name:<14} {_median(samples[name])}")


if __name__ == "__main__":
    main()
