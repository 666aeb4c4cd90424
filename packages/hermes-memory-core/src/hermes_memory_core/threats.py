"""Threat scanning: prompt-injection, exfiltration and invisible-unicode detection.

Text that ends up in a model's context (memory entries, recalled snippets, context files, tool
results) is checked against a fixed list of patterns. Each pattern has a *home scope*; scopes
are cumulative::

    all      -> the conservative set (only the most unambiguous payloads)
    context  -> all + role hijacking / C2 vocabulary (context files, tool results)
    strict   -> context + exfiltration targets and secrets (memory writes and memory loads)

Compared with the reference implementation this module

* scans the **whole** text (the reference only looked at the first ``MAX_SCAN_CHARS``
  characters, so a payload at offset 400 KB went unseen) — every regex is bounded, so the
  cost stays linear in the length of the text;
* reports several invisible characters in the order of their first appearance in the text
  (the reference's order was undefined);
* gives no special treatment to text that already starts with ``"[BLOCKED:"``.

Known, deliberate over-matching kept from the reference: ``known_c2_framework`` matches the
bare words ``sliver``, ``havoc`` and ``mythic`` ("wreak havoc" is reported at ``context``
scope). The pattern only applies from the ``context`` scope upwards.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

__all__ = [
    "INVISIBLE_CHARS",
    "MAX_SCAN_CHARS",
    "SCOPES",
    "THREAT_PATTERNS",
    "ThreatPattern",
    "first_threat_message",
    "scan_for_threats",
]

Scope = Literal["all", "context", "strict"]

#: The scopes, from the narrowest to the widest. Each one includes the previous ones.
SCOPES: Final[tuple[str, ...]] = ("all", "context", "strict")

#: The reference implementation only scanned this many leading characters. This module scans
#: the whole text; the constant is kept for callers that size their inputs against it.
MAX_SCAN_CHARS: Final[int] = 65_536

#: The 17 invisible / direction-control characters that block content on their own.
INVISIBLE_CHARS: Final[frozenset[str]] = frozenset(
    [
        "\u200b",  # zero-width space
        "\u200c",  # zero-width non-joiner
        "\u200d",  # zero-width joiner
        "\u2060",  # word joiner
        "\u2062",  # invisible times
        "\u2063",  # invisible separator
        "\u2064",  # invisible plus
        "\ufeff",  # byte-order mark / zero-width no-break space
        "\u202a",  # left-to-right embedding
        "\u202b",  # right-to-left embedding
        "\u202c",  # pop directional formatting
        "\u202d",  # left-to-right override
        "\u202e",  # right-to-left override
        "\u2066",  # left-to-right isolate
        "\u2067",  # right-to-left isolate
        "\u2068",  # first strong isolate
        "\u2069",  # pop directional isolate
    ]
)

_INVISIBLE_RE: Final = re.compile("[" + "".join(sorted(INVISIBLE_CHARS)) + "]")


class ThreatPattern(NamedTuple):
    """One entry of :data:`THREAT_PATTERNS`: its id, its home scope and its compiled regex.

    The regex is applied with :func:`re.Pattern.search` to the NFKC-normalised text and is
    compiled case-insensitive.
    """

    id: str
    scope: str
    regex: re.Pattern[str]


# --- building blocks -------------------------------------------------------------------------
# Every quantifier below is either bounded or ranges over a character class that is disjoint
# from what follows it, so no pattern can backtrack more than a constant amount per start
# position (see tests/core/test_threats.py::test_adversarial_inputs_finish).

#: Keyword starts: not glued to a preceding ASCII letter/digit (CJK text may touch it).
_B = r"(?<![a-z0-9])"
#: Keyword ends: not followed by an ASCII letter/digit.
_E = r"(?![a-z0-9])"
#: Separator after a keyword: optional punctuation ("ignore, all") then whitespace.
#: (Possessive quantifiers: the classes on either side are disjoint, so giving characters
#: back could never help — possessive only saves the engine from trying.)
_S = r"[^\w\s]{0,3}+\s++"
#: "Filler": up to 8 intervening words of at most 64 characters, plus a little punctuation
#: (quotes, brackets, markdown emphasis) in front of the next keyword.
_F = r"(?:\S{1,64}+\s++){0,8}?[^\w\s]{0,3}"


def _words(*steps: str) -> str:
    """Keywords in order, each separated from the next by up to 8 filler words.

    Each intermediate keyword is matched atomically at its *first* occurrence after the
    previous one, which keeps the work per start position linear in the number of steps
    instead of a product of filler lengths.
    """
    first, *rest = steps
    out = _B + f"(?:{first})" + _E + _S
    for step in rest[:-1]:
        out += f"(?>{_F}(?:{step}){_E}{_S})"
    if rest:
        out += f"{_F}(?:{rest[-1]}){_E}"
    return out


def _phrase(*words: str) -> str:
    """Adjacent words separated by whitespace only."""
    return _B + r"\s+".join(words) + _E


_VERB_EDIT = r"update|modify|edit|write|change|append|add\s+to"
#: An HTML comment body up to 4096 chars that never runs over into the next comment opener or
#: past a comment closer — so successive "<!--" starts scan disjoint stretches (linear time).
_COMMENT_BODY = r"(?:[^<-]|<(?!!--)|-(?!->)){0,4096}?"
_SENSITIVE_VAR = r"\$\{?\w{0,64}?(?:key|token|secret|password|credentials?)(?![a-z0-9])"

_PATTERN_SOURCE: Final[tuple[tuple[str, Scope, str], ...]] = (
    # ---- all --------------------------------------------------------------------------------
    ("prompt_injection", "all", _words("ignore", "previous|all|above|prior", "instructions?")),
    ("sys_prompt_override", "all", _phrase("system", "prompt", "override")),
    (
        "disregard_rules",
        "all",
        _words("disregard", "your|all|any", "instructions|rules|guidelines"),
    ),
    (
        "bypass_restrictions",
        "all",
        _words(
            r"act\s+as\s+(?:if|though)",
            "you",
            r"have\s+no|don['’]?t\s+have|do\s+not\s+have",
            "restrictions|limits|rules",
        ),
    ),
    (
        "html_comment_injection",
        "all",
        r"<!--" + _COMMENT_BODY + r"(?<![a-z])(?:ignore|override|system|secret|hidden)(?![a-z])",
    ),
    (
        "hidden_div",
        "all",
        # The first style attribute wins (atomic group), as it does in browsers.
        r"<div(?![a-z0-9])(?>[^<>]{0,1024}?(?<![a-z-])style\s*=)\s*[\"']?"
        r"[^\"'<>]{0,1024}?display\s*:\s*none",
    ),
    (
        "translate_execute",
        "all",
        _B + r"translate" + _E + _S + _F + r"into\s+\S{1,64}\s+and\s+(?:execute|run|eval)" + _E,
    ),
    ("deception_hide", "all", _words(r"do\s+not|don['’]?t", "tell", r"the\s+user")),
    # curl / wget anywhere on a line that also expands $..KEY / ${..TOKEN} etc.
    ("exfil_curl", "all", r"(?m)^(?=[^\n]*(?<![a-z0-9])curl(?![a-z0-9]))[^\n]*" + _SENSITIVE_VAR),
    ("exfil_wget", "all", r"(?m)^(?=[^\n]*(?<![a-z0-9])wget(?![a-z0-9]))[^\n]*" + _SENSITIVE_VAR),
    (
        "read_secrets",
        "all",
        _B
        + r"cat\s+"
        + _F
        + r"\S{0,128}?(?=[.c])(?:\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)"
        + _E,
    ),
    # ---- context ----------------------------------------------------------------------------
    ("role_hijack", "context", _words(r"you\s+are", r"now\s+(?:a|an|the)")),
    ("role_pretend", "context", _words("pretend", r"you\s+are|to\s+be")),
    ("leak_system_prompt", "context", _words("output", r"(?:system|initial)\s+prompt")),
    (
        "remove_filters",
        "context",
        _words(r"(?:respond|answer|reply)\s+without", "restrictions|limitations|filters|safety"),
    ),
    ("fake_update", "context", _words(r"you\s+have\s+been", r"(?:updated|upgraded|patched)\s+to")),
    ("identity_override", "context", _B + r"name\s+yourself\s+[^\W_]"),
    ("c2_node_registration", "context", _phrase("register", "as", "a", "node")),
    ("c2_heartbeat", "context", _B + r"(?:heartbeat|beacon|check-in)\s+(?:to|with)" + _E),
    ("c2_task_pull", "context", _B + r"pull\s+(?:down\s+)?(?:new\s+)?tasking" + _E),
    ("c2_network_connect", "context", _phrase("connect", "to", "the", "network")),
    ("forced_action", "context", _words(r"you\s+must", "register|connect|report|beacon")),
    ("anti_forensic_oneliner", "context", _B + r"only\s+use\s+one[-\s]?liners?" + _E),
    (
        "anti_forensic_disk",
        "context",
        _words("never", "create|write", r"(?:scripts?|files?)", "disk"),
    ),
    (
        "env_var_unset_agent",
        "context",
        _B
        + r"unset\s+"
        + _F
        + r"\w{0,64}?(?=[acho])(?:claude|codex|hermes|agent|openai|anthropic)",
    ),
    (
        "known_c2_framework",
        "context",
        _B + r"(?:cobalt\s*strike|sliver|havoc|mythic|metasploit|brainworm)" + _E,
    ),
    ("c2_explicit", "context", _B + r"c2[\s-]+(?:server|channel|infrastructure|beacon)"),
    ("c2_explicit_long", "context", _B + r"command[\s-]+(?:and|&)[\s-]+control" + _E),
    # ---- strict -----------------------------------------------------------------------------
    (
        "send_to_url",
        "strict",
        _B + r"(?:send|post|upload|transmit)" + _E + _S + _F + r"(?:to|at)\s+https?://",
    ),
    (
        "context_exfil",
        "strict",
        _words(
            "include|output|print|share",
            r"conversation|chat\s+history|previous\s+messages|full\s+context|entire\s+context",
        ),
    ),
    ("ssh_backdoor", "strict", r"authorized_keys"),
    ("ssh_access", "strict", r"(?:\$\{?home\}?|~)/\.ssh(?![a-z0-9])"),
    ("hermes_env", "strict", r"(?:\$\{?home\}?|~)/\.hermes/\.env(?![a-z0-9])"),
    (
        "agent_config_mod",
        "strict",
        _B
        + f"(?:{_VERB_EDIT})"
        + _E
        + _S
        + _F
        + r"\S{0,128}?(?=[ac.])(?:agents\.md|claude\.md|\.cursorrules|\.clinerules)",
    ),
    (
        "hermes_config_mod",
        "strict",
        _B + f"(?:{_VERB_EDIT})" + _E + _S + _F + r"\S{0,128}?\.hermes/(?:config\.yaml|soul\.md)",
    ),
    (
        "hardcoded_secret",
        "strict",
        r"(?:api[_-]?key|token|secret|password)\s*[=:]\s*[\"'][A-Za-z0-9+/=_\-]{20}",
    ),
)

#: Literals that every match of a pattern necessarily contains (lower case): each inner tuple
#: is an any-of group and all groups must be present. A pattern whose literals are absent
#: from the lower-cased text cannot match, so its regex is skipped — a plain substring test
#: is far cheaper than a regex pass, and most text contains few trigger words.
_REQUIRED: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    "prompt_injection": (("ignore",), ("instruction",)),
    "sys_prompt_override": (("override",),),
    "disregard_rules": (("disregard",),),
    "bypass_restrictions": (("act",), ("restrictions", "limits", "rules")),
    "html_comment_injection": (("<!--",),),
    "hidden_div": (("<div",), ("display",)),
    "translate_execute": (("translate",),),
    "deception_hide": (("tell",),),
    "exfil_curl": (("curl",), ("$",)),
    "exfil_wget": (("wget",), ("$",)),
    "read_secrets": (("cat",), (".env", "credentials", ".netrc", ".pgpass", ".npmrc", ".pypirc")),
    "role_hijack": (("you",), ("now",)),
    "role_pretend": (("pretend",),),
    "leak_system_prompt": (("output",), ("prompt",)),
    "remove_filters": (("without",),),
    "fake_update": (("been",),),
    "identity_override": (("yourself",),),
    "c2_node_registration": (("node",),),
    "c2_heartbeat": (("heartbeat", "beacon", "check-in"),),
    "c2_task_pull": (("tasking",),),
    "c2_network_connect": (("network",),),
    "forced_action": (("must",),),
    "anti_forensic_oneliner": (("liner",),),
    "anti_forensic_disk": (("never",), ("disk",)),
    "env_var_unset_agent": (("unset",),),
    "known_c2_framework": (("cobalt", "sliver", "havoc", "mythic", "metasploit", "brainworm"),),
    "c2_explicit": (("c2",),),
    "c2_explicit_long": (("control",),),
    "send_to_url": (("http",),),
    "context_exfil": (("conversation", "history", "messages", "context"),),
    "ssh_backdoor": (("authorized_keys",),),
    "ssh_access": (("/.ssh",),),
    "hermes_env": (("/.hermes/.env",),),
    "agent_config_mod": (("agents.md", "claude.md", ".cursorrules", ".clinerules"),),
    "hermes_config_mod": ((".hermes/",),),
    "hardcoded_secret": (("key", "token", "secret", "password"),),
}

#: Characters that ``re.IGNORECASE`` equates with an ASCII letter but ``str.lower`` does not
#: map to it: fold them before the substring pre-check so it stays conservative. (NFKC
#: already maps U+017F to "s"; it is listed so the probe never depends on that.)
_PROBE_FOLD: Final[dict[int, str]] = {0x130: "i", 0x131: "i", 0x17F: "s"}


class _Plan(NamedTuple):
    """Where a pattern's matches can be, so the regex runs at few positions, not everywhere.

    ``heads``: lower-case literals; every match *starts* at an occurrence of one of them.
    ``near``: lower-case literals; every match contains one, starting at most ``reach``
    characters after the match start (``reach`` ``None``: anywhere after it). ``spaced``: the
    regex runs on the text with every whitespace run collapsed to one space — equivalent for
    patterns that only ever consume whole whitespace runs, and it bounds ``reach``. ``lines``:
    the ``curl``/``wget`` patterns, decided line by line.
    """

    heads: tuple[str, ...]
    near: tuple[str, ...] = ()
    reach: int | None = None
    spaced: bool = False
    lines: bool = False


_VERBS = ("update", "modify", "edit", "write", "change", "append", "add")
_SECRET_FILES = (".env", "credentials", ".netrc", ".pgpass", ".npmrc", ".pypirc")

#: One plan per pattern. ``reach`` is at least the pattern's longest possible match on the
#: whitespace-collapsed (or folded) text; tests/core/test_threats.py checks it against the
#: regex parser and compares every plan with a plain whole-text ``search`` on generated text.
_PLANS: Final[dict[str, _Plan]] = {
    "prompt_injection": _Plan(("ignore",), ("instruction",), 1080, spaced=True),
    "sys_prompt_override": _Plan(("system",), ("override",), 22, spaced=True),
    "disregard_rules": _Plan(("disregard",), ("instructions", "rules", "guidelines"), 1079, True),
    "bypass_restrictions": _Plan(("act",), ("restrictions", "limits", "rules"), 1620, True),
    "html_comment_injection": _Plan(
        ("<!--",), ("ignore", "override", "system", "secret", "hidden"), 4108
    ),
    "hidden_div": _Plan(("<div",), ("display",)),
    "translate_execute": _Plan(("translate",), ("into",), 617, spaced=True),
    "deception_hide": _Plan(("do",), ("tell",), 1072, spaced=True),
    "exfil_curl": _Plan(("curl",), lines=True),
    "exfil_wget": _Plan(("wget",), lines=True),
    "read_secrets": _Plan(("cat",), _SECRET_FILES, 666, spaced=True),
    "role_hijack": _Plan(("you",), ("now",), 541, spaced=True),
    "role_pretend": _Plan(("pretend",), ("are", "be"), 541, spaced=True),
    "leak_system_prompt": _Plan(("output",), ("prompt",), 547, spaced=True),
    "remove_filters": _Plan(
        ("respond", "answer", "reply"),
        ("restrictions", "limitations", "filters", "safety"),
        554,
        spaced=True,
    ),
    "fake_update": _Plan(("you",), ("updated", "upgraded", "patched"), 551, spaced=True),
    "identity_override": _Plan(("name",), ("yourself",), 15, spaced=True),
    "c2_node_registration": _Plan(("register",), ("node",), 18, spaced=True),
    "c2_heartbeat": _Plan(("heartbeat", "beacon", "check-in"), ("to", "with"), 14, spaced=True),
    "c2_task_pull": _Plan(("pull",), ("tasking",), 21, spaced=True),
    "c2_network_connect": _Plan(("connect",), ("network",), 22, spaced=True),
    "forced_action": _Plan(("you",), ("must",), 543, spaced=True),
    "anti_forensic_oneliner": _Plan(("only",), ("liner",), 19, spaced=True),
    "anti_forensic_disk": _Plan(("never",), ("disk",), 1603, spaced=True),
    "env_var_unset_agent": _Plan(
        ("unset",), ("claude", "codex", "hermes", "agent", "openai", "anthropic"), 602, True
    ),
    "known_c2_framework": _Plan(("cobalt", "sliver", "havoc", "mythic", "metasploit", "brainworm")),
    "c2_explicit": _Plan(("c2",)),
    "c2_explicit_long": _Plan(("command",), ("control",)),
    "send_to_url": _Plan(("send", "post", "upload", "transmit"), ("http",), 546, spaced=True),
    "context_exfil": _Plan(
        ("include", "output", "print", "share"),
        ("conversation", "history", "messages", "context"),
        551,
        spaced=True,
    ),
    "ssh_backdoor": _Plan(("authorized_keys",)),
    "ssh_access": _Plan(("$", "~"), ("/.ssh",), 12),
    "hermes_env": _Plan(("$", "~"), ("/.hermes/.env",), 20),
    "agent_config_mod": _Plan(
        _VERBS, ("agents.md", "claude.md", ".cursorrules", ".clinerules"), 673, spaced=True
    ),
    "hermes_config_mod": _Plan(_VERBS, (".hermes/",), 680, spaced=True),
    "hardcoded_secret": _Plan(("api", "token", "secret", "password"), ("=", ":"), 32, spaced=True),
}


@functools.cache
def _line_regexes(word: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The bare ``word`` and the sensitive ``$VAR`` regexes of the line-scoped patterns."""
    bare = re.compile(r"(?<![a-z0-9])" + word + r"(?![a-z0-9])", re.IGNORECASE)
    return bare, re.compile(_SENSITIVE_VAR, re.IGNORECASE)


