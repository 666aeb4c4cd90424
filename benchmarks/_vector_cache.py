"""A disk cache of embeddings for the benchmarks (``benchmarks/_data``, gitignored).

Embedding the LoCoMo dev set with the default embedder takes minutes on one core; the cache
makes reruns fast. Keys are the SHA-256 of (embedder name, kind, text); values are float32
vectors, so both the float and the int8 paths can be measured from one cache.

The archive embeds queries on its own thread (``VectorIndex.query_vector`` runs
``embed_query`` in a worker so a hung embedder cannot block a search), so the cache is used
from more than one thread: its connection is opened with ``check_same_thread=False`` and every
use is serialised by a lock. (A default connection raised ``ProgrammingError`` on the query
thread, every query embedding failed and the benchmark reported dense 0.0, hybrid = lexical.)
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

DATA = Path(__file__).resolve().parent / "_data"


class VectorCache:
    """Embeddings of (kind, text) for one embedder name, persisted in SQLite."""

    def __init__(self, embedder_name: str, directory: Path = DATA) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in embedder_name)
        self.name = embedder_name
        # Used from the archive's query-embedding thread too: see the module doc.
        self.db = sqlite3.connect(directory / f"vectors-{safe}.sqlite", check_same_thread=False)
        self._lock = threading.RLock()
        self.db.execute("CREATE TABLE IF NOT EXISTS vec(key TEXT PRIMARY KEY, v BLOB NOT NULL)")

    def _key(self, kind: str, text: str) -> str:
        return hashlib.sha256(f"{self.name}\0{kind}\0{text}".encode()).hexdigest()

    def get_many(
        self,
        kind: str,
        texts: Sequence[str],
        embed: Callable[[list[str]], list[list[float]]],
        *,
        batch: int = 64,
        label: str = "",
    ) -> npt.NDArray[np.float32]:
        """Vectors of ``texts`` (rows, in order), embedding and storing the missing ones."""
        with self._lock:
            return self._get_many(kind, texts, embed, batch=batch, label=label)

    def _get_many(
        self,
        kind: str,
        texts: Sequence[str],
        embed: Callable[[list[str]], list[list[float]]],
        *,
        batch: int,
        label: str,
    ) -> npt.NDArray[np.float32]:
        keys = [self._key(kind, t) for t in texts]
        found: dict[str, bytes] = {}
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ",".join("?" * len(part))
            found.update(
                self.db.execute(f"SELECT key, v FROM vec WHERE key IN ({marks})", part).fetchall()
            )
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            started = time.perf_counter()
            for n, start in enumerate(range(0, len(missing), batch)):
                idx = missing[start : start + batch]
                vectors = embed([texts[i] for i in idx])
                rows = [
                    (keys[i], np.asarray(v, dtype=np.float32).tobytes())
                    for i, v in zip(idx, vectors, strict=True)
                ]
                self.db.executemany("INSERT OR REPLACE INTO vec(key, v) VALUES (?, ?)", rows)
                self.db.commit()
                found.update(rows)
                if n % 5 == 0:
                    done = start + len(idx)
                    rate = done / max(time.perf_counter() - started, 1e-9)
                    print(
                        f"  embedding {label or kind}: {done}/{len(missing)} ({rate:.1f}/s)",
                        file=sys.stderr,
                        flush=True,
                    )
        return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])

    def close(self) -> None:
        with self._lock:
            self.db.close()
