"""The gitleaks rule set, run with Python's ``re`` (used by :mod:`hermes_memory_guard._redact`).

``rules/gitleaks.toml`` is gitleaks' published default configuration (MIT, see its header),
shipped unmodified. Its rules are written for Go's RE2 engine; :func:`convert_regex` rewrites
the few constructs Python spells differently (``(?i)`` in mid-pattern, POSIX classes such as
``[[:alnum:]]``, ``\\z``, end-of-text ``$``, set-operator look-alikes inside classes) and raises
:class:`RuleConversionError` for anything it does not know, so no rule is dropped silently.

A rule is applied the way gitleaks applies it to a file's contents: it runs only when one of
its ``keywords`` occurs in the lower-cased text; the secret is its ``secretGroup``, else its
first non-empty unnamed group, else the whole match; a secret whose Shannon entropy is not
above the rule's ``entropy`` is dropped, and so is one that a global or rule allow-list
accepts (``regexes`` on the secret / match / line, ``stopwords`` in the secret). Path-based
parts do not apply to chat text: rules restricted to file paths are excluded (listed in
:data:`EXCLUDED_RULES` with the reason) and allow-lists that need a path never match.

Two things differ from a literal translation, both for speed and neither changes the
result:

* "Assignment template" rules (``[\\w.-]{0,50}?`` + a vendor keyword + ``=``/``:`` + value,
  96 of them, including ``generic-api-key``) are not searched from every position: the
  leading ``[\\w.-]{0,50}?`` only decides where the match starts, so the rest of the regex is
  matched at each occurrence of the keyword group (found with ``str.find``), and the match
  start is taken back over at most 50 preceding ``[\\w.-]`` characters per such prefix.
* Keywords are found with one alternation regex built as a trie (one pass over the text).

Chat is not a source file, so two boundaries are wider than upstream's: a token may also
end before sentence punctuation, CJK text or markup (``**…**``, ``<code>…</code>``, ``~~…~~``,
a closing ``_``), and a rule that starts with ``\\b`` is also tried right after an opening
``_``/``__`` (Markdown emphasis, "_sk_live_…_").

Everything is built on first use (:func:`load_rules`): importing this module reads nothing.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Final

__all__ = [
    "EXCLUDED_RULES",
    "RULES_RESOURCE",
    "WHOLE_MATCH_RULES",
    "RuleConversionError",
    "RuleSet",
    "SecretRule",
    "convert_regex",
    "load_rules",
    "shannon_entropy",
    "trie_regex",
]

#: Package-relative path of the rule file.
RULES_RESOURCE: Final = "rules/gitleaks.toml"

#: Rules of the upstream file that are deliberately not applied, with the reason. Every other
#: rule is converted and used; the tests check both lists add up to the file's rule count.
EXCLUDED_RULES: Final[dict[str, str]] = {
    "pkcs12-file": "path-only rule (flags a *.p12/*.pfx file by its name); chat text has no path",
    "freemius-secret-key": "applies to *.php files only; chat text has no path",
    "hashicorp-tf-password": "applies to *.tf/*.hcl files only; chat text has no path",
    "kubernetes-secret-yaml": "applies to *.yaml files only; chat text has no path",
    "nuget-config-password": "applies to nuget.config files only; chat text has no path",
}

#: Rules whose upstream capture groups do not hold the credential, so the whole match is
#: the secret instead (checked for every rule by tests/guard/test_redact_rule_captures.py).
WHOLE_MATCH_RULES: Final[dict[str, str]] = {
    "microsoft-teams-webhook": "its only groups repeat a GUID's ([a-z0-9]{4}-), so the first "
    "group is a 5-character fragment; the whole webhook URL is the credential",
}

#: Regex flags every converted pattern is compiled with: RE2's ``\\w``, ``\\d``, ``\\s``, ``\\b``
#: are ASCII-only, so are these (CJK next to a token is a word boundary, as in gitleaks).
FLAGS: Final = re.ASCII

#: Characters a secret is extended over when a rule's match stops inside a longer token.
#: ``str.lower`` for ASCII letters only (the rules are ASCII; used when lengths would change).
_ASCII_LOWER: Final = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}
_TOKEN_TAIL_RE: Final = re.compile(r"[A-Za-z0-9_-]{1,512}")
_TOKEN_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


class RuleConversionError(ValueError):
    """A rule's Go (RE2) regex uses a construct :func:`convert_regex` cannot translate."""


