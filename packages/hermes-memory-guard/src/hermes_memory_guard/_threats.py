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

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, NamedTuple, cast

from hermes_memory_guard import _regex_facts
from hermes_memory_guard._literals import Keywords, LiteralIndex
from hermes_memory_guard._normalize import (
    TAG_PAYLOAD_RE,
    VARIATION_PAYLOAD_RE,
    Reading,
    cached_readings,
    fold_keyword,
)

__all__ = [
    "HOLD",
    "INVISIBLE_CHARS",
    "MAX_SCAN_CHARS",
    "REFUSE",
    "SCOPES",
    "STRUCTURAL_THREATS",
    "THREAT_PATTERNS",
    "UNTRUSTED_EXTRA",
    "ThreatPattern",
    "ThreatVerdict",
    "first_threat_message",
    "scan_for_threats",
    "scan_untrusted",
    "threat_tier",
    "threat_verdict",
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
#: An emoji, an optional presentation selector or skin tone, a ZWJ, then another emoji:
#: matched from up to two characters before the ZWJ.
_EMOJI = "\u00a9\u00ae\u203c-\u3299\U0001f000-\U0001faff"
_EMOJI_JOIN_RE: Final = re.compile(
    f"(?:.?[{_EMOJI}]|[{_EMOJI}][\ufe0f\U0001f3fb-\U0001f3ff])\u200d[{_EMOJI}]", re.S
)


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
# position (see tests/guard/test_threats.py::test_adversarial_inputs_finish).

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
#: What makes a hidden comment an instruction to the agent: ignore / override, or words
#: for a prompt or a secret instruction. A bare "system" ("update the system diagram"), or a
#: tool directive (``prettier-ignore``), is not one.
_COMMENT_INSTRUCTION = (
    r"(?:(?<![\w-])(?:ignore|override)(?![a-z])"
    r"|(?<![a-z])(?:system|developer)[\s_-]{1,4}(?:prompt|message|instruction|note|override)"
    r"|(?<![a-z])(?:secret|hidden)[\s_-]{1,4}(?:instruction|prompt|message|task|command|goal"
    r"|rule|directive|order))"
)
#: A variable holding a secret (``$API_KEY``, ``${GH_PAT}``, ``$DB_PASS``, ``$DATABASE_URL``;
#: the short names only at the end of the name: ``$AUTH_URL``, ``$PWD`` and ``$PATH`` hold
#: none), or the whole environment (``$(env)``, a backquoted ``printenv``).
_SENSITIVE_VAR = (
    r"(?:\$\{?\w{0,64}?(?:(?:key|token|secret|password|credentials?)(?![a-z0-9])"
    r"|(?:pat|pass|passwd|dsn|database_url|auth|_pwd)(?![a-z0-9_]))"
    r"|\$\(\s{0,4}(?:env|printenv)(?![\w-])|`(?:env|printenv)(?![\w-]))"
)
#: Up to 3 words between ``cat`` and the file, none of which starts another clause ("cat
#: .env.example and copy it to .env.local" reads a template, not the secrets).
_CAT_ARGS = r"(?:(?!(?:and|then|or|to|into|&&|\|\|?|;)\s)\S{1,64}+\s++){0,3}?[^\w\s]{0,3}"
#: Template copies of secret files (``.env.example``) hold no secrets.
_NOT_TEMPLATE = r"(?!\.(?:example|sample|template|dist|defaults?|tmpl|tpl|schema)(?![a-z0-9]))"
#: Options of a file reader before its file: ``-n 20``, ``--lines=5``, ``-Path``.
_READER_FLAGS = r"(?:-{1,2}\w[\w=-]{0,15}\s+(?:\d{1,9}\s+)?){0,3}"
#: A secret file as the argument of a reader other than ``cat``: ``.env`` or a path to one,
#: and ``credentials`` only after a path separator ("head of credentials management" and
#: "type your credentials" name no file).
_SECRET_PATH = (
    r"(?:(?:\S{0,128}?[/\\])?\.(?:env|netrc|pgpass|npmrc|pypirc)|\S{0,128}?[/\\]credentials)"
    + _E
    + _NOT_TEMPLATE
)
#: After the file of ``less``/``more``/``type`` (also English words): the command ends ("type
#: .env", "less .env | …", "more .env and paste it"); "less .env files", "files of type .env
#: are ignored" go on as prose.
_COMMAND_END = r"(?=\s*(?:$|[^\w\s]|(?:and|then|to|into|or)(?![a-z0-9])))"
#: Whom a C2 implant talks to. A heartbeat to "the monitoring service" is ordinary ops.
_C2_PEER = (
    r"(?:(?:the|your|our|its|an?)\s+)?(?:c2|c&c|operator|handler|listener|mothership|"
    r"coordinator|command\s+server|team\s*server|attacker|home\s+base|botnet)(?![a-z0-9])"
)
#: What "you must …" demands of an implant (not "you must report hours in Harvest").
_FORCED = (
    r"register\s+(?:as\s+an?\s+(?:node|agent|bot|implant)|with\s+(?:the\s+)?"
    r"(?:c2|coordinator|controller|operator|handler|mothership))"
    r"|connect\s+(?:to|with)\s+(?:the\s+)?(?:c2|network|mesh|botnet|listener|handler|"
    r"coordinator|operator|mothership)"
    r"|report\s+(?:home|back\s+to\s+(?:the\s+|your\s+)?(?:operator|handler|c2|coordinator|server))"
    r"|beacon|phone\s+home|call\s+home"
)
#: "only use one-liners" as anti-forensics: said to the agent, or for the sake of leaving no
#: trace. "Prefers to only use one-liners for quick fixes" is a preference, not a threat.
_ONELINER = (
    _B
    + r"(?:you\s+(?:must|should|shall|will)\s+(?:always\s+)?only\s+use\s+one[-\s]?liners?"
    + _E
    + r"|only\s+use\s+one[-\s]?liners?"
    + _E
    + r"(?=[^.\n]{0,80}?(?<![a-z])(?:traces?|forensics?|evidence|disk|detect\w{0,4}|logs?|"
    + r"history|artifacts?|footprint)(?![a-z])))"
)
#: Data worth stealing, as the object of a "send … to https://" instruction. "upload build
#: artifacts to https://…" names none of it.
_SENSITIVE_DATA = (
    r"(?:conversations?|chats?|transcripts?|history|(?:previous|all|user'?s?|chat|private)\s+"
    r"messages|memory|memories|secrets?|credentials?|(?:api|private|secret|access|signing)"
    r"[\s_-]?keys?|tokens?|passwords?|passwd|\.env|env(?:ironment)?\s+variables|cookies?|"
    r"system\s+prompt|(?:full|entire|whole)\s+context|everything|personal\s+(?:data|info|"
    r"information)|user\s+data|id_rsa|id_ed25519|\.ssh)"
)
#: Where ``send_to_url`` sends: "to https://", "via https://", "to the URL https://".
_TO_URL_WORDS: Final = (
    ("to", "at", "via", "into", "through", "using"),
    ("the", "this", "that", "a", "an", "our", "my", "your", "following", "below"),
    ("url", "link", "endpoint", "address", "server", "webhook", "site", "page", "form", "api"),
)
_TO_URL = r"\s+(?:{})\s+(?:(?:{})\s+)?(?:(?:{})\s+)?(?:https?|ftps?)://".format(
    *("|".join(words) for words in _TO_URL_WORDS)
)
#: A home directory however it is spelled: ``~``, ``$HOME``, ``%USERPROFILE%``, ``/home/x``.
_HOME_PREFIX = (
    r"(?:\$\{?home\}?|~|%userprofile%|/home/[^/\s]{1,64}|/root|/users/[^/\s]{1,64}|"
    r"c:\\users\\[^\\\s]{1,64})"
)
#: Reading, listing, copying or sending SSH keys. A path mentioned as a fact ("aliases live in
#: ~/.ssh/config") has no such verb and passes.
_SSH_VERBS = (
    r"cat|less|more|head|tail|type|get-content|read|open|print|show|display|dump|output|reveal|"
    r"copy|cp|scp|rsync|mv|move|tar|zip|7z|base64|xxd|od|send|upload|post|exfiltrate|paste|"
    r"share|e-?mail|leak|attach|encode|grep|find|ls|dir|list|archive|steal|grab|collect|"
    r"fetch|look\s+in|look\s+at|go\s+through|search"
)
_SSH_PATH = (
    r"(?:\S{0,128}?(?<![a-z0-9_])\.ssh(?![a-z0-9_-])"
    r"|\S{0,128}?(?<![a-z0-9])id_(?:rsa|dsa|ecdsa|ed25519)(?![a-z0-9_]|\.pub))"
)
_SSH_ACCESS = (
    _B
    + f"(?:{_SSH_VERBS})"
    + _E
    + _S
    + f"(?>{_F}{_SSH_PATH})"
    + r"|(?:(?<![a-z0-9_])\.ssh(?![a-z0-9_-])|(?<![a-z0-9])id_(?:rsa|dsa|ecdsa|ed25519)"
    + r"(?![a-z0-9_]|\.pub))"
    + r"\S{0,64}?[^\w\s]{0,3}\s+(?:\S{1,64}\s+){0,4}?(?:send|upload|post|paste|exfiltrate|"
    + r"leak|e-?mail)(?![a-z0-9])"
)
_FILLERS = "\u115f\u1160\u3164\uffa0"
#: A letter that is not Hangul (nor a filler): Latin, Cyrillic, Greek, look-alikes, CJK.
_NON_HANGUL_LETTER = r"[^\W\d_\u1100-\u11ff\u3130-\u318f\uac00-\ud7af\uffa0-\uffdc]"
_FILLER_GLUE = f"{_NON_HANGUL_LETTER}[{_FILLERS}]|[{_FILLERS}]{_NON_HANGUL_LETTER}"
_ROLE = r"(?:system|user|assistant|developer|tool|model)(?![a-z0-9])"
#: The start of an HTML element (``<div``, ``<span``, ``<p``, a custom element).
_HTML_TAG = r"<[a-z][a-z0-9-]{0,31}(?![a-z0-9-])"
#: Inline styles that hide an element's text from the reader but not from the model.
_HIDING_STYLE = (
    r"(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![\d.])"
    r"|opacity\s*:\s*0(?![\d.]))"
)
#: Words that make hidden text an instruction (what a hidden element, other than the
#: reference's ``display:none`` div, must be followed by within 512 characters).
_HIDDEN_TEXT_WORDS = (
    r"(?:ignore|disregard|forget|override|instructions?|prompt|system|assistant|developer|"
    r"obey|reveal|tell|execute|exfiltrate|send|upload|secrets?|passwords?|tokens?|"
    r"credentials?|api[\s_-]?keys?|rules?|restrictions?|answer|respond|reply|act|pretend|"
    r"behave|you\s+(?:must|should|are|will|now)|do\s+not|don['’]?t|always|never)"
)
#: A ``|`` of chat-template markup: the skeleton reads some look-alikes (``ǀ``, ``∣``) as
#: ``l`` (and ``‖`` as ``ll``) and leaves others as they are: broken bar, box-drawing and
#: dingbat bars, ``⏐``, ``丨``, Hebrew paseq.
_BAR = (
    "[|l\u00a6\u05c0\u23d0\u2502\u2503\u2506\u2507\u250a\u250b\u254e\u254f\u2551"
    "\u2758\u2759\u275a\u4e28]{1,2}"
)
#: Chat-template control markup: ChatML, Llama 2/3, Gemma, Harmony, Zephyr.
_ROLE_MARKUP = (
    rf"<\s{{0,3}}{_BAR}\s{{0,3}}(?:im_start|start_header_id|start)\s{{0,3}}{_BAR}\s{{0,3}}>"
    + r"\s{0,3}"
    + _ROLE
    + rf"|<\s{{0,3}}{_BAR}\s{{0,3}}(?:system|user|assistant|developer)\s{{0,3}}{_BAR}"
    + r"\s{0,3}>"
    + r"|\[\s{0,2}/?\s{0,2}inst\s{0,2}\]|<<\s{0,2}/?\s{0,2}sys\s{0,2}>>"
    + r"|<\s{0,2}(?:start|end)_of_turn\s{0,2}>"
)
_LEAK_WORDS = (
    r"(?:conversation|chat|history|messages|context|memory|memories|system_prompt|prompt|"
    r"transcript|secrets?)"
)
#: ``%CONVERSATION%``: a ``%`` that starts no percent-escape (``%E2%80``), a leak word, ``%``.
_PERCENT_SLOT = r"%(?![0-9a-f]{2})[\w.-]{0,24}?" + _LEAK_WORDS + r"[\w.-]{0,24}?%"
#: ``INSERT_CONVERSATION_HERE``, ``chat_history_here``: a slot named in words.
_NAMED_SLOT = (
    r"(?:insert|paste)[_-][\w.-]{0,24}?"
    + _LEAK_WORDS
    + r"|"
    + _LEAK_WORDS
    + r"[\w.-]{0,24}?[_-]here(?![a-z0-9])"
)
#: Any template slot (``\{x\}`` too: markdown escapes braces). The slots spelled without
#: brackets start a path segment or a query value: they are tried after its delimiter (at
#: every character of an image URL a one-class test fails fast; the leak words would not).
_PLACEHOLDER = (
    r"(?:\{\{?\s{0,2}[a-z_][\w.\s-]{0,40}\\?\}|%7b|\$\{?[a-z_]|<[a-z_][\w\s-]{0,40}>"
    r"|\[[a-z_][\w\s-]{0,40}\]|[/?&#=](?=[%ipchmst])(?:" + _PERCENT_SLOT + "|" + _NAMED_SLOT + "))"
)
#: A slot naming the conversation by an identifier (``{conversation_id}``, ``{chat_uuid}``
#: of a REST path) leaks nothing: what may follow the leak word up to the slot's end.
_NOT_AN_ID = r"(?![\w.-]{0,24}?[_.-]?(?:ids?|uuid|guid|num|no|idx|index|count)(?![\w.-]))"
#: What follows the ``!`` of a markdown image, up to the ``//`` of its URL.
_IMAGE_HEAD = r"\[[^\]\n]{0,256}\]\(\s{0,4}<?(?:https?:)?//"
#: What follows the ``<`` of an ``<img>`` tag, up to the ``//`` of its URL.
_IMG_TAG_HEAD = (
    r"img(?![a-z0-9])(?:[^<>]|<(?!img(?![a-z0-9]))){0,512}?src\s{0,2}=\s{0,2}[\"']?"
    r"(?:https?:)?//"
)
#: A URL the agent is meant to fill in with private data: any template in an image URL (an
#: image loads without a click), or a template naming the conversation in any URL
#: (``[?&#/=]`` before it, or right after ``://``: a host to resolve leaks too).
#:
#: Each URL (and each tag's attributes) is read up to the start of the next URL of its kind,
#: not past it: that one reaches everything after it this one would (and further), so
#: stopping costs no match (but a placeholder look-alike in the next image's own alt text)
#: and keeps the work linear — without it each start read up to 1024 characters of the
#: ones after it: 200 KB of "http://{{" took 3 s, of "<img/src=//{{" over 20 s.
_URL_TEMPLATE = (
    r"!"
    + _IMAGE_HEAD
    + rf"(?:[^\s)!]|!(?!{_IMAGE_HEAD})){{0,1024}}?"
    + _PLACEHOLDER
    + r"|<"
    + _IMG_TAG_HEAD
    + rf"(?:[^\s\"'><]|<(?!{_IMG_TAG_HEAD})){{0,1024}}?"
    + _PLACEHOLDER
    # Most URLs hold no slot opener at all: a possessive scan for one rejects them at once.
    + r"|https?://(?=[^\s{%$<\[\\]{0,1026}+[{%$<\[\\])"
    + r"(?:(?:[^\sh]|h(?!ttps?://)){0,1024}?[?&#/=])?"
    + r"(?:\\?(?:\{\{?|%7b|\$\{?|<|\[)\s{0,2}[\w.-]{0,24}?"
    + _LEAK_WORDS
    + _NOT_AN_ID
    + "|"
    + _PERCENT_SLOT
    + ")"
)
_FAKE_TOOL_RESULT = (
    r"<\s{0,2}/?\s{0,2}(?:tool|function)[_-](?:(?:call[_-])?(?:results?|responses?|outputs?)"
    r"|calls?|use)(?![a-z0-9_])[^<>\n]{0,256}>"
    r"|\[\s{0,2}(?:tool|function)[\s_-]{0,2}(?:call[\s_-]{0,2})?(?:result|output|response)s?"
    r"\s{0,2}[\]:]"
    r"|[\"']role[\"']\s{0,4}:\s{0,4}[\"'](?:tool|function|ipython)[\"']"
    r"|[\"']type[\"']\s{0,4}:\s{0,4}[\"']tool_result[\"']"
)
#: What may stand before "SYSTEM MESSAGE:" on its line: indentation, markdown heading,
#: quote and list markers (up to three: "> - "), emphasis and a bracket ("**[").
_HEADER_PREFIX = r"[ \t]{0,8}(?:(?:#{1,6}|>|[-+*]|\d{1,3}[.)])[ \t]{0,4}){0,3}[*_\[]{0,4}[ \t]{0,2}"
#: The snapshot's block headers and rules, the recall fence and its system note, and generic
#: "SYSTEM MESSAGE:" headers: text inside an entry must not pose as the frame around it.
_HEADER_FRAMES = (
    r"memory\s{0,4}\(\s{0,4}your\s{1,4}personal\s{1,4}notes\s{0,4}\)"
    r"|user\s{1,4}profile\s{0,4}\(\s{0,4}who\s{1,4}the\s{1,4}user\s{1,4}is\s{0,4}\)"
    r"|═{10}"
    r"|<\s{0,2}/?\s{0,2}memory[-_\s]context\s{0,2}>"
    r"|\[\s{0,2}system\s{1,4}note\s{0,2}:"
)
#: A "SYSTEM MESSAGE:" line header after its :data:`_HEADER_PREFIX`.
_HEADER_LINE = (
    r"(?:system|developer)(?:[ \t]{1,4}|[ \t]{0,2}-[ \t]{0,2})"
    r"(?:message|instructions?|override|notice|prompt)[ \t]{0,2}[*_\]]{0,4}[ \t]{0,2}:"
)
_FAKE_MEMORY_HEADER = _HEADER_FRAMES + r"|(?m:^)" + _HEADER_PREFIX + _HEADER_LINE
#: How many backslash-newline continuations a command line of ``exfil_upload`` may run over.
_CONTINUATIONS: Final = 8
#: The rest of a shell command line, lazily: a backslash right before the newline continues
#: it ("curl https://x \\" then "-F f=@key" on the next line), at most _CONTINUATIONS times
#: (so a start scans a bounded number of lines however many continuations follow). Whole
#: continued lines are skipped before the lazy scan of the last one: the lazy scan of the
#: first line alone stays a one-class loop.
#: A newline continued by the backslash before it (``\\\r\n`` too: a note written on
#: Windows reads the same to a model).
_CONTINUED_NEWLINE = r"(?:(?<=\\)|(?<=\\\r))\n"
_COMMAND_REST = rf"(?:[^\n]*+{_CONTINUED_NEWLINE}){{0,{_CONTINUATIONS}}}?[^\n]*?"


def _command_with(word: str) -> str:
    """A line start whose command line holds ``word``, then the rest of that command line."""
    return rf"(?m)^(?={_COMMAND_REST}(?<![a-z0-9]){word}(?![a-z0-9])){_COMMAND_REST}"


#: curl's upload flags, from the whitespace before the flag: form fields with ``@``/``<``,
#: data from a file, upload of a file.
_CURL_UPLOAD_FLAG = (
    r"\s(?:-f|--form(?:-string)?)\s{0,4}[\"']?[^\s=\"']{0,64}=[\"']?[@<]"
    r"|\s(?:-d|--data(?:-binary|-raw|-urlencode|-ascii)?|--json)[\s=]{0,4}[\"']?@\S"
    r"|\s(?:-t|--upload-file)[\s=]{1,4}[\"']?[^\s\"'-]"
)
#: What follows the ``|`` of "… | nc host port": netcat and, on its line, a port (a table
#: row "| NC | 42 |", NC for "not classified", pipes into no command).
_PIPE_TO_NETCAT = r"\s{0,4}(?:nc|ncat|netcat)\s[^\n|]{0,256}?(?<=\s)\d{1,5}(?![^\s;&)])"
#: Sending a local file somewhere: curl form/data/upload flags, wget's post/body file,
#: netcat fed from a file (a port, then ``< file``: "Raleigh, NC <jane@example.com>" or
#: "NC 27601 < 5 miles" in an e-mail is no command) or a pipe, PowerShell -InFile. Each
#: branch starts at a line start and takes the *first* command word of the line
#: atomically, so a line with many "curl" words is scanned once, not once per word.
_UPLOAD = (
    r"(?m:^)(?>[^\n]*?(?<![a-z0-9])curl(?![a-z0-9]))"
    + _COMMAND_REST
    + f"(?:{_CURL_UPLOAD_FLAG})"
    + r"|(?m:^)(?>[^\n]*?(?<![a-z0-9])wget(?![a-z0-9]))"
    + _COMMAND_REST
    + r"--(?:post-file|body-file)"
    + r"|(?m:^)(?>[^\n]*?(?<![a-z0-9])(?:nc|ncat|netcat|socat)(?![a-z0-9]))"
    + r"[^\n<|]{0,256}?[\s:]\d{1,5}[ \t]{0,4}<\s{0,4}(?![\d<>])(?>[^\s<>]{1,256})(?!>)"
    + f"|(?m:^)(?>[^\\n]*?\\|{_PIPE_TO_NETCAT})"
    + r"|(?m:^)(?>[^\n]*?(?<![a-z0-9])(?:invoke-webrequest|invoke-restmethod|iwr|irm)"
    + r"(?![a-z0-9]))[^\n]*?-infile(?![a-z0-9])"
)

#: How the scanner runs a pattern (see :class:`_Record`).
Matcher = Literal[
    "search",
    "plan",
    "spaced",
    "lines",
    "raw",
    "multilingual",
    "hidden",
    "upload",
    "header",
    "connect",
]


@dataclass(frozen=True)
class _Record:
    """One threat pattern: its id, home scope, expression and how it is matched.

    Nothing else is kept per pattern: the literals, widths and bounds the fast paths use
    are derived from ``expression`` on first use (:func:`_facts`). ``matcher``:

    * ``search``: a plain search of each normalised form, once its literals are present;
    * ``plan``: matched only where one of its leading literals starts; ``spaced`` too, on
      the text with every whitespace run collapsed to one space (for expressions that
      only ever consume whole whitespace runs: it bounds how far a match reads);
    * ``lines``: a ``curl``/``wget`` command line holding ``command`` (see
      :func:`_line_record`);
    * ``raw``: searched on the raw text, not the normalised forms;
    * the others name a matcher written for that one pattern.
    """

    id: str
    scope: Scope
    expression: str
    matcher: Matcher = "search"
    command: str = ""


def _line_record(pid: str, scope: Scope, command: str) -> _Record:
    """A command line running ``command`` that also expands a secret variable."""
    return _Record(pid, scope, _command_with(command) + _SENSITIVE_VAR, "lines", command)


_RECORDS: Final[tuple[_Record, ...]] = (
    # ---- all --------------------------------------------------------------------------------
    _Record(
        "prompt_injection",
        "all",
        _words("ignore|forget", "previous|all|above|prior", "instructions?"),
        "spaced",
    ),
    _Record("sys_prompt_override", "all", _phrase("system", "prompt", "override"), "spaced"),
    _Record(
        "disregard_rules",
        "all",
        _words("disregard", "your|all|any", "instructions|rules|guidelines"),
        "spaced",
    ),
    _Record(
        "bypass_restrictions",
        "all",
        _words(
            r"act\s+as\s+(?:if|though)",
            "you",
            r"have\s+no|don['’]?t\s+have|do\s+not\s+have",
            "restrictions|limits|rules",
        ),
        "spaced",
    ),
    _Record(
        "html_comment_injection", "all", r"<!--" + _COMMENT_BODY + _COMMENT_INSTRUCTION, "plan"
    ),
    _Record(
        "hidden_div",
        "all",
        # The reference's shape, whatever it hides: a div styled display:none. Any other
        # element hidden by a style or the hidden attribute ("<details hidden>", a "Loading…"
        # placeholder) only when an instruction-like word follows it. The first style
        # attribute wins (atomic group), as it does in browsers.
        r"<div(?![a-z0-9])(?>[^<>]{0,1024}?(?<![a-z-])style\s*=)\s*[\"']?[^\"'<>]{0,1024}?"
        + r"display\s*:\s*none|"
        + _HTML_TAG
        + r"(?:(?>[^<>]{0,1024}?(?<![a-z-])style\s*=)\s*[\"']?[^\"'<>]{0,1024}?"
        + _HIDING_STYLE
        + r"|(?>\s+[^\s<>\"'=/]{1,64}(?:\s*=\s*(?:\"[^\"<>]{0,1024}\"|'[^'<>]{0,1024}'"
        + r"|[^\s<>\"'=]{1,1024}))?){0,32}?\s+hidden(?=[\s/>=]))"
        + r"[^<>]{0,1024}>(?=[\s\S]{0,512}?(?<![a-z])"
        + _HIDDEN_TEXT_WORDS
        + r"(?![a-z]))",
        "hidden",
    ),
    _Record(
        "translate_execute",
        "all",
        _B + r"translate" + _E + _S + _F + r"into\s+\S{1,64}\s+and\s+(?:execute|run|eval)" + _E,
        "spaced",
    ),
    _Record(
        "deception_hide", "all", _words(r"do\s+not|don['’]?t", "tell", r"the\s+user"), "spaced"
    ),
    # curl / wget anywhere on a command line (continued lines included) that also expands
    # $..KEY / ${..TOKEN} etc.
    _line_record("exfil_curl", "all", "curl"),
    _line_record("exfil_wget", "all", "wget"),
    _Record(
        "read_secrets",
        "all",
        _B
        + r"(?:cat\s+"
        + _CAT_ARGS
        + r"\S{0,128}?(?=[.c])(?:\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)"
        + _E
        + _NOT_TEMPLATE
        + r"|(?:head|tail|get-content|gc|bat)\s+"
        + _READER_FLAGS
        + _SECRET_PATH
        + r"|(?:less|more|type)\s+"
        + _READER_FLAGS
        + _SECRET_PATH
        + _COMMAND_END
        + ")",
        "spaced",
    ),
    _Record("role_markup", "all", _ROLE_MARKUP, "plan"),
    _Record("exfil_url_template", "all", _URL_TEMPLATE, "plan"),
    # A payload written in invisible tag characters; matched on the raw text (see _RAW_IDS).
    _Record("invisible_tag_text", "all", TAG_PAYLOAD_RE.pattern, "raw"),
    # Bytes written as variation selectors after an emoji (raw text, see _RAW_IDS).
    _Record("variation_selector_payload", "all", VARIATION_PAYLOAD_RE.pattern, "raw"),
    # A Hangul filler (drawn as a blank) glued to a letter of another script: Korean text
    # never does that; an obfuscated payload does (raw text, see _RAW_IDS).
    _Record("hangul_filler_in_text", "all", _FILLER_GLUE, "raw"),
    # Built on first use from translated keywords (see _multilingual_source).
    _Record("prompt_injection_multilingual", "all", "(?!)", "multilingual"),
    # ---- context ----------------------------------------------------------------------------
    _Record("role_hijack", "context", _words(r"you\s+are", r"now\s+(?:a|an|the)"), "spaced"),
    _Record("role_pretend", "context", _words("pretend", r"you\s+are|to\s+be"), "spaced"),
    _Record(
        "leak_system_prompt", "context", _words("output", r"(?:system|initial)\s+prompt"), "spaced"
    ),
    _Record(
        "remove_filters",
        "context",
        _words(r"(?:respond|answer|reply)\s+without", "restrictions|limitations|filters|safety"),
        "spaced",
    ),
    _Record(
        "fake_update",
        "context",
        _words(r"you\s+have\s+been", r"(?:updated|upgraded|patched)\s+to"),
        "spaced",
    ),
    _Record("identity_override", "context", _B + r"name\s+yourself\s+[^\W_]", "spaced"),
    _Record("c2_node_registration", "context", _phrase("register", "as", "a", "node"), "spaced"),
    _Record(
        "c2_heartbeat",
        "context",
        _B + r"(?:heartbeat|beacon|check-in|check\s+in)\s+(?:back\s+)?(?:to|with)\s+" + _C2_PEER,
        "spaced",
    ),
    _Record(
        "c2_task_pull", "context", _B + r"pull\s+(?:down\s+)?(?:new\s+)?tasking" + _E, "spaced"
    ),
    _Record(
        "c2_network_connect",
        "context",
        # An instruction ("connect to the network", "you must … connect", "first, …"), not a
        # description ("nodes connect to the network through WireGuard").
        r"(?:(?:^|[.!?:;,]|\n)\s{0,8}|(?<![a-z0-9])(?:to|must|should|will|please|then|and|now)"
        r"\s+)connect\s+to\s+the\s+network(?![a-z0-9])"
        # "connect to the network printer / drive / share" is an office note.
        r"(?!\s+(?:printers?|drives?|shares?|folders?|storage|scanners?|cameras?))",
        "connect",
    ),
    _Record("forced_action", "context", _words(r"you\s+must", _FORCED), "spaced"),
    _Record("anti_forensic_oneliner", "context", _ONELINER, "plan"),
    _Record(
        "anti_forensic_disk",
        "context",
        _words("never", "create|write", r"(?:scripts?|files?)", "disk"),
        "spaced",
    ),
    _Record(
        "env_var_unset_agent",
        "context",
        _B
        + r"unset\s+"
        + _F
        + r"\w{0,64}?(?=[acho])(?:claude|codex|hermes|agent|openai|anthropic)",
        "spaced",
    ),
    _Record(
        "known_c2_framework",
        "context",
        _B
        + r"(?:cobalt\s*strike|metasploit|meterpreter|brainworm|(?:sliver|havoc|mythic)\s+"
        + r"(?:c2|implants?|beacons?|listeners?|payloads?|teamserver|stagers?|demons?|callbacks?))"
        + _E,
        "spaced",
    ),
    _Record(
        "c2_explicit", "context", _B + r"c2[\s-]+(?:server|channel|infrastructure|beacon)", "plan"
    ),
    _Record(
        "c2_explicit_long", "context", _B + r"command[\s-]+(?:and|&)[\s-]+control" + _E, "plan"
    ),
    _Record("fake_tool_result", "context", _FAKE_TOOL_RESULT, "plan"),
    _Record("fake_memory_header", "context", _FAKE_MEMORY_HEADER, "header"),
    # ---- strict -----------------------------------------------------------------------------
    _Record(
        "send_to_url",
        "strict",
        _B
        + r"(?:send|post|upload|transmit|forward|exfiltrate|leak|e-?mail|submit)"
        + _E
        + _S
        + r"(?>"
        + _F
        + _SENSITIVE_DATA
        + r")"
        + _E
        + r"[^\w\s]{0,3}(?:\s+\S{1,64}){0,8}?"
        + _TO_URL,
        "spaced",
    ),
    _Record(
        "context_exfil",
        "strict",
        _words(
            "include|output|print|share",
            r"conversation|chat\s+history|previous\s+messages|full\s+context|entire\s+context",
        ),
        "spaced",
    ),
    _Record("ssh_backdoor", "strict", r"authorized_keys", "plan"),
    _Record("ssh_access", "strict", _SSH_ACCESS, "spaced"),
    _Record("hermes_env", "strict", _HOME_PREFIX + r"/\.hermes/\.env(?![a-z0-9])", "search"),
    _Record(
        "agent_config_mod",
        "strict",
        _B
        + f"(?:{_VERB_EDIT})"
        + _E
        + _S
        + _F
        + r"\S{0,128}?(?=[ac.])(?:agents\.md|claude\.md|\.cursorrules|\.clinerules)",
        "spaced",
    ),
    _Record(
        "hermes_config_mod",
        "strict",
        _B + f"(?:{_VERB_EDIT})" + _E + _S + _F + r"\S{0,128}?\.hermes/(?:config\.yaml|soul\.md)",
        "spaced",
    ),
    _Record(
        "hardcoded_secret",
        "strict",
        r"(?:api[_-]?key|token|secret|password)\s*[=:]\s*[\"'][A-Za-z0-9+/=_\-]{20}",
        "spaced",
    ),
    _Record("exfil_upload", "strict", _UPLOAD, "upload"),
)

# --- the override instruction in other languages --------------------------------------------
# Keywords are written in their natural spelling and passed through the same normalisation as
# the text (case folding, accents removed, confusable skeleton), so Cyrillic keywords become
# the mixed-script skeleton the text will have. Each language lists verbs (ignore / forget /
# disregard), qualifiers (previous / all / above / system) and nouns (instructions / rules).


def _listed(words: str) -> tuple[str, ...]:
    """The comma-separated ``words`` (a keyword list laid out as prose; a line break inside
    a phrase reads as a space)."""
    return tuple(" ".join(word.split()) for word in words.split(",") if word.strip())


_CJK_VERBS = _listed(
    """
    忽略, 无视, 無視, 忘记, 忘記, 忘掉, 不要理会, 不要理會, 别管, 別管, 抛开, 拋開,
    丢弃, 丟棄, 跳过, 跳過, 忘れ, 破棄, 従わな, 무시, 잊어, 잊고, 잊으, 따르지
    """
)
_CJK_QUALIFIERS = _listed(
    """
    之前, 以前, 先前, 此前, 上面, 上述, 以上, 前面, 前述, 所有, 全部, 一切, 原来, 原來,
    原有, 早先, 系统, 系統, 开发者, 開發者, これまで, 今まで, 上記, 前の, 先の, すべて,
    全て, 既存, 元の, システム, 이전, 앞의, 앞선, 위의, 위에, 모든, 기존, 지금까지,
    시스템
    """
)
_CJK_NOUNS = _listed(
    """
    指令, 指示, 说明, 說明, 规则, 規則, 提示词, 提示詞, 命令, 设定, 設定, 限制, 约束,
    約束, 要求, 内容, 內容, ルール, 制約, プロンプト, 지시, 지침, 명령, 규칙, 프롬프트,
    설정, 제약, 내용
    """
)
#: Nouns of ordinary notes too (command, note / explanation, content, requirement, setting):
#: at most _EVERYDAY_NOUN_GAP characters after their qualifier ("之前的所有说明").
_CJK_EVERYDAY_NOUNS = _listed(
    """
    说明, 說明, 命令, 内容, 內容, 要求, 设定, 設定, 명령, 설정, 내용
    """
)
_EVERYDAY_NOUN_GAP: Final = 5
_RU_VERBS = _listed(
    """
    игнорир, проигнорир, забуд, забыть, отброс, отмен, пренебре, не обращай, не слушай,
    не следуй
    """
)
_RU_QUALIFIERS = _listed(
    """
    предыдущ, прежн, вышеуказанн, вышеизложенн, все, всё, всех, прошл, ранее, системн,
    изначальн, исходн, сво, тво
    """
)
_RU_NOUNS = _listed(
    """
    инструкци, указани, правил, команд, установк, ограничени, директив, промпт,
    распоряжени
    """
)
_EU_VERBS = _listed(
    """
    ignora, ignore, ignorez, ignorer, ignorar, ignoriere, ignorieren, ignorier, olvida,
    olvide, olviden, olvidar, oublie, oubliez, oublier, esquece, esqueça, dimentica,
    dimenticate, vergiss, vergessen, vergesst, missachte, missachten, descarta,
    descartar, scarta, omite, haz caso omiso de, no hagas caso de, ne tiens pas compte,
    ne tenez pas compte, fais abstraction, faites abstraction, non considerare,
    non tenere conto, beachte nicht
    """
)
_EU_QUALIFIERS = _listed(
    """
    anteriores, previas, previos, precedentes, precedenti, previe, précédentes,
    antérieures, ci-dessus, todas, todos, toutes, tous, tutte, tutti, alle, vorherigen,
    vorigen, bisherigen, vorangegangenen, obigen, früheren, ursprünglichen, arriba,
    sopra, del sistema, du système
    """
)
_EU_NOUNS = _listed(
    """
    instrucciones, instruções, istruzioni, instructions, indicaciones, indicazioni,
    consignes, directives, directivas, reglas, regras, regole, règles, órdenes, ordens,
    ordini, comandos, comandi, anweisungen, instruktionen, regeln, befehle, vorgaben,
    anordnungen, richtlinien
    """
)


def _alt(words: tuple[str, ...]) -> str:
    """An alternation of ``words`` as they read after normalisation, longest first."""
    folded = sorted({fold_keyword(w) for w in words}, key=len, reverse=True)
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in folded) + ")"


