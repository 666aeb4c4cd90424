"""The embedder that ``config.yaml`` asks for (``sessions.embedder*``), built lazily.

``hermes_memory_vectors`` is imported only when ``sessions.embedder`` is set: the sessions
package does not depend on it (install ``hermes-memory-sessions[vectors]``).

* `configured_embedder_section` — the ``embedder*`` keys of the configuration, or None when
  no embedder is configured.
* `build_embedder` — the embedder (``strict=True`` raises a `ConfigError` naming the key or
  the missing package, for the CLI; ``strict=False`` logs and returns None, for the agent).
* `configured_fast_section` / `build_fast_embedder` — the fast tier
  (``sessions.fast_embedder``, ``static`` unless set to ``none``; see
  `hermes_memory_sessions.vectors._tiers`).
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
    "build_fast_embedder",
    "configured_embedder_section",
    "configured_fast_section",
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
    section = _sessions_keys(config)
    if section is None:
        return None
    keys = {k: v for k, v in section.items() if isinstance(k, str) and k.startswith("embedder")}
    name = keys.get("embedder")
    if name is None or name is False or (isinstance(name, str) and name.strip().lower() in _OFF):
        return None
    return keys


def configured_fast_section(config: Any) -> dict[str, Any] | None:
    """The embedder section of the fast tier (``sessions.fast_embedder``), or None.

    Unset, it is ``static`` whenever a quality embedder other than ``static`` is
    configured (the vectors extra ships both); ``none`` turns the fast tier off. The
    quality embedder's ``embedder_threads`` apply to it too (the static model's rows are
    built by the default engine).
    """
    quality = configured_embedder_section(config)
    keys = _sessions_keys(config) or {}
    raw = keys.get("fast_embedder")
    if raw is None:
        if quality is None or str(quality.get("embedder")).strip().lower() == "static":
            return None
        raw = "static"
    if raw is False or not isinstance(raw, str) or raw.strip().lower() in _OFF:
        return None
    section: dict[str, Any] = {"embedder": raw.strip()}
    if quality is not None and "embedder_threads" in quality:
        section["embedder_threads"] = quality["embedder_threads"]
    return section


def _sessions_keys(config: Any) -> Any:
    """The ``sessions:`` keys of ``config`` (see `configured_embedder_section`), or None."""
    section: Any = config
    if hasattr(section, "sessions"):
        section = section.sessions
    if hasattr(section, "embedder") and not isinstance(section, Mapping):
        section = section.embedder
    elif isinstance(section, Mapping) and isinstance(section.get("sessions"), Mapping):
        section = section["sessions"]
    if not isinstance(section, Mapping):
        return None
    return section


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
    except ConfigError as exc:
        if strict:
            raise
        # A configuration mistake is one line for the person, not a traceback.
        logger.warning("session archive: %s; search stays lexical", exc)
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
    fast = configured_fast_section(config)

    return start_loading(
        store,
        lambda: build_embedder(section, strict=False),
        (lambda: build_fast_embedder(fast, section)) if fast is not None else None,
    )


def build_fast_embedder(fast: Mapping[str, Any] | None, quality: Mapping[str, Any]) -> Any:
    """The fast tier's embedder, or None (not configured, or it cannot run: logged)."""
    if fast is None:
        return None
    try:
        return build_embedder(fast, strict=True)
    except ConfigError as exc:
        logger.warning(
            "session archive: sessions.fast_embedder %s cannot run (%s); recall waits for"
            " the %s model to embed the archive",
            fast.get("embedder"),
            exc,
            quality.get("embedder"),
        )
        return None


def start_loading(store: Any, load: Any, load_fast: Any = None) -> threading.Thread:
    """Run ``load()`` (an embedder, or None when it cannot run) in a daemon thread and attach
    the result to ``store``, then the fast tier's ``load_fast()`` when given (added to the
    attached index once it has loaded); the thread is remembered on the store for
    `await_embedder`. When only the fast embedder can run it is attached alone and
    ``store.recall_note`` says so."""

    def run() -> None:
        embedder = load()
        if embedder is None and load_fast is not None:
            embedder = load_fast()
            if embedder is not None:
                store.recall_note = (
                    "the configured embedder cannot run here: recall uses the fast model"
                    f" ({getattr(embedder, 'name', '?')}) only, which finds fewer paraphrases"
                )
            if not _attach(store, embedder):
                return
        elif _attach(store, embedder) and load_fast is not None:
            # The fast tier joins once its model has loaded: the first query waited for
            # the quality model only.
            fast = load_fast()
            if fast is not None and not getattr(store, "closed", False):
                try:
                    store._attach_fast(fast, background=not getattr(store, "read_only", False))
                except sqlite3.ProgrammingError:
                    return  # closed meanwhile
                except Exception as exc:  # the quality tier alone goes on
                    logger.warning("session archive: could not add the fast tier (%s)", exc)

    thread = threading.Thread(target=run, name="hermes-memory-embedder-load", daemon=True)
    setattr(store, _LOADING, thread)  # a private mark on any store object
    thread.start()
    return thread


def _attach(store: Any, embedder: Any) -> bool:
    """Attach ``embedder`` to ``store`` unless it is None or the store closed meanwhile;
    failures are logged (lexical search goes on). Returns whether it was attached."""
    if embedder is None or getattr(store, "closed", False):
        return False  # closed while the model loaded (a short session): nothing to attach
    try:
        store._attach_embedder(embedder, background=not getattr(store, "read_only", False))
    except sqlite3.ProgrammingError:
        return False  # closed meanwhile
    except Exception as exc:  # a locked file, a full disk: lexical search goes on
        logger.warning("session archive: could not attach the embedder (%s)", exc)
        return False
    return True


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
        return "hybrid", str(getattr(store, "recall_note", "") or "")
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
