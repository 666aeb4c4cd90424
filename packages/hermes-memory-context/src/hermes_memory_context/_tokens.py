"""Counting the tokens of text and chat messages for `ContextCompressor`.

A host should pass the tokenizer of its own model (``count_tokens=``). Without one, tiktoken's
``o200k_base`` is used when the package is installed and its vocabulary loads (bounded: a
machine without the cached file and without network falls back after a few seconds), else
`estimate_tokens`.

`estimate_tokens` is a deliberately simple rule: one token per CJK character (Han, kana,
Hangul, CJK punctuation and full-width forms) and one token per four other characters,
rounded up. The usual "characters / 4" rule undercounts Chinese or Japanese text about four
times (a Han character is roughly one token for current OpenAI, Llama 3 and Qwen
tokenizers), which would let a CJK conversation overflow the window long before compression
starts.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "MESSAGE_OVERHEAD_TOKENS",
    "TokenCounter",
    "default_token_counter",
    "estimate_tokens",
    "message_tokens",
]

logger = logging.getLogger(__name__)

#: A callable that returns how many tokens a text takes.
TokenCounter = Callable[[str], int]
#: Tokens a chat message costs besides its text (role, separators), as OpenAI counts them.
MESSAGE_OVERHEAD_TOKENS = 4
#: Seconds tiktoken may take to load its vocabulary before the estimate is used instead.
_TIKTOKEN_LOAD_TIMEOUT = 5.0

_CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x31FF),  # Bopomofo, Hangul compatibility Jamo, Kanbun, Katakana extensions
    (0x3200, 0x4DBF),  # enclosed CJK, compatibility, extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7FF),  # Hangul syllables, Jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFE30, 0xFE4F),  # CJK compatibility forms
    (0xFF00, 0xFFEF),  # half-width and full-width forms
    (0x20000, 0x3FFFF),  # extensions B and later
)


# Runs of CJK characters: removing them in one pass is ~15x faster than matching each one.
_CJK_RUNS = re.compile(
    "[" + "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in _CJK_RANGES) + "]+"
)


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` without a tokenizer: CJK characters one each, other characters
    one per four (rounded up). See the module docstring for why."""
    if not text:
        return 0
    if text.isascii():  # O(1): CPython knows it
        return (len(text) + 3) // 4
    other = len(_CJK_RUNS.sub("", text))
    return len(text) - other + (other + 3) // 4


_default: TokenCounter | None = None
_default_lock = threading.Lock()


def _load_tiktoken() -> TokenCounter | None:
    """tiktoken's ``o200k_base`` counter, or None (not installed, or the vocabulary did not
    load within `_TIKTOKEN_LOAD_TIMEOUT` seconds)."""
    try:
        import tiktoken  # type: ignore[import-not-found, unused-ignore]  # optional
    except ImportError:
        return None
    box: dict[str, Any] = {}

    def load() -> None:
        try:
            box["encoding"] = tiktoken.get_encoding("o200k_base")
        except Exception as exc:  # no cached vocabulary and no network, ...
            box["error"] = exc

    thread = threading.Thread(target=load, name="hermes-memory-tiktoken", daemon=True)
    thread.start()
    thread.join(_TIKTOKEN_LOAD_TIMEOUT)
    encoding = box.get("encoding")
    if encoding is None:
        logger.info(
            "tiktoken could not load o200k_base (%s); token counts are estimated",
            box.get("error", "timed out"),
        )
        return None

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count


def default_token_counter() -> TokenCounter:
    """The counter used when none is given: tiktoken when it works, else `estimate_tokens`
    (decided once per process)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = _load_tiktoken() or estimate_tokens
        return _default


def cached_counter(count: TokenCounter) -> TokenCounter:
    """``count`` with an LRU cache: a conversation is counted again at every turn, and all
    but the newest messages were counted before."""
    return functools.lru_cache(maxsize=4096)(count)


def message_text(message: Mapping[str, Any]) -> str:
    """The text a message puts in the prompt: its content (text parts of a part list, other
    parts as JSON), its tool calls as JSON and a tool name."""
    content = message.get("content")
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(str(part["text"]))
            elif part is not None:
                parts.append(json.dumps(part, ensure_ascii=False, default=str))
    elif content is not None:
        parts.append(json.dumps(content, ensure_ascii=False, default=str))
    calls = message.get("tool_calls")
    if calls:
        parts.append(
            calls if isinstance(calls, str) else json.dumps(calls, ensure_ascii=False, default=str)
        )
    name = message.get("name")
    if isinstance(name, str):
        parts.append(name)
    return "\n".join(parts)


def message_tokens(message: Mapping[str, Any], count: TokenCounter) -> int:
    """Tokens one chat message takes in the prompt (text plus `MESSAGE_OVERHEAD_TOKENS`)."""
    return MESSAGE_OVERHEAD_TOKENS + int(count(message_text(message)))
