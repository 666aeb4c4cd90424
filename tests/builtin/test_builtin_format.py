"""The on-disk format: parsing and serialising exactly like Hermes, and rendering the block."""

from __future__ import annotations

from pathlib import Path

from builtin_helpers import write_file

from hermes_memory_builtin import ENTRY_DELIMITER, MEMORY_BLOCK_HEADERS, MemoryStore
from hermes_memory_builtin._format import (
    char_count,
    format_usage,
    parse_entries,
    render_block,
    serialise,
)
from hermes_memory_builtin._reading import read_raw


def test_delimiter_and_headers_are_the_hermes_ones() -> None:
    assert ENTRY_DELIMITER == "\n§\n"
    assert MEMORY_BLOCK_HEADERS == {
        "memory": "MEMORY (your personal notes)",
        "user": "USER PROFILE (who the user is)",
    }


def test_parse_splits_on_full_delimiter_strips_and_drops_empties() -> None:
    raw = "  first entry \n§\n\n§\nsecond\nhas two lines\n§\n   \n§\nthird § with a bare sign"
    assert parse_entries(raw) == [
        "first entry",
        "second\nhas two lines",
        "third § with a bare sign",
    ]


def test_parse_dedupes_exact_repeats_first_wins() -> None:
    assert parse_entries("a\n§\nb\n§\na\n§\nB") == ["a", "b", "B"]


def test_parse_blank_and_missing() -> None:
    assert parse_entries(None) == []
    assert parse_entries("") == []
    assert parse_entries(" \n\t\n") == []


def test_parse_tolerates_crlf_and_spaces_around_the_sign() -> None:
    assert parse_entries("a\r\n§\r\nb") == ["a", "b"]
    assert parse_entries("a\n § \nb\n§  \nc") == ["a", "b", "c"]


def test_serialise_round_trip_and_no_trailing_newline() -> None:
    entries = ["one", "two\nlines", "三"]
    text = serialise(entries)
    assert text == "one\n§\ntwo\nlines\n§\n三"
    assert parse_entries(text) == entries
    assert serialise([]) == ""


def test_char_count_is_len_of_joined_text() -> None:
    entries = ["abc", "日本語のメモ", "x" * 50]
    assert char_count(entries) == len(ENTRY_DELIMITER.join(entries)) == 3 + 6 + 50 + 6
    assert char_count([]) == 0


def test_usage_floors_caps_and_uses_thousands_separators() -> None:
    assert format_usage(2100, 2200) == "95% — 2,100/2,200 chars"
    assert format_usage(0, 1375) == "0% — 0/1,375 chars"
    assert format_usage(3000, 2200) == "100% — 3,000/2,200 chars"


def test_read_raw_drops_bom_and_reports_undecodable(tmp_path: Path) -> None:
    bom = tmp_path / "bom.md"
    bom.write_bytes(b"\xef\xbb\xbfhello\n\xc2\xa7\nworld")
    assert parse_entries(read_raw(bom).text) == ["hello", "world"]
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"ok\n\xc2\xa7\n\xff\xfe broken")
    raw = read_raw(bad)
    assert raw.exists and not raw.readable and raw.text is None
    missing = read_raw(tmp_path / "none.md")
    assert not missing.exists and missing.readable


def test_render_block_layout() -> None:
    block = render_block("memory", ["a", "b"], 2200)
    assert block == (
        "═" * 46 + "\nMEMORY (your personal notes) [0% — 5/2,200 chars]\n" + "═" * 46 + "\na\n§\nb"
    )
    assert render_block("user", [], 1375) is None


def test_existing_hermes_file_loads_and_our_writes_are_hermes_format(mem_dir: Path) -> None:
    write_file(mem_dir / "USER.md", "Name: Ada\n§\nPrefers 简体中文 answers")
    store = MemoryStore(mem_dir)
    store.load_from_disk()
    assert store.entries("user") == ["Name: Ada", "Prefers 简体中文 answers"]
    store.add("user", "Works in Lisbon")
    assert (mem_dir / "USER.md").read_bytes() == (
        "Name: Ada\n§\nPrefers 简体中文 answers\n§\nWorks in Lisbon".encode()
    )
    store.remove("user", "Ada")
    store.remove("user", "简体中文")
    store.remove("user", "Lisbon")
    assert (mem_dir / "USER.md").read_bytes() == b""