# --- RE2 -> Python ------------------------------------------------------------------------------

_POSIX_CLASSES: Final[dict[str, str]] = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "xdigit": "0-9a-fA-F",
    "upper": "A-Z",
    "lower": "a-z",
    "space": r"\t\n\v\f\r ",
    "blank": r"\t ",
    "word": r"\w",
    "punct": r"!-/:-@\[-`{-~",
    "cntrl": r"\x00-\x1f\x7f",
    "print": r" -~",
    "graph": r"!-~",
}
#: Escapes RE2 knows and Python spells the same way (plus \z, rewritten to \Z).
_SAME_ESCAPES: Final = frozenset("afnrtvdDsSwWbBA0123456789xz")
#: Inside a class Python warns about (and may one day interpret) doubled - & ~ |.
_SET_OPERATOR_CHARS: Final = frozenset("-&~|")


def convert_regex(source: str) -> str:
    """Translate a gitleaks (Go RE2) regex to Python ``re`` syntax with the same meaning.

    Handled: ``(?i)`` anywhere (RE2 applies it to the rest of the enclosing group, across
    ``|``; Python only accepts it at the very start, so it becomes ``(?i:…)`` around each
    remaining alternative), POSIX classes inside brackets, ``\\z``, ``$`` (end of text in
    RE2 without ``(?m)``), a literal ``[`` or a doubled ``- & ~ |`` inside a class. Scoped
    flags ``(?i:…)``, ``(?-i:…)``, ``(?s:…)`` and named groups ``(?P<n>…)`` are already
    Python syntax. Compile the result with :data:`FLAGS`.

    :raises RuleConversionError: on constructs without a faithful translation (Unicode
        classes ``\\p{…}``, ``\\Q…\\E``, global flags other than ``i``, unknown POSIX classes).
    """
    out: list[str] = []
    depth = 0
    # Depths at which a "(?i:" wrapper emitted for a bare "(?i)" is still open.
    open_wrappers: list[int] = []
    i, n = 0, len(source)
    in_class = False
    while i < n:
        char = source[i]
        if char == "\\":
            if i + 1 >= n:
                raise RuleConversionError(f"trailing backslash in {source!r}")
            nxt = source[i + 1]
            if nxt.isalnum() and nxt not in _SAME_ESCAPES:
                raise RuleConversionError(f"unsupported escape \\{nxt} in {source!r}")
            out.append(r"\Z" if nxt == "z" and not in_class else "\\" + nxt)
            i += 2
            continue
        if in_class:
            if source.startswith("[:", i):
                end = source.find(":]", i + 2)
                name = source[i + 2 : end] if end >= 0 else ""
                if name not in _POSIX_CLASSES:
                    raise RuleConversionError(f"unknown POSIX class at {i} in {source!r}")
                out.append(_POSIX_CLASSES[name])
                i = end + 2
                continue
            if char == "]":
                in_class = False
                out.append(char)
            elif char == "[" or (char in _SET_OPERATOR_CHARS and out and out[-1] == char):
                out.append("\\" + char)
            else:
                out.append(char)
            i += 1
            continue
        if char == "[":
            in_class = True
            out.append(char)
            i += 1
            if source.startswith("^", i):
                out.append("^")
                i += 1
            if source.startswith("]", i):  # a leading ] is a literal in both dialects
                out.append(r"\]")
                i += 1
            continue
        if char == "(" and source.startswith("(?", i):
            flags_end = source.find(")", i)
            colon = source.find(":", i)
            is_bare_flags = flags_end > 0 and (colon < 0 or flags_end < colon)
            flags = source[i + 2 : flags_end] if is_bare_flags else ""
            if is_bare_flags and not flags.startswith(("P<", "<", "=", "!")):
                if flags != "i":
                    raise RuleConversionError(f"unsupported flags (?{flags}) in {source!r}")
                out.append("(?i:")
                open_wrappers.append(depth)
                i = flags_end + 1
                continue
            if source.startswith(("(?=", "(?!", "(?<"), i):
                raise RuleConversionError(f"look-around is not RE2 syntax: {source!r}")
        if char == "(":
            depth += 1
        elif char == ")":
            while open_wrappers and open_wrappers[-1] == depth:
                open_wrappers.pop()
                out.append(")")
            depth -= 1
        elif char == "|":
            wrappers = 0
            while open_wrappers and open_wrappers[-1] == depth:
                open_wrappers.pop()
                wrappers += 1
            if wrappers:
                out.append(")" * wrappers + "|" + "(?i:" * wrappers)
                open_wrappers.extend([depth] * wrappers)
                i += 1
                continue
        elif char == "$":
            out.append(r"\Z")
            i += 1
            continue
        out.append(char)
        i += 1
    if in_class:
        raise RuleConversionError(f"unterminated character class in {source!r}")
    out.extend(")" for _ in open_wrappers)
    return "".join(out)


