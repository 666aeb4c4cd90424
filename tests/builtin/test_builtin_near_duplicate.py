"""Near-duplicate adds are refused with the entry they resemble; real differences pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory_builtin import MemoryStore
from hermes_memory_builtin._similarity import find_near_duplicate, similarity

EXISTING = "The user prefers dark mode in every editor"


@pytest.mark.parametrize(
    "variant",
    [
        "the user prefers dark mode in every editor",  # case
        "The user prefers dark-mode in every editor!",  # punctuation
        "The  user prefers dark mode\nin every editor",  # whitespace
        "The user prefers drak mode in every editor",  # a typo
        "The user prefer dark mode in every editor",  # one letter dropped
    ],
)
def test_near_duplicate_add_is_refused(mem_dir: Path, variant: str) -> None:
    store = MemoryStore(mem_dir)
    store.add("user", EXISTING)
    result = store.add("user", variant)
    assert result["success"] is False
    assert result["similar_entry"] == EXISTING
    assert EXISTING in result["error"]
    assert "replace" in result["error"]
    assert result["current_entries"] == [EXISTING]
    assert store.entries("user") == [EXISTING]


@pytest.mark.parametrize(
    ("existing", "variant"),
    [
        ("用户喜欢用深色模式写代码", "用户喜欢用深色模式写代码。"),  # full-width punctuation
        ("用户喜欢用深色模式写代码", "用户喜欢用深色模式写代码了"),  # one extra character
        ("ユーザーは毎朝コーヒーを飲みます", "ユーザーは毎朝コーヒーを飲みます！"),
        ("사용자는 다크 모드를 선호합니다", "사용자는 다크모드를 선호합니다"),
    ],
)
def test_cjk_near_duplicates(mem_dir: Path, existing: str, variant: str) -> None:
    store = MemoryStore(mem_dir)
    store.add("user", existing)
    result = store.add("user", variant)
    assert result["success"] is False
    assert result["similar_entry"] == existing


@pytest.mark.parametrize(
    ("existing", "new"),
    [
        (EXISTING, "The user prefers light mode in the terminal"),
        ("用户喜欢用深色模式写代码", "用户喜欢喝绿茶"),
        ("用户喜欢深色主题", "用户喜欢浅色主题"),  # one character, but 1/8 is a real change
        ("Service runs on port 8080 in staging", "Service runs on port 8081 in staging"),
        ("Project uses Python 3.11", "Project uses Python 3.12"),
        ("C++ build uses cmake", "C build uses cmake"),
    ],
)
def test_different_facts_are_added(mem_dir: Path, existing: str, new: str) -> None:
    store = MemoryStore(mem_dir)
    store.add("memory", existing)
    assert store.add("memory", new)["success"] is True
    assert store.entries("memory") == [existing, new]


def test_batch_add_of_a_near_duplicate_aborts(mem_dir: Path) -> None:
    store = MemoryStore(mem_dir)
    store.add("memory", EXISTING)
    result = store.apply_batch(
        "memory",
        [{"action": "add", "content": "new fact"}, {"action": "add", "content": EXISTING.upper()}],
    )
    assert result["success"] is False
    assert result["error"].startswith("Operation 2 (add): nearly the same as the existing entry")
    assert result["error"].endswith("No operations were applied (batch is all-or-nothing).")
    # replacing the old entry and adding the new wording in one batch is the way to update it
    ok = store.apply_batch(
        "memory",
        [
            {"action": "remove", "old_text": "dark mode"},
            {"action": "add", "content": EXISTING.upper()},
        ],
    )
    assert ok["success"] is True


def test_near_duplicate_refusals_count_toward_the_cap(mem_dir: Path) -> None:
    store = MemoryStore(mem_dir)
    store.add("memory", EXISTING)
    for _ in range(3):
        assert "similar_entry" in store.add("memory", EXISTING.lower())
    assert store.add("memory", EXISTING.lower())["done"] is True


def test_similarity_helpers() -> None:
    assert similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert similarity("", "") == 1.0
    assert find_near_duplicate("abc", ["abc"]) is None  # exact is not "near"
    long_a = "x" * 1000 + "y" * 1000
    long_b = "y" * 1000 + "x" * 1000
    assert find_near_duplicate(long_a, [long_b]) is None
