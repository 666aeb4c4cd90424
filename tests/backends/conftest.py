"""Fixtures of the shared backend suite: each test runs on SQLite and on PostgreSQL (skipped with a
visible reason where no server is reachable, a failure under CI=true)."""

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


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def archive(backend: str, request: pytest.FixtureRequest, tmp_path, owner: str):
    """An empty archive of each backend (SQLite file; PostgreSQL owner of its own)."""
    if backend == "sqlite":
        from hermes_memory_sessions.storage import SessionStore

        store = SessionStore(tmp_path / "sessions.db")
    else:
        from hermes_memory_postgres import PostgresSessionArchive

        dsn = request.getfixturevalue("pg_dsn")
        store = PostgresSessionArchive(dsn, owner=owner)
    yield store
    store.close()
