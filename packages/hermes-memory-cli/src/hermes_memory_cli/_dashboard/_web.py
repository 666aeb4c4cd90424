"""Rendering: language choice, one Jinja2 environment per language, flash messages.

Messages are gettext catalogues of the ``dashboard`` domain (`hermes_memory_cli._i18n`).
Python code marks text with `N_` and hands it to templates, which translate it with ``_``;
templates use ``{% trans %}`` / ``_()`` directly. Each language has its own environment with
its catalogue installed, so concurrent requests in different languages never share state.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from hermes_memory_cli._i18n import LANGUAGES, negotiate, translations

__all__ = ["LANG_COOKIE", "N_", "Flash", "Problem", "Renderer", "language_of"]

HERE = Path(__file__).parent
LANG_COOKIE = "hm_dashboard_lang"
#: ``?lang=`` values people type, and the catalogue each selects.
LANG_PARAMS = {"en": "en", "zh-cn": "zh_CN", "zh_cn": "zh_CN", "zh": "zh_CN", "zh-hans": "zh_CN"}
HTML_LANG = {"en": "en", "zh_CN": "zh-CN"}


def N_(message: str) -> str:
    """Mark ``message`` for the catalogue; it is translated when rendered."""
    return message


def _accept_language(header: str) -> list[str]:
    """The tags of an ``Accept-Language`` header, best first (by ``q``, then order)."""
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        if not tag or tag == "*":
            continue
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if q > 0:
            ranked.append((-q, index, tag))
    return [tag for _q, _i, tag in sorted(ranked)]


def language_of(request: Request) -> tuple[str, bool]:
    """``(catalogue code, chosen now)``: ``?lang=``, else the cookie, else Accept-Language."""
    asked = request.query_params.get("lang", "").strip().lower()
    if asked in LANG_PARAMS:
        return LANG_PARAMS[asked], True
    remembered = request.cookies.get(LANG_COOKIE, "")
    if remembered in LANGUAGES:
        return remembered, False
    return negotiate(_accept_language(request.headers.get("accept-language", ""))), False


class Problem(Exception):
    """A page cannot be shown: ``text`` (a msgid) with ``params``, HTTP ``status``."""

    def __init__(self, text: str, *, status: int = 400, **params: Any) -> None:
        super().__init__(text)
        self.text, self.status, self.params = text, status, params


@dataclass
class Flash:
    """A message shown once on the next page: ``text`` (a msgid) formatted with ``params``."""

    kind: str  # "ok" or "error"
    text: str
    params: dict[str, Any] = field(default_factory=dict)
    #: The memory tool's JSON answer, shown folded under the message.
    answer: str | None = None


class FlashBox:
    """Flash messages kept server-side, keyed by a random id in a cookie (never user text in
    a cookie)."""

    COOKIE = "hm_dashboard_flash"

    def __init__(self) -> None:
        self._items: dict[str, list[Flash]] = {}
        self._lock = threading.Lock()

    def put(self, flashes: list[Flash]) -> str:
        key = secrets.token_urlsafe(16)
        with self._lock:
            if len(self._items) > 256:  # abandoned ones: keep memory bounded
                self._items.clear()
            self._items[key] = flashes
        return key

    def take(self, key: str | None) -> list[Flash]:
        if not key:
            return []
        with self._lock:
            return self._items.pop(key, [])


class Renderer:
    """Template environments (one per language) and the page frame's common values."""

    def __init__(self, *, csrf: str, port: int) -> None:
        self.csrf = csrf
        self.port = port
        self.flashes = FlashBox()
        self._envs = {code: self._environment(code) for code in LANGUAGES}

    @staticmethod
    def _environment(code: str) -> Environment:
        env = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(["html"]),
            extensions=["jinja2.ext.i18n"],
            trim_blocks=True,
            lstrip_blocks=True,
        )
        env.install_gettext_translations(  # type: ignore[attr-defined]
            translations(code, "dashboard"), newstyle=True
        )
        return env

    def render(
        self, request: Request, template: str, *, status: int = 200, **values: Any
    ) -> HTMLResponse:
        code, chosen = language_of(request)
        flashes = self.flashes.take(request.cookies.get(FlashBox.COOKIE))
        body = (
            self._envs[code]
            .get_template(template)
            .render(
                request=request,
                lang=code,
                html_lang=HTML_LANG[code],
                languages=LANGUAGES,
                csrf=self.csrf,
                flashes=flashes,
                current_path=request.url.path,
                **values,
            )
        )
        response = HTMLResponse(body, status_code=status)
        if chosen:
            response.set_cookie(
                LANG_COOKIE, code, max_age=365 * 86400, httponly=True, samesite="strict"
            )
        if flashes:
            response.delete_cookie(FlashBox.COOKIE)
        return response

    def render_text(self, code: str, template: str, **values: Any) -> str:
        """A template rendered outside a request (refusal pages)."""
        return (
            self._envs[code]
            .get_template(template)
            .render(lang=code, html_lang=HTML_LANG[code], languages=LANGUAGES, flashes=[], **values)
        )
