"""hermes_memory_core.worker.SerialWorker: order, bounded drain/close, queue bound, failures."""

from __future__ import annotations

import threading
import time

import pytest

from hermes_memory_core.worker import SerialWorker


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