def _compile(source: str) -> re.Pattern[str]:
    try:
        return re.compile(convert_regex(source), FLAGS)
    except re.error as exc:
        raise RuleConversionError(f"{source!r} does not compile: {exc}") from exc


# --- literal prefixes of a keyword group (for the assignment-template rules) --------------------

_MAX_PREFIXES: Final = 256


def _literal_prefixes(source: str) -> tuple[str, ...] | None:
    """Lower-cased literals, one of which starts every match of ``source`` (a small RE2 group).

    ``None`` when some match could start without a usable literal (then the caller searches
    with the regex). Understands literals, escapes, ``(?:…)``/``(?-i:…)``/``(…)`` groups with
    ``|``, small classes like ``[_.-]`` and the ``?`` quantifier; anything else ends the
    literal there (a shorter prefix is still a correct prefix).
    """
    parser = _PrefixParser(source)
    try:
        options = parser.alternation()
    except _PrefixParser.Unsupported:
        return None
    if parser.pos != len(source):
        return None
    prefixes = {text.lower() for text, _ in options}
    if "" in prefixes:
        return None
    return tuple(sorted(prefixes))


class _PrefixParser:
    """Recursive descent over the subset of RE2 that keyword groups use."""

    class Unsupported(Exception):
        """The group needs a construct this parser does not model."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0

    def alternation(self) -> list[tuple[str, bool]]:
        options = self.sequence()
        while self.pos < len(self.source) and self.source[self.pos] == "|":
            self.pos += 1
            options += self.sequence()
        if len(options) > _MAX_PREFIXES:
            raise self.Unsupported
        return options

    def sequence(self) -> list[tuple[str, bool]]:
        """``(text, complete)`` pairs: complete = the text is the whole sequence so far."""
        current: list[tuple[str, bool]] = [("", True)]
        source = self.source
        while self.pos < len(source) and source[self.pos] not in "|)":
            item = self.item()
            quantifier = self.quantifier()
            if quantifier == "?":
                item = [*item, ("", True)]
            elif quantifier:
                item = [("", False)]  # repeated: the literal stops before it
            combined: list[tuple[str, bool]] = []
            for text, complete in current:
                if not complete:
                    combined.append((text, False))
                    continue
                combined.extend((text + more, more_complete) for more, more_complete in item)
            current = list(dict.fromkeys(combined))
            if len(current) > _MAX_PREFIXES:
                raise self.Unsupported
        return current

    def quantifier(self) -> str:
        source = self.source
        if self.pos < len(source) and source[self.pos] in "?*+":
            quantifier = source[self.pos]
            self.pos += 1
        elif self.pos < len(source) and source[self.pos] == "{":
            end = source.find("}", self.pos)
            if end < 0:
                raise self.Unsupported
            quantifier = source[self.pos : end + 1]
            self.pos = end + 1
        else:
            return ""
        if self.pos < len(source) and source[self.pos] in "?+":  # lazy / possessive marker
            self.pos += 1
        return quantifier

    def item(self) -> list[tuple[str, bool]]:
        source = self.source
        char = source[self.pos]
        if char == "(":
            for opener in ("(?:", "(?-i:", "(?i:", "("):
                if source.startswith(opener, self.pos):
                    break
            if source.startswith("(?", self.pos) and opener == "(":
                raise self.Unsupported  # named group, flags, …
            self.pos += len(opener)
            options = self.alternation()
            if self.pos >= len(source) or source[self.pos] != ")":
                raise self.Unsupported
            self.pos += 1
            return options
        if char == "[":
            end = source.find("]", self.pos + 1)
            body = source[self.pos + 1 : end] if end > self.pos + 1 else ""
            self.pos = end + 1
            chars: list[str] = []
            index = 0
            while index < len(body):
                if body[index] == "\\" and index + 1 < len(body) and not body[index + 1].isalnum():
                    chars.append(body[index + 1])
                    index += 2
                elif body[index] in "\\^[" or (body[index] == "-" and 0 < index < len(body) - 1):
                    return [("", False)]  # a range or a class escape: no literal
                else:
                    chars.append(body[index])
                    index += 1
            if not chars:
                raise self.Unsupported
            return [(c, True) for c in chars]
        self.pos += 1
        if char == "\\":
            escaped = source[self.pos : self.pos + 1]
            self.pos += 1
            if escaped and not escaped.isalnum():
                return [(escaped, True)]
            return [("", False)]
        if char in ".^$":
            return [("", False)]
        return [(char, True)]


# --- rules --------------------------------------------------------------------------------------


def shannon_entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character (gitleaks' definition)."""
    if not text:
        return 0.0
    length = len(text)
    return -sum(count / length * math.log2(count / length) for count in Counter(text).values())


