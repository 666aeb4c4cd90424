"""The FTS5 query sanitiser: any string in, a safe FTS5 expression (or nothing) out.

Supported user syntax: implicit AND between terms, ``OR``, ``NOT``, ``AND`` (upper case),
``"balanced phrases"`` and ``prefix*``. Everything else is treated as text. Every emitted
term is a double-quoted FTS5 string, so no character of the input can reach the FTS5 parser
as syntax: tokens joined by ``. - _ / @ % '`` are quoted whole (``scripts/deploy.sh`` →
``"scripts/deploy.sh"``), other punctuation splits terms, punctuation-only terms vanish,
dangling or doubled operators are dropped, and the input is capped at `MAX_QUERY_CHARS`.

Chinese, Japanese and Korean: the query is folded first (full-width forms to ASCII,
Traditional Chinese to Simplified, as the CJK index is), and an unquoted run of CJK text is
split into words (``数据库备份失败`` → ``数据库`` ``备份`` ``失败``, each an implicit-AND term
matched as a substring); particles and question words (``怎么``, ``的``, ``了``, ``吗``, …) are
dropped from a run that has other words and never count as content in the fallback. A
quoted run (``"数据库备份"``) must still occur verbatim.

English word forms: a `ParsedQuery` with ``fold`` (hybrid discovery's, `folded`) searches
each plain English content word of the natural-language fallback by its stem. The SQLite
archive searches its stemmed word index with the words as written; where there is none
(PostgreSQL, a read-only open of an older file) each word is searched as any of its regular
forms (`word_forms`: ``painting`` → paint, paints, painted, painting, painter, …), exact
terms OR-ed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from hermes_memory_sessions.search._cjk import split_cjk
from hermes_memory_sessions.search._cjk_text import CJK_STOP_WORDS, content_form, fold, segment_run

__all__ = [
    "MAX_QUERY_CHARS",
    "STOP_WORDS",
    "ParsedQuery",
    "Term",
    "any_terms",
    "folded",
    "latin_only",
    "parse_query",
    "term_has_cjk",
    "word_forms",
    "word_stem",
]

#: Longest query (in characters) that is looked at; the rest is ignored.
MAX_QUERY_CHARS = 2048
_OPERATORS = {"AND", "OR", "NOT"}
_PHRASE_OR_TOKEN = re.compile(r'"[^"]*"\*?|[^\s"]+|"')
# Characters that join a token instead of splitting it (the token is then quoted whole).
_JOINERS = ".-_/@%'"
_SPLIT = re.compile(r"[^\w.\-/@%'*]+")
_WORDCHAR = re.compile(r"\w")

#: Words dropped from the natural-language any-term fallback: English function words and
#: chat fillers only. Words such as "last", "years", "ago" or "time" stay: in a conversation
#: they are often what the answer says ("4 years ago"), and BM25's IDF already gives common
#: words little weight.
STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can could did didn do does doesn doing don down
    during each few for from further had has have having he her here hers herself him himself
    his how i if in into is isn it its itself just me more most my myself no nor not of off
    on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would
    you your yours yourself yourselves let lets let's us ok okay please thanks thank hi hello
    hey yes yeah sure
    """.split()  # noqa: SIM905
)


#: Shortest stem folded (``runs`` stays ``runs``: from ``run`` a short word's forms would
#: be mostly other words); a shorter word is searched as it is.
MIN_STEM = 4
#: Inflectional suffixes folded, tried in this order (one is removed at most).
_SUFFIXES = ("ies", "ing", "ed", "es", "s")
_PLAIN_WORD = re.compile(r"[a-z]+")


