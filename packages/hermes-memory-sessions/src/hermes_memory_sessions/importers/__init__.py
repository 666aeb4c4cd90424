"""Getting sessions in and out: Hermes Agent's ``state.db``, JSONL, migrate-out, following.

* `import_hermes_db` — import (and, run again, catch up with) a Hermes ``state.db``.
* `export_jsonl` / `import_jsonl` — one JSON line per session, every column kept.
* `migrate_out` — take an earlier release's tables out of Hermes' ``state.db``.
* `follow_hermes` / `pending_hermes_import` — keep one history with Hermes Agent.
"""

from hermes_memory_sessions.importers._follow import (
    CLI_FOLLOW_BUDGET_S,
    PROVIDER_FOLLOW_BUDGET_S,
    PendingImport,
    follow_hermes,
    hermes_state_path,
    pending_hermes_import,
)
from hermes_memory_sessions.importers._hermes import (
    HermesImportError,
    ImportReport,
    ProgressCallback,
    import_hermes_db,
)
from hermes_memory_sessions.importers._jsonl import (
    FORMAT,
    VERSION,
    JsonlFormatError,
    export_jsonl,
    import_jsonl,
)
from hermes_memory_sessions.importers._migrate_out import (
    MigrateOutError,
    MigrateOutReport,
    migrate_out,
)

__all__ = [
    "CLI_FOLLOW_BUDGET_S",
    "FORMAT",
    "PROVIDER_FOLLOW_BUDGET_S",
    "VERSION",
    "HermesImportError",
    "ImportReport",
    "JsonlFormatError",
    "MigrateOutError",
    "MigrateOutReport",
    "PendingImport",
    "ProgressCallback",
    "export_jsonl",
    "follow_hermes",
    "hermes_state_path",
    "import_hermes_db",
    "import_jsonl",
    "migrate_out",
    "pending_hermes_import",
]
