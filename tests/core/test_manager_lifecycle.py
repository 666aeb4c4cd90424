"""MemoryManager lifetime: context manager, closed manager, atexit drain, garbage collection,
and exceptions (``SystemExit`` / ``KeyboardInterrupt``) raised by provider code."""

from __future__ import annotations

import gc
import json
import logging
import subprocess
import sys
import textwrap
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_core import ManagerClosedError, MemoryManager, MemoryProvider


class Recorder(MemoryProvider):
    def __init__(self, name: str = "ext") -> None:
        self._name = name
        self.calls: list[tuple[str, Any]] = []

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.calls.append(("initialize", (session_id, kwargs)))

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{"name": f"{self._name}_tool", "description": "d", "parameters": {}}]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        self.calls.append(("handle_tool_call", (args, kwargs)))
        return json.dumps({"ok": True})

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self.calls.append(("prefetch", query))
        return f"{self._name} remembers"

    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        self.calls.append(("sync_turn", (user_content, assistant_content, messages)))

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self.calls.append(("on_turn_start", (message, kwargs)))

    def on_session_switch(self, new_session_id, **kwargs):
        self.calls.append(("on_session_switch", (new_session_id, kwargs)))

    def on_delegation(self, task, result, *, child_session_id="", **kwargs):
        self.calls.append(("on_delegation", (task, result, child_session_id, kwargs)))

    def on_memory_write(self, action, target, content, metadata=None):
        self.calls.append(("on_memory_write", (action, target, content, metadata)))

    def shutdown(self) -> None:
        self.calls.append(("shutdown", None))

    def hooks(self) -> list[str]:
        return [name for name, _ in self.calls]


def test_context_manager_shuts_down_on_exit_even_after_an_error():
    ext = Recorder()
    manager = MemoryManager()

    def host() -> None:
        with manager as m:
            assert m is manager
            assert m.add_provider(ext)
            m.sync_all("a turn", "a reply")
            raise RuntimeError("host failed")

    with pytest.raises(RuntimeError, match="host failed"):
        host()
    assert manager.closed
    assert ext.hooks() == ["sync_turn", "shutdown"], "queued syncs drain before shutdown"
    manager.shutdown_all()  # idempotent
    assert ext.hooks().count("shutdown") == 1


CLOSED_CALLS = {
    "add_provider": lambda m: m.add_provider(Recorder("late")),
    "initialize_all": lambda m: m.initialize_all("s"),
    "build_system_prompt": lambda m: m.build_system_prompt(),
    "prefetch_all": lambda m: m.prefetch_all("what about docker?"),
    "queue_prefetch_all": lambda m: m.queue_prefetch_all("docker"),
    "sync_all": lambda m: m.sync_all("u", "a"),
    "flush_pending": lambda m: m.flush_pending(1),
    "handle_tool_call": lambda m: m.handle_tool_call("ext_tool", {}),
    "on_turn_start": lambda m: m.on_turn_start(1, "hi"),
    "on_session_end": lambda m: m.on_session_end([]),
    "on_session_switch": lambda m: m.on_session_switch("s2"),
    "on_pre_compress": lambda m: m.on_pre_compress([]),
    "on_memory_write": lambda m: m.on_memory_write("add", "memory", "x"),
    "on_delegation": lambda m: m.on_delegation("t", "r"),
    "__enter__": lambda m: m.__enter__(),
}


@pytest.mark.parametrize("method", sorted(CLOSED_CALLS))
def test_calls_after_shutdown_raise_and_reach_no_provider(method):
    ext = Recorder()
    manager = MemoryManager()
    manager.add_provider(ext)
    manager.shutdown_all()
    before = list(ext.calls)
    with pytest.raises(ManagerClosedError, match=r"after shutdown_all\(\)"):
        CLOSED_CALLS[method](manager)
    assert ext.calls == before
    assert isinstance(ManagerClosedError("x"), RuntimeError)
    # read-only accessors keep working
    assert manager.get_all_tool_names() == ["ext_tool"]
    assert manager.get_provider("ext") is ext


def test_a_forgotten_manager_is_collected_and_its_thread_ends():
    manager = MemoryManager()
    manager.add_provider(Recorder("forgotten"))
    manager.sync_all("a turn", "a reply")
    assert manager.flush_pending(5)
    ref = weakref.ref(manager)
    del manager
    gc.collect()
    assert ref() is None, "the atexit registry and the worker must not keep the manager alive"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(
        t.name == "hermes-memory-forgotten" for t in threading.enumerate()
    ):
        time.sleep(0.02)
    assert not any(t.name == "hermes-memory-forgotten" for t in threading.enumerate())


HOST_SCRIPT = """
import sys, threading, time, types
from pathlib import Path
from hermes_memory_core import MemoryManager, MemoryProvider, hookimpl
from hermes_memory_core.plugins import PluginRegistry

home, log, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
forever = threading.Event()

class Slow(MemoryProvider):
    name = "slow"
    def is_available(self): return True
    def initialize(self, session_id, **kwargs): pass
    def get_tool_schemas(self): return []
    def sync_turn(self, user_content, assistant_content, **kwargs):
        if mode == "hang":
            forever.wait()
        time.sleep(0.05)
        with log.open("a", encoding="utf-8") as f:
            f.write(user_content + "\\n")
    def shutdown(self):
        with log.open("a", encoding="utf-8") as f:
            f.write("shutdown\\n")

module = types.ModuleType("hm_slow")
@hookimpl
def register_memory_providers(register):
    register(Slow, name="slow")
module.register_memory_providers = register_memory_providers
registry = PluginRegistry.from_entry_points(environ={})
registry.register_plugin(module, name="slow", distribution="hm-slow")
(home / "config.yaml").write_text("memory:\\n  provider: slow\\n  shutdown_timeout: 1\\n")
manager = MemoryManager.from_config(home, registry=registry)
manager.initialize_all("20261201_150000_ffffff")
for i in range(5):
    manager.sync_all(f"turn {i} 部署", f"reply {i}")
raise RuntimeError("the host crashed without calling shutdown_all")
"""


