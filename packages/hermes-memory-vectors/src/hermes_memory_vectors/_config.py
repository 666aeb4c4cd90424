"""The embedder keys of ``config.yaml``'s ``sessions:`` section, and building an embedder.

.. code-block:: yaml

    sessions:
      embedder: default            # default | static | onnx | fastembed | openai | <entry point>
      embedder_model: ~/models/multilingual-e5-small   # onnx: model dir; fastembed/openai: name
      embedder_url: http://localhost:11434             # openai: server base URL
      embedder_batch_size: 32
      embedder_threads: 2
      embedder_timeout: 10                             # openai: seconds per request
      embedder_api_key_env: MY_EMBEDDINGS_KEY          # openai: variable holding the key

Unset ``embedder`` (or ``none`` / ``off`` / ``false``) means no embedder: lexical search
only. API keys never live in the file: the key is read from the environment variable named
by ``embedder_api_key_env`` (default ``HERMES_MEMORY_EMBEDDER_API_KEY``; for
``api.openai.com`` also ``OPENAI_API_KEY``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_memory_core.kit import as_positive_float, as_positive_int
from hermes_memory_vectors._base import EmbedderConfigError

__all__ = [
    "BUILTIN_EMBEDDERS",
    "DEFAULT_API_KEY_ENV",
    "EMBEDDER_KEYS",
    "EmbedderSettings",
]

logger = logging.getLogger(__name__)

#: Names of the embedders this package provides (reserved: no other distribution may use them).
BUILTIN_EMBEDDERS = ("default", "static", "onnx", "fastembed", "openai")
#: The environment variable read for the API key when ``embedder_api_key_env`` is not set.
DEFAULT_API_KEY_ENV = "HERMES_MEMORY_EMBEDDER_API_KEY"
#: Keys of the section that `EmbedderSettings.from_section` reads; others are not its business.
EMBEDDER_KEYS = (
    "embedder",
    "embedder_model",
    "embedder_url",
    "embedder_batch_size",
    "embedder_threads",
    "embedder_timeout",
    "embedder_api_key_env",
)
_OFF_WORDS = frozenset({"", "none", "off", "false", "no", "disabled"})


@dataclass(frozen=True)
class EmbedderSettings:
    """Typed embedder settings, read from a configuration section by `from_section`.

    ``embedder`` is the embedder name (``None``: no embedder); the other fields are ``None``
    when not configured and each embedder applies its own default. Third-party embedder
    factories receive this object as ``settings=`` (and the raw section as ``config=``).
    """

    embedder: str | None = None
    model: str | None = None
    url: str | None = None
    batch_size: int | None = None
    threads: int | None = None
    timeout: float | None = None
    api_key_env: str | None = None
    section_name: str = "sessions"

    @classmethod
    def from_section(
        cls, section: Mapping[str, Any] | None, *, section_name: str = "sessions"
    ) -> EmbedderSettings:
        """Read the ``embedder*`` keys of ``section`` (other keys are ignored).

        :raises EmbedderConfigError: a value of the wrong type or range; the message names
            the key (``sessions.embedder_threads must be …, got …``).
        """
        if section is None:
            return cls(section_name=section_name)
        if not isinstance(section, Mapping):
            raise EmbedderConfigError(
                f"{section_name} must be a mapping of keys to values, got {type(section).__name__}"
            )
        if "embedder_api_key" in section:
            raise EmbedderConfigError(
                f"{section_name}.embedder_api_key is not read: API keys do not belong in "
                f"config.yaml; put the key in an environment variable and name it in "
                f"{section_name}.embedder_api_key_env (default {DEFAULT_API_KEY_ENV})"
            )

        def text(key: str, what: str) -> str | None:
            value = section.get(key)
            if value is None:
                return None
            if not isinstance(value, str):
                raise EmbedderConfigError(
                    f"{section_name}.{key} must be {what} (a string), got {value!r}"
                )
            value = value.strip()
            if "\x00" in value:
                raise EmbedderConfigError(f"{section_name}.{key} must not contain NUL")
            return value or None

        def number(key: str, convert: Any, what: str) -> Any:
            value = section.get(key)
            if value is None:
                return None
            try:
                return convert(value)
            except ValueError as exc:
                raise EmbedderConfigError(
                    f"{section_name}.{key} {exc} ({what}), got {value!r}"
                ) from None

        raw_name = section.get("embedder")
        if raw_name is False:
            name = None
        else:
            name = text("embedder", "an embedder name")
            if name is not None and name.lower() in _OFF_WORDS:
                name = None
        api_key_env = text("embedder_api_key_env", "an environment variable name")
        if api_key_env is not None and not api_key_env.replace("_", "").isalnum():
            raise EmbedderConfigError(
                f"{section_name}.embedder_api_key_env must be an environment variable name "
                f"(letters, digits, _), got {api_key_env!r}"
            )
        threads = number("embedder_threads", as_positive_int, "CPU threads")
        if threads is not None and threads > 256:
            raise EmbedderConfigError(
                f"{section_name}.embedder_threads must be at most 256, got {threads!r}"
            )
        batch_size = number("embedder_batch_size", as_positive_int, "texts per batch")
        if batch_size is not None and batch_size > 4096:
            raise EmbedderConfigError(
                f"{section_name}.embedder_batch_size must be at most 4096, got {batch_size!r}"
            )
        return cls(
            embedder=name,
            model=text("embedder_model", "a model directory or model name"),
            url=text("embedder_url", "a server URL"),
            batch_size=batch_size,
            threads=threads,
            timeout=number("embedder_timeout", _seconds, "seconds"),
            api_key_env=api_key_env,
            section_name=section_name,
        )

    def key(self, field: str) -> str:
        """``<section>.<key>`` for a field name, for error messages (``sessions.embedder_url``)."""
        return f"{self.section_name}.embedder" + ("" if field == "embedder" else f"_{field}")

    def api_key(self, environ: Mapping[str, str] | None = None, *, openai_host: bool) -> str | None:
        """The API key from the environment (see the module doc), or ``None``.

        :raises EmbedderConfigError: ``embedder_api_key_env`` names a variable that is unset.
        """
        env = os.environ if environ is None else environ
        if self.api_key_env is not None:
            value = env.get(self.api_key_env, "").strip()
            if not value:
                raise EmbedderConfigError(
                    f"{self.key('api_key_env')} names {self.api_key_env}, "
                    "which is not set in the environment"
                )
            return value
        value = env.get(DEFAULT_API_KEY_ENV, "").strip()
        if not value and openai_host:
            value = env.get("OPENAI_API_KEY", "").strip()
        return value or None


def _seconds(value: Any) -> float:
    seconds = as_positive_float(value)
    if seconds > 600:
        raise ValueError("must be at most 600")
    return seconds