@dataclass(frozen=True, slots=True)
class _Allowlist:
    """One gitleaks allow-list, reduced to what applies to text without a path or commit."""

    target: str  # "secret", "match" or "line"
    regexes: tuple[re.Pattern[str], ...]
    stopwords: tuple[str, ...]
    #: condition AND with a path or commit part: can never hold for chat text.
    never: bool

    @classmethod
    def from_toml(cls, table: dict[str, object]) -> _Allowlist:
        regexes = tuple(_compile(str(r)) for r in _strings(table.get("regexes")))
        stopwords = tuple(str(w).lower() for w in _strings(table.get("stopwords")))
        needs_context = bool(table.get("paths") or table.get("commits"))
        condition = str(table.get("condition", "OR")).upper()
        return cls(
            target=str(table.get("regexTarget", "secret")),
            regexes=regexes,
            stopwords=stopwords,
            never=condition == "AND" and needs_context,
        )

    def allows(self, secret: str, match: str, line: str) -> bool:
        if self.never:
            return False
        target = {"match": match, "line": line}.get(self.target, secret)
        if target and any(r.search(target) for r in self.regexes):
            return True
        if not secret or not self.stopwords:
            return False
        return _stopword_regex(self.stopwords).search(secret.lower()) is not None


@cache
def _stopword_regex(stopwords: tuple[str, ...]) -> re.Pattern[str]:
    """One trie regex for a stop-word list (generic-api-key has about 1,500 words)."""
    return re.compile(trie_regex(stopwords))


