"""hermes-memory-guard: text safety for memory that reaches a prompt or leaves the process.

Three jobs, one public surface (``__all__``; the modules are internal):

- **threat scanning**: `scan_for_threats` and `first_threat_message` match prompt-injection
  and exfiltration patterns on normalised text (NFKC, a TR39 confusable skeleton, invisible
  and tag characters removed), in three nested scopes (`SCOPES`);
- **recall fencing**: `build_memory_context_block` wraps recalled text in a fenced block with
  an advisory note, `cap_recall` and `filter_recall_threats` bound and clean it first,
  `sanitize_context` and `StreamingContextScrubber` keep fenced blocks off the user's screen;
- **secret redaction**: `scrub_secrets` and `find_secrets` (the gitleaks rule set plus
  passwords stated in prose).

Importing this package is cheap: each name is imported from its module on first use, so a
caller that only scrubs secrets never compiles the threat patterns.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_memory_guard._fencing import (
        DEFAULT_RECALL_MAX_CHARS,
        DEFAULT_RECALL_MAX_LINES,
        MAX_TAG_CHARS,
        MEMORY_CONTEXT_NOTE,
        FilteredRecall,
        MemoryTag,
        StreamingContextScrubber,
        build_memory_context_block,
        cap_recall,
        filter_recall_threats,
        find_memory_tags,
        neutralize_memory_tags,
        sanitize_context,
        sanitize_recall,
    )
    from hermes_memory_guard._redact import REDACTED, find_secrets, scrub_secrets
    from hermes_memory_guard._threats import (
        HOLD,
        INVISIBLE_CHARS,
        MAX_SCAN_CHARS,
        REFUSE,
        SCOPES,
        THREAT_PATTERNS,
        ThreatPattern,
        first_threat_message,
        scan_for_threats,
        scan_untrusted,
        threat_tier,
        threat_verdict,
    )

#: Public name -> the internal module that defines it (imported on first attribute access).
_EXPORTS: dict[str, str] = {
    "DEFAULT_RECALL_MAX_CHARS": "_fencing",
    "DEFAULT_RECALL_MAX_LINES": "_fencing",
    "INVISIBLE_CHARS": "_threats",
    "MAX_SCAN_CHARS": "_threats",
    "MAX_TAG_CHARS": "_fencing",
    "MEMORY_CONTEXT_NOTE": "_fencing",
    "REDACTED": "_redact",
    "SCOPES": "_threats",
    "THREAT_PATTERNS": "_threats",
    "FilteredRecall": "_fencing",
    "HOLD": "_threats",
    "REFUSE": "_threats",
    "MemoryTag": "_fencing",
    "StreamingContextScrubber": "_fencing",
    "ThreatPattern": "_threats",
    "build_memory_context_block": "_fencing",
    "cap_recall": "_fencing",
    "filter_recall_threats": "_fencing",
    "find_memory_tags": "_fencing",
    "find_secrets": "_redact",
    "first_threat_message": "_threats",
    "neutralize_memory_tags": "_fencing",
    "sanitize_context": "_fencing",
    "sanitize_recall": "_fencing",
    "scan_untrusted": "_threats",
    "threat_tier": "_threats",
    "threat_verdict": "_threats",
    "scan_for_threats": "_threats",
    "scrub_secrets": "_redact",
}

__all__ = [
    "DEFAULT_RECALL_MAX_CHARS",
    "DEFAULT_RECALL_MAX_LINES",
    "HOLD",
    "INVISIBLE_CHARS",
    "MAX_SCAN_CHARS",
    "MAX_TAG_CHARS",
    "MEMORY_CONTEXT_NOTE",
    "REDACTED",
    "REFUSE",
    "SCOPES",
    "THREAT_PATTERNS",
    "FilteredRecall",
    "MemoryTag",
    "StreamingContextScrubber",
    "ThreatPattern",
    "build_memory_context_block",
    "cap_recall",
    "filter_recall_threats",
    "find_memory_tags",
    "find_secrets",
    "first_threat_message",
    "neutralize_memory_tags",
    "sanitize_context",
    "sanitize_recall",
    "scan_for_threats",
    "scan_untrusted",
    "scrub_secrets",
    "threat_tier",
    "threat_verdict",
]


def __getattr__(name: str) -> Any:
    # PEP 562; a resolved name is stored on the package, so later lookups are plain reads
    # (and a test may monkeypatch it here for every caller that imports it at call time).
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    setattr(sys.modules[__name__], name, value)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