def word_forms(word: str) -> tuple[str, ...] | None:
    """The exact forms ``word`` is searched as in a folded fallback, or None (searched as it
    is): its stem (`word_stem`) with the regular inflections and agent nouns, ``-es`` after
    a sibilant or ``o``, a final ``e`` restored only where an ending was removed, a doubled
    final consonant after one short syllable, y/ies — ``paint`` → paint, paints, painted, painting,
    painter, ... A form that no message holds costs one index lookup.

    Exact forms rather than the prefix ``paint*``: SQLite's full-text index has no prefix
    index, so a prefix term merges the postings of every word it starts, once per
    statement (about +50 ms p50 per question at 1M messages, docs/benchmarks.md).
    """
    stem = word_stem(word)
    if stem is None:
        return None
    w = word.casefold()
    forms = [w, stem]
    if stem.endswith("e"):  # love: loves, loved, loving, lover
        forms += [stem + end for end in ("s", "d", "r", "rs")] + [stem[:-1] + "ing"]
    else:  # paint: paints, painted, painting, painter
        forms += [stem + end for end in ("s", "ed", "ing", "er", "ers")]
        if stem.endswith(("s", "x", "z", "ch", "sh", "o")):  # class: classes
            forms.append(stem + "es")
        undoubled = w[len(stem) : len(stem) + 1] == stem[-1]  # planning -> plan
        if w != stem and w.endswith(("ing", "ed", "es")) and not undoubled:  # dancing: dance
            forms.append(stem + "e")  # never for a bare word: plan is not "plane"
    vowels = "aeiou"
    one_syllable = len(re.findall("[aeiouy]+", stem)) == 1  # not "docker": "dockerring"
    short = stem[-1] not in vowels + "wxy" and stem[-2] in vowels and stem[-3] not in vowels
    if one_syllable and short:
        forms += [stem + stem[-1] + end for end in ("ing", "ed", "er", "ers")]  # swimming
    if stem.endswith("y"):  # story: stories, studied
        forms += [stem[:-1] + "ies", stem[:-1] + "ied"]
    elif w.endswith(("ies", "ied")):  # hobbies -> hobb: hobby
        forms += [stem + "y", stem + "ies", stem + "ied"]
    return tuple(dict.fromkeys(forms))


def word_stem(word: str) -> str | None:
    """The stem of ``word`` (its forms start with it), or None (searched as it is).

    One inflectional suffix is removed (``-ies -ing -ed -es -s``; when that leaves fewer
    than `MIN_STEM` letters, ``-ed``/``-es`` lose only their last letter: ``loved`` →
    ``love``); a doubled final consonant left by ``-ing``/``-ed`` is undoubled
    (``swimming`` → ``swim``). A word without a suffix is its own stem (``paint``, whose
    forms include ``painting``). Not ASCII letters only, or shorter than `MIN_STEM`: None.
    """
    w = word.casefold()
    if len(w) < MIN_STEM or not _PLAIN_WORD.fullmatch(w):
        return None
    for suffix in _SUFFIXES:
        if not w.endswith(suffix) or (suffix == "s" and w.endswith(("ss", "us", "is"))):
            continue
        stem = w[: -len(suffix)]
        doubled = len(stem) > MIN_STEM and stem[-1] == stem[-2] and stem[-1] not in "aeiouls"
        if suffix in ("ing", "ed") and doubled:  # swimm -> swim; "fall", "pass", "see" kept
            stem = stem[:-1]
        if len(stem) >= MIN_STEM:
            return stem
        if suffix in ("ed", "es") and len(w) - 1 >= MIN_STEM:
            return w[:-1]
    return w


@dataclass(frozen=True)
class Term:
    """One search term: its text (no quotes), and whether it is a prefix term."""

    text: str
    prefix: bool = False
    phrase: bool = False
    #: Exact word forms searched instead of ``text``, any of them (`word_forms`; only the
    #: natural-language fallback of a `ParsedQuery.fold` query has them).
    forms: tuple[str, ...] = ()

    def fts(self) -> str:
        """The term as a quoted FTS5 string (prefix ``*`` outside the quotes), or its forms
        OR-ed in parentheses."""
        if self.forms:
            return "(" + " OR ".join('"' + f.replace('"', '""') + '"' for f in self.forms) + ")"
        return '"' + self.text.replace('"', '""') + '"' + ("*" if self.prefix else "")


