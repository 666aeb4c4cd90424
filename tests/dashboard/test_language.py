"""Which language a page speaks: ``?lang=``, then the cookie, then ``Accept-Language``."""

from __future__ import annotations

import pytest
from starlette.requests import Request

from hermes_memory_cli._dashboard._web import LANG_COOKIE, language_of


def request(query: str = "", accept: str = "", cookie: str = "") -> Request:
    headers = []
    if accept:
        headers.append((b"accept-language", accept.encode()))
    if cookie:
        headers.append((b"cookie", f"{LANG_COOKIE}={cookie}".encode()))
    return Request({"type": "http", "query_string": query.encode(), "headers": headers})


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh_CN"),
        ("en-US,en;q=0.9,zh-CN;q=0.8", "en"),
        ("fr-FR, zh-TW;q=0.8, en;q=0.5", "zh_CN"),  # the best one we have
        ("en;q=0.2, zh-Hans;q=0.9", "zh_CN"),  # by q, not by order
        ("zh-CN;q=0, en", "en"),  # q=0 means "not this"
        ("de, fr", "en"),
        ("", "en"),
        ("*", "en"),
    ],
)
def test_accept_language(accept: str, expected: str) -> None:
    assert language_of(request(accept=accept)) == (expected, False)


def test_the_query_wins_and_is_reported_as_a_choice() -> None:
    assert language_of(request("lang=zh-CN", accept="en")) == ("zh_CN", True)
    assert language_of(request("lang=en", cookie="zh_CN")) == ("en", True)
    assert language_of(request("lang=klingon", accept="zh")) == ("zh_CN", False)


def test_the_remembered_choice_beats_the_browser() -> None:
    assert language_of(request(accept="en", cookie="zh_CN")) == ("zh_CN", False)
    assert language_of(request(accept="zh-CN", cookie="not-a-language")) == ("zh_CN", False)
