"""A stand-in for the ``brv`` CLI (byterover-cli 3.14) that speaks its documented ``--format
json`` output: one ``{"command", "data", "success", "timestamp"}`` object per line.

The real CLI cannot run here: every command first starts a local daemon that must reach
ByteRover's servers at start-up ("Fatal startup error: Network error: Unable to connect to
ByteRover servers") and the client waits for it indefinitely. This script keeps a context tree
as JSON lines in ``.brv/fake-tree.jsonl`` under its working directory and answers queries by
word overlap. ``FAKE_BRV_MODE`` selects a failure: ``hang`` (sleeps, with a child process in
its group), ``crash`` (a stack trace, exit 3), ``garbage`` (bytes that are not JSON),
``offline`` (the CLI's own network-error answer), ``slow_ok`` (answers after 0.5 s).
Every call is logged to ``.brv/calls.jsonl`` (argv, whether BRV_API_KEY was set).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path


def emit(command: str, data: dict, success: bool = True) -> None:
    line = {
        "command": command,
        "data": data,
        "success": success,
        "timestamp": datetime.now(UTC).isoformat(),
    }
    sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def words(text: str) -> set[str]:
    out = set()
    for token in text.lower().replace("?", " ").replace(".", " ").split():
        if len(token) > 2:
            out.add(token)
    out |= {text[i : i + 2] for i in range(len(text) - 1) if "\u4e00" <= text[i] <= "\u9fff"}
    return out


def main() -> int:
    state = Path.cwd() / ".brv"
    state.mkdir(exist_ok=True)
    argv = sys.argv[1:]
    with (state / "calls.jsonl").open("a", encoding="utf-8") as log:
        log.write(
            json.dumps(
                {
                    "argv": argv,
                    "api_key_set": bool(os.environ.get("BRV_API_KEY")),
                    "pid": os.getpid(),
                }
            )
            + "\n"
        )
    mode = os.environ.get("FAKE_BRV_MODE", "ok")
    command = argv[0] if argv else ""
    if mode == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        (state / "hang.pids").write_text(f"{os.getpid()} {child.pid}")
        time.sleep(600)
        return 0
    if mode == "crash":
        sys.stderr.write("TypeError: Cannot read properties of undefined (reading 'x')\n")
        return 3
    if mode == "garbage":
        sys.stdout.buffer.write(b"\x00\xff{not json\n[1, 2]\n")
        return 0
    if mode == "offline":
        emit(
            command,
            {"error": "Network error: Unable to connect to ByteRover servers.", "status": "error"},
            success=False,
        )
        return 1
    if mode == "slow_ok":
        time.sleep(0.5)
    tree = state / "fake-tree.jsonl"
    if command == "curate":
        content = argv[1] if len(argv) > 1 and not argv[1].startswith("--") else ""
        if not content:
            emit(
                "curate",
                {
                    "message": "Either a context argument, file reference, or folder "
                    "reference is required.",
                    "status": "error",
                },
                success=False,
            )
            return 0
        with tree.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"content": content}, ensure_ascii=False) + "\n")
        if "--detach" in argv:
            emit(
                "curate",
                {
                    "logId": "log-1",
                    "message": "Context queued for processing",
                    "status": "queued",
                    "taskId": "t-1",
                },
            )
        else:
            emit(
                "curate",
                {
                    "event": "completed",
                    "logId": "log-1",
                    "message": "Context curated successfully",
                    "status": "completed",
                    "taskId": "t-1",
                },
            )
        return 0
    if command == "query":
        query = argv[1] if len(argv) > 1 else ""
        entries = []
        if tree.exists():
            entries = [json.loads(line)["content"] for line in tree.read_text("utf-8").splitlines()]
        hits = [e for e in entries if words(e) & words(query)]
        result = "\n".join(hits) if hits else "No relevant context found."
        emit("query", {"content": result, "event": "response", "taskId": "t-2"})
        emit(
            "query",
            {
                "event": "completed",
                "matchedDocs": len(hits),
                "result": result,
                "status": "completed",
                "taskId": "t-2",
                "tier": 2,
            },
        )
        return 0
    if command == "status":
        count = len(tree.read_text("utf-8").splitlines()) if tree.exists() else 0
        emit(
            "status",
            {
                "cliVersion": "3.14.0",
                "projectRoot": str(Path.cwd()),
                "contextTree": {"entries": count},
            },
        )
        return 0
    emit(command, {"error": f"unknown command {command}", "status": "error"}, success=False)
    return 2


if __name__ == "__main__":
    sys.exit(main())