@dataclass(frozen=True)
class ParsedQuery:
    """A sanitised query, parsed once and handed down: `Term` and operator strings
    (``AND``/``OR``/``NOT``) in ``items``, and the query as given in ``text`` (what an
    embedder reads). What search derives from it is computed on first use and kept.
    """

    items: tuple[Term | str, ...] = ()
    text: str = ""
    #: The natural-language fallback searches each English content word as any of its word
    #: forms (`word_forms`: ``painting`` → paint, paints, painted, painting, painter, ...),
    #: so a question and its answer need not use the same form of a word. The AND pass and
    #: user syntax are never folded. Hybrid discovery asks for it (`folded`); the
    #: lexical-only path does not (it costs that path time; docs/benchmarks.md).
    fold: bool = False

    @cached_property
    def terms(self) -> tuple[Term, ...]:
        """The terms, without operators."""
        return tuple(i for i in self.items if isinstance(i, Term))

    @cached_property
    def has_syntax(self) -> bool:
        """True when the user wrote operators, phrases or prefixes (no NL fallback then)."""
        return any(isinstance(i, str) or i.prefix or i.phrase for i in self.items)

    @cached_property
    def has_cjk(self) -> bool:
        """True when some term contains an indexable CJK character."""
        return any(term_has_cjk(t) for t in self.terms)

    @cached_property
    def content_terms(self) -> tuple[Term, ...]:
        """Distinct content terms for the natural-language fallback (stop words out)."""
        return tuple(_content_terms(self))

    @cached_property
    def natural(self) -> bool:
        """True when the natural-language fallback applies: a plain question (no search
        syntax) with two content words or more."""
        return not self.has_syntax and len(self.content_terms) >= 2

    @cached_property
    def needles(self) -> tuple[str, ...]:
        """The words a snippet highlights, longest first (CJK runs whole)."""
        found: list[str] = []
        for t in self.terms:
            for is_cjk, seg in split_cjk(t.text):
                if is_cjk:
                    found.append(seg)
                else:
                    found.extend(w for w in re.findall(r"\w+", seg) if len(w) > 1 or not found)
        return tuple(sorted(set(found), key=len, reverse=True))

    def fts(self) -> str:
        """The FTS5 expression for the word index ("" when there is nothing to search)."""
        return " ".join(i if isinstance(i, str) else i.fts() for i in self.items)


def folded(parsed: ParsedQuery) -> ParsedQuery:
    """``parsed`` with its natural-language fallback searched by word forms (`fold`)."""
    return parsed if parsed.fold else replace(parsed, fold=True)


def term_has_cjk(term: Term) -> bool:
    """True when ``term`` holds an indexable CJK character."""
    return any(is_cjk for is_cjk, _ in split_cjk(term.text))


def latin_only(items: Sequence[Term | str]) -> list[Term | str]:
    """``items`` evaluated for a message without CJK text: every CJK term is false there.

    An AND group with a positive CJK term can never match and is dropped; ``NOT <cjk>`` is
    always true and disappears. Returns [] when nothing can match.
    """
    groups: list[list[Term | str]] = [[]]
    for item in items:
        if item == "OR":
            groups.append([])
        else:
            groups[-1].append(item)
    kept: list[list[Term | str]] = []
    for group in groups:
        out: list[Term | str] = []
        negate = False
        possible = True
        for item in group:
            if isinstance(item, str):
                negate = item == "NOT"
                continue
            if term_has_cjk(item):
                if not negate:
                    possible = False
                    break
            elif negate:
                if out:
                    out.extend(["NOT", item])
            else:
                out.append(item)
            negate = False
        if possible and out:
            kept.append(out)
    joined: list[Term | str] = []
    for group in kept:
        if joined:
            joined.append("OR")
        joined.extend(group)
    return joined


def _cjk_words(piece: str) -> list[str]:
    """``piece`` (a term's text holding CJK) as words: CJK runs segmented, stop words
    dropped unless nothing else is left, the other parts kept whole."""
    words: list[str] = []
    for is_cjk, seg in split_cjk(piece):
        if not is_cjk:
            seg = seg.strip(_JOINERS.replace("%", "")).lstrip("%")
            if seg and _WORDCHAR.search(seg):
                words.append(seg)
            continue
        run = segment_run(seg)
        content = [w for w in run if content_form(w) is not None]
        words.extend(content or run)
    return words


