"""The spool of turns the server did not take is kept in private directories (issue 21)."""

from __future__ import annotations

import stat
from pathlib import Path

from hermes_memory_postgres._spool import Spool


def test_the_spool_creates_every_missing_directory_0700(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    spool = Spool(home / "hermes-memory" / "pg-spool", "owner")
    spool.append("session-1", "message", {"text": "kept for later"})
    for directory in (home / "hermes-memory", home / "hermes-memory" / "pg-spool"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    assert spool.pending() == 1
