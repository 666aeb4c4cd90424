"""Startup cost of the entry points a user waits for (prints figures).

Each figure is the median wall time of several fresh processes (nothing is cached between
runs except the operating system's file cache):

- ``hermes-memory --version`` and ``hermes-memory plugins`` (the CLI console script);
- ``MemoryManager.from_config(home)`` with every installed plugin discoverable, and with the
  external adapters denied (``HERMES_MEMORY_DISABLE_PLUGINS``), measured inside the process;
- ``import hermes_memory_mcp_server`` (inside the process);
- the MCP server from launch to the answer of ``tools/list`` (raw JSON-RPC over stdio).

Run: ``uv run --all-packages python benchmarks/bench_startup.py [--runs N]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent

FROM_CONFIG = """
import sys, time
t = time.perf_counter()
from hermes_memory_core import MemoryManager
m = MemoryManager.from_config(sys.argv[1])
print((time.perf_counter() - t) * 1000)
m.shutdown_all()
"""

IMPORT_MCP = """
import time
t = time.perf_counter()
import hermes_memory_mcp_server
print((time.perf_counter() - t) * 1000)
"""


def _median(samples: list[float]) -> str:
    return f"{statistics.median(samples):7.1f} ms  (min {min(samples):.1f}, {len(samples)} runs)"


def wall(cmd: list[str], env: dict[str, str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        out.append((time.perf_counter() - started) * 1000)
    return out


def inner(code: str, args: list[str], env: dict[str, str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", code, *args], env=env, check=True, capture_output=True, text=True
        )
        out.append(float(done.stdout.strip().splitlines()[-1]))
    return out


def mcp_tools_list(home: Path, env: dict[str, str], runs: int) -> list[float]:
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
        started = time.perf_counter()
        proc = subprocess.Popen(
            [str(BIN / "hermes-memory-mcp"), "--home", str(home)],
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
        out.append((time.perf_counter() - started) * 1000)
        proc.stdin.close()
        proc.wait(timeout=30)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES")}
        env["HERMES_HOME"] = str(home)
        no_ext = dict(env, HERMES_MEMORY_DISABLE_PLUGINS="mem0,honcho,example")
        cli = str(BIN / "hermes-memory")
        rows = [
            ("hermes-memory --version", wall([cli, "--version"], env, args.runs)),
            ("hermes-memory plugins", wall([cli, "plugins"], env, args.runs)),
            ("from_config, all plugins", inner(FROM_CONFIG, [str(home)], env, args.runs)),
            ("from_config, adapters denied", inner(FROM_CONFIG, [str(home)], no_ext, args.runs)),
            ("import hermes_memory_mcp_server", inner(IMPORT_MCP, [], env, args.runs)),
            ("MCP launch to tools/list", mcp_tools_list(home, env, args.runs)),
        ]
        for label, samples in rows:
            print(f"  {label:<34} {_median(samples)}")


if __name__ == "__main__":
    main()
