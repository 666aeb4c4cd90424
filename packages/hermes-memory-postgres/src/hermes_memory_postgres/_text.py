"""Words and CJK tokens made in Python, as PostgreSQL ``tsvector`` / ``tsquery`` literals.

PostgreSQL's own parser depends on the database's locale (how it splits Chinese text, what a
letter is), so nothing is left to it: documents and queries are tokenised here and handed to
the server as literals, whatever the server's configuration. The rules follow the SQLite
archive's (FTS5 ``unicode61 remove_diacritics 2``): a word is a run of letters and digits,
case-folded, diacritics removed; Chinese, Japanese and Korean text is indexed as one- and
two-character tokens by `hermes_memory_sessions.search.cjk_index_text` (through
`hermes_memory_sessions.storage.cjk_document`), so a query of one or two
characters is one index lookup and a longer run is the phrase of its bigrams.

Queries come from the SQLite archive's sanitiser (`hermes_memory_sessions.search.parse_query`):
the same terms, operators and fallbacks, rendered as ``tsquery`` instead of an FTS5 expression.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain

from hermes_memory_sessions.search import Term, split_cjk
from hermes_memory_sessions.storage import MESSAGE_INDEX_PREFIX, TOOL_INDEX_PREFIX, cjk_document

__all__ = [
    "MAX_POSITION",
    "cjk_tsvector",
    "render_tsquery",
    "word_tokens",
    "words_tsvector",
]

_WORD = re.compile(r"[^\W_]+")
#: PostgreSQL keeps word positions up to 16383; later words share the last position.
MAX_POSITION = 16383
#: Longest lexeme PostgreSQL accepts is 2047 bytes; longer runs are not indexed.
_MAX_LEXEME_BYTES = 2000
#: Characters of one message indexed (a tsvector is limited to 1 MB).
MAX_INDEXED_CHARS = 200_000


def _combining_class() -> str:
    """A regex character class of every code point with a non-zero combining class."""
    marks = [c for c in range(0x110000) if unicodedata.combining(chr(c))]
    ranges: list[tuple[int, int]] = []
    for c in marks:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1] = (ranges[-1][0], c)
        else:
            ranges.append((c, c))
    return "".join(
        re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in ranges
    )


#: Runs of code points with a non-zero combining class (what diacritic removal deletes).
_COMBINING = re.compile(f"[{_combining_class()}]+")
#: Whitespace-separated chunks up to this length are tokenised once and remembered.
_CACHED_CHUNK_CHARS = 64


def _fold(text: str) -> str:
    if text.isascii():  # the common case: NFKD is the identity and casefold is lower
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize("NFC", _COMBINING.sub("", decomposed)).casefold()


@lru_cache(maxsize=32768)
def _chunk_words(chunk: str) -> tuple[str, ...]:
    """The words of one whitespace-free chunk (cached: chat text repeats its words)."""
    return tuple(_WORD.findall(_fold(chunk)))


def word_tokens(text: str | None) -> list[str]:
    """The words of ``text`` in order: letter/digit runs, case-folded, diacritics removed.

    Folding never joins or splits across whitespace (no decomposition or composition
    involves a whitespace character, and folded whitespace is never a letter), so text
    that is not ASCII is tokenised chunk by chunk, each distinct chunk once per process.
    """
    if not text:
        return []
    text = text[:MAX_INDEXED_CHARS]
    words: list[str]
    if text.isascii():
        words = _WORD.findall(text.lower())
        if len(text) <= _MAX_LEXEME_BYTES:  # lower() keeps the length: no word too long
            return words
    else:
        chunks = text.split()
        if max(map(len, chunks), default=0) <= _CACHED_CHUNK_CHARS:
            words = list(chain.from_iterable(map(_chunk_words, chunks)))
        else:
            words = _WORD.findall(_fold(text))
    if words and max(map(len, words)) > _MAX_LEXEME_BYTES:
        words = [w for w in words if len(w) <= _MAX_LEXEME_BYTES]
    return words


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(tokens: Sequence[str]) -> str:
    """A ``tsvector`` literal holding ``tokens`` at positions 1, 2, ...

    Each occurrence is written as it comes (``'a':1 'b':2 'a':3``): PostgreSQL's input
    function merges a lexeme's positions, clamps them at `MAX_POSITION` and keeps 256 per
    lexeme, so the common case is one ``%`` of a template remembered per token count.
    Tokens with a quote or a backslash, or longer than PostgreSQL accepts (never made by
    `word_tokens`), take the careful path.
    """
    if not tokens:
        return ""
    joined = "".join(tokens)
    if (
        "'" not in joined
        and "\\" not in joined
        and (
            len(joined) <= _MAX_LEXEME_BYTES // 4 or max(map(len, tokens)) <= _MAX_LEXEME_BYTES // 4
        )
    ):
        n = len(tokens)
        if n <= _TEMPLATE_MAX:
            return _template(n) % tuple(tokens)
        return " ".join(map(_OCCURRENCE, tokens, range(1, n + 1)))
    return " ".join(
        f"{_quote(tok)}:{pos}"
        for pos, tok in enumerate(tokens, start=1)
        if len(tok.encode("utf-8")) <= _MAX_LEXEME_BYTES
    )


_OCCURRENCE = "'{}':{}".format
#: Token counts up to this get a remembered ``'%s':1 '%s':2 ...`` template.
_TEMPLATE_MAX = 256


@lru_cache(maxsize=_TEMPLATE_MAX)
def _template(n: int) -> str:
    return " ".join(f"'%s':{i}" for i in range(1, n + 1))


def words_document(role: str | None, content: str | None, tool_name: str | None,
                   tool_calls: str | None) -> list[str]:  # fmt: skip
    """The tokens of the word index of one message (content, tool name and tool calls; a
    tool result only by its first `TOOL_INDEX_PREFIX` characters, other content and tool
    calls by their first `MESSAGE_INDEX_PREFIX`), as the SQLite archive."""
    text = (content or "")[: TOOL_INDEX_PREFIX if role == "tool" else MESSAGE_INDEX_PREFIX]
    if not tool_name and not tool_calls:  # most messages: the text alone
        return word_tokens(text)
    calls = (tool_calls or "")[:MESSAGE_INDEX_PREFIX]
    return word_tokens(" ".join(p for p in (text, tool_name or "", calls) if p))


def words_tsvector(role: str | None, content: str | None, tool_name: str | None,
                   tool_calls: str | None) -> str:  # fmt: skip
    """The word-index ``tsvector`` literal of one message."""
    return tsvector_literal(words_document(role, content, tool_name, tool_calls))


def cjk_tsvector(role: str | None, content: str | None, tool_calls: str | None) -> str | None:
    """The CJK-index ``tsvector`` literal of one message, None when it holds no CJK."""
    if _ascii_or_absent(content) and _ascii_or_absent(tool_calls):  # no CJK: skip the scan
        return None
    doc = cjk_document(role, content, tool_calls)
    if doc is None:
        return None
    return tsvector_literal(word_tokens(doc))


def _ascii_or_absent(value: object) -> bool:
    """True when ``value`` holds no CJK text for `cjk_document`: not text, or ASCII
    (``str.isascii`` reads a flag CPython keeps, without scanning)."""
    return not isinstance(value, str) or value.isascii()


def _phrase(tokens: Sequence[str], prefix: bool) -> str:
    parts = [_quote(t) for t in tokens]
    if prefix and parts:
        parts[-1] += ":*"
    if len(parts) == 1:
        return parts[0]
    return "(" + " <-> ".join(parts) + ")"


def term_tsquery(term: Term, *, cjk: bool) -> str:
    """One sanitised term as ``tsquery`` text on the word or the CJK index ("" if empty)."""
    if not cjk and term.forms:  # any of the word's forms (a folded fallback term)
        forms = [_quote(f) for f in term.forms if word_tokens(f) == [f]]
        return forms[0] if len(forms) == 1 else "(" + " | ".join(forms) + ")"
    if not cjk:
        tokens = word_tokens(term.text)
        return _phrase(tokens, term.prefix) if tokens else ""
    parts: list[str] = []
    segments = split_cjk(term.text)
    for idx, (is_cjk, seg) in enumerate(segments):
        if is_cjk:
            # Folded as the document's tokens are (`word_tokens`): diacritic removal also
            # drops kana voicing marks (データ is indexed as テータ).
            seg = _fold(seg)
            if len(seg) <= 2:
                parts.append(_quote(seg))
            else:
                parts.append(_phrase([seg[i : i + 2] for i in range(len(seg) - 1)], False))
            continue
        words = word_tokens(seg)
        for w_idx, word in enumerate(words):
            last = idx == len(segments) - 1 and w_idx == len(words) - 1
            parts.append(_phrase([word], term.prefix and last))
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else "(" + " & ".join(parts) + ")"


_OPS = {"AND": "&", "OR": "|", "NOT": "& !"}


def render_tsquery(items: Sequence[Term | str], *, cjk: bool) -> str:
    """The ``tsquery`` for a sanitised item list (terms and ``AND``/``OR``/``NOT``).

    Mirrors the SQLite archive's FTS5 rendering: implicit AND between terms, a dangling or
    doubled operator dropped, ``a NOT b`` meaning *a and not b*.
    """
    out: list[str] = []
    for item in items:
        if isinstance(item, str):
            if out and out[-1] not in _OPS:
                out.append(item)
            continue
        expr = term_tsquery(item, cjk=cjk)
        if expr:
            if out and out[-1] not in _OPS:
                out.append("AND")
            out.append(expr)
    while out and out[-1] in _OPS:
        out.pop()
    return " ".join(_OPS.get(x, x) for x in out)
