"""`FactsProvider`: the local fact store as a hermes-memory provider (``memory.provider: facts``).

Two tools (``fact_store`` with nine actions, ``fact_feedback``), recall of the best matching
facts before each turn, mirroring of curated-memory writes (add, replace and remove), and
optional rule-based extraction of the user's preferences and decisions at session end.
Settings: the ``facts:`` section of ``config.yaml``. Nothing leaves the machine.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any

from hermes_memory_core import MemoryProvider, kit, tool_error, tool_result
from hermes_memory_facts import _hrr as hrr
from hermes_memory_facts._settings import FactsSettings
from hermes_memory_facts._store import CATEGORIES, Fact, FactStore, FactStoreError
from hermes_memory_facts._text import extract_session_facts

__all__ = ["FACT_FEEDBACK_TOOL", "FACT_STORE_TOOL", "FactsProvider"]

logger = logging.getLogger(__name__)

ACTIONS = ("add", "search", "probe", "related", "reason", "contradict", "update", "remove", "list")

FACT_STORE_TOOL: dict[str, Any] = {
    "name": "fact_store",
    "description": (
        "Long-term fact store. add: keep a fact (content, category, tags). search: find facts "
        "(query). probe: facts about an entity. related: facts connected to an entity in any "
        "role. reason: facts involving ALL given entities. contradict: pairs of facts that "
        "disagree about a shared entity. update / remove: by fact_id. list: by trust."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "content": {"type": "string", "description": "The fact (add, update)."},
            "query": {"type": "string", "description": "Search text (search)."},
            "entity": {"type": "string", "description": "Entity name (probe, related)."},
            "entities": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Entity names (reason).",
            },
            "fact_id": {"type": "integer", "description": "The fact (update, remove)."},
            "category": {"type": "string", "enum": list(CATEGORIES)},
            "tags": {"type": "string", "description": "Comma-separated tags."},
            "trust_delta": {"type": "number", "description": "Trust change (update)."},
            "min_trust": {"type": "number", "description": "Lowest trust returned (0.3)."},
            "limit": {"type": "integer", "description": "Most results (10)."},
        },
        "required": ["action"],
    },
}

FACT_FEEDBACK_TOOL: dict[str, Any] = {
    "name": "fact_feedback",
    "description": (
        "Rate a fact you used: helpful raises its trust (+0.05), unhelpful lowers it (-0.10). "
        "Low-trust facts stop being recalled."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["helpful", "unhelpful"]},
            "fact_id": {"type": "integer"},
        },
        "required": ["action", "fact_id"],
    },
}


def _classify(exc: BaseException) -> kit.Failure:
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        return kit.Failure(kit.FailureKind.TIMEOUT, f"database is locked: {kit.one_line(exc)}")
    return kit.Failure(kit.FailureKind.OTHER, f"{type(exc).__name__}: {kit.one_line(exc)}")


class _BadArgument(ValueError):
    pass


def _int(args: dict[str, Any], key: str, default: int | None = None) -> int:
    value = args.get(key, default)
    if value is None:
        raise _BadArgument(f"Missing required argument: {key}")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _BadArgument(f"'{key}' must be an integer, got {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise _BadArgument(f"'{key}' must be an integer, got {value!r}") from None
    if number != int(number):
        raise _BadArgument(f"'{key}' must be an integer, got {value!r}")
    return int(number)


def _float(args: dict[str, Any], key: str, default: float | None) -> float | None:
    value = args.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _BadArgument(f"'{key}' must be a number, got {value!r}")
    try:
        return float(value)
    except ValueError:
        raise _BadArgument(f"'{key}' must be a number, got {value!r}") from None


def _text(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _BadArgument(f"Missing required argument: {key}")
    return value


class FactsProvider(MemoryProvider):
    """The local fact store (provider name ``facts``).

    :param hermes_home: the agent's home directory (the database and the health record).
    :param config: the whole parsed ``config.yaml``; `settings` come from its ``facts:``
        section (`FactsSettings`).
    :param environ: environment mapping to read instead of ``os.environ``.
    """

    name = "facts"
    settings_class = FactsSettings  # validated by core; unavailable_reason from it
    settings: FactsSettings

    def __init__(
        self,
        *,
        hermes_home: str | Path | None = None,
        config: dict[str, Any] | None = None,
        environ: dict[str, str] | None = None,
    ) -> None:
        self._home = Path(hermes_home) if hermes_home else None
        self._raw_config = config
        self._environ = environ
        self._store: FactStore | None = None
        self._open_error = ""
        self._guard: kit.Guard | None = None
        self._prompt = ""
        self._known: set[str] = set()
        self._writes = True
        self._last_count = 0
        self._lock = threading.Lock()

    # ----------------------------------------------------------------- settings
    def db_path(self) -> Path | None:
        """Where the facts are kept (None before a home directory is known)."""
        configured = self.settings.db_path
        if configured:
            path = Path(configured).expanduser()
            if path.is_absolute():
                return path
            return (self._home / path) if self._home else None
        return self._home / "memory_facts.db" if self._home else None

    def is_available(self) -> bool:
        """True unless the ``facts:`` settings are invalid (no network, nothing to install)."""
        return not self.unavailable_reason()

    def _settings_source(self) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
        return self._raw_config, self._environ

    def backup_paths(self) -> list[str]:
        """The database, when it lives outside the home directory."""
        path = self.db_path()
        if path is None or self._home is None:
            return []
        try:
            path.resolve().relative_to(self._home.resolve())
        except ValueError:
            return [str(path.resolve())]
        return []

    # ----------------------------------------------------------------- lifecycle
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Open (or create) the database; a file that cannot be used is reported in the
        health record and by every tool call, never silently."""
        if kwargs.get("hermes_home"):
            self._home = Path(str(kwargs["hermes_home"]))
        self._writes = str(kwargs.get("agent_context") or "primary") == "primary"
        self._known.update(kit.fact_key(str(e)) for e in kwargs.get("curated_entries") or ())
        self._known.discard("")
        self._guard = kit.Guard(
            self.name,
            _classify,
            threshold=5,
            cooldown=30.0,
            home=self._home,
            label="fact store",
            logger=logger,
        )
        settings = self.settings
        path = self.db_path()
        if self.settings_error or path is None:
            self._open_error = self.unavailable_reason() or "no home directory"
            self._prompt = ""
            return
        if self._store is None:
            try:
                self._store = self._open(path, settings)
                self._open_error = ""
                self._guard.report("ok", "")
            except FactStoreError as exc:
                self._open_error = str(exc)
                self._guard.report("degraded", f"fact store unusable: {exc}", warn=True)
        self._prompt = self._build_prompt()

    def _open(self, path: Path, settings: FactsSettings) -> FactStore:
        return FactStore(
            path,
            default_trust=settings.default_trust,
            hrr_dim=settings.hrr_dim,
            use_hrr=settings.hrr,
            hrr_weight=settings.hrr_weight,
            half_life_days=settings.half_life_days,
        )

    def _build_prompt(self) -> str:
        store = self._store
        if store is None:
            return ""
        count = store.count()
        if store.use_hrr:
            extra = "probe/related/reason use compositional (HRR) vector queries."
        elif self.settings.hrr and not hrr.available():
            extra = (
                "probe/related/reason use entity links (NumPy is not installed: "
                "pip install hermes-memory-facts[hrr] for compositional queries)."
            )
        else:
            extra = "probe/related/reason use entity links."
        return (
            f"## Fact store\nA local store of {count} fact(s) about the user and the work. "
            "Use fact_store to add, search, probe, relate, reason over, update or remove "
            "facts and to find contradictions; rate facts you relied on with fact_feedback. "
            + extra
        )

    def system_prompt_block(self) -> str:
        """Fact count and capabilities, computed once at `initialize` (stable per session)."""
        return self._prompt

    def shutdown(self) -> None:
        """Close the database."""
        store, self._store = self._store, None
        if store is not None:
            store.close()
        if self._guard is not None:
            self._guard.closed = True

    # ----------------------------------------------------------------- recall
    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """The best facts for ``query`` as ``- [trust] content`` lines under ``## Fact store``
        (facts the curated tier already shows are left out)."""
        store, guard = self._store, self._guard
        limit = int(self.settings.prefetch_limit)
        if store is None or guard is None or limit <= 0 or not query.strip():
            return ""
        min_trust = float(self.settings.min_trust)
        try:
            found = guard.call(
                "search", lambda: store.search(query, min_trust=min_trust, limit=limit * 2)
            )
        except (kit.CallFailed, kit.Unavailable):
            return ""
        lines = [
            f"[{fact.trust:.2f}] {fact.content}"
            for fact, _ in found
            if kit.fact_key(fact.content) not in self._known
        ][:limit]
        self._last_count = len(lines)
        return kit.bullet_block("## Fact store", lines, max_chars=2000)[0]

    def recall_status(self) -> Any:
        """How many facts the last prefetch recalled."""
        from hermes_memory_core import RecallStatus

        return RecallStatus("fact store", self._last_count) if self._last_count else None

    # ----------------------------------------------------------------- mirrors and extraction
    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """Mirror curated writes: add stores the entry, replace updates the fact holding the
        old text (or adds), remove deletes it."""
        store = self._store
        if store is None or not self._writes or not self.settings.mirror_writes:
            return
        category = "user_pref" if target == "user" else "general"
        meta = metadata or {}
        try:
            if action == "add" and content.strip():
                store.add(content, category=category, tags=f"curated:{target}")
            elif action == "replace":
                old = meta.get("previous_content") or meta.get("old_text")
                fact = store.find(str(old)) if old else None
                if fact is not None and content.strip():
                    try:
                        store.update(fact.fact_id, content=content)
                    except FactStoreError:  # the new text is another fact already
                        store.remove(fact.fact_id)
                elif content.strip():
                    store.add(content, category=category, tags=f"curated:{target}")
            elif action == "remove":
                fact = store.find(content) if content.strip() else None
                if fact is not None:
                    store.remove(fact.fact_id)
        except (FactStoreError, sqlite3.Error) as exc:
            logger.warning("facts: mirroring a curated %s failed: %s", action, exc)
        self._known.add(kit.fact_key(content))

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """With ``auto_extract``: store the preferences and decisions the user stated."""
        store = self._store
        if store is None or not self._writes or not self.settings.auto_extract:
            return
        for category, text in extract_session_facts(messages):
            if _flagged(text):
                logger.warning("facts: an extracted fact was flagged by the threat scan; skipped")
                continue
            try:
                store.add(text, category=category, tags="auto-extracted")
            except (FactStoreError, sqlite3.Error) as exc:
                logger.warning("facts: could not store an extracted fact: %s", exc)

    # ----------------------------------------------------------------- tools
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """``fact_store`` and ``fact_feedback``."""
        return [FACT_STORE_TOOL, FACT_FEEDBACK_TOOL]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run ``fact_store`` / ``fact_feedback``; always a JSON string."""
        problem = kit.check_tool_call(tool_name, args, {"fact_store", "fact_feedback"})
        if problem:
            return tool_error(problem)
        store, guard = self._store, self._guard
        if store is None or guard is None:
            reason = self._open_error or "the fact store is not initialised"
            return tool_error(f"fact store unavailable: {reason}")

        def run() -> str:
            try:
                if tool_name == "fact_feedback":
                    return self._feedback(store, args)
                return self._fact_store(store, args)
            except (_BadArgument, FactStoreError) as exc:  # the request, not the store
                return tool_error(str(exc))

        try:
            return guard.call(str(args.get("action") or tool_name), run)
        except (kit.CallFailed, kit.Unavailable) as exc:
            return tool_error(f"fact store: {exc}")

    def _feedback(self, store: FactStore, args: dict[str, Any]) -> str:
        action = args.get("action")
        if action not in ("helpful", "unhelpful"):
            if action is None:
                raise _BadArgument("Missing required argument: action")
            raise _BadArgument(f"Unknown action: {action}")
        fact_id = _int(args, "fact_id")
        result = store.feedback(fact_id, helpful=action == "helpful")
        if result is None:
            return tool_error(f"No fact with id {fact_id}")
        return tool_result(result)

    def _fact_store(self, store: FactStore, args: dict[str, Any]) -> str:
        action = args.get("action")
        if action is None:
            raise _BadArgument("Missing required argument: action")
        if action not in ACTIONS:
            raise _BadArgument(f"Unknown action: {action}")
        limit = max(1, min(100, _int(args, "limit", 10)))
        min_trust = _float(args, "min_trust", 0.3)
        category = args.get("category")
        if category is not None and not isinstance(category, str):
            raise _BadArgument("'category' must be a string")
        method = "hrr" if store.use_hrr else "links"

        def results(found: list[tuple[Fact, float]], **extra: Any) -> str:
            rows = [fact.as_dict(score) for fact, score in found]
            return tool_result({"results": rows, "count": len(rows), **extra})

        if action == "add":
            content = _text(args, "content")
            _screen(content)
            tags = args.get("tags") or ""
            if not isinstance(tags, str):
                raise _BadArgument("'tags' must be a comma-separated string")
            fact_id, created = store.add(content, category=category or "general", tags=tags)
            payload: dict[str, Any] = {
                "fact_id": fact_id,
                "status": "added" if created else "exists",
            }
            if created:
                clashes = store.contradictions(fact_ids=[fact_id], limit=3)
                if clashes:
                    payload["possible_contradictions"] = [
                        {
                            "fact_id": other["fact_id"],
                            "content": other["content"],
                            "contradiction_score": c["contradiction_score"],
                        }
                        for c in clashes
                        for other in (c["fact_a"], c["fact_b"])
                        if other["fact_id"] != fact_id
                    ]
            return tool_result(payload)
        if action == "search":
            query = _text(args, "query")
            found = store.search(query, category=category, min_trust=min_trust or 0.0, limit=limit)
            return results(found)
        if action == "probe":
            return results(
                store.probe(_text(args, "entity"), category=category, limit=limit), method=method
            )
        if action == "related":
            return results(store.related(_text(args, "entity"), limit=limit), method=method)
        if action == "reason":
            entities = args.get("entities")
            if not isinstance(entities, list) or not any(
                isinstance(e, str) and e.strip() for e in entities
            ):
                raise _BadArgument("reason requires 'entities' list")
            return results(store.reason([str(e) for e in entities], limit=limit), method=method)
        if action == "contradict":
            return results_pairs(store.contradictions(limit=limit))
        if action == "update":
            fact_id = _int(args, "fact_id")
            new_content = args.get("content")
            if new_content is not None and not isinstance(new_content, str):
                raise _BadArgument("'content' must be a string")
            if new_content:
                _screen(new_content)
            tags = args.get("tags")
            if tags is not None and not isinstance(tags, str):
                raise _BadArgument("'tags' must be a comma-separated string")
            updated = store.update(
                fact_id,
                content=new_content,
                category=category,
                tags=tags,
                trust_delta=_float(args, "trust_delta", None),
            )
            return tool_result({"updated": updated, "fact_id": fact_id})
        if action == "remove":
            fact_id = _int(args, "fact_id")
            return tool_result({"removed": store.remove(fact_id), "fact_id": fact_id})
        facts = store.list_facts(category=category, min_trust=min_trust or 0.0, limit=limit)
        return tool_result({"facts": [f.as_dict() for f in facts], "count": len(facts)})


def _flagged(text: str) -> bool:
    """Whether the threat scan flags ``text`` as the curated store would (``strict``, both
    tiers: the fact store has no person to hold a write for). The learned hold signal is
    left out: it may only ever hold, and here a hold would be a refusal."""
    from hermes_memory_guard import threat_verdict

    return threat_verdict(text, scope="strict", learned=False).tier is not None


def _screen(text: str) -> None:
    """Refuse a fact the curated store would refuse or hold: facts are recalled into later
    sessions, so they get the checks of a memory write. The refusal names no pattern."""
    if _flagged(text):
        raise _BadArgument(
            "Not stored: the threat scan flags this text, and the fact store keeps nothing it "
            "flags (facts are recalled into later sessions). Nothing was changed."
        )


def results_pairs(pairs: list[dict[str, Any]]) -> str:
    """The ``contradict`` answer: ``{results: [pairs], count}``."""
    return tool_result({"results": pairs, "count": len(pairs)})
