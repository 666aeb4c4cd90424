"""Our Chinese recall set (``benchmarks/zh_recall/conversations.txt``, our own data) on every
backend: questions that share words with their evidence, or differ from it only by script
(Traditional/Simplified, full-width/ASCII), find it among the first ten messages."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from hermes_memory_sessions.search._query import any_terms, parse_query

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "_zh_data.py"


def _zh_data() -> ModuleType:
    spec = importlib.util.spec_from_file_location("zh_data_under_test", DATA)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _policy(archive, query: str, k: int) -> list[int]:
    """session_search's lexical policy: AND first, the natural-language fallback fills."""
    ids: list[int] = []
    for any_term in (False, True):
        if any_term and (len(ids) >= k or len(any_terms(parse_query(query))) < 2):
            break
        hits = archive.find_hits(query, limit=k, any_terms=any_term)
        ids += [int(r["id"]) for r in (hits.rows if hits else []) if int(r["id"]) not in ids]
    return ids[:k]


@pytest.mark.parametrize("category", ["direct", "script"])
def test_word_and_script_questions_find_their_evidence(archive, category):
    zh = _zh_data()
    missed = []
    for conv in zh.load():
        dia_of: dict[int, str] = {}
        for s in conv.sessions:
            sid = f"{conv.conv_id}-s{s.number}-{category}"
            archive.create_session(sid, source="cli", started_at=s.started_at)
            ids = archive.append_messages(
                sid,
                [
                    {"role": t.role, "content": t.text, "timestamp": s.started_at + i}
                    for i, t in enumerate(s.turns)
                ],
            )
            dia_of.update(zip(ids, (t.dia_id for t in s.turns), strict=True))
        for q in conv.questions:
            if q.category != category:
                continue
            found = {dia_of.get(i) for i in _policy(archive, q.text, 10)}
            if not q.gold & found:
                missed.append((conv.conv_id, q.text))
        for s in conv.sessions:
            archive.delete_session(f"{conv.conv_id}-s{s.number}-{category}")
    assert missed == []