def _gap_to(words: tuple[str, ...], limit: int = 16, clause: bool = False) -> str:
    """Up to ``limit`` characters of one CJK sentence, ending where the first of ``words`` starts.

    A whitespace run counts as one character. ``clause``: the gap also ends at a comma,
    semicolon or colon (the words after one belong to another clause).

    Possessive, and a character is only examined as a possible start when it is the first
    letter of one of ``words``, so each start position costs at most ``limit`` steps (the
    lazy ``.{0,16}?`` followed by a 30-way alternation cost hundreds).
    """
    folded = {fold_keyword(w) for w in words}
    firsts = "".join(sorted({re.escape(w[0]) for w in folded}))
    stops = "。!?,;:" if clause else "。!?"  # NFKC turned ！？，；： into ASCII
    # A whitespace run counts as one step, so the answer does not change when the scanner
    # collapses whitespace (the plan below runs on collapsed text).
    return f"(?:[^\\s{stops}{firsts}]|(?!{_alt(words)})[{firsts}]|\\s+){{0,{limit}}}+"


def _multilingual_source() -> str:
    """The regex of ``prompt_injection_multilingual`` (zh, ja, ko, ru, es, fr, de, it, pt)."""
    # CJK has no spaces between words; NFKC turned ！ into !. Each gap runs to the first
    # occurrence of the next keyword, as _words() does for the English patterns. The nouns
    # of everyday notes ("命令" command, "说明" note, "内容" content) must follow their
    # qualifier closely: "跳过之前失败的测试用例的命令是 pytest --lf" names a command, not
    # the agent's instructions. A qualifier and its noun are in one clause.
    v, q = _alt(_CJK_VERBS), _alt(_CJK_QUALIFIERS)
    strong = _alt(tuple(n for n in _CJK_NOUNS if n not in _CJK_EVERYDAY_NOUNS))
    everyday = _alt(_CJK_EVERYDAY_NOUNS)
    to_v, to_q = _gap_to(_CJK_VERBS), _gap_to(_CJK_QUALIFIERS)
    near_n = _gap_to(_CJK_NOUNS, _EVERYDAY_NOUN_GAP, clause=True)
    n = f"(?:{near_n}{everyday}|{_gap_to(_CJK_NOUNS, clause=True)}{strong})"
    cjk = f"{v}{to_q}{q}{n}|{q}{n}{to_v}{v}"
    w = r"(?<!\w)"
    words = r"(?:\s+\S{1,40}){0,4}?\s+"
    rv, rq, rn = _alt(_RU_VERBS), _alt(_RU_QUALIFIERS), _alt(_RU_NOUNS)
    ru = (
        f"{w}{rv}\\w{{0,8}}(?>{words}{rq}\\w{{0,6}}){words}{rn}"
        f"|{w}{rq}\\w{{0,6}}(?>{words}{rn}\\w{{0,6}}){words}{rv}"
    )
    ev, eq, en = _alt(_EU_VERBS), _alt(_EU_QUALIFIERS), _alt(_EU_NOUNS)
    eu = (
        f"{_B}{ev}{_E}(?>{words}{eq}{_E}){words}{en}{_E}"
        f"|{_B}{ev}{_E}(?>{words}{en}{_E})\\s+{eq}{_E}"
        f"|{_B}{eq}{_E}(?>{words}{en}{_E}){words}{ev}{_E}"
    )
    return f"{cjk}|{ru}|{eu}"


