"""Manager lifetime (internal): managers left open are shut down at interpreter exit."""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_memory_core._manager_base import ManagerBase as MemoryManager
    from hermes_memory_core._worker import SerialWorker

logger = logging.getLogger("hermes_memory_core.manager")

_live_managers: weakref.WeakSet[MemoryManager] = weakref.WeakSet()
_atexit_lock = threading.Lock()
_atexit_registered = False


def _shutdown_live_managers() -> None:
    """At interpreter exit: shut down every manager the host left open (each bounded)."""
    for manager in list(_live_managers):
        try:
            manager.shutdown_all()
        except BaseException:  # never turn an exit into a traceback
            logger.debug("memory manager shutdown at exit failed", exc_info=True)


def register_for_exit(manager: MemoryManager, workers: list[SerialWorker]) -> None:
    """Shut ``manager`` down at exit (held weakly); let its threads end if it is collected."""
    global _atexit_registered
    with _atexit_lock:
        if not _atexit_registered:
            atexit.register(_shutdown_live_managers)
            _atexit_registered = True
        _live_managers.add(manager)
    finalizer = weakref.finalize(manager, _close_workers, workers)
    finalizer.atexit = False


def forget(manager: MemoryManager) -> None:
    """``manager`` was shut down: nothing to do for it at exit."""
    _live_managers.discard(manager)


def _close_workers(workers: list[SerialWorker]) -> None:
    """Finaliser of a manager collected without `shutdown_all`: let its threads end."""
    for worker in workers:
        worker.close(0)
