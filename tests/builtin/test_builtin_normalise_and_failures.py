"""Hand-edited files are rewritten with a notice and a backup; failed batches show the entries."""

from __future__ import annotations

from pathlib import Path

from builtin_helpers import call, write_file

from hermes_memory_builtin import MemoryStore
from hermes_memory_builtin._format import hermes_entries


def backups(mem_dir: Path, name: str = "MEMORY.md") -> list[Path]:
    return sorted(mem_dir.glob(f"{name}.bak.*"))


def test_spaces_around_the_sign_are_read_leniently_then_rewritten_with_a_notice(
    mem_dir: Path,
) -> None:
    raw = "Uses nox for CI \n §  \nPrefers uv over pip"
    write_file(mem_dir / "MEMORY.md", raw)
    assert hermes_entries(raw.encode()) == [raw.strip()]  # Hermes: one entry
    store = MemoryStore(mem_dir)
    store.load_from_disk()
    assert store.entries("memory") == ["Uses nox for CI", "Prefers uv over pip"]
    result = call(store, target="memory", action="add", content="Deploys on Fridays")
    assert result["success"] is True
    assert result["normalized_file"] is True
    assert "'§' separator line with spaces or tabs" in result["normalization_note"]
    assert result["normalized_backup"] in result["normalization_note"]
    assert Path(result["normalized_backup"]).read_bytes() == raw.encode()
    data = (mem_dir / "MEMORY.md").read_bytes()
    assert hermes_entries(data) == ["Uses nox for CI", "Prefers uv over pip", "Deploys on Fridays"]
    # clean now: the next write says nothing and makes no backup
    again = store.add("memory", "Second note")
    assert "normalized_file" not in again
    assert len(backups(mem_dir)) == 1


def test_a_bom_is_reported_and_kept_in_the_backup(mem_dir: Path) -> None:
    raw = "\ufeffName: Kenji\n§\nLikes 抹茶"
    write_file(mem_dir / "USER.md", raw)
    store = MemoryStore(mem_dir)
    result = store.add("user", "Lives in Osaka")
    assert result["success"] is True and result["normalized_file"] is True
    assert "byte-order mark" in result["normalization_note"]
    assert Path(result["normalized_backup"]).read_bytes() == raw.encode()
    assert (
        mem_dir / "USER.md"
    ).read_bytes() == "Name: Kenji\n§\nLikes 抹茶\n§\nLives in Osaka".encode()


def test_a_canonical_or_merely_untidy_file_is_rewritten_silently(mem_dir: Path) -> None:
    write_file(mem_dir / "MEMORY.md", "alpha\n§\nbeta\n")  # trailing newline: Hermes agrees
    store = MemoryStore(mem_dir)
    result = store.add("memory", "gamma")
    assert result["success"] is True and "normalized_file" not in result
    assert backups(mem_dir) == []


def seeded(mem_dir: Path, limit: int = 2200) -> MemoryStore:
    store = MemoryStore(mem_dir, memory_char_limit=limit)
    for text in ("alpha fact", "beta fact"):
        assert store.add("memory", text)["success"] is True
    return store


def test_an_over_limit_batch_returns_the_current_entries(mem_dir: Path) -> None:
    store = seeded(mem_dir, limit=40)
    result = call(
        store,
        target="memory",
        operations=[{"action": "add", "content": "a much longer fact that cannot fit at all"}],
    )
    assert result["success"] is False
    assert result["error"].startswith("After applying all 1 operations, memory would be at")
    assert result["current_entries"] == ["alpha fact", "beta fact"]
    assert result["usage"] == "22/40"


def test_a_failed_batch_and_an_emptying_batch_return_the_current_entries(mem_dir: Path) -> None:
    store = seeded(mem_dir)
    failed = call(
        store,
        target="memory",
        operations=[{"action": "replace", "old_text": "nothing like it", "content": "x"}],
    )
    assert failed["success"] is False
    assert failed["current_entries"] == ["alpha fact", "beta fact"]
    emptying = call(
        store,
        target="memory",
        operations=[
            {"action": "remove", "old_text": "alpha"},
            {"action": "remove", "old_text": "beta"},
        ],
    )
    assert emptying["error"].startswith("Refusing to empty MEMORY.md")
    assert emptying["current_entries"] == ["alpha fact", "beta fact"]
    # the fourth failure of a turn is the terminal answer, without entries (as in Hermes)
    store.apply_batch("memory", [{"action": "remove", "old_text": "zzz"}])
    terminal = store.apply_batch("memory", [{"action": "remove", "old_text": "zzz"}])
    assert terminal["error"].startswith("Memory consolidation failed 4 times this turn")
    assert "current_entries" not in terminal
