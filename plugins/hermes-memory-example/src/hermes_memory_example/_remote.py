"""`RemoteNotesProvider`: a complete remote provider built from the kit, for a JSON notes
service (``GET /notes?q=…`` → ``{"notes": [...]}``, ``POST /notes`` ``{"text": …}``).

Everything but the HTTP calls comes from `hermes_memory_core.kit`: typed settings, retries,
the breaker and the health record (`Guard`), ordered writes spooled at shutdown and replayed
at the next start (`PendingWrites`, through `RemoteProvider`), recall formatting and
tool-argument checks. ``docs/how-to/write-a-provider.md`` walks through it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from hermes_memory_core import kit, tool_error, tool_result

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class NotesSettings(kit.RemoteSettings):
    """The ``notes:`` section of ``config.yaml``. `kit.RemoteSettings` brings ``timeout``,
    ``retries``, ``breaker_threshold``, ``breaker_cooldown`` and ``max_pending``."""

    section = "notes"
    url: str = kit.setting("", "Base URL of the notes service.", env="NOTES_URL")
    api_key: str = kit.setting("", "Bearer token, if any.", env="NOTES_API_KEY", secret=True)
    timeout: float = kit.setting(5.0, "Seconds per request.", minimum=0.1)

    def missing(self) -> str:
        """A URL is needed, and only http(s): never a file: or custom-scheme URL."""
        if not self.url.startswith(("http://", "https://")):
            return "set NOTES_URL (or notes.url in config.yaml) to an http(s) URL"
        return ""


_PROPS = {"query": {"type": "string"}, "limit": {"type": "integer"}}
_PARAMS = {"type": "object", "properties": _PROPS, "required": ["query"]}
SEARCH_TOOL = {
    "name": "notes_search",
    "description": "Search notes about the user.",
    "parameters": _PARAMS,
}


def classify(exc: BaseException) -> kit.Failure:
    """urllib's errors in the kit's taxonomy."""
    import urllib.error

    if isinstance(exc, urllib.error.HTTPError):
        return kit.Failure(kit.kind_for_status(exc.code), f"HTTP {exc.code} {exc.reason}", exc.code)
    if isinstance(exc, urllib.error.URLError):
        return kit.classify_common(
            exc.reason if isinstance(exc.reason, OSError) else exc
        ) or kit.Failure(kit.FailureKind.CONNECTION, f"cannot reach the service: {exc.reason}")
    return kit.classify_common(exc) or kit.Failure(
        kit.FailureKind.OTHER, f"{type(exc).__name__}: {exc}"
    )


class RemoteNotesProvider(kit.RemoteProvider):
    """Notes kept by a remote service: recalled into turns, searched by a tool, fed by the
    user's messages and mirrored curated writes. Settings: the ``notes:`` section."""

    name = "example-remote"
    settings_class = NotesSettings  # core validates the section and sets self.settings
    settings: NotesSettings  # unavailable_reason: a settings error, else settings.missing()

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """One search tool."""
        return [SEARCH_TOOL]

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Build the guard and the write queue; replay writes spooled by a last shutdown."""
        self._begin(kwargs)
        # threshold, cooldown and retries come from the settings (kit.RemoteSettings)
        guard = self._make_guard(classify, label="notes service", logger=logger)
        if not self.unavailable_reason():
            post = lambda write: guard.call("add", lambda: self._request("POST", "/notes", write))  # noqa: E731
            self._start_writes(post, max_pending=self.settings.max_pending,
                               accept=lambda write: isinstance(write.get("text"), str))  # fmt: skip

    def _request(self, method: str, path: str, body: kit.Write | None = None) -> Any:
        if reason := self.unavailable_reason():  # never a file: or custom-scheme URL
            raise kit.Unavailable(reason)
        import urllib.request  # with http.client and ssl: loaded by the first request only

        s = self.settings
        request = urllib.request.Request(s.url.rstrip("/") + path, method=method)  # noqa: S310
        request.add_header("Content-Type", "application/json")
        if s.api_key:
            request.add_header("Authorization", f"Bearer {s.api_key}")
        data = json.dumps(body).encode() if body is not None else None
        with urllib.request.urlopen(request, data=data, timeout=s.timeout) as answer:  # noqa: S310
            return json.loads(answer.read() or b"null")

    def _search(self, query: str, limit: int) -> list[str]:
        from urllib.parse import urlencode

        path = "/notes?" + urlencode({"q": query, "limit": limit})
        answer = self._request("GET", path)
        return [str(n) for n in (answer or {}).get("notes", [])][:limit]

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Notes matching the message, minus what the curated tier already shows."""
        if (guard := self._guard) is None or not query.strip():
            return ""
        notes = guard.call("search", lambda: self._search(query, 8))
        return kit.bullet_block("## Notes", notes, exclude=self._known_facts, max_chars=1500)[0]

    def sync_turn(self, user_content: str, assistant_content: str, **kwargs: Any) -> None:
        """Keep what the user said as a note (queued; sent in order, spooled at shutdown)."""
        if user_content.strip():
            self._enqueue({"text": user_content.strip()})

    def on_memory_write(self, action: str, target: str, content: str, metadata: Any = None) -> None:
        """Mirror curated additions."""
        if action == "add" and content.strip():
            self._enqueue({"text": content.strip()})

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """``notes_search``: always a JSON string."""
        problem = kit.check_tool_call(tool_name, args, {"notes_search"})
        if problem or (guard := self._guard) is None:
            return tool_error(problem or "the notes provider is not initialised")
        try:
            query, limit = (
                kit.required_text(args, "query"),
                kit.int_arg(args, "limit", 5, low=1, high=20),
            )
            return tool_result({"notes": guard.call("search", lambda: self._search(query, limit))})
        except ValueError as exc:
            return tool_error(f"{tool_name}: {exc}")
        except Exception as exc:  # Unavailable / CallFailed: already counted and reported
            return tool_error(f"notes service: {exc}")
