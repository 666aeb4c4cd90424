"""Test helpers: find the PostgreSQL server the tests may use.

`test_dsn` returns the DSN from ``HERMES_MEMORY_TEST_PG_DSN`` when a server answers there.
Where none can be reached the caller skips with the reason; under ``CI=true`` an unreachable
server is a failure instead (CI starts one: see ``.ci/postgres.sh``).
"""

from __future__ import annotations

import functools
import os

import psycopg

from hermes_memory_postgres._connection import mask_dsn

__all__ = ["TEST_DSN_ENV", "probe_test_dsn", "require_test_dsn"]

#: Environment variable naming the database the tests may write to.
TEST_DSN_ENV = "HERMES_MEMORY_TEST_PG_DSN"


def probe_test_dsn() -> tuple[str | None, str, bool]:
    """``(dsn, reason, must_fail)``: the reachable test DSN (or None with the reason), and
    whether not reaching one must fail the run (``CI=true``)."""
    in_ci = os.environ.get("CI", "").lower() == "true"
    dsn = os.environ.get(TEST_DSN_ENV, "").strip()
    if not dsn:
        return None, f"PostgreSQL tests need {TEST_DSN_ENV} (see CONTRIBUTING.md)", in_ci
    try:
        with psycopg.connect(dsn, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        reason = f"PostgreSQL at {mask_dsn(dsn)} is unreachable: {' '.join(str(exc).split())}"
        return None, reason, in_ci
    return dsn, "", in_ci


@functools.cache
def _probe_once() -> tuple[str | None, str, bool]:
    return probe_test_dsn()


def require_test_dsn() -> str:
    """The reachable test DSN, for a pytest fixture: skips the test with the reason where no
    server answers, fails it under ``CI=true`` (probed once per process)."""
    import pytest  # only ever called from a test run

    dsn, reason, must_fail = _probe_once()
    if dsn is None:
        if must_fail:
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(reason)
    return dsn
