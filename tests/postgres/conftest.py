"""Fixtures of the PostgreSQL tests: a reachable test database (skipped with a visible
reason where none is reachable, a failure under CI=true) and a fresh owner per test."""

from __future__ import annotations

import uuid

import pytest

from hermes_memory_postgres.testing import require_test_dsn


@pytest.fixture
def pg_dsn() -> str:
    return require_test_dsn()


@pytest.fixture
def owner() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"
