"""JSONL export/import: exact round trip, documented shape, line-numbered errors."""

from __future__ import annotations

import io
import json
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_memory_sessions.importers._jsonl import (
    FORMAT,
    JsonlFormatError,
    export_jsonl,
    import_jsonl,
)
from hermes_memory_sessions.storage._store import SessionStore

ROOT = "20250305_091523_a1b2c3"
CHILD = "20250305_101010_d4e5f6"
CJK = "20250306_080000_0a0b0c0d"
EMPTY = "20250307_120000_ffeedd"


@pytest.fixture
def source(tmp_path: Path) -> Iterator[SessionStore]:
    s = SessionStore(tmp_path / "src" / "sessions.db")
    fill(s)
    yield s
    s.close()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[SessionStore]:
    s = SessionStore(tmp_path / "dst" / "sessions.db")
    yield s
    s.close()


def fill(s: SessionStore) -> None:
    t0 = 1_741_166_123.123456789
    s.create_session(
        ROOT, source="cli", model="claude-sonnet-4", started_at=t0, title="部署计划 🚀"
    )
    s.create_session(CJK, source="telegram", model="qwen-max", started_at=t0 + 0.1)
    s.create_session(
        CHILD, source="cli", parent_session_id=ROOT, started_at=t0 + 3600, title="部署计划 🚀 #2"
    )
    s.create_session(EMPTY, source="cron", started_at=t0 + 7200)
    calls = [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "terminal", "arguments": '{"cmd": "ls"}'},
        }
    ]
    # interleaved appends: message ids are not contiguous per session
    s.append_message(ROOT, "user", "How do we deploy? 我们怎么部署？", timestamp=t0 + 1)
    s.append_message(CJK, "user", "日本語のテキストと한국어", timestamp=t0 + 1.5)
    s.append_message(ROOT, "assistant", "", tool_calls=calls, timestamp=t0 + 2)
    s.append_message(
        ROOT, "tool", "out\n" * 3000, tool_call_id="call_1", tool_name="terminal", timestamp=t0 + 3
    )
    s.append_message(CJK, "assistant", None, timestamp=t0 + 4)
    s.append_message(
        ROOT,
        "assistant",
        'quotes " \\ backslash \u2028 line-sep \u2029 \r\n crlf \t tab \x1b[31m ansi \U0001f600',
        timestamp=t0 + 5,
    )
    s.append_message(CHILD, "user", "same timestamp", timestamp=t0 + 3601)
    s.append_message(CHILD, "user", "same timestamp again", timestamp=t0 + 3601)
    s.append_message(CHILD, "assistant", "   ", timestamp=1e-7)
    s.end_session(ROOT, "compression")


def round_trip(src: SessionStore, dst: SessionStore, path: Path) -> int:
    n = export_jsonl(src, path)
    report = import_jsonl(path, dst)
    assert report.sessions_imported == n
    return n


def all_sessions(s: SessionStore) -> dict[str, dict]:
    return {row["id"]: row for row in s.iter_sessions()}


def test_round_trip_reproduces_sessions_exactly(
    source: SessionStore, fresh: SessionStore, tmp_path: Path
) -> None:
    n = round_trip(source, fresh, tmp_path / "out.jsonl")
    assert n == 4
    assert all_sessions(fresh) == all_sessions(source)
    for sid in all_sessions(source):
        assert fresh.get_session(sid) == source.get_session(sid)


def test_round_trip_reproduces_message_content_exactly(
    source: SessionStore, fresh: SessionStore, tmp_path: Path
) -> None:
    round_trip(source, fresh, tmp_path / "out.jsonl")
    for sid in all_sessions(source):
        want = [{k: v for k, v in m.items() if k != "id"} for m in source.get_messages(sid)]
        got = [{k: v for k, v in m.items() if k != "id"} for m in fresh.get_messages(sid)]
        assert got == want, sid


def test_round_trip_keeps_message_ids(
    source: SessionStore, fresh: SessionStore, tmp_path: Path
) -> None:
    round_trip(source, fresh, tmp_path / "out.jsonl")
    for sid in all_sessions(source):
        assert fresh.get_messages(sid) == source.get_messages(sid)
    # later appends continue after the imported ids
    new_id = fresh.append_message(CHILD, "user", "after import")
    assert new_id > max(m["id"] for s in all_sessions(source) for m in source.get_messages(s))


def test_taken_message_ids_are_reassigned_in_order(
    source: SessionStore, fresh: SessionStore, tmp_path: Path
) -> None:
    fresh.create_session("other", started_at=1.0)
    for i in range(3):  # occupies ids 1..3, which the export also uses
        fresh.append_message("other", "user", f"x{i}", timestamp=1.0 + i)
    out = tmp_path / "out.jsonl"
    export_jsonl(source, out)
    report = import_jsonl(out, fresh)
    assert report.sessions_imported == 4
    assert any("message ids already used" in w for w in report.warnings)
    for sid in all_sessions(source):
        want = [{k: v for k, v in m.items() if k != "id"} for m in source.get_messages(sid)]
        got = [{k: v for k, v in m.items() if k != "id"} for m in fresh.get_messages(sid)]
        assert got == want


