"""At capacity the error says exactly how many chars to free and which old entries would."""

from __future__ import annotations

import time
from pathlib import Path

from hermes_memory_builtin import MemoryStore
from hermes_memory_builtin._format import char_count


def filled(mem_dir: Path, limit: int) -> MemoryStore:
    store = MemoryStore(mem_dir, memory_char_limit=limit)
    for entry in ("oldest entry aaaa", "middle entry bbbb", "newest entry cccc"):
        assert store.add("memory", entry)["success"]
        time.sleep(0.002)
    return store


def test_add_reports_chars_to_free_and_oldest_entries(mem_dir: Path) -> None:
    store = filled(mem_dir, limit=60)  # 17*3 + 6 = 57 used
    store.replace("memory", "oldest", "oldest entry aaaa!")  # now the most recently updated
    content = "a brand new fact of 31 chars..."
    result = store.add("memory", content)
    needed = char_count([*store.entries("memory"), content]) - 60
    assert result["chars_to_free"] == needed == 32
    assert f"Free at least {needed:,} chars" in result["error"]
    # least recently updated first: "middle" then "newest"; "oldest" was just updated
    assert result["suggested_removals"] == ["middle entry bbbb", "newest entry cccc"]
    remaining = [e for e in store.entries("memory") if e not in result["suggested_removals"]]
    assert char_count([*remaining, content]) <= 60
    # removing exactly the suggested entries makes the add fit
    batch = [{"action": "remove", "old_text": e} for e in result["suggested_removals"]]
    store.start_turn()
    assert store.apply_batch("memory", [*batch, {"action": "add", "content": content}])["success"]


def test_one_suggestion_when_one_is_enough(mem_dir: Path) -> None:
    store = filled(mem_dir, limit=60)
    result = store.add("memory", "tiny")
    assert result["chars_to_free"] == char_count([*store.entries("memory"), "tiny"]) - 60 == 4
    assert result["suggested_removals"] == ["oldest entry aaaa"]


def test_content_that_can_never_fit(mem_dir: Path) -> None:
    store = filled(mem_dir, limit=60)
    result = store.add("memory", "z" * 70)
    assert result["chars_to_free"] == 57 + 3 + 70 - 60
    assert "shorten the new content" in result["error"]


def test_replace_and_batch_advice(mem_dir: Path) -> None:
    store = filled(mem_dir, limit=60)
    result = store.replace("memory", "newest", "newest entry " + "c" * 10)
    assert result["chars_to_free"] == 57 - 17 + 23 - 60 == 3
    assert result["suggested_removals"] == ["oldest entry aaaa"]
    store.start_turn()
    batch = store.apply_batch(
        "memory",
        [{"action": "add", "content": "fresh one"}, {"action": "add", "content": "fresh two 2"}],
    )
    assert batch["success"] is False
    assert batch["chars_to_free"] == 57 + 12 + 14 - 60
    assert batch["suggested_removals"] == ["oldest entry aaaa", "middle entry bbbb"]
