"""MEMORY.md / USER.md and the `memory` tool, through both real implementations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_agent import HermesAgent

from hermes_memory_builtin import MemoryStore, memory_tool

HERMES_STORE = """
from tools.memory_tool import MemoryStore, memory_tool
store = MemoryStore()
store.load_from_disk()
"""

# Calls made one after another on a fresh home; each answer is compared with Hermes'.
CALLS: list[dict[str, Any]] = [
    {"action": "add", "target": "memory", "content": "Backups: pg_dump 03:00 to /mnt/nas/pg."},
    {"action": "add", "target": "user", "content": "Name: Ada. Prefers short answers."},
    {"action": "add", "target": "memory", "content": "数据库备份保留 14 天。"},
    {"action": "add", "target": "memory", "content": "Backups: pg_dump 03:00 to /mnt/nas/pg."},
    {
        "action": "replace",
        "target": "memory",
        "old_text": "保留 14 天",
        "content": "数据库备份保留 7 天（NAS 满了）。",
    },
    {"action": "replace", "target": "memory", "old_text": "no such entry", "content": "x"},
    {"action": "remove", "target": "memory", "old_text": "pg_dump"},
    {"action": "remove", "target": "user", "old_text": "nothing like this"},
    {"action": "add", "target": "memory", "content": "x" * 2300},
    {"action": "add", "target": "nowhere", "content": "y"},
    {"action": "frobnicate", "target": "memory", "content": "y"},
    {"action": "remove", "target": "memory"},
    {
        "target": "memory",
        "operations": [
            {"action": "add", "content": "Deploys go through GitHub Actions."},
            {"action": "add", "content": "Staging DB is staging-db-01."},
        ],
    },
    {
        "target": "memory",
        "operations": [
            {"action": "add", "content": "z" * 2000},
            {"action": "add", "content": "w" * 400},
        ],
    },
    {"target": "memory", "operations": [{"action": "remove", "old_text": "not there"}]},
]

# Deliberate differences, by field, in answers that otherwise match (docs/explanation/
# differences-from-hermes.md explains each one).
DELIBERATE_EXTRA_FIELDS = {
    "error_code",  # a machine-readable reason next to Hermes' prose
    "chars_to_free",  # capacity errors say how much to free
    "suggested_removals",
    "near_duplicate_of",  # near-duplicate adds are caught
    "replaced_entry",  # a replace or remove says which entry it changed (DESIGN §5)
    "removed_entry",
}
# Messages we word differently on purpose; compared by presence only.
DELIBERATE_TEXT_FIELDS = {"message", "error"}


def _ours(home: Path, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    store = MemoryStore(home / "memories")
    store.load_from_disk()
    return [json.loads(memory_tool(dict(call), store)) for call in calls]


def _hermes(hermes: HermesAgent, home: Path, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    program = (
        HERMES_STORE
        + """
result = []
for call in calls:
    result.append(json.loads(memory_tool(store=store, **call)))
"""
    )
    return hermes.run(program, home, calls=calls)  # type: ignore[no-any-return]


def _comparable(answer: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in answer.items():
        if key in DELIBERATE_EXTRA_FIELDS:
            continue
        out[key] = bool(value) if key in DELIBERATE_TEXT_FIELDS else value
    return out


def test_tool_answers_match_call_by_call(hermes: HermesAgent, two_homes: tuple[Path, Path]) -> None:
    hermes_home, our_home = two_homes
    theirs = _hermes(hermes, hermes_home, CALLS)
    ours = _ours(our_home, CALLS)
    differences = [
        f"call {call!r}\n  hermes: {a}\n  ours:   {b}"
        for call, a, b in zip(CALLS, theirs, ours, strict=True)
        if _comparable(b) != _comparable(a)
    ]
    assert not differences, "\n".join(differences)


def test_files_written_by_hermes_read_the_same_by_us(
    hermes: HermesAgent, two_homes: tuple[Path, Path]
) -> None:
    hermes_home, _ = two_homes
    rendered = hermes.run(
        HERMES_STORE
        + """
for call in calls:
    memory_tool(store=store, **call)
store.load_from_disk()
result = {t: [store.format_for_system_prompt(t), store._entries_for(t)] for t in ("memory", "user")}
""",
        hermes_home,
        calls=CALLS[:8],
    )
    ours = MemoryStore(hermes_home / "memories")
    ours.load_from_disk()
    for target in ("memory", "user"):
        assert ours.entries(target) == rendered[target][1]
        assert ours.format_for_system_prompt(target) == rendered[target][0]


def test_files_written_by_us_read_the_same_by_hermes(
    hermes: HermesAgent, two_homes: tuple[Path, Path]
) -> None:
    hermes_home, our_home = two_homes
    _ours(our_home, CALLS[:8])
    _hermes(hermes, hermes_home, CALLS[:8])
    for name in ("MEMORY.md", "USER.md"):
        assert (our_home / "memories" / name).read_bytes() == (
            hermes_home / "memories" / name
        ).read_bytes()
    seen = hermes.run(
        HERMES_STORE
        + """
result = {t: [store.format_for_system_prompt(t), store._entries_for(t)] for t in ("memory", "user")}
""",
        our_home,
    )
    ours = MemoryStore(our_home / "memories")
    ours.load_from_disk()
    for target in ("memory", "user"):
        assert seen[target][1] == ours.entries(target)
        assert seen[target][0] == ours.format_for_system_prompt(target)
