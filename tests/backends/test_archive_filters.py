"""``since`` / ``until`` / ``roles`` on list_sessions and find_hits, on SQLite and PostgreSQL."""

from __future__ import annotations

DAY = 86400.0
T0 = 1_741_000_000.0  # 2025-03-03


def _fill(archive) -> None:
    for n, source in enumerate(("cli", "telegram", "cli")):
        sid = f"s{n}"
        archive.create_session(sid, source=source, started_at=T0 + n * DAY)
        archive.append_message(sid, "user", f"kubernetes question {n}", timestamp=T0 + n * DAY)
        if n == 1:
            archive.append_message(
                sid, "tool", "kubernetes output", tool_name="terminal", timestamp=T0 + DAY + 5
            )


def test_list_sessions_by_time_and_role(archive) -> None:
    _fill(archive)
    ids = lambda **kw: sorted(r["id"] for r in archive.list_sessions(**kw))  # noqa: E731
    assert ids(since=T0 + DAY) == ["s1", "s2"]
    assert ids(until=T0 + DAY) == ["s0", "s1"]
    assert ids(since=T0 + DAY, until=T0 + DAY) == ["s1"]
    assert ids(roles=["tool"]) == ["s1"]
    assert ids(roles=["user"], source="cli", since=T0 + 1) == ["s2"]


def test_find_hits_by_time(archive) -> None:
    _fill(archive)

    def sessions(**kw) -> list[str]:
        hits = archive.find_hits("kubernetes", limit=50, **kw)
        return sorted({r["session_id"] for r in hits.rows}) if hits else []

    assert sessions() == ["s0", "s1", "s2"]
    assert sessions(since=T0 + DAY) == ["s1", "s2"]
    assert sessions(until=T0 + DAY + 1) == ["s0", "s1"]
    assert sessions(since=T0 + DAY + 1, until=T0 + DAY + 10, role_filter=["tool"]) == ["s1"]
    assert sessions(since=T0 + 10 * DAY) == []
    rows = archive.search_messages("kubernetes", source_filter=["telegram"], since=T0)
    assert {r["session_id"] for r in rows} == {"s1"}
