"""The embedder that ``config.yaml`` asks for (``sessions.embedder*``), built lazily.

``hermes_memory_vectors`` is imported only when ``sessions.embedder`` is set: the sessions
package does not depend on it (install ``hermes-memory-sessions[vectors]``).

* `configured_embedder_section` — the ``embedder*`` keys of the configuration, or None when
  no embedder is configured.
* `build_embedder` — the embedder (``strict=True`` raises a `ConfigError` naming the key or
  the missing package, for the CLI; ``strict=False`` logs and returns None, for the agent).
* `attach_configured_embedder` — attaches it to an open `SessionStore` from a background
  thread, so loading a model never stalls the agent. The first discovery of a process waits
  for it up to `FIRST_QUERY_WAIT` seconds (`await_embedder`); past that it answers lexically
  and says so (`recall_state`).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Mapping
from typing import Any

from hermes_memory_core.config import ConfigError

__all__ = [
    "FIRST_QUERY_WAIT",
    "attach_configured_embedder",
    "await_embedder",
    "build_embedder",
    "configured_embedder_section",
    "recall_state",
]

#: Seconds a discovery waits for an embedder that is still loading (the default model
#: loads in 0.3-0.75 s on two cores); past that the answer is lexical and says so.
FIRST_QUERY_WAIT = 3.0
#: Attribute of a store whose configured embedder is loading (or failed to load).
_LOADING = "_hm_embedder_loading"

logger = logging.getLogger(__name__)

_OFF = frozenset({"", "none", "off", "false", "no", "disabled"})


def configured_embedder_section(config: Any) -> dict[str, Any] | None:
    """The ``embedder*`` keys of a configuration, or None when no embedder is configured.

    ``config`` is the raw ``config.yaml`` mapping (its ``sessions:`` section is read), a
    ``sessions:`` mapping itself, or a parsed ``HermesConfig`` / ``SessionsConfig``.
    """
    section: Any = config
    if hasattr(section, "sessions"):
        section = section.sessions
    if hasattr(section, "embedder") and not isinstance(section, Mapping):
        section = section.embedder
    elif isinstance(section, Mapping) and isinstance(section.get("sessions"), Mapping):
        section = section["sessions"]
    if not isinstance(section, Mapping):
        return None
    keys = {k: v for k, v in section.items() if isinstance(k, str) and k.startswith("embedder")}
    name = keys.get("embedder")
    if name is None or name is False or (isinstance(name, str) and name.strip().lower() in _OFF):
        return None
    return keys


def build_embedder(section: Mapping[str, Any] | None, *, strict: bool) -> Any:
    """The embedder for ``section`` (see `configured_embedder_section`), or None.

    :raises ConfigError: with ``strict``: a bad value (the message names the key), the
        embedder cannot run here, or hermes-memory-vectors is not installed.
    """
    if section is None:
        return None
    try:
        from hermes_memory_vectors import EmbedderError, embedder_from_config
    except ImportError:
        from hermes_memory_core.installer import install_command

        message = (
            "sessions.embedder is set but the hermes-memory-vectors package is not installed"
            f" ({install_command('hermes-memory-sessions[vectors]')}); search stays lexical"
        )
        if strict:
            raise ConfigError(message) from None
        logger.warning(message)
        return None
    try:
        return embedder_from_config(section)
    except ConfigError:
        if strict:
            raise
        logger.exception("session archive: the configured embedder is unusable; lexical only")
        return None
    except (EmbedderError, Exception) as exc:
        if strict:
            raise ConfigError(f"sessions.embedder cannot run here: {exc}") from None
        logger.warning("session archive: embedder unavailable (%s); search stays lexical", exc)
        return None


def attach_configured_embedder(store: Any, config: Any) -> threading.Thread | None:
    """Build the configured embedder in a background thread and attach it to ``store``.

    No-op (None) when no embedder is configured, when ``store`` cannot take one (another
    backend, read-only) or already has one. Failures are logged; search stays lexical.
    """
    section = configured_embedder_section(config)
    if section is None or not hasattr(store, "_attach_embedder"):
        return None
    if getattr(store, "vector_index", None) is not None:
        return None

    return start_loading(store, lambda: build_embedder(section, strict=False))


def start_loading(store: Any, load: Any) -> threading.Thread:
    """Run ``load()`` (an embedder, or None when it cannot run) in a daemon thread and attach
    the result to ``store``; the thread is remembered on the store for `await_embedder`."""

    def run() -> None:
        embedder = load()
        if embedder is None:
            return
        if getattr(store, "closed", False):
            return  # closed while the model loaded (a short session): nothing to attach
        try:
            store._attach_embedder(embedder, background=not getattr(store, "read_only", False))
        except sqlite3.ProgrammingError:
            return  # closed meanwhile
        except Exception as exc:  # a locked file, a full disk: lexical search goes on
            logger.warning("session archive: could not attach the embedder (%s)", exc)

    thread = threading.Thread(target=run, name="hermes-memory-embedder-load", daemon=True)
    setattr(store, _LOADING, thread)  # a private mark on any store object
    thread.start()
    return thread


def await_embedder(store: Any, timeout: float | None = None) -> None:
    """Wait up to ``timeout`` (default `FIRST_QUERY_WAIT`) seconds for a configured embedder
    that is still loading; returns at once when none is loading."""
    thread = getattr(store, _LOADING, None)
    if isinstance(thread, threading.Thread) and thread.is_alive():
        thread.join(FIRST_QUERY_WAIT if timeout is None else timeout)


def recall_state(store: Any) -> tuple[str, str] | None:
    """``("hybrid", "")`` when the store has a vector index; ``("lexical", why)`` when an
    embedder was configured but is still loading or could not be loaded; None when no
    embedder was configured for it (search is lexical by configuration)."""
    if getattr(store, "vector_index", None) is not None:
        return "hybrid", ""
    thread = getattr(store, _LOADING, None)
    if not isinstance(thread, threading.Thread):
        return None
    if thread.is_alive():
        return "lexical", (
            "the embedder is still loading: these results matched the query's words only,"
            " not its meaning; search again in a moment for both"
        )
    return "lexical", (
        "the configured embedder could not be loaded: results matched the query's words only"
    )