def _strings(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


#: How 150-odd gitleaks rules end a token: a quote, whitespace, ``;``, an escaped newline or
#: the end. In chat a token is as often followed by sentence punctuation, CJK text or
#: markup ("key npm_… ." / "令牌npm_…已泄露" / "**sk_live_…**" / "<code>hf_…</code>" /
#: "?t=npm_…&x=1"), so those may follow too (looked at, not consumed); so may a closing
#: ``_``/``__`` emphasis, but not an underscore that goes on into a snake_case identifier.
_TOKEN_END: Final = r"""(?:[\x60'"\s;]|\\[nr]|\Z)"""  # noqa: S105 (a regex, as converted)
_CHAT_TOKEN_END: Final = (
    r"""(?:[\x60'"\s;]|\\[nr]|\Z"""  # noqa: S105 (a regex)
    r"|(?=[.,!?:)\]}>*~<&|]|_{1,2}(?![A-Za-z0-9_])|[^\x00-\x7f]))"
)
#: RE2's ``\b`` at the start of a rule: "_sk_live_…_" (Markdown emphasis) has none before
#: the token, so such rules are also tried, without it, right after an opening ``_``/``__``
#: (:data:`_EMPHASIS_OPENER_RE`). Done apart because a wider start in the regex itself
#: (look-behinds) doubles the cost of the rules that scan every text ("ey", "s.").
_WORD_BOUNDARY: Final = r"\b"
_CASELESS: Final = "(?i:"
#: An opening ``_``/``__`` (not inside a word) before a letter or digit; matches end where
#: the emphasised token starts. The literal ``_`` first lets ``re`` skip to underscores.
_EMPHASIS_OPENER_RE: Final = re.compile(r"_(?<![A-Za-z0-9_]_)_?(?=[A-Za-z0-9])")


def _chat_regex(converted: str) -> str:
    """A converted rule regex with the chat token end (:data:`_CHAT_TOKEN_END`)."""
    return converted.replace(_TOKEN_END, _CHAT_TOKEN_END)


def _compile_rule(source: str, *, after_boundary: bool = False) -> re.Pattern[str]:
    """Convert and compile a rule's regex for chat text (see :func:`_chat_regex`);
    ``after_boundary``: without its leading ``\\b`` (:data:`_WORD_BOUNDARY`)."""
    try:
        converted = _chat_regex(convert_regex(source))
        if after_boundary:
            head = _CASELESS if converted.startswith(_CASELESS) else ""
            converted = head + converted[len(head) + len(_WORD_BOUNDARY) :]
        return re.compile(converted, FLAGS)
    except re.error as exc:
        raise RuleConversionError(f"{source!r} does not compile: {exc}") from exc


_TEMPLATE_PIECE: Final = r"[\w.-]{0,50}?"
_TEMPLATE_HEAD_RE: Final = re.compile(r"(?:\(\?i\)|\(\?i:|\[\\w\.-\]\{0,50\}\?)+(?=\(\?:)")
_TEMPLATE_REACH: Final = 50
#: gitleaks' "a curl command, then within 5 more lines …" preludes (lazy and greedy). RE2
#: runs them in linear time; Python's backtracking would rescan every line from every
#: "curl", so the rest of the regex (from the option, e.g. ``-H``) is searched instead and
#: each hit is kept when a ``curl`` word starts at most :data:`_CURL_LINES` line breaks
#: before it.
_CURL_PRELUDES: Final = (
    r"\bcurl\b(?:.*?|.*?(?:[\r\n]{1,2}.*?){1,5})",
    r"\bcurl\b(?:.*|.*(?:[\r\n]{1,2}.*){1,5})",
)
_CURL_WORD_RE: Final = re.compile(r"\bcurl\b", FLAGS)
_CURL_LINES: Final = 5
#: RE2's ``[\w.-]`` (ASCII).
_PREFIX_CHARS: Final = _TOKEN_CHARS | frozenset(".")


class SecretRule:
    """One converted gitleaks rule. The regex is compiled on first use."""

    __slots__ = (
        "_after_curl",
        "_anchors",
        "_opened",
        "_pattern",
        "_rest",
        "_rest_source",
        "allowlists",
        "back_reach",
        "entropy",
        "keywords",
        "rule_id",
        "secret_group",
        "source",
        "whole_match",
    )

    def __init__(
        self,
        rule_id: str,
        source: str,
        *,
        keywords: Iterable[str] = (),
        entropy: float = 0.0,
        secret_group: int = 0,
        allowlists: Iterable[_Allowlist] = (),
        whole_match: bool = False,
    ) -> None:
        self.rule_id = rule_id
        #: The secret is the whole match, not a group (:data:`WHOLE_MATCH_RULES`).
        self.whole_match = whole_match
        #: The upstream (RE2) regex.
        self.source = source
        self.keywords = tuple(k.lower() for k in keywords)
        self.entropy = entropy
        self.secret_group = secret_group
        self.allowlists = tuple(allowlists)
        self._pattern: re.Pattern[str] | None = None
        self._rest: re.Pattern[str] | None = None
        #: Rules starting with ``\b``: the regex without it, tried after emphasis openers.
        self._opened: re.Pattern[str] | None = None
        # Assignment-template rules: anchored at the keyword group (see the module docstring).
        self._rest_source: str | None = None
        self._anchors: tuple[str, ...] = ()
        self.back_reach = 0
        #: Curl rules: the regex minus :data:`_CURL_PRELUDES`.
        self._after_curl: str | None = None
        for prelude in _CURL_PRELUDES:
            if source.startswith(prelude):
                self._after_curl = source[len(prelude) :]
        head = _TEMPLATE_HEAD_RE.match(source)
        if head is not None and _TEMPLATE_PIECE in head.group():
            group_end = _group_end(source, head.end())
            anchors = _literal_prefixes(source[head.end() + 3 : group_end - 1])
            if anchors is not None:
                self._anchors = anchors
                self.back_reach = _TEMPLATE_REACH * head.group().count(_TEMPLATE_PIECE)
                self._rest_source = head.group().replace(_TEMPLATE_PIECE, "") + source[head.end() :]

    @property
    def anchored(self) -> bool:
        """Whether the rule is matched only at occurrences of its keyword group."""
        return self._rest_source is not None

    @property
    def after_curl(self) -> bool:
        """Whether the rule is one of the ``curl …`` rules (see :data:`_CURL_PRELUDES`)."""
        return self._after_curl is not None

    @property
    def pattern(self) -> re.Pattern[str]:
        """The whole converted regex (compiled now if not yet)."""
        if self._pattern is None:
            self._pattern = _compile_rule(self.source)
        return self._pattern

    @property
    def starts_at_word(self) -> bool:
        """Whether the rule's regex starts with ``\\b`` (and is searched as a whole)."""
        return (
            self._rest_source is None
            and self._after_curl is None
            and self.source.startswith((_WORD_BOUNDARY, "(?i)" + _WORD_BOUNDARY))
        )

    def compile(self) -> None:
        """Compile every regex of the rule now (raises :class:`RuleConversionError`)."""
        _ = self.pattern
        if self._rest_source is not None:
            self._rest = _compile_rule(self._rest_source)
        if self._after_curl is not None:
            self._rest = _compile_rule(self._after_curl)
        if self.starts_at_word:
            self._opened = _compile_rule(self.source, after_boundary=True)

    def matches(
        self, text: str, lowered: str, openers: Iterable[int] = ()
    ) -> Iterator[re.Match[str]]:
        """The rule's regex matches in ``text`` (``lowered`` is ``text`` lower-cased).

        :param openers: where tokens opened by ``_``/``__`` emphasis start
            (:data:`_EMPHASIS_OPENER_RE`); a rule starting with ``\\b`` is matched there too.
        """
        if self._after_curl is not None:
            yield from self._curl_matches(text)
            return
        if self._rest_source is None:
            yield from self.pattern.finditer(text)
            if openers and self.starts_at_word:
                yield from self._opened_matches(text, openers)
            return
        if self._rest is None:
            self._rest = _compile_rule(self._rest_source)
        rest = self._rest
        tried: set[int] = set()
        for anchor in self._anchors:
            index = lowered.find(anchor)
            while index >= 0:
                if index not in tried:
                    tried.add(index)
                    match = rest.match(text, index)
                    if match is not None:
                        yield match
                index = lowered.find(anchor, index + 1)

    def _opened_matches(self, text: str, openers: Iterable[int]) -> Iterator[re.Match[str]]:
        if self._opened is None:
            self._opened = _compile_rule(self.source, after_boundary=True)
        for start in openers:
            match = self._opened.match(text, start)
            if match is not None:
                yield match

    def _curl_matches(self, text: str) -> Iterator[re.Match[str]]:
        if self._rest is None:
            self._rest = _compile_rule(self._after_curl or "")
        curls = [m.start() for m in _CURL_WORD_RE.finditer(text)]
        if not curls:
            return
        for match in self._rest.finditer(text):
            before = bisect.bisect_right(curls, match.start() - 4) - 1
            if before < 0:
                continue
            between = text[curls[before] : match.start()]
            if between.count("\n") + between.count("\r") - between.count("\r\n") <= _CURL_LINES:
                yield match

    def match_start(self, text: str, match: re.Match[str]) -> int:
        """Where the upstream regex's match starts (template rules reach back)."""
        start = match.start()
        floor = max(0, start - self.back_reach)
        while start > floor and text[start - 1] in _PREFIX_CHARS:
            start -= 1
        return start

    def secret_span(self, match: re.Match[str]) -> tuple[int, int]:
        """Span of the secret in a match (gitleaks' choice of group)."""
        if self.whole_match:
            return match.span()
        if self.secret_group:
            return match.span(self.secret_group)
        named = set(match.re.groupindex.values())
        for group in range(1, (match.re.groups or 0) + 1):
            if (
                group not in named
                and match.start(group) >= 0
                and match.end(group) > match.start(group)
            ):
                return match.span(group)
        start, end = match.span()
        value = match.group()
        return start + len(value) - len(value.lstrip("\n")), end - len(value) + len(
            value.rstrip("\n")
        )


def _group_end(source: str, start: int) -> int:
    """Index just past the group that opens at ``source[start]``."""
    depth = 0
    index = start
    in_class = False
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    raise RuleConversionError(f"unbalanced group in {source!r}")


class RuleSet:
    """All applicable rules plus gitleaks' global allow-list, with a keyword index."""

    def __init__(
        self,
        rules: Iterable[SecretRule],
        *,
        global_allowlists: Iterable[_Allowlist] = (),
        excluded: dict[str, str] | None = None,
        total: int = 0,
    ) -> None:
        self.rules = tuple(rules)
        self.global_allowlists = tuple(global_allowlists)
        #: Rule id -> why it is not applied.
        self.excluded = dict(excluded or {})
        #: Number of rules in the source file (applied + excluded).
        self.total = total or len(self.rules) + len(self.excluded)
        self._always = tuple(r for r in self.rules if not r.keywords)
        by_keyword: dict[str, list[SecretRule]] = {}
        for rule in self.rules:
            for keyword in rule.keywords:
                by_keyword.setdefault(keyword, []).append(rule)
        self._by_keyword = by_keyword
        self._keyword_re = re.compile(trie_regex(by_keyword)) if by_keyword else None
        self._order = {id(rule): index for index, rule in enumerate(self.rules)}
        # findall yields the longest keyword at each position it tries and then skips to its
        # end: keywords inside it are certainly present; keywords that start inside it and run
        # past its end may be present (checked with str.find).
        self._closure: dict[str, tuple[tuple[SecretRule, ...], tuple[str, ...]]] = {}

    def _keyword_hits(self, longest: str) -> tuple[tuple[SecretRule, ...], tuple[str, ...]]:
        cached = self._closure.get(longest)
        if cached is None:
            present: dict[int, SecretRule] = {}
            maybe: list[str] = []
            for keyword, rules in self._by_keyword.items():
                if keyword in longest:
                    present.update((id(rule), rule) for rule in rules)
                elif any(keyword.startswith(longest[cut:]) for cut in range(1, len(longest))):
                    maybe.append(keyword)
            cached = self._closure[longest] = (tuple(present.values()), tuple(maybe))
        return cached

    def candidates(self, lowered: str) -> list[SecretRule]:
        """Rules whose keywords occur in ``lowered`` (plus keyword-less rules), file order."""
        selected: dict[int, SecretRule] = {id(r): r for r in self._always}
        if self._keyword_re is not None:
            maybe: set[str] = set()
            for longest in set(self._keyword_re.findall(lowered)):
                present, overlapping = self._keyword_hits(longest)
                selected.update((id(r), r) for r in present)
                maybe.update(overlapping)
            for keyword in maybe:
                if keyword in lowered:
                    selected.update((id(r), r) for r in self._by_keyword[keyword])
        return sorted(selected.values(), key=lambda rule: self._order[id(rule)])

    def token_keywords(self, *, min_length: int = 1) -> frozenset[str]:
        """Keywords of the rules that find a token by its own shape (a vendor prefix such as
        ``ghp_`` or ``npm_``), not by an assignment around it or a ``curl`` command."""
        return frozenset(
            keyword
            for rule in self.rules
            if not rule.anchored and not rule.after_curl
            for keyword in rule.keywords
            if len(keyword) >= min_length
        )

    def find_secrets(self, text: str) -> set[str]:
        """The secrets every rule finds in ``text``."""
        return {secret for _, secret in self.find(text)}

    def find(self, text: str) -> Iterator[tuple[str, str]]:
        """``(rule_id, secret)`` for every finding in ``text``.

        A secret that ends inside a longer ``[A-Za-z0-9_-]`` token is extended to the end of
        that token (a rule such as ``glpat-[\\w-]{20}`` must not leave a tail visible).
        """
        lowered = text.lower()
        if len(lowered) != len(text):  # a few characters lower-case to two; keep offsets
            lowered = text.translate(_ASCII_LOWER)
        openers = [m.end() for m in _EMPHASIS_OPENER_RE.finditer(text)] if "_" in text else []
        for rule in self.candidates(lowered):
            for match in rule.matches(text, lowered, openers):
                start, end = rule.secret_span(match)
                secret = text[start:end]
                if not secret:
                    continue
                if rule.entropy and shannon_entropy(secret) <= rule.entropy:
                    continue
                if self._allowed(rule, text, match, secret):
                    continue
                if end < len(text) and text[end] in _TOKEN_CHARS and secret[-1] in _TOKEN_CHARS:
                    tail = _TOKEN_TAIL_RE.match(text, end)
                    if tail is not None:
                        # not a closing "_" emphasis ("_sk_live_…_")
                        secret += tail.group().rstrip("_")
                yield rule.rule_id, secret

    def _allowed(self, rule: SecretRule, text: str, match: re.Match[str], secret: str) -> bool:
        lists = self.global_allowlists + rule.allowlists
        if not lists:
            return False
        whole = text[rule.match_start(text, match) : match.end()]
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.end())
        line = text[line_start : len(text) if line_end < 0 else line_end]
        return any(a.allows(secret, whole, line) for a in lists)