def run_host(tmp_path: Path, mode: str) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    log = tmp_path / "external.log"
    script = tmp_path / "host.py"
    script.write_text(textwrap.dedent(HOST_SCRIPT), encoding="utf-8")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(script), str(home), str(log), mode],
        capture_output=True,
        text=True,
        timeout=60,
        encoding="utf-8",
    )
    assert time.monotonic() - started < 30, "the exit drain is bounded"
    return done, home, log


def archive_rows(home: Path) -> int:
    import sqlite3

    dbs = list(home.rglob("*.db"))
    assert len(dbs) == 1, dbs
    conn = sqlite3.connect(f"file:{dbs[0]}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0])
    finally:
        conn.close()


def test_a_host_that_crashes_without_shutdown_loses_no_turn(tmp_path):
    done, home, log = run_host(tmp_path, "slow")
    assert done.returncode == 1 and "host crashed" in done.stderr
    assert log.read_text(encoding="utf-8").splitlines() == [
        *[f"turn {i} 部署" for i in range(5)],
        "shutdown",
    ], "the atexit drain delivers queued turns to the external provider, then shuts it down"
    assert archive_rows(home) == 10


def test_the_exit_drain_is_bounded_when_the_external_provider_hangs(tmp_path):
    done, home, log = run_host(tmp_path, "hang")
    assert done.returncode == 1 and "host crashed" in done.stderr
    assert not log.exists() or "turn" not in log.read_text(encoding="utf-8")
    assert archive_rows(home) == 10, "the local tiers stored every turn regardless"


class Raiser(Recorder):
    """Raises the given BaseException from sync_turn and prefetch."""

    def __init__(self, name: str, exc: BaseException) -> None:
        super().__init__(name)
        self.exc = exc

    def sync_turn(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append(("sync_turn", None))
        raise self.exc

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        raise self.exc


@pytest.mark.parametrize("exc", [SystemExit(3), KeyboardInterrupt()], ids=["exit", "interrupt"])
def test_base_exceptions_from_an_external_provider_are_contained(exc, caplog):
    manager = MemoryManager()
    local = Recorder("builtin")
    manager.add_provider(local, local=True)
    manager.add_provider(Raiser("ext", exc))
    with caplog.at_level(logging.WARNING):
        assert manager.prefetch_all("what about docker?").count("remembers") == 1
        manager.sync_all("a turn", "a reply")
        assert manager.flush_pending(5)
        manager.sync_all("the next turn", "still fine")
        assert manager.flush_pending(5)
    assert type(exc).__name__ in caplog.text
    assert [c for c in local.calls if c[0] == "sync_turn"][-1][1][0] == "the next turn"
    manager.shutdown_all()


def test_system_exit_from_a_local_tier_is_contained_but_ctrl_c_is_not(caplog):
    manager = MemoryManager()
    manager.add_provider(Raiser("builtin", SystemExit(2)), local=True)
    with caplog.at_level(logging.WARNING):
        manager.sync_all("a turn", "a reply")  # contained, logged
    assert "SystemExit" in caplog.text
    manager.shutdown_all()
    interrupted = MemoryManager()
    interrupted.add_provider(Raiser("builtin", KeyboardInterrupt()), local=True)
    with pytest.raises(KeyboardInterrupt):
        interrupted.sync_all("a turn", "a reply")  # on the caller's thread: the user's Ctrl-C
    interrupted.shutdown_all()


SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"


def test_every_string_handed_to_a_provider_is_scrubbed_keyword_context_included(tmp_path):
    ext = Recorder("mem0")
    builtin = Recorder("builtin")
    manager = MemoryManager(hermes_home=tmp_path)
    manager.add_provider(builtin, local=True)
    manager.add_provider(ext)
    manager.initialize_all(
        "20261201_160000_aaaaaa",
        session_title=f"rotate {SECRET}",
        user_id="alice",
        extra={"note": [f"token {SECRET}"]},
    )
    manager.on_turn_start(1, f"use {SECRET}", model_hint=f"key={SECRET}")
    manager.on_session_switch(
        "20261201_160000_bbbbbb", parent_session_id="20261201_160000_aaaaaa", title=SECRET
    )
    manager.on_delegation(f"task {SECRET}", "done", child_session_id="c1", summary=SECRET)
    manager.on_memory_write("add", f"memory {SECRET}", f"the key is {SECRET}", {"why": SECRET})
    manager.handle_tool_call("mem0_tool", {"q": SECRET}, note=SECRET)
    manager.sync_all(f"my key {SECRET}", "ok", author=SECRET)
    assert manager.flush_pending(5)
    for provider in (ext, builtin):
        assert SECRET not in repr(provider.calls), provider.name
    [(_, (session_id, kwargs))] = [c for c in ext.calls if c[0] == "initialize"]
    assert session_id == "20261201_160000_aaaaaa"
    assert kwargs["hermes_home"] == str(tmp_path), "identifiers pass unchanged"
    assert kwargs["user_id"] == "alice"
    assert "[redacted]" in kwargs["session_title"]
    [(_, (_new_id, switch_kwargs))] = [c for c in ext.calls if c[0] == "on_session_switch"]
    assert switch_kwargs["parent_session_id"] == "20261201_160000_aaaaaa"
    manager.shutdown_all()
