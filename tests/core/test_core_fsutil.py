"""atomic_write_text on real files: replacement, permissions, and the fsync switch."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hermes_memory_core._fsutil import atomic_write_text


@pytest.mark.parametrize("fsync", [True, False])
def test_replaces_the_file_with_mode_and_leaves_no_temporary(tmp_path: Path, fsync: bool) -> None:
    target = tmp_path / "sub" / "data.txt"
    atomic_write_text(target, "first 一", fsync=fsync)
    atomic_write_text(target, "second 二", mode=0o640, tmp_prefix=".x_", fsync=fsync)
    assert target.read_text(encoding="utf-8") == "second 二"
    if os.name != "nt":
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in target.parent.iterdir()] == ["data.txt"]


def test_fsync_false_skips_both_fsyncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append(fd) or real_fsync(fd))
    atomic_write_text(tmp_path / "a.txt", "x", fsync=False)
    assert calls == []
    atomic_write_text(tmp_path / "b.txt", "x")
    assert len(calls) >= 1  # file (and, where the platform allows, the directory)


def test_every_directory_created_is_private(tmp_path: Path) -> None:
    from hermes_memory_core._fsutil import make_private_dirs

    make_private_dirs(tmp_path / "a" / "b" / "c")
    for part in ("a", "a/b", "a/b/c"):
        assert stat.S_IMODE((tmp_path / part).stat().st_mode) == 0o700, part
    atomic = tmp_path / "x" / "y" / "f.txt"
    atomic_write_text(atomic, "hi")
    assert stat.S_IMODE((tmp_path / "x").stat().st_mode) == 0o700