_Trie = dict[str, "_Trie"]


def trie_regex(words: Iterable[str]) -> str:
    """One regex matching the longest of ``words`` at each position (a trie of alternations)."""
    trie: _Trie = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: _Trie) -> str:
        branches = [re.escape(c) + emit(child) for c, child in sorted(node.items()) if c]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(trie)


@cache
def load_rules() -> RuleSet:
    """Parse the shipped gitleaks file once (regexes are compiled when first needed)."""
    import tomllib
    from importlib import resources

    package = __package__ or "hermes_memory_guard"
    text = resources.files(package).joinpath(RULES_RESOURCE).read_text("utf-8")
    return build_rule_set(tomllib.loads(text))


def build_rule_set(data: dict[str, object]) -> RuleSet:
    """Build a :class:`RuleSet` from a parsed gitleaks configuration."""
    tables = data.get("rules")
    if not isinstance(tables, list):
        raise RuleConversionError("no [[rules]] in the gitleaks configuration")
    rules: list[SecretRule] = []
    excluded: dict[str, str] = {}
    for table in tables:
        rule_id = str(table.get("id", ""))
        if rule_id in EXCLUDED_RULES:
            excluded[rule_id] = EXCLUDED_RULES[rule_id]
            continue
        if "regex" not in table or "path" in table:
            raise RuleConversionError(
                f"rule {rule_id!r} needs a file path; list it in EXCLUDED_RULES"
            )
        rules.append(
            SecretRule(
                rule_id,
                str(table["regex"]),
                keywords=[str(k) for k in table.get("keywords", [])],
                entropy=float(table.get("entropy", 0.0)),
                secret_group=int(table.get("secretGroup", 0)),
                allowlists=[_Allowlist.from_toml(a) for a in table.get("allowlists", [])],
                whole_match=rule_id in WHOLE_MATCH_RULES,
            )
        )
    global_tables: list[dict[str, object]] = []
    if isinstance(data.get("allowlist"), dict):
        global_tables.append(data["allowlist"])  # type: ignore[arg-type]
    if isinstance(data.get("allowlists"), list):
        global_tables.extend(data["allowlists"])  # type: ignore[arg-type]
    return RuleSet(
        rules,
        global_allowlists=[_Allowlist.from_toml(t) for t in global_tables],
        excluded=excluded,
        total=len(tables),
    )
