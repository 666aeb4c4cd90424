"""Egress policy (internal): what leaves the agent for a provider, and what comes back.

Out: every string handed to a provider is scrubbed of credentials (identifiers excepted), and
recall blocks are stripped from turns before they are stored. In: an external provider's
text is capped, then threat-filtered, before it can reach a prompt. The fencing, threat and
secret-rule modules load on first use, so building a manager compiles none of their rules.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from hermes_memory_core._dispatch import Slot

logger = logging.getLogger("hermes_memory_core.manager")

#: Keyword arguments passed to providers unscrubbed: identifiers, not content.
IDENTIFIER_KEYS = frozenset(
    {"session_id", "parent_session_id", "child_session_id", "current_session_id", "hermes_home"}
)

_REDACTION_NOTE = (
    "Credentials in the content were replaced by [redacted] before saving: memory is shown "
    "in every future prompt, so secrets are never stored there."
)


class EgressPolicy:
    """Scrubbing out, filtering in.

    :param scrub: mask credentials in everything handed to providers.
    :param max_chars: an external provider's text is cut to this many characters …
    :param max_lines: … and lines before it is scanned.
    """

    def __init__(self, *, scrub: bool, max_chars: int, max_lines: int) -> None:
        self.enabled = scrub
        self.max_chars = max_chars
        self.max_lines = max_lines
        #: Secrets masked so far (newest last, at most `MAX_REMEMBERED_SECRETS`): a key
        #: recognised by its context in one turn ("OPENAI_API_KEY=sk-…") is masked when
        #: it comes back bare in a later one.
        self._remembered: dict[str, None] = {}
        self._lock = threading.Lock()

    def scrub(self, value: Any) -> Any:
        """``value`` with credentials masked (nested containers too), and every secret
        masked earlier in this manager's life masked again wherever it appears."""
        if not self.enabled:
            return value
        masked = _scrub_secrets(value)
        if masked is not value:
            self._remember(value)
        with self._lock:
            known = list(self._remembered)
        return _mask_known(masked, known) if known else masked

    def _remember(self, value: Any) -> None:
        from hermes_memory_guard import find_secrets

        found: set[str] = set()
        for text in _strings(value):
            found |= find_secrets(text)
        with self._lock:
            for secret in sorted(found):
                if len(secret) >= MIN_REMEMBERED_CHARS:
                    self._remembered.pop(secret, None)
                    self._remembered[secret] = None
            while len(self._remembered) > MAX_REMEMBERED_SECRETS:
                del self._remembered[next(iter(self._remembered))]

    def scrub_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Scrub every keyword value except identifiers (session ids, ``hermes_home``)."""
        if not self.enabled or not kwargs:
            return dict(kwargs)
        keep = {k: v for k, v in kwargs.items() if k in IDENTIFIER_KEYS}
        rest = {k: v for k, v in kwargs.items() if k not in IDENTIFIER_KEYS}
        return {**_scrub_secrets(rest), **keep}

    def scrub_tool_args(self, slot: Slot, args: dict[str, Any]) -> dict[str, Any]:
        """Scrub tool arguments, except a trusted local tier's declared locators.

        A locator (`MemoryProvider.tool_locator_args`, e.g. the builtin's ``old_text``) only
        finds an entry and is never stored; scrubbing it would make an entry that already
        holds a credential (a hand edit) impossible to replace or remove. Locators are kept
        at the top level and inside a list of operation objects.
        """
        clean: dict[str, Any] = self.scrub(args)
        locators = type(slot.provider).tool_locator_args if slot.local else frozenset()
        if not self.enabled or not locators:
            return clean
        for key in locators & args.keys():
            clean[key] = args[key]
        for key, value in args.items():
            clean_value = clean.get(key)
            if isinstance(value, list) and isinstance(clean_value, list):
                for op, clean_op in zip(value, clean_value, strict=True):
                    if isinstance(op, Mapping) and isinstance(clean_op, dict):
                        for locator in locators & op.keys():
                            clean_op[locator] = op[locator]
        return clean

    def filter_untrusted(
        self, text: str, provider_name: str, *, deadline: float | None = None
    ) -> str:
        """An external provider's text, capped in size first, then threat-filtered whole.

        The cap comes first so that the scanner never works on more text than can reach the
        prompt; the filter judges the whole text, so a payload split across lines is caught.
        With ``deadline`` (a `time.monotonic` instant) the filtering runs on a helper thread
        and is waited for until then; text not judged in time is dropped (never injected
        unscanned), so the caller's bound covers the scan too.
        """
        if not text:
            return text
        if deadline is None:
            return self._filter(text, provider_name)
        result: list[str] = []
        worker = threading.Thread(
            target=lambda: result.append(self._filter(text, provider_name)),
            name=f"hermes-memory-scan-{provider_name}",
            daemon=True,
        )
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        if not result:
            logger.warning(
                "memory provider %r: its recall could not be checked within the prefetch "
                "bound; not injected",
                provider_name,
            )
            return ""
        return result[0]

    def _filter(self, text: str, provider_name: str) -> str:
        from hermes_memory_guard import cap_recall, filter_recall_threats, sanitize_recall

        capped = cap_recall(text, max_chars=self.max_chars, max_lines=self.max_lines)
        # Pre-wrapped blocks go; a mere mention of the fence tag is neutralised first, so the
        # scan (which flags the tag as a header escape) does not drop a legitimate line.
        kept, threats = filter_recall_threats(sanitize_recall(capped))
        if threats:
            logger.warning(
                "memory provider %r recalled text flagged as %s; %s not injected",
                provider_name,
                ", ".join(threats),
                "it was" if not kept else "those lines were",
            )
        return kept


def plain_str(text: str) -> str:
    """An exact ``str`` copy of ``text``: a provider's ``str`` subclass never reaches the
    host, so none of its overridden methods runs later on the caller's thread. The copy is
    made by the C slot of ``str`` itself, which calls no method of the subclass."""
    if type(text) is str:
        return text
    return str.__getitem__(text, slice(None))


#: At most this many masked secrets are remembered (the oldest are forgotten first) …
MAX_REMEMBERED_SECRETS = 256
#: … and only those of at least this many characters (a short one could be a word).
MIN_REMEMBERED_CHARS = 8


def _strings(value: Any) -> list[str]:
    """Every string in ``value`` (nested dicts, lists and tuples; dict values only)."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return out


def _mask_known(value: Any, secrets: list[str]) -> Any:
    """``value`` with every remembered secret replaced by ``[redacted]`` (same shape)."""
    from hermes_memory_guard import REDACTED

    if isinstance(value, str):
        if not any(secret in value for secret in secrets):
            return value
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, Mapping):
        return {key: _mask_known(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask_known(item, secrets) for item in value]
    if isinstance(value, tuple):
        return tuple(_mask_known(item, secrets) for item in value)
    return value


def _scrub_secrets(value: Any) -> Any:
    from hermes_memory_guard import scrub_secrets  # the rule set loads on first use

    return scrub_secrets(value)


def fence(text: str) -> str:
    """Recalled text in a ``<memory-context>`` block (``""`` for nothing)."""
    from hermes_memory_guard import build_memory_context_block

    return build_memory_context_block(text)


def strip_recall(text: str) -> str:
    """``text`` without recall blocks a host may have left in a user message."""
    if "<memory-context" not in text.lower():
        return text
    from hermes_memory_guard import sanitize_context

    return sanitize_context(text)


def strip_recall_message(message: Any) -> Any:
    """One chat message with recall blocks stripped from its string content."""
    if isinstance(message, Mapping) and isinstance(message.get("content"), str):
        content = message["content"]
        cleaned = strip_recall(content)
        if cleaned != content:
            return {**message, "content": cleaned}
    return message


def note_redaction(result: str) -> str:
    """Tell the model that the saved text differs from what it sent (secrets masked)."""
    try:
        payload = json.loads(result)
    except ValueError:
        return result
    if not isinstance(payload, dict) or payload.get("success") is not True:
        return result
    payload["redacted"] = _REDACTION_NOTE
    return json.dumps(payload, ensure_ascii=False)