@functools.cache
def _pattern_source() -> tuple[tuple[str, str, str], ...]:
    """``(id, home scope, regex source)`` for every pattern, the translated one filled in."""
    multilingual = _multilingual_source()
    return tuple(
        (r.id, r.scope, multilingual if r.matcher == "multilingual" else r.expression)
        for r in _RECORDS
    )


#: The command words of ``exfil_upload``: its regex is only tried at the start of a line
#: holding one of them, neither glued to a letter or digit before nor followed by one.
_UPLOAD_WORDS: Final = (
    *("curl", "wget", "nc", "ncat", "netcat", "socat", "iwr", "irm"),
    *("invoke-webrequest", "invoke-restmethod"),
)

#: Patterns matched against the raw text, not the normalised forms.
_RAW_IDS: Final = frozenset(r.id for r in _RECORDS if r.matcher == "raw")

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
    #: Every match starts at the start of the text or after a character that is not
    #: ``[a-z0-9]`` (a ``(?<![a-z0-9])`` or stricter look-behind leads each branch): heads
    #: glued to a letter or digit are no candidates (see :meth:`LiteralIndex.starts`).
    boundary: bool = False
    #: With ``spaced`` and ``near``: at most this many characters of a match can be a
    #: space (whitespace runs are single spaces there), so a head with more spaces before its
    #: nearest near literal is no candidate.
    gaps: int | None = None


