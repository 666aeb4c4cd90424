"""Drift detection: harmless differences never block writes; real drift does, with one backup."""

from __future__ import annotations

from pathlib import Path

import pytest
from builtin_helpers import write_file

from hermes_memory_builtin import MemoryStore


def backups(mem_dir: Path) -> list[Path]:
    return sorted(mem_dir.glob("MEMORY.md.bak.*"))


@pytest.mark.parametrize(
    ("raw", "hermes_reads_differently"),
    [
        ("alpha entry\r\n§\r\nbeta entry", True),  # CRLF endings
        ("alpha entry\n\n§\n\nbeta entry\n", False),  # blank lines around the delimiter
        ("alpha entry \n § \n  beta entry  ", True),  # spaces around § and the entries
        ("alpha entry\t\n§\t\nbeta entry\n§\nalpha entry", True),  # tabs, exact duplicate
        ("\n\nalpha entry\n§\n\n§\nbeta entry\n\n\n", False),  # empty piece, outer blanks
    ],
)
def test_harmless_differences_do_not_block(
    mem_dir: Path, raw: str, hermes_reads_differently: bool
) -> None:
    write_file(mem_dir / "MEMORY.md", raw)
    store = MemoryStore(mem_dir)
    store.load_from_disk()
    assert store.entries("memory") == ["alpha entry", "beta entry"]
    result = store.replace("memory", "beta", "beta entry, revised")
    assert result["success"] is True, result
    assert store.remove("memory", "alpha")["success"] is True
    assert store.apply_batch("memory", [{"action": "add", "content": "gamma"}])["success"]
    assert (mem_dir / "MEMORY.md").read_bytes() == "beta entry, revised\n§\ngamma".encode()
    # Never refused. A file Hermes would read differently is backed up once when it is
    # first rewritten (and the result says so); a merely untidy one is not.
    assert result.get("normalized_file", False) is hermes_reads_differently
    made = backups(mem_dir)
    assert len(made) == (1 if hermes_reads_differently else 0)
    if made:
        assert made[0].read_bytes() == raw.encode()


def test_real_drift_refuses_with_a_reused_backup(mem_dir: Path) -> None:
    pasted = "notes pasted by hand without any delimiter " * 3  # 129 chars > 100-char limit
    raw = f"kept entry\n§\n{pasted}"
    write_file(mem_dir / "MEMORY.md", raw)
    store = MemoryStore(mem_dir, memory_char_limit=100)
    store.load_from_disk()
    first = store.replace("memory", "kept", "kept entry v2")
    assert first["success"] is False
    assert first["error"].startswith(
        "Refusing to write MEMORY.md: file on disk has content that wouldn't round-trip through "
        "the memory tool"
    )
    assert first["drift_backup"] in first["error"]
    assert first["remediation"].startswith("Open the .bak file")
    made = backups(mem_dir)
    assert len(made) == 1 and str(made[0]) == first["drift_backup"]
    assert made[0].read_bytes() == raw.encode()
    # refused again while the file is unchanged: the same backup, no new file
    second = store.remove("memory", "kept")
    third = store.apply_batch("memory", [{"action": "remove", "old_text": "kept"}])
    assert second["drift_backup"] == third["drift_backup"] == first["drift_backup"]
    assert backups(mem_dir) == made
    assert (mem_dir / "MEMORY.md").read_bytes() == raw.encode()
    assert store.consolidation_failures == 0  # drift refusals do not count
    # the file changes (still drifted): a new backup for the new content
    write_file(mem_dir / "MEMORY.md", raw + " and more")
    fourth = store.remove("memory", "kept")
    assert fourth["drift_backup"] != first["drift_backup"]
    assert len(backups(mem_dir)) == 2
    # fixed by hand: writes work again
    write_file(mem_dir / "MEMORY.md", "kept entry\n§\nshort summary of the notes")
    assert store.remove("memory", "kept")["success"] is True


def test_add_skips_the_drift_check(mem_dir: Path) -> None:
    write_file(mem_dir / "MEMORY.md", "x" * 120)
    store = MemoryStore(mem_dir, memory_char_limit=200)
    assert store.add("memory", "a short one")["success"] is True
    assert backups(mem_dir) == []


def test_crlf_single_entry_over_limit_is_not_drift(mem_dir: Path) -> None:
    # The reference read a CRLF file as one entry and refused it as over-limit drift.
    entries = [f"entry number {i} with some text" for i in range(5)]
    write_file(mem_dir / "MEMORY.md", "\r\n§\r\n".join(entries))
    store = MemoryStore(mem_dir, memory_char_limit=200)
    result = store.remove("memory", "number 3")
    assert result["success"] is True
    # not drift; but Hermes would read this file as one entry, so the original is kept
    assert result["normalized_file"] is True
    assert [str(p) for p in backups(mem_dir)] == [result["normalized_backup"]]
    assert store.entries("memory") == [e for e in entries if "number 3" not in e]
