"""`SessionsSettings`: the ``sessions:`` section of ``config.yaml``, declared once.

Core validates it when it creates the provider and hands the result over as
``SessionArchiveProvider.settings`` (the path every adapter takes). The ``embedder*`` keys
belong to the embedder (``hermes_memory_vectors.embedder_from_config`` checks them, and a
third-party embedder may read keys of its own), so they are kept as written in `embedder`,
with ``fast_embedder`` (the fast tier, `hermes_memory_sessions.vectors._tiers`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from hermes_memory_core.kit import Settings, setting

__all__ = ["EMBEDDER_KEYS", "SessionsSettings"]

_S = TypeVar("_S", bound="SessionsSettings")

#: The embedder keys documented in the schema (any ``embedder*`` key is handed over).
EMBEDDER_KEYS: dict[str, str] = {
    "embedder": "Hybrid recall: default (offline multilingual model), onnx, fastembed, openai"
    " or a third-party name; unset or none: lexical search only.",
    "embedder_model": "onnx: model directory; fastembed / openai: model name.",
    "embedder_url": "openai: server base URL (required for it).",
    "embedder_batch_size": "Texts per inference call or request.",
    "embedder_threads": "CPU threads of a local model.",
    "embedder_timeout": "openai: seconds one request may take.",
    "embedder_api_key_env": "openai: environment variable holding the key.",
    "fast_embedder": "The fast tier beside the embedder: static (the default whenever"
    " embedder is another model) embeds the whole archive at once; none turns it off.",
}
_EMBEDDER_TYPES = {
    "embedder_batch_size": "integer",
    "embedder_threads": "integer",
    "embedder_timeout": "number",
}


@dataclass(frozen=True)
class SessionsSettings(Settings):
    """The session archive's settings (precedence: ``config.yaml`` > default)."""

    section = "sessions"

    db_path: str = setting(
        "",
        "SQLite file of the session archive (~ expanded, relative to the home);"
        " default <home>/hermes-memory/sessions.db.",
    )
    backend: str = setting(
        "sqlite",
        "Where the archive lives: sqlite (a file) or postgres (hermes-memory-postgres).",
        choices=("sqlite", "postgres"),
    )
    follow_hermes: bool = setting(
        False, "Keep importing what is new in <home>/state.db (read-only)."
    )
    #: The ``embedder*`` keys as written (empty: no embedder configured).
    embedder: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False)

    @classmethod
    def load(
        cls: type[_S],
        section: Mapping[str, Any] | None,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> _S:
        """`Settings.load`, with the ``embedder*`` keys set aside as written."""
        raw = dict(section or {})
        embedder = {
            k: raw.pop(k)
            for k in list(raw)
            if isinstance(k, str) and (k.startswith("embedder") or k == "fast_embedder")
        }
        loaded = super().load(raw, environ=environ)
        return dataclasses.replace(loaded, embedder=embedder)

    @classmethod
    def schema(cls) -> list[dict[str, Any]]:
        """The declared settings, then the documented embedder keys."""
        fields = super().schema()
        for key, description in EMBEDDER_KEYS.items():
            fields.append(
                {
                    "key": key,
                    "description": description,
                    "type": _EMBEDDER_TYPES.get(key, "text"),
                    "secret": False,
                    "required": False,
                }
            )
        return fields