class _Facts(NamedTuple):
    """What the fast paths need to know about one pattern, derived from its expression."""

    #: Literal groups every match holds (lower case): all groups, one literal of each.
    required: tuple[tuple[str, ...], ...]
    #: Where matches can start (``plan``, ``spaced``, ``lines`` and the translated override).
    plan: _Plan | None
    #: ``(right, left)``: from a start ``s`` the regex reads nothing outside
    #: ``[s - left, s + right]`` on the text it runs on (``None``: unbounded, or a matcher
    #: of its own that visits its keywords instead of windows).
    extent: tuple[int, int] | None
    #: Patterns run on collapsed text: the most spaces the regex can read from a start
    #: before it reads a given character (look-aheads counted as if they consumed).
    read_spaces: int | None


#: Literal groups tested before a pattern's regex runs: the most selective few (each one
#: more is a dictionary lookup per pattern and form).
_GATE_GROUPS: Final = 2
#: Near literals shorter than this ("to", "as") occur everywhere: they would select nothing.
_MIN_NEAR: Final = 3
#: Matchers whose matches are found from windows around inserted spaces when bounded.
_WINDOWED: Final = frozenset({"search", "plan", "spaced", "multilingual"})


def _gate(groups: list[_regex_facts.Group]) -> tuple[tuple[str, ...], ...]:
    """The :data:`_GATE_GROUPS` most selective ``groups``, in pattern order."""
    ranked = sorted(range(len(groups)), key=lambda i: -_regex_facts.score(groups[i][0]))
    kept = sorted(ranked[:_GATE_GROUPS])
    return tuple(tuple(sorted(groups[i][0])) for i in kept)


def _near(
    groups: list[_regex_facts.Group], heads: frozenset[str]
) -> tuple[tuple[str, ...], int | None]:
    """The most selective literal group other than the heads, and how far it starts."""
    best: _regex_facts.Group | None = None
    for literals, offset in groups:
        if literals == heads or _regex_facts.score(literals) < _MIN_NEAR:
            continue
        better = best is None or _regex_facts.score(literals) > _regex_facts.score(best[0])
        if better or (best is not None and best[1] is None and offset is not None):
            best = (literals, offset)
    return ((), None) if best is None else (tuple(sorted(best[0])), best[1])


def _derive(record: _Record, source: str) -> _Facts:
    """The facts of ``record`` (``source``: its expression, the translated one built)."""
    node = _regex_facts.parse(source)
    spaced = record.matcher in ("spaced", "multilingual")
    read = _regex_facts.collapsed(node) if spaced else node
    plan: _Plan | None = None
    required: tuple[tuple[str, ...], ...]
    if record.matcher == "multilingual":
        words, verbs, nouns = _multilingual_words()
        # Every match holds a verb, so each word of it: the longest word of each is required.
        required = (tuple(dict.fromkeys(max(verb.split(), key=len) for verb in verbs)),)
        plan = _Plan(words, nouns, _regex_facts.width(read), spaced=True)
    elif record.matcher not in ("plan", "spaced"):  # a plan gates on its own literals
        required = _gate(_regex_facts.literal_groups(node))
    if record.matcher == "lines":
        plan = _Plan((record.command,), lines=True)
    elif record.matcher in ("plan", "spaced"):
        heads = _regex_facts.heads(node)
        if heads is None:
            raise ValueError(f"no literal starts every match of {record.id!r}: use 'search'")
        near, reach = _near(_regex_facts.literal_groups(read), heads)
        # The plan looks its head and near literals up anyway: gating on them adds no
        # literal to the index (a word such as "user" in a gate costs a hit per mention).
        # The more selective group first: the test stops at the first one absent.
        groups = [frozenset(heads), frozenset(near)] if near else [frozenset(heads)]
        groups.sort(key=_regex_facts.score, reverse=True)
        required = tuple(tuple(sorted(group)) for group in groups)
        gaps = _regex_facts.spaces(read) if spaced and near else None
        boundary = _regex_facts.boundary_led(node)
        plan = _Plan(tuple(sorted(heads)), near, reach, spaced, False, boundary, gaps)
    extent: tuple[int, int] | None = None
    reads = _regex_facts.reads(read) if record.matcher in _WINDOWED else None
    if reads is not None:
        extent = (reads[1], reads[2])
    read_spaces = _regex_facts.spaces(read) if spaced and extent is not None else None
    return _Facts(required, plan, extent, read_spaces)