@functools.cache
def _compiled() -> tuple[ThreatPattern, ...]:
    """Compile the pattern table on first use (importing the module stays cheap)."""
    return tuple(
        ThreatPattern(pid, scope, re.compile(source, re.IGNORECASE))
        for pid, scope, source in _PATTERN_SOURCE
    )


if TYPE_CHECKING:
    #: Every pattern as ``(id, home scope, compiled case-insensitive regex)``, in report order.
    THREAT_PATTERNS: tuple[ThreatPattern, ...]


def __getattr__(name: str) -> tuple[ThreatPattern, ...]:
    # THREAT_PATTERNS is built lazily: compiling 36 regexes costs tens of milliseconds.
    if name == "THREAT_PATTERNS":
        return _compiled()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_SCOPE_RANK: Final[dict[str, int]] = {name: rank for rank, name in enumerate(SCOPES)}

_INVISIBLE_MESSAGE = (
    "Blocked: content contains invisible unicode character {code} (possible injection)."
)
_PATTERN_MESSAGE = (
    "Blocked: content matches threat pattern '{pid}'. Content is injected into the system "
    "prompt and must not contain injection or exfiltration payloads."
)


def _patterns_for(scope: str) -> tuple[ThreatPattern, ...]:
    try:
        rank = _SCOPE_RANK[scope]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown threat scan scope {scope!r}; expected one of {', '.join(SCOPES)}"
        ) from None
    return tuple(p for p in _compiled() if _SCOPE_RANK[p.scope] <= rank)


