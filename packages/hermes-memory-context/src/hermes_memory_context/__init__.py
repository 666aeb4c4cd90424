"""Project context files and SOUL.md for an agent's system prompt, as Hermes Agent loads them.

``build_context_section(cwd, home=None)`` returns the context part of the system prompt: the
persona from ``<home>/SOUL.md`` and the project's context files (``.hermes.md``/``HERMES.md``,
``AGENTS.md``, ``CLAUDE.md`` or Cursor rules; one kind, the highest-priority one found between
the git root and ``cwd``). Every file is read safely (no escaping symbolic links, a size limit
before reading, non-UTF-8 bytes replaced and noted), threat-scanned (a hit shows a
``[BLOCKED: …]`` placeholder instead) and cut to 20,000 characters.

``ContextTracker(cwd).discover_for_path(path)`` returns the context files of directories a tool
touches later in the session, once each, for the host to append to the tool's result.

``ContextCompressor(context_window=…, summarize=…)`` keeps a conversation inside the model's
context window: at ``compression.threshold`` it summarises the middle of the conversation
with the host's model and, with a `MemoryManager`, continues the session archive's lineage.
"""

from hermes_memory_context._compression import (
    SUMMARY_PREFIX,
    CompressionResult,
    ContextCompressor,
    is_summary_message,
)
from hermes_memory_context._discovery import (
    CONTEXT_KINDS,
    ContextError,
    ContextKind,
    build_context_section,
    collect_project_files,
    find_git_root,
    load_soul,
    project_directories,
)
from hermes_memory_context._files import (
    CONTEXT_FILE_MAX_CHARS,
    MAX_FILE_BYTES,
    TRUNCATION_MARKER,
    LoadedFile,
    blocked_placeholder,
    load_context_file,
    truncate_middle,
)
from hermes_memory_context._tokens import default_token_counter, estimate_tokens
from hermes_memory_context._tracker import (
    DISCOVERY_FILE_NAMES,
    DISCOVERY_MAX_CHARS,
    DISCOVERY_MAX_PARENTS,
    ContextTracker,
)

__all__ = [
    "CONTEXT_FILE_MAX_CHARS",
    "CONTEXT_KINDS",
    "DISCOVERY_FILE_NAMES",
    "DISCOVERY_MAX_CHARS",
    "DISCOVERY_MAX_PARENTS",
    "MAX_FILE_BYTES",
    "SUMMARY_PREFIX",
    "TRUNCATION_MARKER",
    "CompressionResult",
    "ContextCompressor",
    "ContextError",
    "ContextKind",
    "ContextTracker",
    "LoadedFile",
    "blocked_placeholder",
    "build_context_section",
    "collect_project_files",
    "default_token_counter",
    "estimate_tokens",
    "find_git_root",
    "is_summary_message",
    "load_context_file",
    "load_soul",
    "project_directories",
    "truncate_middle",
]
