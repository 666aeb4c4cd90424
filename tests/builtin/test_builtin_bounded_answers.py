"""A memory file grown by hand far past its budget never turns a refusal into a huge answer."""

from __future__ import annotations

import json
from pathlib import Path

from builtin_helpers import call, write_file

from hermes_memory_builtin import MemoryStore
from hermes_memory_builtin._feedback import MAX_ECHOED_CHARS, MAX_SUGGESTED_REMOVALS


def test_refusal_lists_are_capped(mem_dir: Path) -> None:
    entries = [f"note {i:05d} " + "x" * 80 for i in range(3000)]  # ~270 KB, limit 2,200
    write_file(mem_dir / "MEMORY.md", "\n§\n".join(entries))
    store = MemoryStore(mem_dir)
    store.load_from_disk()
    result = call(store, target="memory", action="add", content="one more fact")
    assert result["success"] is False and result["chars_to_free"] > 0
    assert len(result["suggested_removals"]) == MAX_SUGGESTED_REMOVALS
    assert result["suggested_removals_omitted"] > 0
    shown = result["current_entries"]
    assert sum(len(e) for e in shown) <= MAX_ECHOED_CHARS
    assert len(shown) + result["current_entries_omitted"] == len(entries)
    assert len(json.dumps(result)) < 4 * MAX_ECHOED_CHARS
    assert shown == entries[: len(shown)]  # the first entries, as they are


def test_small_files_are_listed_whole(store: MemoryStore) -> None:
    assert store.add("memory", "a" * 2000)["success"]
    result = call(store, target="memory", action="add", content="b" * 300)
    assert result["current_entries"] == ["a" * 2000]
    assert "current_entries_omitted" not in result and "suggested_removals_omitted" not in result
