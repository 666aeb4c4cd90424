"""The request frame every page handler gets: a `Dashboard` (a fresh CLI `Context` per
call, the shared archive handle, background jobs), and what a handler returns: a `Page` to
render or a `Redirect` with flash messages."""

from __future__ import annotations

import argparse
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hermes_memory_cli._context import Context
from hermes_memory_cli._dashboard._jobs import Jobs
from hermes_memory_cli._dashboard._web import Flash

__all__ = ["Dashboard", "Page", "Redirect"]


@dataclass
class Page:
    """A page to render: ``template`` with ``values``."""

    template: str
    values: dict[str, Any] = field(default_factory=dict)
    status: int = 200


@dataclass
class Redirect:
    """Where to go after a change, with the messages to show there."""

    to: str
    flashes: list[Flash] = field(default_factory=list)


class Dashboard:
    """What every handler needs: a fresh `Context` per call, the archive, background jobs."""

    def __init__(self, ctx: Context) -> None:
        self.home = ctx.home
        self._profile_free_args = argparse.Namespace(
            home=str(ctx.home), profile=None, json=False, debug=False, yes=True
        )
        self.jobs = Jobs()
        self._archive_lock = threading.RLock()
        self._archive: Any = None
        self._archive_stack: contextlib.ExitStack | None = None

    def context(self) -> Context:
        """A new `Context` (config read afresh: edits on disk show on the next page)."""
        return Context(argparse.Namespace(**vars(self._profile_free_args)))

    @contextlib.contextmanager
    def archive(self) -> Iterator[Any]:
        """The session archive (kept open: the configured embedder stays loaded), or None.

        Held under a lock while used, so `reopen_archive` never closes it under a reader
        (one person's pages are short; long jobs open stores of their own).
        """
        with self._archive_lock:
            if self._archive is None:
                ctx = self.context()
                stack = contextlib.ExitStack()
                store = stack.enter_context(ctx.session_store(create=False))
                if store is None:
                    stack.close()
                else:
                    from hermes_memory_sessions.vectors import attach_configured_embedder

                    attach_configured_embedder(store, ctx.config)
                    self._archive, self._archive_stack = store, stack
            yield self._archive

    def reopen_archive(self) -> None:
        """Drop the kept archive (after an import created it, or settings changed)."""
        with self._archive_lock:
            if self._archive_stack is not None:
                self._archive_stack.close()
            self._archive, self._archive_stack = None, None

    def close(self) -> None:
        self.jobs.wait(5.0)
        self.reopen_archive()
