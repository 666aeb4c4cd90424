"""The static embedder's piece table: one int8 row per vocabulary piece, cached on disk.

Rows are filled lazily (only pieces some text needed) and kept in a dense, zero-initialised
int8 matrix, so untouched pieces cost no memory pages. On disk a table is one ``.npz``
(``ids``, ``rows``, ``scales`` of the pieces built so far) written atomically: a temporary
file in the same directory, fsync, `os.replace`. Before writing, rows that another process
saved meanwhile are merged in, so two processes extending one table lose nothing but time.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import zipfile
from pathlib import Path

import numpy as np
import numpy.typing as npt

from hermes_memory_core.kit import make_private_dirs

__all__ = ["PieceTable"]

logger = logging.getLogger(__name__)


class PieceTable:
    """Rows of ``size`` pieces × ``dim`` dimensions, backed by the file ``path``."""

    def __init__(self, path: Path, size: int, dim: int) -> None:
        self.path = path
        self.rows: npt.NDArray[np.int8] = np.zeros((size, dim), dtype=np.int8)
        self.scales: npt.NDArray[np.float32] = np.zeros(size, dtype=np.float32)
        self.have: npt.NDArray[np.bool_] = np.zeros(size, dtype=bool)
        self.lock = threading.Lock()
        self.dirty = False
        self._seen: tuple[int, int] | None = None  # (mtime_ns, size) of the file we know
        self._merge_file()

    def __len__(self) -> int:
        return int(self.have.sum())

    def missing(self, ids: npt.NDArray[np.int64]) -> list[int]:
        """The distinct ids among ``ids`` that have no row yet, ascending."""
        if ids.size == 0:
            return []
        unique = np.unique(ids)
        return [int(i) for i in unique[~self.have[unique]]]

    def put(self, ids: list[int], vectors: npt.NDArray[np.float32]) -> None:
        """Store float rows (quantised per row: one int8 per dimension and a scale)."""
        peaks = np.abs(vectors).max(axis=1)
        scales = np.where(peaks > 0, peaks / 127.0, 1.0).astype(np.float32)
        index = np.asarray(ids, dtype=np.int64)
        self.rows[index] = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8)
        self.scales[index] = scales
        self.have[index] = True
        self.dirty = True

    def save(self) -> None:
        """Write the table atomically (merging rows another process saved); errors are
        logged, never raised: the table is a cache and can be rebuilt."""
        try:
            self._merge_file()
            ids = np.flatnonzero(self.have).astype(np.int32)
            make_private_dirs(self.path.parent)  # 0700, parents included
            fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", dir=self.path.parent)
            try:
                with os.fdopen(fd, "wb") as handle:
                    np.savez(handle, ids=ids, rows=self.rows[ids], scales=self.scales[ids])
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            stat = self.path.stat()
            self._seen = (stat.st_mtime_ns, stat.st_size)
            self.dirty = False
        except OSError as exc:
            logger.warning("could not save the static embedder table %s: %s", self.path, exc)

    def _merge_file(self) -> None:
        """Take the rows of the file on disk that we lack (when it changed since last seen)."""
        try:
            stat = self.path.stat()
        except OSError:
            return
        if self._seen == (stat.st_mtime_ns, stat.st_size):
            return
        try:
            with np.load(self.path, allow_pickle=False) as data:
                ids = data["ids"].astype(np.int64)
                rows, scales = data["rows"], data["scales"]
                valid = (
                    ids.ndim == 1
                    and rows.shape == (ids.size, self.rows.shape[1])
                    and scales.shape == ids.shape
                    and (ids.size == 0 or (ids.min() >= 0 and ids.max() < self.have.size))
                )
                if not valid:
                    raise ValueError("shapes do not match this vocabulary")
                new = ~self.have[ids]
                self.rows[ids[new]] = rows[new]
                self.scales[ids[new]] = scales[new]
                self.have[ids[new]] = True
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            # A damaged cache is rebuilt, not trusted: the next save replaces it.
            logger.warning("ignoring the damaged static embedder table %s: %s", self.path, exc)
            self.dirty = True
        self._seen = (stat.st_mtime_ns, stat.st_size)