def _invisible_code(char: str) -> str:
    return f"U+{ord(char):04X}"


def _occurrences(probe: str, literals: tuple[str, ...], start: int = 0, end: int = -1) -> list[int]:
    """Sorted start offsets of every occurrence of ``literals`` in ``probe[start:end]``."""
    if end < 0:
        end = len(probe)
    found: list[int] = []
    for literal in literals:
        index = probe.find(literal, start, end)
        while index >= 0:
            found.append(index)
            index = probe.find(literal, index + 1, end)
    if len(literals) > 1:
        found = sorted(set(found))
    return found


def _near_within(probe: str, near: tuple[str, ...], start: int, reach: int) -> bool:
    return any(probe.find(lit, start, start + reach + len(lit)) >= 0 for lit in near)


def _candidates(plan: _Plan, probe: str) -> Iterator[int]:
    """Start offsets at which a match of the planned pattern may begin, in increasing order."""
    if not plan.near:
        yield from _occurrences(probe, plan.heads)
        return
    longest = max(len(lit) for lit in plan.heads)
    if plan.reach is None:
        last = max(probe.rfind(lit) for lit in plan.near)
        yield from (s for s in _occurrences(probe, plan.heads, 0, last + longest) if s <= last)
        return
    reach = plan.reach
    heads = sum(probe.count(lit) for lit in plan.heads)
    nears = sum(probe.count(lit) for lit in plan.near)
    if heads <= nears:
        for start in _occurrences(probe, plan.heads):
            if _near_within(probe, plan.near, start, reach):
                yield start
        return
    # The near literals are the rarer ones: look for heads only in the stretch before each.
    done = 0
    for position in _occurrences(probe, plan.near):
        low = max(done, position - reach)
        if low > position:
            continue
        yield from (
            s for s in _occurrences(probe, plan.heads, low, position + longest) if s <= position
        )
        done = position + 1


