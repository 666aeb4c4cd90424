"""Fixtures of the PostgreSQL tests: a reachable test database (skipped with a visible
reason where none is reachable, a failure under CI=true) and a fresh owner per test."""

from __future__ import annotations

import functools
import uuid

import pytest

from hermes_memory_postgres.testing import probe_test_dsn


@functools.cache
def _probe() -> tuple[str | None, str, bool]:
    return probe_test_dsn()


@pytest.fixture
def pg_dsn() -> str:
    dsn, reason, must_fail = _probe()
    if dsn is None:
        if must_fail:
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(reason)
    return dsn


@pytest.fixture
def owner() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"
