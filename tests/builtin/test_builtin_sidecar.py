"""The metadata sidecar: timestamps and origin per entry, robust to hand edits and deletion."""

from __future__ import annotations

import json
import time
from pathlib import Path

from builtin_helpers import write_file

from hermes_memory_builtin import MemoryStore


def meta_file(mem_dir: Path, name: str = "MEMORY.md") -> dict:
    return json.loads((mem_dir / f"{name}.meta.json").read_text(encoding="utf-8"))


def by_entry(store: MemoryStore, target: str = "memory") -> dict[str, dict[str, str]]:
    return {row["entry"]: row for row in store.entry_metadata(target)}


def test_add_and_replace_record_times_and_origin(mem_dir: Path) -> None:
    store = MemoryStore(mem_dir)
    store.add("memory", "first fact")
    store.add("memory", "second fact", origin="background_review")
    meta = by_entry(store)
    assert meta["first fact"]["origin"] == "assistant"
    assert meta["second fact"]["origin"] == "background_review"
    assert meta["first fact"]["created"] == meta["first fact"]["updated"]
    created = meta["first fact"]["created"]
    time.sleep(0.01)
    store.replace("memory", "first", "first fact, corrected")
    meta = by_entry(store)
    assert "first fact" not in meta
    assert meta["first fact, corrected"]["created"] == created
    assert meta["first fact, corrected"]["updated"] > created
    on_disk = meta_file(mem_dir)
    assert on_disk["version"] == 1 and on_disk["file"] == "MEMORY.md"
    assert [row["preview"] for row in on_disk["entries"]] == [
        "first fact, corrected",
        "second fact",
    ]
    # the Markdown itself carries no metadata
    assert (mem_dir / "MEMORY.md").read_text(encoding="utf-8") == (
        "first fact, corrected\n§\nsecond fact"
    )


def test_sidecar_survives_hand_edits(mem_dir: Path) -> None:
    store = MemoryStore(mem_dir)
    store.add("memory", "stays the same")
    store.add("memory", "will be edited by hand")
    original = by_entry(store)["stays the same"]
    write_file(mem_dir / "MEMORY.md", "edited by hand now\n§\nstays the same")
    store.add("memory", "added by tool")
    meta = by_entry(store)
    assert meta["stays the same"] == original
    assert meta["edited by hand now"]["origin"] == "external"
    assert meta["added by tool"]["origin"] == "assistant"
    assert len(meta_file(mem_dir)["entries"]) == 3


def test_sidecar_rebuilt_when_missing_or_corrupt(mem_dir: Path) -> None:
    write_file(mem_dir / "USER.md", "Name: Ola\n§\nLikes tea")
    store = MemoryStore(mem_dir)
    assert {row["origin"] for row in store.entry_metadata("user")} == {"unknown"}
    store.add("user", "Lives in Oslo")
    meta = meta_file(mem_dir, "USER.md")
    assert [row["origin"] for row in meta["entries"]] == ["unknown", "unknown", "assistant"]
    (mem_dir / "USER.md.meta.json").write_text("{not json", encoding="utf-8")
    store.remove("user", "tea")
    meta = meta_file(mem_dir, "USER.md")
    assert [row["preview"] for row in meta["entries"]] == ["Name: Ola", "Lives in Oslo"]
    (mem_dir / "USER.md.meta.json").unlink()
    store.add("user", "Speaks Norwegian")
    assert len(meta_file(mem_dir, "USER.md")["entries"]) == 3


def test_write_origin_attribute(mem_dir: Path) -> None:
    store = MemoryStore(mem_dir, write_origin="cron")
    store.apply_batch("memory", [{"action": "add", "content": "nightly job runs at 02:00"}])
    assert by_entry(store)["nightly job runs at 02:00"]["origin"] == "cron"