def _matches_lines(word: str, folded: str, probe: str) -> bool:
    r"""``exfil_curl``/``exfil_wget``: a line holding the bare word and a sensitive ``$VAR``.

    The pattern's regex is ``^`` (multi-line) + a look-ahead for the word anywhere on the
    line + ``[^\n]*`` + the variable, which can never contain a newline: so it matches exactly
    when one line contains both, in either order.
    """
    word_re, variable_re = _line_regexes(word)
    index = probe.find(word)
    while index >= 0:
        if word_re.match(folded, index) is None:
            index = probe.find(word, index + 1)
            continue
        line_start = folded.rfind("\n", 0, index) + 1
        line_end = folded.find("\n", index)
        if line_end < 0:
            line_end = len(folded)
        if variable_re.search(folded, line_start, line_end) is not None:
            return True
        index = probe.find(word, line_end)
    return False


def _lower_probe(text: str) -> str:
    """``text`` lower-cased for substring tests, with :data:`_PROBE_FOLD` applied first."""
    for code, letter in _PROBE_FOLD.items():
        char = chr(code)
        if char in text:  # str.translate is slow on non-ASCII text: replace only when needed
            text = text.replace(char, letter)
    return text.lower()


def _collapse_whitespace(text: str) -> str:
    """``text`` with every whitespace run (``\\s+``) replaced by a single space."""
    words = text.split()  # str.split() and re's \s share one definition of whitespace
    if not words:
        return " " if text else ""
    lead = " " if text[0].isspace() else ""
    trail = " " if text[-1].isspace() else ""
    return lead + " ".join(words) + trail


