"""The background embedding worker against an archive closed under it."""

from __future__ import annotations

import logging
import sqlite3
import threading

from hermes_memory_sessions.vectors._embedding_worker import EmbeddingWorker


def test_a_store_closed_mid_batch_is_no_failure(caplog):
    """A short process closes its archive while the worker embeds: the write fails, but
    nothing failed from the user's point of view (no warning, no backoff error)."""
    inside, closed = threading.Event(), threading.Event()

    def embed(ids):
        inside.set()
        closed.wait(10)
        raise sqlite3.ProgrammingError("SessionStore is closed")

    worker = EmbeddingWorker(
        embed=embed, warm_up=lambda: None, closed=closed.is_set, queue_size=8, batch_size=4
    )
    worker.start()
    with caplog.at_level(logging.WARNING):
        worker.notify([1, 2])
        assert inside.wait(10)
        closed.set()
        worker._thread.join(10)
    assert not worker._thread.is_alive()
    assert worker.last_error is None
    assert "embedding failed" not in caplog.text


def test_a_real_failure_is_reported(caplog):
    reported = threading.Event()

    def embed(ids):
        raise RuntimeError("model crashed")

    worker = EmbeddingWorker(
        embed=embed, warm_up=lambda: None, closed=lambda: False, queue_size=8, batch_size=4
    )
    real_failed = worker._failed

    def failed(exc):
        real_failed(exc)
        reported.set()

    worker._failed = failed
    worker.start()
    with caplog.at_level(logging.WARNING):
        worker.notify([1])
        assert reported.wait(10)
        worker.close(10)
    assert worker.last_error == "RuntimeError: model crashed"
    assert "embedding failed" in caplog.text