@functools.cache
def _facts() -> dict[str, _Facts]:
    """Every pattern's :class:`_Facts`, derived on first use (once per process)."""
    sources = {pid: source for pid, _scope, source in _pattern_source()}
    return {record.id: _derive(record, sources[record.id]) for record in _RECORDS}


@functools.cache
def _plans() -> dict[str, _Plan]:
    """The patterns matched only where their head literals start."""
    return {pid: fact.plan for pid, fact in _facts().items() if fact.plan is not None}


@functools.cache
def _extents() -> dict[str, tuple[int, int]]:
    """``(right, left)`` read bounds of the patterns whose reads are bounded (see
    :class:`_Facts`): the spaced reading is searched only in windows around its insertions."""
    return {pid: fact.extent for pid, fact in _facts().items() if fact.extent is not None}


@functools.cache
def _read_spaces() -> dict[str, int]:
    """:attr:`_Facts.read_spaces` of the patterns run on collapsed text: a start with more
    spaces before an insertion cannot read it (in prose this narrows a window from ~1000 to
    ~100 characters)."""
    return {pid: f.read_spaces for pid, f in _facts().items() if f.read_spaces is not None}


@functools.cache
def _required() -> dict[str, tuple[tuple[str, ...], ...]]:
    """The literal groups that must all be present before each pattern's regex runs."""
    return {pid: fact.required for pid, fact in _facts().items()}


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
        for pid, scope, source in _pattern_source()
    )


if TYPE_CHECKING:
    #: Every pattern as ``(id, home scope, compiled case-insensitive regex)``, in report order.
    THREAT_PATTERNS: tuple[ThreatPattern, ...]


def __getattr__(name: str) -> tuple[ThreatPattern, ...]:
    # THREAT_PATTERNS is built lazily: compiling 36 regexes costs tens of milliseconds.
    if name == "THREAT_PATTERNS":
        return _compiled()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _keywords() -> Keywords:
    """Every literal the scanner looks up (see :class:`_Texts`)."""
    heads, verbs, nouns = _multilingual_words()
    literals = {lit for groups in _required().values() for group in groups for lit in group}
    for plan in _plans().values():
        literals.update(plan.heads, plan.near)
    literals.update(_HEADER_NEAR, _UPLOAD_WORDS, heads, verbs, nouns, ("connect",))
    return Keywords(sorted(literals))


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


#: What ``[a-z0-9]`` matches in a (lower-case) probe.
_ALNUM: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def _near_within(index: LiteralIndex, plan: _Plan, start: int) -> bool:
    """Whether a near literal of ``plan`` follows ``start`` close enough for a match.

    Within ``reach`` characters and, on collapsed text with ``gaps``, with at most ``gaps``
    spaces before it (every space there would be inside the match). The first near literal
    after ``start`` has the fewest, so it decides.
    """
    limit = start + cast(int, plan.reach)
    nearest = -1
    for literal in plan.near:
        found = index.first(literal, start)
        if 0 <= found <= limit and (nearest < 0 or found < nearest):
            nearest = found
    if nearest < 0:
        return False
    return plan.gaps is None or index.probe.count(" ", start, nearest) <= plan.gaps


def _gap_floor(probe: str, position: int, gaps: int | None, low: int = 0) -> int:
    """The lowest start from ``low`` with at most ``gaps`` spaces before ``position``."""
    if gaps is None or low >= position:
        return low
    parts = probe[low:position].rsplit(" ", gaps + 1)
    if len(parts) <= gaps + 1:
        return low  # fewer spaces than that in the whole stretch
    return low + len(parts[0]) + 1  # just past the (gaps + 1)-th space from the end


@functools.cache
def _widest(literals: tuple[str, ...]) -> int:
    """The length of the longest of ``literals``."""
    return max(map(len, literals))


def _candidates(plan: _Plan, index: LiteralIndex, heads: list[int]) -> list[int]:
    """Start offsets at which a match of the planned pattern may begin, in increasing order.

    ``heads``: where the plan's head literals start (every match starts at one of them).
    """
    if not plan.near or not heads:
        return heads
    if plan.reach is None:
        last = max(index.last(lit) for lit in plan.near)
        return heads[: bisect.bisect_right(heads, last)]
    if len(heads) <= index.count(plan.near):
        return [start for start in heads if _near_within(index, plan, start)]
    # The near literals are the rarer ones: keep the heads in the stretch before each.
    found: list[int] = []
    done = 0
    probe = index.probe
    for position in index.starts(plan.near):
        low = _gap_floor(probe, position, plan.gaps, max(done, position - plan.reach))
        if low <= position:
            found += heads[bisect.bisect_left(heads, low) : bisect.bisect_right(heads, position)]
        done = position + 1
    return found


def _matches_lines(word: str, folded: str, probe: str) -> bool:
    r"""``exfil_curl``/``exfil_wget``: a command line holding the bare word and a ``$VAR``.

    The pattern's regex is ``^`` (multi-line) + a look-ahead for the word anywhere on the
    command line from there (the line and up to :data:`_CONTINUATIONS` continued lines) +
    the rest of it + the variable, which can never contain a newline: so it matches exactly
    when, from one of the line starts that can reach a word (:func:`_command_starts`), the
    command line holds the variable.
    """
    word_re, variable_re = _line_regexes(word)
    index = probe.find(word)
    while index >= 0:
        if word_re.match(folded, index) is None:
            index = probe.find(word, index + 1)
            continue
        # The command lines from the starts that reach the word overlap one another (each
        # starts a line earlier and ends no later): one search covers them all.
        starts = [
            start for start in _command_starts(folded, index) if index < _command_end(folded, start)
        ]
        end = _command_end(folded, starts[0])  # its own line's start always reaches it
        if variable_re.search(folded, starts[-1], end) is not None:
            return True
        # Every other word on this line has the same line starts.
        line_end = folded.find("\n", index)
        if line_end < 0:
            return False
        index = probe.find(word, line_end)
    return False


def _lower_probe(text: str) -> str:
    """``text`` lower-cased for substring tests, with :data:`_PROBE_FOLD` applied first."""
    for code, letter in _PROBE_FOLD.items():
        char = chr(code)
        if char in text:  # str.translate is slow on non-ASCII text: replace only when needed
            text = text.replace(char, letter)
    return text.lower()


