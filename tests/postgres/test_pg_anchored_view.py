"""The anchored view and scroll window, read in one statement on PostgreSQL
(`hermes_memory_postgres.archive._anchored`), are SQLite's: anchors at either end and in
the middle, tool and empty messages in the window and beside the bookends, windows and
bookends of every size, a role filter, no role filter, and anchors that are not there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres_helpers import filled_pair


def _messages() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(24):
        if i % 5 == 3:
            out.append({"role": "tool", "content": f"tool output {i}", "tool_call_id": f"c{i}"})
        elif i % 7 == 4:
            out.append({"role": "assistant", "content": ""})  # empty: never a bookend
        else:
            out.append({"role": "user" if i % 2 else "assistant", "content": f"message {i}"})
    return out


def _fill(store: Any) -> None:
    store.create_session("long", source="cli", started_at=1_700_000_000)
    store.append_messages("long", _messages())
    store.create_session("short", source="cli", started_at=1_700_000_100)
    store.append_messages("short", [{"role": "user", "content": "only one"}])


@pytest.fixture
def both(tmp_path: Path, pg_dsn: str, owner: str) -> Iterator[tuple[Any, Any]]:
    with filled_pair(tmp_path / "a.db", pg_dsn, owner, _fill) as pair:
        yield pair


def _shape(view: dict[str, Any], ids: list[int]) -> dict[str, Any]:
    """The view with message ids as positions in their session (ids differ by backend)."""
    pos = {mid: i for i, mid in enumerate(ids)}
    out: dict[str, Any] = {}
    for key, value in view.items():
        if isinstance(value, list):
            out[key] = [
                (pos.get(m["id"]), m["role"], m["content"], m.get("tool_call_id")) for m in value
            ]
        else:
            out[key] = value
    return out


def _ids(store: Any, sid: str) -> list[int]:
    return [int(m["id"]) for m in store.get_messages(sid)]


@pytest.mark.parametrize("window", [0, 1, 2, 5, 30])
@pytest.mark.parametrize("bookend", [0, 1, 3])
@pytest.mark.parametrize("roles", [("user", "assistant"), ("user",), ()])
def test_anchored_views_are_sqlites(
    both: tuple[Any, Any], window: int, bookend: int, roles: tuple[str, ...]
) -> None:
    lite, pg = both
    lite_ids, pg_ids = _ids(lite, "long"), _ids(pg, "long")
    for position in (0, 1, 3, 11, 12, 22, 23):
        got = pg.get_anchored_view("long", pg_ids[position], window, bookend, roles)
        want = lite.get_anchored_view("long", lite_ids[position], window, bookend, roles)
        assert _shape(got, pg_ids) == _shape(want, lite_ids), position
    for store, ids in ((pg, pg_ids), (lite, lite_ids)):
        foreign = _ids(store, "short")[0]  # a message of another session
        assert store.get_anchored_view("long", foreign, window, bookend, roles)["window"] == []
        assert store.get_anchored_view("long", max(ids) + 1000, window, bookend)["window"] == []


@pytest.mark.parametrize("window", [0, 3, 30])
def test_scroll_windows_are_sqlites(both: tuple[Any, Any], window: int) -> None:
    lite, pg = both
    lite_ids, pg_ids = _ids(lite, "long"), _ids(pg, "long")
    for position in (0, 4, 23):
        got = pg.get_messages_around("long", pg_ids[position], window)
        want = lite.get_messages_around("long", lite_ids[position], window)
        assert _shape(got, pg_ids) == _shape(want, lite_ids), position
    assert pg.get_messages_around("short", pg_ids[0], window) == {
        "window": [],
        "messages_before": 0,
        "messages_after": 0,
    }
