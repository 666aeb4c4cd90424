"""Text handling of the fact store: normalisation, search terms, entities, session-end rules.

Everything here is pure Python and language-aware enough for mixed Latin/CJK text: search
terms are words of Latin-like scripts plus overlapping CJK bigrams (Chinese and Japanese have
no spaces between words), computed after NFKC (full-width forms fold to ASCII) with invisible
format characters (zero-width spaces and joiners, bidi marks) removed.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "MAX_CONTENT_CHARS",
    "alias_pairs",
    "clean_content",
    "extract_entities",
    "extract_session_facts",
    "normalize",
    "terms",
]

#: The longest fact kept (longer content is refused, never cut silently).
MAX_CONTENT_CHARS = 4000

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+(?:['’.\-][^\W_{_CJK}]+)*", re.UNICODE)
_CJK_RUN = re.compile(rf"^[{_CJK}]+$")

_STOP_WORD_TEXT = (
    "a an the and or but if of to in on at by for with from as is are was were be been "
    "being do does did done have has had having i me my we our you your he she it its "
    "they them their this that these those what which who whom whose when where why how "
    "not no yes so than then there here about into over under again just also very can "
    "could would should will shall may might must any all some each few more most other "
    "such only own same too s t don "
)
STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())


def _strip_invisible(text: str) -> str:
    # Cf = format characters: zero-width space/joiners, bidi controls, soft hyphen, BOM.
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def normalize(text: str) -> str:
    """NFKC, invisible characters removed, case-folded, whitespace collapsed."""
    folded = _strip_invisible(unicodedata.normalize("NFKC", text)).casefold()
    return " ".join(folded.split())


def clean_content(text: str) -> str:
    """A fact's stored form: NFC, invisible characters removed, whitespace collapsed.

    Case and punctuation are kept (the model reads this text back).
    """
    return " ".join(_strip_invisible(unicodedata.normalize("NFC", text)).split())


def terms(text: str, *, keep_stop_words: bool = False) -> list[str]:
    """Search terms of ``text``: normalised words (stop words and 1-letter words dropped
    unless ``keep_stop_words``) and CJK bigrams (a lone CJK character is its own term)."""
    out: list[str] = []
    for token in _TOKEN.findall(normalize(text)):
        if _CJK_RUN.match(token):
            if len(token) == 1:
                out.append(token)
            else:
                out.extend(token[i : i + 2] for i in range(len(token) - 1))
            continue
        if not keep_stop_words and (token in STOP_WORDS or len(token) < 2):
            continue
        out.append(token)
    return out


# ----------------------------------------------------------------- entities
_QUOTED = re.compile(
    r"\"([^\"\n]{2,80})\"|“([^”\n]{2,80})”|「([^」\n]{1,80})」|『([^』\n]{1,80})』"
)
_AKA = re.compile(
    r"\b([A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){0,4})\s*,?\s+(?:aka|a\.k\.a\.|also known as)\s+"
    r"([A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){0,4})"
)
_CAPITALISED = re.compile(r"\b[A-Z][\w\-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w\-]*){0,7}")
_GENERIC_TEXT = (
    "the this that these those it we i you he she they our my your his her their a an if "
    "when while after before then also yes no please thanks today yesterday tomorrow "
    "monday tuesday wednesday thursday friday saturday sunday "
)
_GENERIC_STARTS = frozenset(_GENERIC_TEXT.split())


def alias_pairs(text: str) -> list[tuple[str, str]]:
    """``(name, alias)`` for every ``X aka Y`` / ``X also known as Y`` in ``text``."""
    text = _strip_invisible(unicodedata.normalize("NFKC", text))
    return [(m.group(1).strip(), m.group(2).strip()) for m in _AKA.finditer(text)]


def extract_entities(text: str) -> list[str]:
    """Named things in ``text``: quoted spans, both sides of ``X aka Y``, and capitalised
    phrases (a generic sentence-initial word such as "The" or "We" is dropped, possessive
    ``'s`` removed). At most 80 characters / 8 words each; order of first appearance,
    compared case-insensitively."""
    text = _strip_invisible(unicodedata.normalize("NFKC", text))
    found: list[str] = []
    quoted_spans: list[tuple[int, int]] = []
    for match in _QUOTED.finditer(text):
        value = next(g for g in match.groups() if g)
        found.append(value)
        quoted_spans.append(match.span())
    for match in _AKA.finditer(text):
        found.extend([match.group(1), match.group(2)])
    for match in _CAPITALISED.finditer(text):
        if any(start <= match.start() < end for start, end in quoted_spans):
            continue
        words = match.group(0).split()
        while words and words[0].lower() in _GENERIC_STARTS:
            words = words[1:]
        while words and words[-1].lower() in {"of", "de", "the"}:
            words = words[:-1]
        if not words:
            continue
        phrase = re.sub(r"['’]s$", "", " ".join(words))
        if len(phrase) < 2 or phrase.isdigit():
            continue
        found.append(phrase)
    seen: set[str] = set()
    out: list[str] = []
    for value in found:
        value = " ".join(value.split()).strip(" .,;:!?")
        key = value.casefold()
        if not value or key in seen or len(value) > 80 or len(value.split()) > 8:
            continue
        if key in {"aka", "also known as"} or key in STOP_WORDS:
            continue
        seen.add(key)
        out.append(value)
    return out


# ----------------------------------------------------------------- session-end extraction
_PREFERENCE = [
    re.compile(r"\bI\s+(?:really\s+)?(?:prefer|like|love|use|want|need|hate|dislike)\s+\S", re.I),
    re.compile(r"\bmy\s+(?:favou?rite|preferred)\s+\w+(?:\s+\w+)?\s+(?:is|are)\s+\S", re.I),
    re.compile(r"\bI\s+(?:always|never|usually)\s+\S", re.I),
    re.compile(r"我(?:喜欢|更喜欢|偏好|习惯|总是|从不|不喜欢|讨厌|需要)"),
]
_DECISION = [
    re.compile(r"\bwe\s+(?:have\s+)?(?:decided|agreed|chose|settled\s+on)\b", re.I),
    re.compile(r"\bthe\s+project\s+(?:uses|needs|requires|will\s+use)\b", re.I),
    re.compile(r"\blet'?s\s+go\s+with\b", re.I),
    re.compile(r"我们(?:决定|同意|选择|定了)"),
]
_SUMMARY_MARKERS = ("[context summary", "<summary", "conversation summary", "[compacted")


def extract_session_facts(
    messages: list[dict[str, object]], *, max_chars: int = 400
) -> list[tuple[str, str]]:
    """Preferences and decisions the user stated, as ``(category, content)`` pairs.

    Rule-based, no model: each user message of at least 10 characters is split into
    sentences; a sentence matching a preference pattern ("I prefer …", "my favourite … is",
    "I always/never/usually …") becomes a ``user_pref`` fact, one matching a decision
    pattern ("we decided/agreed/chose …", "the project uses/needs …") a ``project`` fact.
    Compaction summaries are skipped. Each fact is cut to ``max_chars`` at a word boundary.
    """
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if not isinstance(content, str) or len(content.strip()) < 10:
            continue
        if content.lstrip().lower().startswith(_SUMMARY_MARKERS):
            continue
        for sentence in re.split(r"(?<=[.!?。！？])\s*|\n+", content):
            sentence = clean_content(sentence)
            if len(sentence) < 10:
                continue
            category = ""
            if any(p.search(sentence) for p in _DECISION):
                category = "project"
            elif any(p.search(sentence) for p in _PREFERENCE):
                category = "user_pref"
            if not category:
                continue
            if len(sentence) > max_chars:
                cut = sentence[:max_chars].rsplit(" ", 1)[0]
                sentence = (cut if len(cut) > max_chars // 2 else sentence[:max_chars]) + "…"
            key = normalize(sentence)
            if key not in seen:
                seen.add(key)
                out.append((category, sentence))
    return out
