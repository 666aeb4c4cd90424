"""Suite-wide collection rules.

The suite runs on every core with pytest-xdist (``-n auto --dist loadgroup`` in the root
pyproject). Tests that share one external resource run on one worker, in order:

* ``postgres`` — every test that talks to the PostgreSQL test server (one of them restarts
  it in the middle of a run of turns; on another worker that restart would break unrelated
  connections).
"""

from __future__ import annotations

from pathlib import Path

import pytest

_POSTGRES_FOLDERS = {"postgres", "backends"}
_POSTGRES_FIXTURES = {"pg_dsn", "schema_dsn", "pg_archive", "postgres_archive"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = Path(str(item.fspath)).parent.name
        fixtures = set(getattr(item, "fixturenames", ()))
        if folder in _POSTGRES_FOLDERS or fixtures & _POSTGRES_FIXTURES:
            item.add_marker(pytest.mark.xdist_group("postgres"))
