"""The adapter kit: what a provider for a remote memory service gets from core.

* `RemoteProvider` — the base class: constructor, curated facts, the write switch, and the
  one session-end and shutdown policy;
* `Guard` — guarded calls with one failure taxonomy (`Failure`, `FailureKind`,
  `CallFailed`, `Unavailable`), a circuit breaker and the provider's health record;
* `PendingWrites` — ordered, bounded writes on the provider's own worker, spooled to disk
  at shutdown and replayed at the next start (`Spool`): at-least-once, the same for every
  adapter;
* `RecallCache`, `bullet_block`, `fact_key`, `truncate_text` — recall caching and
  formatting;
* `Settings`, `setting` — settings declared once as a typed class (``config.yaml``,
  environment, defaults, validation messages), validated by core and handed to the provider
  as ``self.settings``; `Field` describes one setting (`Settings.fields()`);
* `check_tool_call`, `required_text`, `visible_text`, `optional_text`, `int_arg`,
  `choice_arg`, `blank` — tool arguments;
* `ToolTable`, `Tool`, `tool_schema`, `call_or_queue`, `Queued` — tools declared as a table
  and run through one template (argument checks, read-only contexts, failures as JSON
  tool errors, writes queued when the service is unreachable);
* `BackgroundRecall`, `overlay` — recall fetched off the turn with a bounded wait, and the
  profile-plus-memories block; `TurnBuffer` — turns kept until they are sent together;
  `close_when_idle` — release a client at shutdown without cutting off a call in flight;
* `JsonClient`, `ServiceError`, `classify_http`, `path_segment` — a JSON REST client on
  ``httpx`` (imported only when a client is built: declare ``httpx`` in your adapter) with
  bounded timeouts, fixed headers, no redirects, and its failures in the taxonomy;
* `SerialWorker` (one ordered background thread with a bounded queue) and
  `atomic_write_text` (write a file so a reader never sees half of it), `make_private_dirs`
  (directories created 0700);
* `CircuitBreaker` (the breaker under `Guard`) and the value coercions ``as_bool``,
  ``as_int``, ``as_float``, ``as_positive_int`` … that typed settings and ``config.yaml`` use.

`docs/how-to/write-a-provider.md` builds a complete remote provider from these pieces.
"""

from hermes_memory_core._breaker import CircuitBreaker
from hermes_memory_core._coerce import (
    as_bool,
    as_float,
    as_int,
    as_non_negative_float,
    as_non_negative_int,
    as_positive_float,
    as_positive_int,
)
from hermes_memory_core._fsutil import atomic_write_text, make_private_dirs
from hermes_memory_core._worker import SerialWorker
from hermes_memory_core.kit._failures import (
    CallFailed,
    Failure,
    FailureKind,
    Unavailable,
    classify_common,
    kind_for_status,
    one_line,
)
from hermes_memory_core.kit._guard import Guard
from hermes_memory_core.kit._http import (
    JsonClient,
    ServiceError,
    check_visible,
    classify_http,
    path_segment,
    user_agent,
)
from hermes_memory_core.kit._provider import RemoteProvider
from hermes_memory_core.kit._recall import (
    BackgroundRecall,
    Recall,
    RecallCache,
    bullet_block,
    fact_key,
    overlay,
    truncate_text,
)
from hermes_memory_core.kit._settings import (
    Field,
    RemoteRecallSettings,
    RemoteSettings,
    RemoteWriteSettings,
    Settings,
    SettingsError,
    resolve_settings,
    setting,
    settings_error_message,
)
from hermes_memory_core.kit._spool import Spool
from hermes_memory_core.kit._toolargs import (
    blank,
    check_tool_call,
    choice_arg,
    int_arg,
    optional_text,
    required_text,
    visible_text,
)
from hermes_memory_core.kit._tools import Queued, Tool, ToolTable, call_or_queue, tool_schema
from hermes_memory_core.kit._writes import PendingWrites, TurnBuffer, Write, close_when_idle

__all__ = [
    "BackgroundRecall",
    "CallFailed",
    "CircuitBreaker",
    "Failure",
    "FailureKind",
    "Field",
    "Guard",
    "JsonClient",
    "PendingWrites",
    "Queued",
    "Recall",
    "RecallCache",
    "RemoteProvider",
    "RemoteRecallSettings",
    "RemoteSettings",
    "RemoteWriteSettings",
    "SerialWorker",
    "ServiceError",
    "Settings",
    "SettingsError",
    "Spool",
    "Tool",
    "ToolTable",
    "TurnBuffer",
    "Unavailable",
    "Write",
    "as_bool",
    "as_float",
    "as_int",
    "as_non_negative_float",
    "as_non_negative_int",
    "as_positive_float",
    "as_positive_int",
    "atomic_write_text",
    "blank",
    "bullet_block",
    "call_or_queue",
    "check_tool_call",
    "check_visible",
    "choice_arg",
    "classify_common",
    "classify_http",
    "close_when_idle",
    "fact_key",
    "int_arg",
    "kind_for_status",
    "make_private_dirs",
    "one_line",
    "optional_text",
    "overlay",
    "path_segment",
    "required_text",
    "resolve_settings",
    "setting",
    "settings_error_message",
    "tool_schema",
    "truncate_text",
    "user_agent",
    "visible_text",
]