#: Whitespace other than a space or a newline (``str.isspace`` and ``re``'s ``\\s`` agree).
_ODD_SPACE: Final = re.compile(
    "[\t\x0b\x0c\r\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)


def _single_runs(text: str) -> bool:
    """Whether every whitespace run of ``text`` is one space or one newline."""
    return (
        "  " not in text
        and "\n\n" not in text
        and " \n" not in text
        and "\n " not in text
        and _ODD_SPACE.search(text) is None  # a one-class regex scans fast
    )


def _collapse_whitespace(text: str) -> str:
    """``text`` with every whitespace run (``\\s+``) replaced by a single space."""
    if _single_runs(text):
        return text.replace("\n", " ")
    words = text.split()  # str.split() and re's \s share one definition of whitespace
    if not words:
        return " " if text else ""
    lead = " " if text[0].isspace() else ""
    trail = " " if text[-1].isspace() else ""
    return lead + " ".join(words) + trail


#: Above one candidate start per this many characters, a plain ``search`` is cheaper …
_DENSE_SPACING: Final = 100
#: … but only past this many candidates: a few anchored ``match`` calls always beat one
#: unanchored search of a large alternation (CJK notes are dense in keyword heads).
_FEW_CANDIDATES: Final = 48


def _dense(candidates: int, length: int) -> bool:
    """Whether to search the whole text instead of matching at each candidate start."""
    return candidates > _FEW_CANDIDATES and candidates * _DENSE_SPACING > length


class _Texts:
    """The folded text, its spaced variant, their lower-case probes and literal indexes.

    Each is built on first use. The index of the spaced probe answers for the folded probe
    too when both have the same length (every whitespace run was one character, now a
    space): the literals looked up on the folded probe hold no whitespace, so they occur at
    the same offsets in both.
    """

    def __init__(self, folded: str) -> None:
        self.folded = folded
        self.probe = _lower_probe(folded)
        self._spaced: tuple[str, str] | None = None
        self._index: LiteralIndex | None = None
        self._spaced_index: LiteralIndex | None = None
        #: The texts these are with spaces inserted (see :class:`_Form`), and where: in the
        #: folded text, and in the collapsed one once known.
        self._parent: _Texts | None = None
        self._inserted: tuple[int, ...] = ()
        self._spaced_inserted: tuple[int, ...] | None = None

    def derive_from(self, parent: _Texts, inserted: tuple[int, ...]) -> None:
        """Record that these texts are ``parent``'s with spaces inserted at ``inserted``."""
        self._parent, self._inserted = parent, inserted

    def set_spaced(self, text: str, inserted: tuple[int, ...] | None = None) -> None:
        """Record the collapsed text when it is known another way (see :class:`_Form`).

        ``inserted``: where it has spaces inserted into the parent's collapsed text.
        """
        if self._spaced is None:
            self._spaced = (text, _lower_probe(text))
            self._spaced_inserted = inserted

    def spaced(self) -> tuple[str, str]:
        if self._spaced is None:
            folded = self.folded
            if _single_runs(folded):
                # Lower-casing leaves newlines and spaces alone (and reads them alike).
                self._spaced = (folded.replace("\n", " "), self.probe.replace("\n", " "))
            else:
                text = _collapse_whitespace(folded)
                self._spaced = (text, _lower_probe(text))
        return self._spaced

    def index(self) -> LiteralIndex:
        """Where the scanner's whitespace-free literals occur in :attr:`probe`."""
        if self._index is None:
            if len(self.spaced()[1]) == len(self.probe):
                self._index = self.spaced_index()
            else:
                self._index = self._derived(False) or _keywords().index(self.probe)
        return self._index

    def spaced_index(self) -> LiteralIndex:
        """Where the scanner's literals occur in the spaced probe."""
        if self._spaced_index is None:
            probe = self.spaced()[1]
            self._spaced_index = self._derived(True) or _keywords().index(probe)
        return self._spaced_index

    def _derived(self, spaced: bool) -> LiteralIndex | None:
        """The index mapped from the parent's (one automaton pass fewer), if the relation holds."""
        parent = self._parent
        if parent is None:
            return None
        if spaced:
            inserted = self._spaced_inserted
            if inserted is None:
                return None
            return parent.spaced_index().with_spaces(self.spaced()[1], inserted)
        return parent.index().with_spaces(self.probe, self._inserted)


#: The part every ``c2_network_connect`` match ends with (a literal start: a fast scan).
_CONNECT_CORE: Final = re.compile(r"connect\s+to\s+the\s+network(?![a-z0-9])", re.IGNORECASE)


def _connect_matches(pattern: ThreatPattern, texts: _Texts) -> bool:
    r"""``c2_network_connect``: find "connect to the network", then try the few starts before it.

    A match is ``(?:^|[.!?:;,]|\n)\s{0,8}`` (at most 9 characters) or one of the words
    ``to``, ``must`` … (at most 6 letters) plus the whole whitespace run, then the core. So it
    starts in the 9 characters before the core or 2–6 characters before the whitespace run
    that precedes it. The core starts with "connect", looked up in the index.
    """
    text = texts.folded
    if len(texts.probe) != len(text):
        return pattern.regex.search(text) is not None
    match = pattern.regex.match
    for start in texts.index().starts(("connect",)):
        if _CONNECT_CORE.match(text, start) is None:
            continue
        run = start
        while run > 0 and text[run - 1].isspace():
            run -= 1
        for candidate in (*range(max(0, start - 9), start + 1), *range(max(0, run - 6), run)):
            if match(text, candidate) is not None:
                return True
    return False


#: ``fake_memory_header``: every match contains one of these, a few characters after its
#: start (see :func:`_header_bounds`).
_HEADER_NEAR: Final = ("memory", "profile", "═", "system", "developer")


class _HeaderBounds(NamedTuple):
    #: The furthest a :data:`_HEADER_NEAR` keyword starts in a frame match ("user" and 4
    #: spaces before "profile").
    near_before: int
    #: The width of :data:`_HEADER_PREFIX`: the line header starts at most this far before
    #: its keyword, at the start of the keyword's line.
    before: int
    #: The width of :data:`_HEADER_FRAMES` or :data:`_HEADER_LINE`, whichever is wider:
    #: how far a match reads from the start of a keyword it holds.
    after: int


@functools.cache
def _header_bounds() -> _HeaderBounds:
    """:class:`_HeaderBounds`, derived from the expressions."""
    frames = _regex_facts.parse(_HEADER_FRAMES)
    assert isinstance(frames, _regex_facts.Alt)

    def keyword_start(branch: _regex_facts.Node) -> int:
        offsets = [
            offset
            for literals, offset in _regex_facts.literal_groups(branch)
            if offset is not None
            and all(any(lit.startswith(k) for k in _HEADER_NEAR) for lit in literals)
        ]
        if not offsets:
            raise ValueError("a fake_memory_header frame holds none of its keywords")
        return min(offsets)

    widths = [_regex_facts.width(_regex_facts.parse(p)) for p in (_HEADER_FRAMES, _HEADER_LINE)]
    before = _regex_facts.width(_regex_facts.parse(_HEADER_PREFIX))
    if before is None or None in widths:
        raise ValueError("the fake_memory_header parts must be bounded")
    near_before = max(keyword_start(branch) for branch in frames.branches)
    return _HeaderBounds(near_before, before, max(w for w in widths if w is not None))


def _header_matches(pattern: ThreatPattern, texts: _Texts) -> bool:
    """``fake_memory_header``: search only the stretches around its keywords.

    Each stretch is searched with ``endpos`` a little past the longest possible match, and a
    hit is confirmed by an anchored match on the whole text (the cut-off end could satisfy
    an assertion the whole text does not). The line header further back is tried at the
    start of the keyword's line only.
    """
    text, probe = texts.folded, texts.probe
    if len(probe) != len(text):
        return pattern.regex.search(text) is not None
    anchors = texts.index().starts(_HEADER_NEAR)
    if _dense(len(anchors), len(probe)):
        return pattern.regex.search(text) is not None
    search, match = pattern.regex.search, pattern.regex.match
    bounds = _header_bounds()
    done = 0
    tried = -1
    for anchor in anchors:
        low = anchor - bounds.near_before
        line_start = text.rfind("\n", 0, anchor) + 1
        if anchor - bounds.before <= line_start < low and line_start != tried:
            if match(text, line_start) is not None:
                return True
            tried = line_start
        position = max(done, low)
        end = min(len(text), anchor + bounds.after + 16)
        while position <= anchor:
            found = search(text, position, end)
            if found is None or found.start() > anchor:
                break
            if match(text, found.start()) is not None:
                return True
            position = found.start() + 1
        done = anchor + 1
    return False


def _upload_matches(
    pattern: ThreatPattern, texts: _Texts, inserted: tuple[int, ...] | None = None
) -> bool:
    """``exfil_upload``: every branch starts at a line start; try only lines with a command.

    In every branch the command word follows a character that is not ``[a-z0-9]`` (or the
    line start) and is followed by one (or the end): only lines holding such an occurrence
    are tried. (Letters of other scripts may touch the word, as for the regex: "中curl".)
    The pipe branch starts on the line of the ``|``, which its ``\\s{0,4}`` may separate
    from the netcat word by a newline: the line of a ``|`` in the 5 characters before a
    netcat word is tried too.

    ``inserted`` (a form whose parent has no match, see :class:`_Form`): a match from a line
    start reads the newline before it, its command line (see :func:`_command_end`) and at
    most :func:`_upload_past_line` characters after it, so only lines with an insertion
    there can match.
    """
    text, probe = texts.folded, texts.probe
    if len(probe) != len(text):
        return pattern.regex.search(text) is not None
    index = texts.index()
    positions: set[int] = set()  # a command word, or the "|" before a netcat word
    for word in index.present(_UPLOAD_WORDS):
        for start in index.starts((word,), boundary=True):
            end = start + len(word)
            if end == len(probe) or probe[end] not in _ALNUM:
                positions.add(start)
                if word in _PIPED_WORDS:
                    pipe = probe.rfind("|", max(0, start - 5), start)
                    if pipe >= 0:
                        positions.add(pipe)
    line_starts = set(_line_starts(text, sorted(positions)))
    if inserted is not None:
        line_starts = {start for start in line_starts if _reads_insertion(text, start, inserted)}
    # One try per line, however many command words it holds; only on lines that hold what
    # every branch needs (a long line of "curl … |" without one cost a whole-line regex).
    match = pattern.regex.match
    return any(
        _upload_possible(probe, start) and match(text, start) is not None
        for start in sorted(line_starts)
    )


def _line_starts(text: str, positions: list[int]) -> list[int]:
    """The start of the line of each of ``positions`` (ascending), in one pass over
    ``text`` (a long line of many command words took one ``rfind`` from each)."""
    starts: list[int] = []
    line, searched = 0, 0
    for position in positions:
        newline = text.rfind("\n", searched, position)
        if newline >= 0:
            line = newline + 1
        searched = position
        starts.append(line)
    return starts


def _upload_possible(probe: str, line_start: int) -> bool:
    """Whether a match of ``exfil_upload`` from ``line_start`` can hold what its branch
    needs: the curl, wget and PowerShell branches a ``-`` (every flag they read starts
    with one), the netcat branch a ``<``, the pipe branch ``nc``/``netcat`` — all within
    what a match reads (its command line and `_upload_past_line` characters after it)."""
    end = _command_end(probe, line_start) + _upload_past_line() + 1
    return any(probe.find(needle, line_start, end) >= 0 for needle in ("-", "<", "nc", "netcat"))


#: The netcat words the pipe branch of ``exfil_upload`` reads after a ``|``.
_PIPED_WORDS: Final = frozenset(("nc", "ncat", "netcat"))


@functools.cache
def _upload_past_line() -> int:
    """How far past the newline that ends its command line an ``exfil_upload`` match reads.

    The curl flag (:data:`_CURL_UPLOAD_FLAG`) starts with a ``\\s`` that may be that newline
    and reads at most its width from there. The pipe branch's ``|`` is on the line, so what
    follows it (:data:`_PIPE_TO_NETCAT`) ends at most its width less one past; netcat's
    ``<\\s{0,4}[^\\s<]`` at most 4; the other branches stop at the newline.
    """
    widths = [
        _regex_facts.width(_regex_facts.parse(p)) for p in (_CURL_UPLOAD_FLAG, _PIPE_TO_NETCAT)
    ]
    if None in widths:
        raise ValueError("the exfil_upload flags must be bounded")
    return max(w for w in widths if w is not None) - 1


def _command_end(text: str, line_start: int) -> int:
    """Where the command line from ``line_start`` ends: the newline the regex cannot cross.

    That is the first newline not preceded by a backslash, or the one after
    :data:`_CONTINUATIONS` continuations (``len(text)`` if there is none).
    """
    end = text.find("\n", line_start)
    for _ in range(_CONTINUATIONS):
        if end < 0 or not _continues(text, end):
            break
        end = text.find("\n", end + 1)
    return len(text) if end < 0 else end


def _continues(text: str, newline: int) -> bool:
    """Whether the newline at ``newline`` is continued (``\\`` or ``\\\r`` before it)."""
    return text.endswith("\\", 0, newline) or text.endswith("\\\r", 0, newline)


def _command_starts(text: str, index: int) -> list[int]:
    """The line starts whose command line (see :func:`_command_end`) can reach ``index``:
    its own line's, and those of up to :data:`_CONTINUATIONS` continued lines before it."""
    start = text.rfind("\n", 0, index) + 1
    starts = [start]
    for _ in range(_CONTINUATIONS):
        if start == 0 or not _continues(text, start - 1):
            break
        start = text.rfind("\n", 0, start - 1) + 1
        starts.append(start)
    return starts


def _reads_insertion(text: str, line_start: int, inserted: tuple[int, ...]) -> bool:
    """Whether an insertion lies where a match from ``line_start`` can read (see above)."""
    first = bisect.bisect_left(inserted, line_start - 1)
    if first == len(inserted):
        return False
    return inserted[first] <= _command_end(text, line_start) + _upload_past_line()


@functools.cache
def _multilingual_words() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The translated override's heads (verbs and qualifiers), verbs and nouns, folded.

    A space in a keyword stands for a whitespace run: the pattern runs on collapsed text,
    where every run is one space.
    """
    heads = _CJK_VERBS + _CJK_QUALIFIERS + _RU_VERBS + _RU_QUALIFIERS + _EU_VERBS + _EU_QUALIFIERS
    verbs = _CJK_VERBS + _RU_VERBS + _EU_VERBS
    nouns = _CJK_NOUNS + _RU_NOUNS + _EU_NOUNS

    def folded(words: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(fold_keyword(w) for w in words))

    return folded(heads), folded(verbs), folded(nouns)


@functools.cache
def _multilingual_sets() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """:func:`_multilingual_words` as sets (the index looks up only those present)."""
    heads, verbs, nouns = _multilingual_words()
    return frozenset(heads), frozenset(verbs), frozenset(nouns)


@functools.cache
def _multilingual_longest(verbs: bool = False) -> int:
    """The longest translated keyword (``verbs``: the longest verb)."""
    heads, verb_words, _ = _multilingual_words()
    return max(len(w) for w in (verb_words if verbs else heads))


def _multilingual_matches(
    pattern: ThreatPattern, texts: _Texts, windows: list[tuple[int, int]] | None = None
) -> bool:
    """The translated override: keywords are only looked for in the stretch before a verb.

    Every match contains a verb and is at most its plan's ``reach`` characters long
    (on whitespace-collapsed text), so it starts at a keyword at most that far before a
    verb. The Russian and European branches start, and hold their keywords, only after a
    character that is not ``[a-z0-9]`` (``(?<!\\w)``, ``(?<![a-z0-9])`` or a whitespace run),
    so ASCII-led keywords glued to a letter or digit are no candidates. The pattern is
    matched at each keyword start before a verb; when verbs or keywords are dense, one
    whole-text search replaces the per-start work.

    ``windows`` (``[low, high]`` ranges, see :func:`_matches_near`) limits the answer to
    matches starting in them: their verbs then lie in ``[low, high + reach]``.
    """
    heads, verbs, nouns = _multilingual_sets()
    text, probe = texts.spaced()
    if len(probe) != len(text):
        return pattern.regex.search(text) is not None
    index = texts.spaced_index()
    reach = cast(int, _plans()[pattern.id].reach)
    hits = index.spans(verbs, boundary=True)
    if windows is not None:
        hits = [h for h in hits if any(low <= h[0] <= high + reach for low, high in windows)]
    if not hits:
        return False
    # Every match also holds a noun, within ``reach`` of the verb it holds: none near any
    # verb, no match. Checked before the dense fallback: a text of verbs alone
    # (``ignore previous`` × 31,250) is then ruled out by the index, not a regex pass.
    stretches = _windows(
        tuple(start for start, _ in hits), reach, reach + _multilingual_longest(True)
    )
    if not any(index.starts(nouns, low, high + 1, True) for low, high in stretches):
        return False
    if _dense(len(hits), len(probe)):
        # Verbs everywhere: the windows cover the text, one regex pass in C is cheaper.
        return pattern.regex.search(text) is not None
    longest = _multilingual_longest()
    starts: list[int] = []
    done = 0  # keyword starts before this offset have been collected
    for verb_start, high in hits:
        low = max(done, verb_start - reach)
        if low < high:
            # Whole keywords only: let them run past ``high``.
            found = index.starts(heads, low, high + longest, True)
            starts.extend(s for s in found if s < high)
            done = high
    if windows is not None:
        starts = [s for s in starts if any(low <= s <= high for low, high in windows)]
    if _dense(len(starts), len(probe)):
        return pattern.regex.search(text) is not None
    match = pattern.regex.match
    return any(match(text, start) is not None for start in starts)


@functools.cache
def _hidden_parts() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """``hidden_div`` split in three: the reference's ``div`` shape, any other hidden
    element without its look-ahead, and the instruction words that look-ahead wants."""
    source = next(r.expression for r in _RECORDS if r.id == "hidden_div")
    split = source.index("|" + _HTML_TAG)
    cut = source.rindex(r"(?=[\s\S]{0,512}?")
    flags = re.IGNORECASE
    # The look-ahead only spares the alternation at positions no word can start at.
    words = re.compile(r"(?<![a-z])(?=[a-z])" + _HIDDEN_TEXT_WORDS + r"(?![a-z])", flags)
    return re.compile(source[:split], flags), re.compile(source[split + 1 : cut], flags), words


def _hidden_matches(text: str) -> bool:
    """``hidden_div``'s regex search in linear time.

    The regex's look-ahead reads up to 512 characters after every hidden element, so 500 KB
    of ``<p hidden>x`` cost 45k × 512 steps. Here the elements are found without it (an
    element body holds no ``<``/``>``, so matches never overlap and each ends at its first
    ``>``), and for each element end the next instruction word at or after it is looked
    up; the word found is remembered, so no stretch of text is searched for words twice.
    """
    divs, elements, words = _hidden_parts()
    if divs.search(text) is not None:
        return True
    next_word = -1  # start of the first word at or after the last end looked up
    for element in elements.finditer(text):
        end = element.end()
        if next_word < end:
            found = words.search(text, end)
            next_word = found.start() if found is not None else len(text) + 513
        if next_word - end <= 512:
            return True
    return False


def _pattern_matches(pattern: ThreatPattern, texts: _Texts) -> bool:
    """``pattern.regex.search(folded) is not None``, computed at few candidate positions."""
    if pattern.id == "prompt_injection_multilingual":
        return _multilingual_matches(pattern, texts)
    if pattern.id == "hidden_div":
        return _hidden_matches(texts.folded)
    plan = _plans().get(pattern.id)
    if plan is None:
        if pattern.id == "exfil_upload":
            return _upload_matches(pattern, texts)
        if pattern.id == "fake_memory_header":
            return _header_matches(pattern, texts)
        if pattern.id == "c2_network_connect":
            return _connect_matches(pattern, texts)
        return pattern.regex.search(texts.folded) is not None
    text, probe = texts.spaced() if plan.spaced else (texts.folded, texts.probe)
    if len(probe) != len(text):  # lower() changed a length: offsets would not line up
        return pattern.regex.search(texts.folded) is not None
    if plan.lines:
        return _matches_lines(plan.heads[0], text, probe)
    index = texts.spaced_index() if plan.spaced else texts.index()
    heads = index.starts(plan.heads, boundary=plan.boundary)
    if _dense(len(heads), len(probe)) and (
        not plan.near or plan.reach is None or _dense(index.count(plan.near), len(probe))
    ):
        # Candidates everywhere: one regex pass in C beats visiting each from Python.
        return pattern.regex.search(text) is not None
    match = pattern.regex.match
    return any(match(text, start) is not None for start in _candidates(plan, index, heads))


#: Added to both sides of an extent: reading the character just past the last one consumed,
#: and ``\b``/``$`` testing the position after it.
_EXTENT_MARGIN: Final = 2
#: Below one insertion per this many characters, a spaced reading is scanned whole.
_INSERTION_SPACING: Final = 64
#: Above this share of the text covered by windows, the whole-text matcher is used instead.
_WINDOW_SHARE: Final = 0.5

_STAND_IN: Final = "\ufdd0"


@functools.cache
def _widest_spaced_window() -> tuple[int, int, int]:
    """``(right, left, spaces)`` covering the windows of every :func:`_read_spaces` pattern."""
    extents, spaces = _extents(), _read_spaces()
    right = max(extents[pid][0] for pid in spaces) + _EXTENT_MARGIN
    left = max(extents[pid][1] for pid in spaces) + _EXTENT_MARGIN
    return right, left, max(spaces.values())


@functools.cache
def _literal_set(literals: tuple[str, ...]) -> frozenset[str]:
    return frozenset(literals)


def _runs_spaced(pid: str) -> bool:
    """Whether :func:`_pattern_matches` runs ``pid`` on the whitespace-collapsed text."""
    plan = _plans().get(pid)
    return pid == "prompt_injection_multilingual" or (plan is not None and plan.spaced)


class _Form:
    """One reading of the scanned text: its texts, and where it differs from its parent.

    A reading with a parent equals the parent's form with spaces inserted at ``inserted``
    (checked when the readings are built). A regex tried at a start from which it reads none
    of those spaces sees exactly the characters (and string ends) it sees at the
    corresponding start in the parent — the two texts only differ at the insertions — so it
    gives the same answer there. The parent has no match (otherwise the pattern is already
    reported), so only starts within a bounded pattern's extent of an insertion can match.
    """

    def __init__(self, reading: Reading) -> None:
        self.texts = _Texts(reading.form)
        self.parent = reading.parent
        self.inserted = reading.inserted
        self._spaced_inserted: tuple[int, ...] | None = None
        self._spaced_known = False
        self._near_literals: set[str] | None = None

    def near_literals(self, inserted: tuple[int, ...]) -> set[str]:
        """The literals starting where some spaced pattern's match can start (collapsed text).

        Every window :func:`_matches_near` computes for a pattern of :func:`_read_spaces`
        lies inside the window computed with the widest extent and the most spaces of them
        all, so a pattern none of whose head literals starts there has no candidate.
        ``inserted``: :meth:`spaced_inserted`.
        """
        if self._near_literals is None:
            right, left, spaces = _widest_spaced_window()
            probe = self.texts.spaced()[1]
            windows = _windows(inserted, right, left, probe, spaces)
            self._near_literals = self.texts.spaced_index().starting_in(windows)
        return self._near_literals

    def spaced_inserted(self, parent: _Texts) -> tuple[int, ...] | None:
        """The insertions in whitespace-collapsed coordinates, ``None`` if not a plain insertion.

        Collapsing maps an insertion next to other whitespace to nothing and any other one
        to a single space. So the form with the other insertions marked by a stand-in (not
        whitespace) collapses to this form's collapsed text with stand-ins for those spaces,
        each alone between two visible characters or at an end (which is how collapsing
        keeps a space there); it becomes this form's collapsed text with the stand-ins turned
        into spaces, which is therefore not computed again. The relation to the parent is
        checked: the stand-ins deleted must give the parent's collapsed text.
        """
        if self._spaced_known:
            return self._spaced_inserted
        self._spaced_known = True
        folded = self.texts.folded
        parent_spaced = parent.spaced()[0]
        if len(parent_spaced) == len(parent.folded) and not any(
            folded[position - 1 : position].isspace()
            or folded[position + 1 : position + 2].isspace()
            for position in self.inserted
        ):
            # Every whitespace run of the parent is one character, and so is every run
            # here (no insertion touches whitespace): collapsing only turns each whitespace
            # character into a space, so it commutes with inserting the spaces.
            parts: list[str] = []
            previous = 0
            for k, position in enumerate(self.inserted):
                parts += (parent_spaced[previous : position - k], " ")
                previous = position - k
            parts.append(parent_spaced[previous:])
            self._spaced_inserted = self.inserted
            self.texts.set_spaced("".join(parts), self.inserted)
            return self._spaced_inserted
        if _STAND_IN in folded:
            return None
        pieces: list[str] = []
        previous = 0
        for position in self.inserted:
            pieces.append(folded[previous:position])
            if (
                folded[position - 1 : position].isspace()
                or folded[position + 1 : position + 2].isspace()
            ):
                pieces.append(" ")  # collapsed with the whitespace beside it
            else:
                pieces.append(_STAND_IN)
            previous = position + 1
        pieces.append(folded[previous:])
        marked = _collapse_whitespace("".join(pieces))
        if marked.replace(_STAND_IN, "") != parent.spaced()[0]:
            return None
        found: list[int] = []
        position = marked.find(_STAND_IN)
        while position >= 0:
            found.append(position)
            position = marked.find(_STAND_IN, position + 1)
        self._spaced_inserted = tuple(found)
        self.texts.set_spaced(marked.replace(_STAND_IN, " "), self._spaced_inserted)
        return self._spaced_inserted


def _windows(
    inserted: tuple[int, ...], right: int, left: int, probe: str = "", spaces: int | None = None
) -> list[tuple[int, int]]:
    """Merged ``[low, high]`` ranges of the starts from which an insertion can be read.

    With ``spaces`` (on collapsed text, see :func:`_read_spaces`): also no start with more
    than that many spaces of ``probe`` between it and the insertion.
    """
    windows: list[tuple[int, int]] = []
    for position in inserted:
        low = _gap_floor(probe, position, spaces, max(0, position - right))
        high = position + left
        if windows and low <= windows[-1][1] + 1:
            windows[-1] = (windows[-1][0], high)
        else:
            windows.append((low, high))
    return windows


def _matches_near(pattern: ThreatPattern, form: _Form, parent: _Form) -> bool:
    """``_pattern_matches(pattern, form.texts)`` for a form whose parent has no match.

    Only the starts near an insertion are tried (see :class:`_Form`); patterns whose reads
    are unbounded, and windows covering much of the text, take the whole-text matcher.
    """
    spaced_inserted = form.spaced_inserted(parent.texts)  # first: the texts reuse it
    if pattern.id == "exfil_upload":
        return _upload_matches(pattern, form.texts, form.inserted)
    extent = _extents().get(pattern.id)
    if extent is None or len(form.inserted) * _INSERTION_SPACING > len(form.texts.folded):
        # Unbounded reads, or insertions so dense that windows would cover the text anyway
        # (and working per insertion from Python would cost more than one whole scan).
        return _pattern_matches(pattern, form.texts)
    if _runs_spaced(pattern.id):
        inserted = spaced_inserted
        text, probe = form.texts.spaced()
    else:
        inserted = form.inserted
        text, probe = form.texts.folded, form.texts.probe
    if inserted is None:
        return _pattern_matches(pattern, form.texts)
    if not inserted:
        return False  # the same text as the parent's, which has no match
    plan = _plans().get(pattern.id)
    if (
        plan is not None
        and pattern.id in _read_spaces()
        and _literal_set(plan.heads).isdisjoint(form.near_literals(inserted))
    ):
        return False  # every match starts at a head literal: none where one could start
    right, left = extent[0] + _EXTENT_MARGIN, extent[1] + _EXTENT_MARGIN
    windows = _windows(inserted, right, left, probe, _read_spaces().get(pattern.id))
    if sum(high - low + 1 for low, high in windows) > _WINDOW_SHARE * len(text):
        return _pattern_matches(pattern, form.texts)
    if pattern.id == "prompt_injection_multilingual":
        return _multilingual_matches(pattern, form.texts, windows)
    if plan is not None and not plan.lines and len(probe) == len(text):
        # Every match starts at one of the plan's head literals: try those in the windows.
        index = form.texts.spaced_index() if plan.spaced else form.texts.index()
        longest = _widest(plan.heads)
        match = pattern.regex.match
        near = bool(plan.near) and plan.reach is not None
        for low, high in windows:
            end = min(len(probe), high + longest)
            for start in index.starts(plan.heads, low, end, plan.boundary):
                if start > high or (near and not _near_within(index, plan, start)):
                    continue
                if match(text, start) is not None:
                    return True
        return False
    search = pattern.regex.search
    for low, high in windows:
        # Starts up to ``high`` read nothing at or past ``high + right``: cutting the text
        # there changes no answer for them; a hit past ``high`` is left to later windows.
        found = search(text, low, min(len(text), high + right + 1))
        if found is not None and found.start() <= high:
            return True
    return False


@functools.cache
def _raw_gates() -> dict[str, Callable[[str], bool]]:
    """For each raw pattern, a cheap test that must hold before its regex runs: its
    literals present (see :func:`_required`), else the class its matches start with."""
    gates: dict[str, Callable[[str], bool]] = {}
    for pid, _scope, source in _pattern_source():
        if pid not in _RAW_IDS:
            continue
        groups = _required()[pid]
        lead = _regex_facts.first_class(_regex_facts.parse(source))
        if groups:
            caseless = all(lit.upper() == lit for group in groups for lit in group)
            gates[pid] = functools.partial(_holds_literals, groups, caseless)
        elif lead is not None:
            # Case-insensitive classes search slower: only when case can matter.
            flags = re.IGNORECASE if lead.cased else 0
            gates[pid] = functools.partial(_found, re.compile(lead.source, flags))
        else:
            gates[pid] = _always
    return gates


def _always(_text: str) -> bool:
    return True


def _found(regex: re.Pattern[str], text: str) -> bool:
    return regex.search(text) is not None


def _holds_literals(groups: tuple[tuple[str, ...], ...], caseless: bool, text: str) -> bool:
    """Whether ``text`` holds a literal of every group (``caseless``: none has a case)."""
    probe = text if caseless else _lower_probe(text)
    return all(any(literal in probe for literal in group) for group in groups)


def _iter_findings(text: str, scope: str) -> Iterator[tuple[str, str]]:
    """Yield ``(kind, value)`` findings lazily: invisible chars first, then pattern ids."""
    patterns = _patterns_for(scope)
    if not text:
        return
    seen: set[str] = set()
    for match in _INVISIBLE_RE.finditer(text):
        char = match.group()
        if char == "\u200d" and _EMOJI_JOIN_RE.match(text, max(0, match.start() - 2)):
            continue  # a zero-width joiner inside an emoji sequence (👨‍👩‍👧) hides nothing
        if char not in seen:
            seen.add(char)
            yield "invisible", _invisible_code(char)
            if len(seen) == len(INVISIBLE_CHARS):
                break
    forms = [_Form(reading) for reading in cached_readings(text)]
    for form in forms:
        if form.parent is not None:
            form.texts.derive_from(forms[form.parent].texts, form.inserted)
    for pattern in patterns:
        if pattern.id in _RAW_IDS:
            if _raw_gates()[pattern.id](text) and pattern.regex.search(text) is not None:
                yield "pattern", pattern.id
            continue
        required = _required()[pattern.id]
        gated: list[bool] = []
        for form in forms:
            # The required literals hold no space, so one found in a form with inserted
            # spaces is found in its parent too: a parent without them rules the form out,
            # and a parent with them lets it through (the windowed matcher decides; the few
            # literals an insertion breaks are not worth a scan of the whole text).
            if form.parent is not None:
                passed = gated[form.parent]
            else:
                has_any = form.texts.index().has_any
                passed = all(has_any(group) for group in required)
            gated.append(passed)
            if not passed:
                continue
            if form.parent is None:
                found = _pattern_matches(pattern, form.texts)
            else:
                found = _matches_near(pattern, form, forms[form.parent])
            if found:
                yield "pattern", pattern.id
                break


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


# --- verdicts in tiers -----------------------------------------------------------------------
#: Verdict of a structural finding: the text is refused outright.
REFUSE: Final = "refuse"
#: Verdict of vocabulary alone: the text waits for a person's approval (never refused).
HOLD: Final = "hold"

#: Pattern ids that are structural, high-precision attack signals: chat-template role markup,
#: fence and header escapes, invisible payloads, templates or commands that carry the
#: conversation, secrets or a local file to a URL. Ordinary notes do not have these shapes,
#: so a match refuses. Every other id is vocabulary (words an attack shares with ordinary
#: notes): it holds the text for a person instead. Invisible characters
#: (``invisible_unicode_U+…``) are structural too. ``exfil_url_template`` holds: a template
#: that names what it would carry (``{conversation}``, ``{secret}``) is the structural
#: ``exfil_url_secret`` of `hermes_memory_guard._vocabulary`; a badge's ``{label}`` is not.
STRUCTURAL_THREATS: Final[frozenset[str]] = frozenset(
    {
        "role_markup",
        "fake_tool_result",
        "fake_memory_header",
        "invisible_tag_text",
        "variation_selector_payload",
        "hangul_filler_in_text",
        "hidden_div",
        "html_comment_injection",
        "exfil_upload",
        "exfil_curl",
        "exfil_wget",
        "send_to_url",
    }
)


class ThreatVerdict(NamedTuple):
    """What to do with a text: ``tier`` is `REFUSE`, `HOLD` or ``None`` (clean); ``ids``
    are the findings (`scan_for_threats` ids, then any vocabulary-only ids)."""

    tier: str | None
    ids: tuple[str, ...]


def threat_tier(ids: Iterable[str]) -> str | None:
    """`REFUSE` when any id is structural (an invisible character included), `HOLD` when
    there are findings but none is structural, ``None`` for no findings."""
    from hermes_memory_guard._vocabulary import STRUCTURAL_EXTRA

    tier: str | None = None
    for pid in ids:
        if pid in STRUCTURAL_THREATS or pid in STRUCTURAL_EXTRA:
            return REFUSE
        if pid.startswith("invisible_unicode_"):
            return REFUSE
        tier = HOLD
    return tier


def threat_verdict(text: str, scope: str = "strict", *, learned: bool = True) -> ThreatVerdict:
    """The tiered verdict on ``text`` at ``scope`` (see `STRUCTURAL_THREATS`).

    Besides the patterns of `scan_for_threats`, vocabulary typical of injections and
    jailbreaks that ordinary notes rarely use ("ignore the above directions", "developer
    mode", "you have no rules", base64-encoded instructions …) is looked for; it only ever
    holds (`hermes_memory_guard._vocabulary`). Text nothing else flags is scored by a small
    linear model shipped with the package (`hermes_memory_guard._learned`), which also only
    holds; ``learned=False`` leaves it out (for a store with no person to hold a write
    for). Raises `ValueError` for an unknown scope.
    """
    from hermes_memory_guard._vocabulary import spaced_cjk, vocabulary_findings

    ids = list(dict.fromkeys(scan_for_threats(text, scope)))
    if threat_tier(ids) != REFUSE:
        other = spaced_cjk(text)  # "忽 略 之 前 …": CJK spaced out to dodge the keywords
        if other != text:
            # Only vocabulary counts from this reading: closing up spaces is a guess.
            more = scan_for_threats(other, scope)
            ids.extend(p for p in more if p not in ids and threat_tier([p]) != REFUSE)
    if threat_tier(ids) != REFUSE:
        ids.extend(pid for pid in vocabulary_findings(text) if pid not in ids)
    if learned and not ids:
        from hermes_memory_guard._learned import learned_findings

        ids.extend(learned_findings(text))  # hold only: the id is never structural
    return ThreatVerdict(threat_tier(ids), tuple(ids))


# --- untrusted sources -----------------------------------------------------------------------
#: ``strict`` ids that every untrusted source (external recall, provider blocks and tool
#: results, context files found on disk) is scanned for on top of ``context``: sending data
#: out and reading the agent's own secrets. The other ``strict`` ids (a note naming
#: ``authorized_keys``, "include the full context") are about what memory may hold, and
#: would blank ordinary project files.
UNTRUSTED_EXTRA: Final[frozenset[str]] = frozenset({"send_to_url", "exfil_upload", "hermes_env"})

#: Hold-only shapes that an untrusted source is scanned for too (there is no person to hold
#: it for: a hit drops the text): role messages written as JSON, URL templates naming
#: secrets or the conversation, fetched scripts run "first" / "always", and credential
#: files sent to an address.
_UNTRUSTED_SHAPES: Final[frozenset[str]] = frozenset(
    {"role_json", "exfil_url_secret", "pipe_to_shell", "send_secret_file"}
)


@functools.cache
def _home_scopes() -> dict[str, str]:
    return {record.id: record.scope for record in _RECORDS}


def scan_untrusted(text: str) -> list[str]:
    """`scan_for_threats` at the ``context`` scope plus the exfiltration and
    tool-execution checks every untrusted source needs (`UNTRUSTED_EXTRA`, and JSON role
    messages, URL templates naming secrets, ``curl … | sh`` run first/always). Ids in the
    order of `scan_for_threats`, then the extra shapes."""
    from hermes_memory_guard._vocabulary import vocabulary_findings

    homes = _home_scopes()
    ids = [
        pid
        for pid in scan_for_threats(text, "strict")
        if homes.get(pid, "all") != "strict" or pid in UNTRUSTED_EXTRA
    ]
    ids.extend(pid for pid in vocabulary_findings(text) if pid in _UNTRUSTED_SHAPES)
    return ids
