"""Real processes: concurrent writers lose nothing; a SIGKILLed writer never leaves a torn file."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hermes_memory_builtin import MemoryStore
from hermes_memory_builtin._format import parse_entries, serialise

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and signals"),
]

WRITER = """
import sys, uuid
from hermes_memory_builtin import MemoryStore
mem_dir, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = MemoryStore(mem_dir, memory_char_limit=1_000_000)
print("ready", flush=True)
sys.stdin.readline()
failures = 0
for i in range(count):
    result = store.add("memory", f"worker {worker} entry {i} {uuid.uuid4().hex}")
    failures += not result["success"]
print(failures, flush=True)
"""


def test_six_processes_adding_at_once_lose_nothing(mem_dir: Path) -> None:
    workers, per_worker = 6, 25
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(mem_dir), str(w), str(per_worker)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    try:
        for proc in procs:  # everyone imported and constructed its store
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for proc in procs:  # release them together
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        outputs = [proc.communicate(timeout=240)[0] for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert [p.returncode for p in procs] == [0] * workers
    assert [out.strip() for out in outputs] == ["0"] * workers
    entries = parse_entries((mem_dir / "MEMORY.md").read_text(encoding="utf-8"))
    assert len(entries) == workers * per_worker
    for w in range(workers):
        mine = [e for e in entries if e.startswith(f"worker {w} entry ")]
        # each worker's own entries are all there, in the order it wrote them
        assert [int(e.split()[3]) for e in mine] == list(range(per_worker))
    store = MemoryStore(mem_dir)
    assert len(store.entry_metadata("memory")) == workers * per_worker


CRASHER = """
import sys
from hermes_memory_builtin import MemoryStore
mem_dir, start = sys.argv[1], int(sys.argv[2])
store = MemoryStore(mem_dir, memory_char_limit=100_000_000)
# load the scanner's rules first (seconds on a loaded machine), so kills land in writes
from hermes_memory_guard import scan_for_threats, scrub_secrets, threat_verdict
scan_for_threats("warm up", "strict"); threat_verdict("warm up", "strict"); scrub_secrets("warm up")
print("ready", flush=True)
i = start
while True:
    result = store.add("memory", f"crash entry {i:06d} " + "filler " * 200)
    assert result["success"], result
    i += 1
"""


def expected(i: int) -> str:
    return f"crash entry {i:06d} " + ("filler " * 200).strip()


def test_sigkill_mid_write_leaves_old_or_new_file(mem_dir: Path) -> None:
    path = mem_dir / "MEMORY.md"
    rng = random.Random(1234)
    count = 0
    grew = 0
    for _ in range(12):
        with subprocess.Popen(
            [sys.executable, "-c", CRASHER, str(mem_dir), str(count)],
            stdout=subprocess.PIPE,
            text=True,
        ) as proc:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.05, 0.4))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            assert proc.returncode == -signal.SIGKILL
        raw = path.read_bytes() if path.exists() else b""
        text = raw.decode("utf-8")  # strict: never a torn multi-byte sequence
        entries = parse_entries(text)
        assert text == serialise(entries)  # a whole file, byte for byte
        assert entries == [expected(i) for i in range(len(entries))]
        assert len(entries) >= count  # nothing already written was lost
        grew += len(entries) > count
        count = len(entries)
    assert grew > 0  # the writers really were writing when killed
    # the killed writers' locks died with them: a new writer gets in at once
    assert MemoryStore(mem_dir, memory_char_limit=100_000_000).add("memory", "after")["success"]