def test_messages_without_ids_are_accepted(fresh: SessionStore, tmp_path: Path) -> None:
    path = tmp_path / "hand.jsonl"
    lines = [
        session_line("h", 2),
        json.dumps(
            {"type": "message", "message": {"role": "user", "content": "a", "timestamp": 1.0}}
        ),
        message_line("h", content="b"),
    ]
    path.write_text("\n".join(lines) + "\n")
    report = import_jsonl(path, fresh)
    assert report.messages_imported == 2
    assert [m["content"] for m in fresh.get_messages("h")] == ["a", "b"]


def test_re_export_of_the_import_matches_except_message_ids(
    source: SessionStore, fresh: SessionStore, tmp_path: Path
) -> None:
    first = tmp_path / "a.jsonl"
    round_trip(source, fresh, first)
    second = tmp_path / "b.jsonl"
    export_jsonl(fresh, second)
    strip = [
        {k: v for k, v in json.loads(line).get("message", {}).items() if k != "id"}
        for line in first.read_text(encoding="utf-8").split("\n")
        if line
    ]
    strip2 = [
        {k: v for k, v in json.loads(line).get("message", {}).items() if k != "id"}
        for line in second.read_text(encoding="utf-8").split("\n")
        if line
    ]
    assert strip == strip2
    # U+2028/U+2029 inside content stay raw but never split a JSONL record
    assert "\u2028" in first.read_text(encoding="utf-8")
    assert len(first.read_bytes().split(b"\n")) == 1 + 4 + 9 + 1


