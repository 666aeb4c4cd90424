"""The title lookup every discovery makes (numbered ``"<title> #N"`` first, newest
started, else the exact title), read in one statement on PostgreSQL, answers as SQLite's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres_helpers import filled_pair


def _fill(store: Any) -> None:
    rows = [
        ("a", "plain only", 100),
        ("b", "numbered", 110),
        ("c", "numbered #2", 120),
        ("d", "numbered #3", 115),  # started before c: c is the latest
        ("e", "100%_done", 130),
        ("f", "100x_done #2", 140),  # matches "100%_done #%" only if % and _ were wildcards
        ("g", None, 150),
    ]
    for sid, title, started in rows:
        store.create_session(sid, source="cli", started_at=1_700_000_000 + started)
        if title is not None:
            store.set_title(sid, title)


@pytest.fixture
def both(tmp_path: Path, pg_dsn: str, owner: str) -> Iterator[tuple[Any, Any]]:
    with filled_pair(tmp_path / "a.db", pg_dsn, owner, _fill) as pair:
        yield pair


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("plain only", "a"),
        ("numbered", "c"),
        ("numbered #3", "d"),
        ("100%_done", "e"),
        ("100x", None),
        ("nothing here", None),
    ],
)
def test_title_lookups_are_sqlites(both: tuple[Any, Any], title: str, expected: str) -> None:
    lite, pg = both
    assert lite.session_by_title(title) == expected
    assert pg.session_by_title(title) == expected
