"""hermes_memory_core._worker.SerialWorker: order, bounded drain/close, queue bound, failures."""

from __future__ import annotations

import threading
import time

import pytest

from hermes_memory_core._worker import SerialWorker


def test_worker_keeps_order_and_drain_is_bounded():
    # moved from tests/mem0/test_mem0_units.py (the adapter's own worker is gone)
    worker = SerialWorker("t")
    seen: list[int] = []
    for i in range(50):
        assert worker.submit(lambda i=i: seen.append(i))
    assert worker.drain(5)
    assert seen == list(range(50))
    gate = threading.Event()
    worker.submit(gate.wait)
    started = time.monotonic()
    assert not worker.drain(0.2)
    assert time.monotonic() - started < 1.0
    gate.set()
    assert worker.close(5)
    assert not worker.submit(lambda: None)


def test_worker_refuses_when_full_and_survives_failing_jobs():
    # moved from tests/mem0/test_mem0_units.py
    worker = SerialWorker("t", max_queued=2)
    gate = threading.Event()
    assert worker.submit(gate.wait)
    time.sleep(0.05)
    assert worker.submit(lambda: 1 / 0)
    assert worker.submit(lambda: None)
    assert not worker.submit(lambda: None)
    gate.set()
    assert worker.drain(5)
    assert worker.submit(lambda: None)
    assert worker.close(5)


def test_the_running_task_does_not_count_against_max_queued():
    worker = SerialWorker("bounded", max_queued=1)
    running = threading.Event()
    gate = threading.Event()

    def blocker() -> None:
        running.set()
        gate.wait(5)

    assert worker.submit(blocker)
    assert running.wait(5)
    assert worker.pending == 1
    assert worker.submit(lambda: None)  # one waiting: allowed
    assert not worker.submit(lambda: None)  # a second waiting one: refused
    assert worker.pending == 2
    gate.set()
    assert worker.close(5)
    assert worker.pending == 0


def test_tasks_run_on_the_named_thread():
    worker = SerialWorker("hm-test-thread")
    names: list[str] = []
    worker.submit(lambda: names.append(threading.current_thread().name))
    assert worker.close(5)
    assert worker.name == "hm-test-thread"
    assert names == ["hm-test-thread"]


def test_bad_max_queued_is_refused():
    with pytest.raises(ValueError, match="max_queued"):
        SerialWorker("x", max_queued=0)


def test_drop_oldest_never_blocks_and_logs(caplog):
    worker = SerialWorker("dropper", max_queued=2, overflow="drop_oldest")
    gate, running = threading.Event(), threading.Event()
    seen: list[int] = []

    def first() -> None:
        running.set()
        gate.wait(5)

    worker.submit(first)
    assert running.wait(5)
    handles = [worker.call(lambda i=i: seen.append(i), label=f"t{i}") for i in range(5)]
    assert all(h is not None for h in handles)
    assert [h.state for h in handles if h] == ["dropped"] * 3 + ["queued"] * 2
    assert worker.dropped == 3
    assert "dropped the oldest queued task t0" in caplog.text
    gate.set()
    assert worker.close(5)
    assert seen == [3, 4]


def test_handles_report_results_and_contain_base_exceptions():
    worker = SerialWorker("handles")
    ok = worker.call(lambda: "中文 result")
    exits = worker.call(lambda: (_ for _ in ()).throw(SystemExit(3)))
    interrupt = worker.call(lambda: (_ for _ in ()).throw(KeyboardInterrupt()))
    after = worker.call(lambda: 42)
    assert ok and exits and interrupt and after
    assert after.wait(5)
    assert ok.ok and ok.result == "中文 result"
    assert isinstance(exits.error, SystemExit) and not exits.ok
    assert isinstance(interrupt.error, KeyboardInterrupt)
    assert after.result == 42, "the worker survived both"
    assert worker.close(5)


def test_cancel_only_drops_a_task_still_waiting():
    worker = SerialWorker("cancel")
    gate, running = threading.Event(), threading.Event()
    blocker = worker.call(lambda: (running.set(), gate.wait(5)))
    waiting = worker.call(lambda: "never")
    assert blocker and waiting and running.wait(5)
    assert not worker.cancel(blocker)
    assert worker.cancel(waiting) and waiting.state == "dropped" and waiting.finished
    gate.set()
    assert worker.drain(5) and worker.pending == 0
    assert worker.close(5)


def test_bad_overflow_is_refused():
    with pytest.raises(ValueError, match="overflow"):
        SerialWorker("x", overflow="block")  # type: ignore[arg-type]


def test_call_bounded_returns_value_error_or_gives_up():
    from hermes_memory_core._worker import call_bounded

    assert call_bounded(lambda: 7, 5).value == 7
    failed = call_bounded(lambda: (_ for _ in ()).throw(SystemExit(1)), 5)
    assert failed.finished and isinstance(failed.error, SystemExit)
    forever = threading.Event()
    hung = call_bounded(forever.wait, 0.1)
    assert not hung.finished
    forever.set()