def _clean_token(raw: str, *, expand: bool = True) -> list[Term]:
    """Split one whitespace-delimited token into safe terms (``expand``: CJK runs into
    words; off inside quotes)."""
    out: list[Term] = []
    for part in _SPLIT.split(raw):
        if not part:
            continue
        prefix = part.endswith("*")
        part = part.replace("*", " ")
        for piece in part.split():
            piece = piece.strip(_JOINERS.replace("%", "")).lstrip("%")
            if piece and _WORDCHAR.search(piece):
                if expand and any(is_cjk for is_cjk, _ in split_cjk(piece)):
                    out.extend(Term(w) for w in _cjk_words(piece))
                else:
                    out.append(Term(piece, prefix=False))
        if prefix and out:
            out[-1] = Term(out[-1].text, prefix=True)
    return out


def parse_query(query: object) -> ParsedQuery:
    """Sanitise ``query`` into a `ParsedQuery`; never raises (non-strings give an empty query).

    A `ParsedQuery` is returned as it is: a caller that parsed the query once hands it down
    and nothing below parses it again.
    """
    if isinstance(query, ParsedQuery):
        return query
    if not isinstance(query, str):
        return ParsedQuery()
    text = fold(query[:MAX_QUERY_CHARS].replace("\x00", " "))
    items: list[Term | str] = []
    for m in _PHRASE_OR_TOKEN.finditer(text):
        tok = m.group()
        if tok == '"':
            continue
        if tok.startswith('"') and (tok.endswith('"') or tok.endswith('"*')) and len(tok) >= 2:
            prefix = tok.endswith("*")
            inner = tok[1 : -2 if prefix else -1]
            words = " ".join(t.text for t in _clean_token(inner.replace("*", " "), expand=False))
            if words:
                items.append(Term(words, prefix=prefix, phrase=" " in words))
            continue
        if tok in _OPERATORS:
            items.append(tok)
            continue
        items.extend(_clean_token(tok))
    # Drop operators that are leading, trailing or follow another operator.
    cleaned: list[Term | str] = []
    for item in items:
        if isinstance(item, str) and (not cleaned or isinstance(cleaned[-1], str)):
            continue
        cleaned.append(item)
    while cleaned and isinstance(cleaned[-1], str):
        cleaned.pop()
    return ParsedQuery(_without_particles(cleaned), query)


def _without_particles(items: list[Term | str]) -> tuple[Term | str, ...]:
    """``items`` without the CJK particles and question words of another CJK run than the
    query's content words (``返回502了吗``: ``了`` ``吗`` sit in a run of their own after the
    digits); a run's own particles are already dropped by `_cjk_words`. Kept when nothing
    else is left, and in queries with operators (their meaning must not change)."""
    if any(isinstance(i, str) for i in items):
        return tuple(items)
    kept = [
        t
        for t in items
        if isinstance(t, Term)
        and (t.phrase or t.prefix or not term_has_cjk(t) or content_form(t.text) is not None)
    ]
    return tuple(kept) if kept else tuple(items)


def any_terms(parsed: ParsedQuery) -> list[Term]:
    """Distinct content terms for the natural-language any-term fallback (stop words out):
    ``parsed.content_terms`` as a list."""
    return list(parsed.content_terms)


def _content_terms(parsed: ParsedQuery) -> list[Term]:
    seen: set[str] = set()
    stems: set[str] = set()
    out: list[Term] = []
    for term in parsed.terms:
        key = term.text.casefold()
        if key in seen or key in STOP_WORDS or key in CJK_STOP_WORDS:
            continue
        if not term.phrase and content_form(term.text) is None:
            continue
        form = content_form(term.text) or term.text
        if form != term.text:  # a Korean word without its particle
            term = Term(form, prefix=term.prefix, phrase=term.phrase)
            key = form.casefold()
            if key in seen:
                continue
        if len(key) < 2 and not parsed.has_cjk:
            continue
        seen.add(key)
        forms = None
        if parsed.fold and not term.phrase and not term.prefix and not parsed.has_syntax:
            forms = word_forms(term.text)
        if forms is not None:
            stem = word_stem(term.text) or term.text
            if stem in stems:  # "paint" and "painting" in one question: one term
                continue
            stems.add(stem)
            out.append(Term(term.text, forms=forms))
        else:
            out.append(Term(term.text, prefix=term.prefix, phrase=term.phrase))
    return out
