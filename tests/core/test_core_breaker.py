"""hermes_memory_core._breaker: thresholds, cool-down, half-open trial, states, threads."""

from __future__ import annotations

import threading

import pytest

from hermes_memory_core._breaker import CIRCUIT_OPEN, DEGRADED, OK, CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_breaker_opens_half_opens_and_closes():
    # moved from tests/mem0/test_mem0_units.py (the adapter's own breaker is gone)
    now = [0.0]
    breaker = CircuitBreaker(threshold=3, cooldown=10, clock=lambda: now[0])
    assert [breaker.record_failure() for _ in range(3)] == [False, False, True]
    assert breaker.is_open and not breaker.allow()
    now[0] = 10.5
    assert breaker.allow()  # the single trial
    assert not breaker.allow()
    assert breaker.record_failure()  # trial failed: open again
    assert not breaker.allow()
    now[0] = 21
    assert breaker.allow()
    assert breaker.record_success()
    assert not breaker.is_open and breaker.failures == 0


def test_states_for_health_records():
    clock = Clock()
    breaker = CircuitBreaker(threshold=2, cooldown=5, clock=clock)
    assert breaker.state == OK == "ok"
    assert not breaker.record_failure()
    assert breaker.state == DEGRADED == "degraded" and breaker.allow()
    assert breaker.record_failure()
    assert breaker.state == CIRCUIT_OPEN == "circuit_open"
    clock.now = 6
    assert not breaker.is_open  # cool-down over: a trial may go out...
    assert breaker.state == CIRCUIT_OPEN  # ...but it is not closed until a success
    assert breaker.allow()
    assert breaker.record_success() is True
    assert breaker.state == OK
    assert breaker.record_success() is False  # closed already: not a recovery


def test_retry_in_counts_down_the_cool_down():
    clock = Clock()
    breaker = CircuitBreaker(threshold=1, cooldown=30, clock=clock)
    assert breaker.retry_in() == 0.0
    breaker.record_failure()
    assert breaker.retry_in() == 30.0
    clock.now = 12.5
    assert breaker.retry_in() == 17.5
    clock.now = 40
    assert breaker.retry_in() == 0.0


def test_success_resets_the_consecutive_count():
    breaker = CircuitBreaker(threshold=3, cooldown=10, clock=Clock())
    breaker.record_failure()
    breaker.record_failure()
    breaker.record_success()
    assert breaker.failures == 0
    assert not breaker.record_failure() and not breaker.record_failure()
    assert breaker.record_failure()


def test_open_now_skips_the_threshold_and_restarts_the_cool_down():
    clock = Clock()
    breaker = CircuitBreaker(threshold=5, cooldown=10, clock=clock)
    assert breaker.record_failure(open_now=True)
    assert breaker.failures == 1 and not breaker.allow()
    clock.now = 8
    assert breaker.record_failure(open_now=True)  # e.g. credentials still rejected
    clock.now = 12
    assert not breaker.allow()
    clock.now = 18
    assert breaker.allow()


def test_late_failures_while_open_do_not_extend_the_cool_down():
    clock = Clock()
    breaker = CircuitBreaker(threshold=1, cooldown=10, clock=clock)
    assert breaker.record_failure()
    clock.now = 4
    assert not breaker.record_failure()  # a call that started before the breaker opened
    assert breaker.failures == 2
    clock.now = 10
    assert breaker.allow()


def test_release_trial_lets_another_trial_out():
    clock = Clock()
    breaker = CircuitBreaker(threshold=1, cooldown=1, clock=clock)
    breaker.record_failure()
    clock.now = 2
    assert breaker.allow() and not breaker.allow()
    breaker.release_trial()  # the trial hit a client error: no verdict on the service
    assert breaker.allow()
    assert breaker.state == CIRCUIT_OPEN


def test_without_single_trial_every_call_goes_out_after_the_cool_down():
    clock = Clock()
    breaker = CircuitBreaker(threshold=2, cooldown=10, single_trial=False, clock=clock)
    breaker.record_failure()
    assert breaker.record_failure()
    assert not breaker.allow()
    clock.now = 10
    assert breaker.allow() and breaker.allow() and not breaker.is_open
    assert breaker.record_failure()  # a failure after the cool-down re-opens
    assert not breaker.allow()
    clock.now = 15
    assert not breaker.record_failure()
    clock.now = 20
    assert breaker.allow()
    assert breaker.record_success() and breaker.state == OK


@pytest.mark.parametrize(("threshold", "cooldown"), [(0, 1.0), (-1, 1.0), (1, -0.5)])
def test_bad_parameters_are_refused(threshold, cooldown):
    with pytest.raises(ValueError, match=r"threshold|cooldown"):
        CircuitBreaker(threshold, cooldown)


def run_together(count, fn):
    """Start ``count`` threads at one barrier; collect what ``fn`` returns in each."""
    barrier = threading.Barrier(count)
    results: list[object] = []
    lock = threading.Lock()

    def worker() -> None:
        barrier.wait()
        result = fn()
        with lock:
            results.append(result)

    threads = [threading.Thread(target=worker) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    return results


def test_one_trial_among_many_threads():
    clock = Clock()
    breaker = CircuitBreaker(threshold=1, cooldown=1, clock=clock)
    breaker.record_failure()
    clock.now = 5
    assert sorted(run_together(8, breaker.allow)) == [False] * 7 + [True]


def test_concurrent_failures_open_exactly_once():
    breaker = CircuitBreaker(threshold=50, cooldown=60)
    results = run_together(4, lambda: [breaker.record_failure() for _ in range(25)])
    assert breaker.failures == 100
    assert sum(opened.count(True) for opened in results) == 1
