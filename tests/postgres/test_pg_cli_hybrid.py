"""``hermes-memory sessions embed`` and ``sessions search`` on the PostgreSQL backend, with
the default embedder configured, through the installed console script: the backfill stores
vectors in PostgreSQL, the search finds a paraphrase by meaning, ``--reset`` drops them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_memory_postgres import PostgresSessionArchive

pytest.importorskip("hermes_memory_vectors")
SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))


def _home(path: Path, owner: str) -> Path:
    path.mkdir(parents=True, mode=0o700)
    (path / "config.yaml").write_text(
        "sessions:\n  backend: postgres\n  embedder: default\n  embedder_threads: 1\n"
        f"postgres:\n  owner: {json.dumps(owner)}\n",
        encoding="utf-8",
    )
    return path


def _cli(home: Path, dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_MEMORY_PG_DSN": dsn}
    return subprocess.run(
        [SCRIPT, "--home", str(home), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_embed_search_and_reset_on_postgres(pg_dsn: str, owner: str, tmp_path: Path) -> None:
    home = _home(tmp_path / "home", owner)
    archive = PostgresSessionArchive(pg_dsn, owner=owner)
    try:
        for sid, (user, assistant) in (
            ("music", ("I practised the violin for two hours yesterday", "Your bow arm must ache")),
            ("pet", ("My cat Tom knocked a glass off the table again", "Cats love gravity tests")),
            ("food", ("I baked sourdough bread with rye flour this morning", "How was the crust?")),
        ):
            archive.create_session(sid, source="cli")
            archive.append_message(sid, "user", user)
            archive.append_message(sid, "assistant", assistant)
        embed = _cli(home, pg_dsn, "--json", "sessions", "embed")
        assert embed.returncode == 0, embed.stdout + embed.stderr
        done = json.loads(embed.stdout)
        assert done["embedded"] == 6 and done["coverage"] == {"embedded": 6, "total": 6}
        assert archive.vector_coverage()["embedded"] == 6  # stored in PostgreSQL
        found = _cli(home, pg_dsn, "sessions", "search", "what did the kitten break?")
        assert found.returncode == 0, found.stdout + found.stderr
        assert "knocked a glass" in found.stdout and "by meaning" in found.stdout
        lexical = _cli(
            home, pg_dsn, "sessions", "search", "--lexical", "what did the kitten break?"
        )
        assert "knocked a glass" not in lexical.stdout
        reset = _cli(home, pg_dsn, "--json", "sessions", "embed", "--reset", "--limit", "0")
        assert reset.returncode == 0, reset.stdout + reset.stderr
        assert json.loads(reset.stdout)["dropped"] == 6
    finally:
        for table in ("hm_vectors", "hm_messages", "hm_sessions", "hm_term_df"):
            archive.db.run(
                lambda c, t=table: c.execute(f"DELETE FROM {t} WHERE owner = %s", (owner,))
            )
        archive.close()
