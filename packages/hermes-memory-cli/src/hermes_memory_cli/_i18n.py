"""Messages for people in their language: English (the source) and Simplified Chinese.

Catalogues are GNU gettext files under ``locale/<lang>/LC_MESSAGES/<domain>.po`` beside this
module, compiled to ``.mo`` with Babel (``python tools/i18n.py``) and read at run time by the
standard library's `gettext`, so neither Babel nor any catalogue parser is imported when a
command starts. One domain per surface: ``cli`` for the command line, ``dashboard`` for the web
pages; both share the language choice below.

Only text meant for a person is translated. What the model reads (tool schemas and tool
answers) and what scripts read (``--json``) stays English, as Hermes Agent does; exit codes
never depend on the language.
"""

from __future__ import annotations

import gettext
import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "LANGUAGES",
    "LOCALE_DIR",
    "N_",
    "Deferred",
    "cli_gettext",
    "env_languages",
    "negotiate",
    "shown",
    "translations",
]

LOCALE_DIR = Path(__file__).with_name("locale")
# Catalogue code -> how a person names it; English is the source text, so it has no catalogue.
LANGUAGES = {"en": "English", "zh_CN": "简体中文"}


def _normalise(tag: str) -> str | None:
    """``zh-CN``, ``zh_CN.UTF-8``, ``zh-Hans``, ``en_GB@euro`` -> a catalogue code or None."""
    tag = tag.split(".", 1)[0].split("@", 1)[0].strip().replace("-", "_").lower()
    if not tag or tag in {"c", "posix"}:
        return None
    primary = tag.split("_", 1)[0]
    if primary == "en":
        return "en"
    # Every Chinese variant reads Simplified better than English; we ship Simplified only.
    if primary == "zh":
        return "zh_CN"
    return None


def negotiate(preferences: Iterable[str]) -> str:
    """The first preference we have a catalogue for, else English."""
    for tag in preferences:
        code = _normalise(tag)
        if code is not None:
            return code
    return "en"


def env_languages(environ: dict[str, str] | None = None) -> list[str]:
    """The user's language preferences in gettext's order of precedence.

    ``LANGUAGE`` (a colon-separated list) comes first, but like GNU gettext it is ignored when
    the locale itself is ``C``/``POSIX``; then ``LC_ALL``, ``LC_MESSAGES``, ``LANG``.
    """
    env = os.environ if environ is None else environ
    locale = next(
        (env[name] for name in ("LC_ALL", "LC_MESSAGES", "LANG") if env.get(name)),
        "",
    )
    preferences: list[str] = []
    if env.get("LANGUAGE") and _normalise(locale) is not None:
        preferences.extend(part for part in env["LANGUAGE"].split(":") if part)
    if locale:
        preferences.append(locale)
    return preferences


@cache
def translations(language: str, domain: str) -> gettext.NullTranslations:
    """The compiled catalogue of ``domain`` for ``language`` (English: no translation)."""
    if language == "en":
        return gettext.NullTranslations()
    return gettext.translation(domain, LOCALE_DIR, languages=[language], fallback=True)


@cache
def _cli() -> gettext.NullTranslations:
    return translations(negotiate(env_languages()), "cli")


def cli_gettext(message: str) -> str:
    """``message`` in the language of the environment (the CLI's ``_``)."""
    return _cli().gettext(message)


class Deferred(str):
    """English text that can still be shown in the user's language.

    The string itself is the English text, so ``--json`` and anything else that stores it
    stays the same in every language; `shown` gives what a person reads. Values that are
    themselves `Deferred` are shown translated too.
    """

    template: str
    values: dict[str, Any]

    def __new__(cls, template: str, /, **values: Any) -> Deferred:
        self = super().__new__(cls, template.format(**values) if values else template)
        self.template = template
        self.values = values
        return self

    def shown(self) -> str:
        text = cli_gettext(self.template)
        if not self.values:
            return text
        return text.format(**{k: shown(v) for k, v in self.values.items()})


def N_(template: str, /, **values: Any) -> Deferred:
    """Mark ``template`` for translation when shown; English (formatted) until then."""
    return Deferred(template, **values)


def shown(text: Any) -> Any:
    """``text`` in the user's language when it is `Deferred`; anything else unchanged."""
    return text.shown() if isinstance(text, Deferred) else text