#: Above one candidate start per this many characters, a plain ``search`` is cheaper.
_DENSE_SPACING: Final = 100


class _Texts:
    """The folded text, its spaced variant and their lower-case probes, built on demand."""

    def __init__(self, folded: str) -> None:
        self.folded = folded
        self.probe = _lower_probe(folded)
        self._spaced: tuple[str, str] | None = None

    def spaced(self) -> tuple[str, str]:
        if self._spaced is None:
            text = _collapse_whitespace(self.folded)
            self._spaced = (text, _lower_probe(text))
        return self._spaced


def _pattern_matches(pattern: ThreatPattern, texts: _Texts) -> bool:
    """``pattern.regex.search(folded) is not None``, computed at few candidate positions."""
    plan = _PLANS[pattern.id]
    text, probe = texts.spaced() if plan.spaced else (texts.folded, texts.probe)
    if len(probe) != len(text):  # lower() changed a length: offsets would not line up
        return pattern.regex.search(texts.folded) is not None
    if plan.lines:
        return _matches_lines(plan.heads[0], text, probe)
    heads = sum(probe.count(lit) for lit in plan.heads)
    if plan.near and plan.reach is not None:
        heads = min(heads, sum(probe.count(lit) for lit in plan.near))
    if heads * _DENSE_SPACING > len(probe):
        # Candidates everywhere: one regex pass in C beats visiting each from Python.
        return pattern.regex.search(text) is not None
    match = pattern.regex.match
    return any(match(text, start) is not None for start in _candidates(plan, probe))


