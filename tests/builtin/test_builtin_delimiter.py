"""The entry separator inside content is refused everywhere; a '§' inside a sentence is not."""

from __future__ import annotations

from pathlib import Path

import pytest
from builtin_helpers import call

from hermes_memory_builtin import MemoryStore
from hermes_memory_builtin._format import hermes_entries

SMUGGLED = [
    "first fact\n§\nsecond fact",  # the exact Hermes delimiter
    "first fact\n § \nsecond fact",  # spaces around the sign (our reader splits here)
    "first fact\n\t§\t\nsecond fact",  # tabs
    "first fact\n\n§\n\nsecond fact",  # blank lines around it
    "first fact\r\n§\r\nsecond fact",  # CRLF: normalised on read, so a delimiter on reload
    "first fact\r§\rsecond fact",  # lone CR: likewise
    "§\nsecond fact",  # a separator line at the very start
    "first fact\n§",  # … or at the very end
]

ALLOWED = [
    "Contract clause § 3 applies to the user",
    "Price: 5 § per unit\nsecond line",
    "first line\n§§\nthird line",  # two signs on a line are content for both readers
    "a line\n§ section sign with text\nend",
    "用户喜欢 § 符号\n第二行",  # CJK around the sign
]


def on_disk(mem_dir: Path) -> bytes:
    path = mem_dir / "MEMORY.md"
    return path.read_bytes() if path.exists() else b""


@pytest.mark.parametrize("content", SMUGGLED)
def test_add_refuses_the_separator(store: MemoryStore, mem_dir: Path, content: str) -> None:
    assert store.add("memory", "existing entry")["success"] is True
    before = on_disk(mem_dir)
    result = store.add("memory", content)
    assert result["success"] is False
    assert "separator between memory entries" in result["error"]
    assert on_disk(mem_dir) == before
    assert store.entries("memory") == ["existing entry"]


@pytest.mark.parametrize("content", SMUGGLED)
def test_replace_batch_and_tool_refuse_the_separator(
    store: MemoryStore, mem_dir: Path, content: str
) -> None:
    assert store.add("memory", "existing entry")["success"] is True
    before = on_disk(mem_dir)
    replaced = store.replace("memory", "existing", content)
    assert replaced["success"] is False and "separator" in replaced["error"]
    batch = store.apply_batch(
        "memory",
        [{"action": "add", "content": "harmless"}, {"action": "add", "new_text": content}],
    )
    assert batch["success"] is False
    assert batch["error"].startswith("Operation 2: Content contains a line holding only '§'")
    assert batch["error"].endswith("No operations were applied (batch is all-or-nothing).")
    tool = call(store, target="memory", action="replace", old_text="existing", new_text=content)
    assert tool["success"] is False and "separator" in tool["error"]
    assert on_disk(mem_dir) == before


@pytest.mark.parametrize("content", ALLOWED)
def test_a_sign_inside_text_round_trips_for_both_readers(mem_dir: Path, content: str) -> None:
    store = MemoryStore(mem_dir)
    assert store.add("memory", "before")["success"] is True
    result = store.add("memory", content)
    assert result["success"] is True, result
    assert result["entry_count"] == 2
    assert store.add("memory", "after")["success"] is True
    reloaded = MemoryStore(mem_dir)
    reloaded.load_from_disk()
    assert reloaded.entries("memory") == ["before", content, "after"]
    assert hermes_entries(on_disk(mem_dir)) == ["before", content, "after"]
