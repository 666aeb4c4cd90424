"""Copy a session archive between backends (SQLite <-> PostgreSQL), exactly and resumably.

`copy_archive` reads every session of the source (oldest first) and imports each one that the
target lacks with `SessionArchive.import_session(keep_ids=True)`: one transaction per session,
every stored column kept (ids, timestamps, titles, lineage, counters), so an interrupted run
leaves whole sessions only and a re-run copies what is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hermes_memory_sessions.protocol import SessionArchive

__all__ = ["MigrationReport", "copy_archive"]


@dataclass
class MigrationReport:
    """What `copy_archive` did."""

    sessions_copied: int = 0
    messages_copied: int = 0
    sessions_skipped: int = 0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        """The report as JSON-ready data."""
        return {
            "sessions_copied": self.sessions_copied,
            "messages_copied": self.messages_copied,
            "sessions_skipped": self.sessions_skipped,
            "errors": list(self.errors),
        }


def copy_archive(
    source: SessionArchive,
    target: SessionArchive,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> MigrationReport:
    """Copy every session of ``source`` missing from ``target``; returns the report.

    A session that cannot be imported (an id clash with a different session, a title
    taken in the target) is reported in ``errors`` and the copy goes on.
    """
    report = MigrationReport()
    total = source.count_open_sessions() + _ended(source)
    for done, session in enumerate(source.iter_sessions(), start=1):
        sid = str(session["id"])
        if target.get_session(sid) is not None:
            report.sessions_skipped += 1
        else:
            messages = source.get_messages(sid)
            try:
                target.import_session(session, messages, keep_ids=True)
            except ValueError as exc:
                report.errors.append(f"{sid}: {exc}")
            else:
                report.sessions_copied += 1
                report.messages_copied += len(messages)
        if progress is not None:
            progress(done, total)
    return report


def _ended(archive: SessionArchive) -> int:
    return int(archive.stats()["sessions"]) - archive.count_open_sessions()