def test_file_shape_is_the_documented_one(source: SessionStore, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    export_jsonl(source, out)
    raw = out.read_bytes()
    assert "部署计划".encode() in raw  # CJK is written as UTF-8, not \\u escapes
    lines = [json.loads(line) for line in raw.decode("utf-8").split("\n") if line]
    assert lines[0] == {"type": FORMAT, "version": 1, "sessions": 4}
    kinds = [(x["type"], x.get("messages")) for x in lines[1:]]
    # parents before children; each session line announces its message lines
    order = [x["session"]["id"] for x in lines if x["type"] == "session"]
    assert order.index(ROOT) < order.index(CHILD)
    i = 0
    while i < len(kinds):
        kind, count = kinds[i]
        assert kind == "session"
        assert all(k == "message" for k, _ in kinds[i + 1 : i + 1 + count])
        i += 1 + count
    msg = next(x["message"] for x in lines if x["type"] == "message" and x["message"]["tool_calls"])
    assert json.loads(msg["tool_calls"])[0]["id"] == "call_1"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_subset_export_and_unknown_id(source: SessionStore, tmp_path: Path) -> None:
    buf = io.BytesIO()
    assert export_jsonl(source, buf, session_ids=[CHILD, ROOT]) == 2
    ids = [
        json.loads(line)["session"]["id"]
        for line in buf.getvalue().decode().splitlines()
        if '"type": "session"' in line
    ]
    assert ids == [ROOT, CHILD]
    out = tmp_path / "never.jsonl"
    with pytest.raises(KeyError, match="nope"):
        export_jsonl(source, out, session_ids=[ROOT, "nope"])
    assert not out.exists()


def test_text_and_non_seekable_streams(
    source: SessionStore, fresh: SessionStore, tmp_path: Path
) -> None:
    text = io.StringIO()
    export_jsonl(source, text)
    path = tmp_path / "x.jsonl"
    path.write_text(text.getvalue(), encoding="utf-8")
    with subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        report = import_jsonl(proc.stdout, fresh)
    assert report.sessions_imported == 4
    assert fresh.get_session(ROOT) == source.get_session(ROOT)


def test_rerun_skips_existing_and_progress(
    source: SessionStore, fresh: SessionStore, tmp_path: Path
) -> None:
    out = tmp_path / "out.jsonl"
    export_jsonl(source, out)
    calls: list[tuple[int, int]] = []
    first = import_jsonl(out, fresh, progress=lambda d, t: calls.append((d, t)))
    assert calls[0] == (0, 9)
    assert calls[-1] == (9, 9)
    assert first.messages_imported == 9
    second = import_jsonl(out, fresh)
    assert second.sessions_imported == 0
    assert sorted(second.sessions_skipped) == sorted([ROOT, CHILD, CJK, EMPTY])
    assert second.messages_skipped == 9
    assert fresh.stats()["messages"] == 9


def test_title_conflict_renames(source: SessionStore, fresh: SessionStore, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    export_jsonl(source, out, session_ids=[ROOT])
    fresh.create_session("other", title="部署计划 🚀")
    report = import_jsonl(out, fresh)
    got = fresh.get_session(ROOT)
    assert got is not None
    assert got["title"] == "部署计划 🚀 (imported)"
    assert len(fresh.get_messages(ROOT)) == 4
    assert report.warnings


HEADER = json.dumps({"type": FORMAT, "version": 1})


def session_line(sid: str = "s1", messages: int = 1, **extra: object) -> str:
    return json.dumps(
        {
            "type": "session",
            "messages": messages,
            "session": {"id": sid, "started_at": 1.0, **extra},
        }
    )


def _deep(depth: int) -> str:
    """A JSON text of ``depth`` nested lists (built as text: json.dumps would recurse)."""
    return "[" * depth + "]" * depth


def message_line(sid: str = "s1", **extra: object) -> str:
    body = {"session_id": sid, "role": "user", "content": "hi", "timestamp": 2.0, **extra}
    return json.dumps({"type": "message", "message": body})


@pytest.mark.parametrize(
    ("lines", "line_no", "phrase"),
    [
        ([HEADER, session_line(), "{not json"], 3, "not valid JSON"),
        ([HEADER, session_line(), "[1, 2]"], 3, "expected a JSON object"),
        ([message_line()], 1, "before any session"),
        ([HEADER, session_line(), message_line(), message_line()], 4, "more message lines"),
        (
            [HEADER, session_line(messages=2), message_line(), session_line("s2", 0)],
            4,
            "announced 1 more",
        ),
        ([HEADER, session_line(), message_line("s9")], 3, "belongs to session 's9'"),
        ([HEADER, session_line(), message_line(role="")], 3, "'role'"),
        ([HEADER, session_line(), message_line(timestamp="noon")], 3, "'timestamp'"),
        ([HEADER, session_line(), message_line(content=["parts"])], 3, "'content'"),
        ([HEADER, session_line(0), message_line()], 2, "'id'"),
        ([HEADER, session_line(messages=-1)], 2, "non-negative"),
        ([HEADER, session_line(title=5), message_line()], 2, "'title'"),
        (
            [HEADER, session_line(), message_line(), session_line(), message_line()],
            4,
            "appears twice",
        ),
        ([json.dumps({"type": FORMAT, "version": 99})], 1, "unsupported format version"),
        ([HEADER, json.dumps({"type": "note"})], 2, "unknown line type"),
        ([session_line(messages=0), HEADER], 2, "header must be the first line"),
        ([HEADER, session_line(), "[" * 100_000 + "]" * 100_000], 3, "nested too deeply"),
        (
            [
                HEADER,
                session_line(),
                '{"type": "message", "message": {"content": ' + _deep(10**5) + "}}",
            ],
            3,
            "nested too deeply",
        ),
        ([HEADER, session_line("a\x00b"), message_line("a\x00b")], 2, "U+0000"),
    ],
)
def test_bad_lines_name_the_line_and_import_nothing(
    fresh: SessionStore, tmp_path: Path, lines: list[str], line_no: int, phrase: str
) -> None:
    path = tmp_path / "bad.jsonl"
    good = [session_line("ok", 1), message_line("ok")]
    if lines[0] == HEADER:  # two valid lines after the header shift the line numbers by 2
        lines = [HEADER, *good, *lines[1:]]
        expected_line = line_no + 2
    else:
        expected_line = line_no
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(JsonlFormatError) as info:
        import_jsonl(path, fresh)
    assert info.value.line == expected_line
    assert f"line {expected_line}:" in str(info.value)
    assert phrase in str(info.value)
    assert fresh.stats()["sessions"] == 0


def test_truncated_file_is_detected(fresh: SessionStore, tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join([HEADER, session_line(messages=3), message_line()]) + "\n")
    with pytest.raises(JsonlFormatError, match="2 message line\\(s\\) short"):
        import_jsonl(path, fresh)
    assert fresh.stats()["sessions"] == 0


def test_invalid_utf8_and_blank_lines(fresh: SessionStore, tmp_path: Path) -> None:
    path = tmp_path / "enc.jsonl"
    path.write_bytes(
        ("\ufeff" + HEADER + "\n\n" + session_line() + "\n").encode() + b'{"type": "\xff"}\n'
    )
    with pytest.raises(JsonlFormatError) as info:
        import_jsonl(path, fresh)
    assert info.value.line == 4
    assert "UTF-8" in str(info.value)
    # BOM, blank lines and CRLF endings are accepted
    path.write_bytes(
        (
            "\ufeff" + HEADER + "\r\n\r\n" + session_line() + "\r\n" + message_line() + "\r\n"
        ).encode()
    )
    report = import_jsonl(path, fresh)
    assert report.messages_imported == 1
    assert fresh.get_messages("s1")[0]["content"] == "hi"


def test_nul_and_control_characters_survive(fresh: SessionStore, tmp_path: Path) -> None:
    src = SessionStore(tmp_path / "nul" / "s.db")
    try:
        src.create_session("n", started_at=1.0)
        text = "before\x00after \x01\x7f \ud7ff \ue000 \uffff"
        src.append_message("n", "user", text, timestamp=2.0)
        if src.get_messages("n")[0]["content"] != text:
            pytest.skip("the store itself does not keep NUL characters")
        out = tmp_path / "nul.jsonl"
        export_jsonl(src, out)
        import_jsonl(out, fresh)
        assert fresh.get_messages("n")[0]["content"] == text
    finally:
        src.close()


def test_missing_file(fresh: SessionStore, tmp_path: Path) -> None:
    with pytest.raises(JsonlFormatError, match="cannot open"):
        import_jsonl(tmp_path / "nope.jsonl", fresh)