def _iter_findings(text: str, scope: str) -> Iterator[tuple[str, str]]:
    """Yield ``(kind, value)`` findings lazily: invisible chars first, then pattern ids."""
    patterns = _patterns_for(scope)
    if not text:
        return
    seen: set[str] = set()
    for match in _INVISIBLE_RE.finditer(text):
        char = match.group()
        if char not in seen:
            seen.add(char)
            yield "invisible", _invisible_code(char)
            if len(seen) == len(INVISIBLE_CHARS):
                break
    texts = _Texts(unicodedata.normalize("NFKC", text))
    probe = texts.probe
    for pattern in patterns:
        if not all(any(literal in probe for literal in group) for group in _REQUIRED[pattern.id]):
            continue
        if _pattern_matches(pattern, texts):
            yield "pattern", pattern.id


def scan_for_threats(text: str, scope: str = "context") -> list[str]:
    """Return the ids of every threat found in ``text`` at ``scope`` (empty list if clean).

    Invisible characters come first, as ``"invisible_unicode_U+XXXX"`` in the order of their
    first appearance; then the ids of matching patterns in :data:`THREAT_PATTERNS` order. The
    text is NFKC-normalised before pattern matching (so full-width homographs are caught) and
    matching is case-insensitive. The whole text is scanned, however long.

    Raises :class:`ValueError` for a scope not in :data:`SCOPES`.
    """
    return [
        f"invisible_unicode_{value}" if kind == "invisible" else value
        for kind, value in _iter_findings(text, scope)
    ]


def first_threat_message(text: str, scope: str = "strict") -> str | None:
    """Return a human-readable rejection message for the first finding, or ``None`` if clean.

    The message names either the invisible character (``U+200B``) or the pattern id, for
    example ``"Blocked: content matches threat pattern 'prompt_injection'. ..."``. Scanning
    stops at the first finding. Raises :class:`ValueError` for an unknown scope.
    """
    for kind, value in _iter_findings(text, scope):
        if kind == "invisible":
            return _INVISIBLE_MESSAGE.format(code=value)
        return _PATTERN_MESSAGE.format(pid=value)
    return None
