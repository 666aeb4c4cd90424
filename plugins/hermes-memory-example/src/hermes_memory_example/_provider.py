"""`NotesProvider`: saves notes through a tool and recalls those that share words with a turn."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_memory_core import MemoryProvider, tool_error, tool_result
from hermes_memory_core.kit import atomic_write_text

NOTE_TOOL = {
    "name": "example_note",
    "description": "Save a short note, recalled when a later message mentions its words.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "The note to keep."}},
        "required": ["text"],
    },
}

# Single CJK characters first (Chinese has no spaces between words), then words of two or more
# letters, so Chinese and English notes both match.
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[^\W\d_]{2,}", re.UNICODE)


class NotesProvider(MemoryProvider):
    """Notes in ``<home>/example_notes.json``, recalled by shared words."""

    name = "example"

    def __init__(
        self, *, hermes_home: str | Path | None = None, config: Mapping[str, Any] | None = None
    ) -> None:
        self._path = Path(hermes_home) / "example_notes.json" if hermes_home else None
        self._lock = threading.Lock()

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        if self._path is None:
            self._path = Path(kwargs["hermes_home"]) / "example_notes.json"

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [NOTE_TOOL]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        if tool_name != NOTE_TOOL["name"]:
            return tool_error(f"Unknown tool '{tool_name}'")
        text = args.get("text")
        if not isinstance(text, str) or not text.strip():
            return tool_error("'text' is required: the note to keep.")
        with self._lock:
            notes = self._load()
            if text.strip() not in notes:
                notes.append(text.strip())
                self._save(notes)
        return tool_result({"success": True, "notes": len(notes)})

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        wanted = set(_WORD.findall(query.lower()))
        hits = [note for note in self._load() if wanted & set(_WORD.findall(note.lower()))]
        return "\n".join(f"- {note}" for note in hits[:5])

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        # Mirror what the agent adds to its curated memory, so it is recalled here too.
        if action == "add" and content.strip():
            with self._lock:
                notes = self._load()
                if content.strip() not in notes:
                    notes.append(content.strip())
                    self._save(notes)

    def _load(self) -> list[str]:
        if self._path is None or not self._path.exists():
            return []
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [n for n in data if isinstance(n, str)] if isinstance(data, list) else []

    def _save(self, notes: list[str]) -> None:
        if self._path is None:
            raise RuntimeError("NotesProvider.initialize() was not called")
        atomic_write_text(self._path, json.dumps(notes, ensure_ascii=False, indent=1))
