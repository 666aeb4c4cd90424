"""Every directory the project creates is 0700, parents included, whatever the umask (issue 21).

Real processes with ``umask 022`` (the usual default, under which ``mkdir(parents=True)``
makes 0755 parents) and a fresh ``HOME``: the console script writes memory and the archive,
the Hermes follower takes its lock in a directory whose parents are missing, and the static
embedder saves its cache under ``~/.cache``. Then no directory under ``HOME`` may be group-
or world-accessible.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hermes_statedb import build_v23, populate

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")

SCRIPT = shutil.which("hermes-memory", path=str(Path(sys.executable).parent))

FOLLOWER = """
import os, sys
from pathlib import Path
from hermes_memory_sessions import SessionStore
from hermes_memory_sessions.importers import follow_hermes
hermes, archive, lock = (Path(p) for p in sys.argv[1:4])
store = SessionStore(archive)
report = follow_hermes(hermes, store, lock_dir=lock)
store.close()
print(report is not None)
"""

EMBEDDER = """
from hermes_memory_vectors import StaticEmbedder
from hermes_memory_vectors._e5_vocab import default_model_path

class Source:  # a deterministic stand-in for the model: only the cache's folders matter
    name, dim = "stand-in", 384
    def embed_documents(self, texts):
        return [[float((i + len(t)) % 7 + 1)] * 384 for i, t in enumerate(texts)]
    def embed_query(self, text):
        return self.embed_documents([text])[0]

if default_model_path() is None:
    print("skip")
else:
    embedder = StaticEmbedder(source=Source())  # the default cache: ~/.cache/hermes-memory
    embedder.embed_documents(["a cache row for a private folder"])
    embedder.flush()
    print(embedder.cache_path)
"""


def _umask_022() -> None:
    os.umask(0o022)


def _run(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(
        args,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=_umask_022,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_directory_created_under_a_fresh_home_is_0700(tmp_path: Path) -> None:
    assert SCRIPT is not None
    user_home = tmp_path / "user"
    user_home.mkdir(mode=0o700)
    hermes = user_home / "profiles" / "work" / ".hermes"  # three missing levels
    env = {
        **os.environ,
        "HOME": str(user_home),
        "HERMES_HOME": str(hermes),
        "HERMES_MEMORY_NO_NETWORK": "1",
    }
    for name in ("XDG_CACHE_HOME", "HERMES_MEMORY_CACHE_DIR"):
        env.pop(name, None)
    _run([SCRIPT, "memory", "add", "Prefers tea in the morning"], env)
    _run([SCRIPT, "memory", "add", "--target", "user", "Lives in Lyon"], env)
    # a Hermes database to follow, and a lock folder whose parents do not exist yet
    conn = build_v23(hermes / "state.db", wal=False)
    populate(conn, v23=True)
    conn.close()
    lock = user_home / "run" / "locks" / "hermes-memory"
    archive = hermes / "hermes-memory" / "sessions.db"
    out = _run([sys.executable, "-c", FOLLOWER, str(hermes), str(archive), str(lock)], env)
    assert out.strip() == "True"
    _run([SCRIPT, "sessions", "list"], env)
    cache = _run([sys.executable, "-c", EMBEDDER], env).strip()
    created = [p for p in user_home.rglob("*") if p.is_dir() and not p.is_symlink()]
    expected = {hermes, hermes / "memories", lock, lock.parent, hermes / "hermes-memory"}
    if cache != "skip":
        expected |= {user_home / ".cache", Path(cache).parent}
    assert expected <= set(created), sorted(map(str, expected - set(created)))
    loose = {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in created}
    loose = {path: mode for path, mode in loose.items() if mode != "0o700"}
    assert loose == {}
