"""Egress redaction: mask credentials in everything handed to a memory provider.

:func:`scrub_secrets` takes a string or a nested structure of dicts, lists and tuples (a
query, a turn, a transcript, tool arguments) and returns the same shape with every secret
replaced by ``"[redacted]"``. Secrets are collected across the *whole* value first, so a
token recognised in one place (``"Authorization: Bearer <tok>"``) is also masked where it
appears without that context (a bare ``<tok>`` in another message of the same hand-off).

Recognised shapes: OpenAI (``sk-…``, ``sk-proj-…``), Anthropic (``sk-ant-…``), GitHub
(``ghp_/gho_/ghu_/ghs_/ghr_…``, ``github_pat_…``), AWS access key ids (``AKIA…``/``ASIA…``) and
secret-access-key assignments, Slack (``xoxa-/xoxb-/xoxp-/xoxr-/xoxs-``), Google API keys
(``AIza…``), JWTs, ``Bearer``/``Basic`` credentials, PEM private-key blocks, URL credentials
(``scheme://user:password@host`` — the password is masked) and assignments whose name ends in
key / token / secret / password / passwd / pwd / credential(s) (``API_KEY=…``, ``"apiKey":
"…"``, ``password: …``, ``api_key＝…`` with a full-width separator — only the value is
masked; an unquoted value keeps an inner ``&`` but stops at ``&next=`` of a URL query), except
names of identifiers (``public_key``, ``primary_key``, ``idempotency_key``, ``page_token``…).
Also: the gitleaks rule set (:mod:`hermes_memory_guard._secret_rules`), passwords stated in
prose (English, and "密码是 …", "API密钥：…", "新密码 …"), command-line credentials
(``mysql -pX``, ``sshpass -p X``, ``docker login -p X``, ``curl -u user:X``, ``--password X``)
and known-prefix tokens that a line break cut in two.

Generic values (assignments, ``Bearer``) are masked only when they *look* secret: at least
8 characters with both a letter and a digit, or at least 20 characters mixing three of
lower case / upper case / digits / symbols. So ``token_count = 5`` or ``password: required``
stay readable. URL passwords are masked from 4 characters on. ``data:`` URLs are passed
through untouched (a base64 image must not be mangled), and dict keys are never rewritten.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterator
from functools import cache
from typing import Final, TypeVar

from hermes_memory_guard import _secret_rules
from hermes_memory_guard._secret_shapes import extra_secrets, public_values

__all__ = ["REDACTED", "find_secrets", "scrub_secrets"]

#: What every secret is replaced with.
REDACTED: Final[str] = "[redacted]"

T = TypeVar("T")

#: A token starts after a non-token character, or after an opening ``_``/``__`` emphasis
#: ("_sk-…_" in Markdown) that itself follows one.
_WORD_START = r"(?<![A-Za-z0-9-])(?<![A-Za-z0-9-]_)(?<![A-Za-z0-9_-]__)"
_WORD_END = r"(?![A-Za-z0-9_-])"

#: A data: URL (RFC 2397) — its payload is never inspected nor rewritten.
_DATA_URL_RE: Final = re.compile(
    r"(?<![A-Za-z0-9])data:[A-Za-z0-9!#$&^_.+-]{0,127}/?[A-Za-z0-9!#$&^_.+-]{0,127}"
    r"(?:;[A-Za-z0-9!#$&^_.+=-]{1,127}){0,8},[A-Za-z0-9+/=%._~!$&'()*;:@?-]*",
    re.IGNORECASE,
)

# (compiled regex, group holding the secret, needs the "looks secret" check)
_SPECIFIC: Final[tuple[re.Pattern[str], ...]] = tuple(
    re.compile(source)
    for source in (
        # PEM private key: body never runs past the next "-----", so unterminated BEGIN lines
        # cannot make the scan quadratic; a truncated key is masked to where it stops.
        # PGP armour ("PRIVATE KEY BLOCK") has the same shape.
        r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[^-]|-(?!----)){0,32768}"
        r"(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)?",
        _WORD_START + r"sk-ant-[A-Za-z0-9_-]{20,}",
        _WORD_START + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
        _WORD_START + r"gh[pousr]_[A-Za-z0-9]{20,}",
        _WORD_START + r"github_pat_[A-Za-z0-9_]{20,}",
        r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])",
        _WORD_START + r"xox[abprs]-[A-Za-z0-9-]{10,}",
        _WORD_START + r"AIza[A-Za-z0-9_-]{35}" + _WORD_END,
        _WORD_START + r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        # SendGrid "SG.<id>.<secret>" of any plausible length (gitleaks wants exactly 66).
        _WORD_START + r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}" + _WORD_END,
    )
)

_AWS_SECRET_RE: Final = re.compile(
    r"(?i:aws_?secret_?access_?key)[\"']?\s*[=:]\s*[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
)
_AUTH_SCHEME_RE: Final = re.compile(
    r"(?<![A-Za-z0-9])(?i:bearer|basic)\s+([A-Za-z0-9._~+/=-]{8,2048})"
)
_URL_CREDENTIALS_RE: Final = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s/:@]{0,128}:([^\s/@]{1,256})@"
)
#: A hand-written DSN whose password holds ``@`` or ``/`` (``postgres://u:p@ss/w0rd@host/db``):
#: the password runs to the last ``@`` that is not right after a ``/`` and is followed by a
#: host name, without crossing whitespace, ``?`` or ``#``.
_URL_WIDE_CREDENTIALS_RE: Final = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s/:@]{0,128}:([^\s?#]{1,256})(?<!/)@"
    r"(?=[A-Za-z0-9._-]{1,253}(?:[:/?#\s]|$))"
)
#: Assignment separators: ASCII and full-width (``api_key＝…``, ``密钥：…`` typed with a CJK IME).
_SEPARATORS: Final = "=:＝："
_SEPARATOR = "[=:＝：]"
#: A character of an unquoted value: not whitespace, a quote, a bracket, a separator, a
#: query / list delimiter or CJK and full-width punctuation ("api_key：Ab12Cd34，然后").
_VALUE_CHAR = (
    r"[^\s\"'`,;&?#<>(){}\[\]=:＝："
    r"\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]"
)
#: ``&`` inside a value ("K9&xP2mQ7v") is kept; one that starts the next query parameter
#: (``?a=Q9w8E7r6&b=2``), a ``&&`` or a trailing ``&`` ends it.
_QUERY_PARAMETER = r"[A-Za-z0-9_.%\[\]-]{1,64}[=＝]"
_VALUE = rf"{_VALUE_CHAR}+(?:&(?!{_QUERY_PARAMETER}){_VALUE_CHAR}+)*"
_NEXT_QUERY_PARAMETER_RE: Final = re.compile("&" + _QUERY_PARAMETER)
#: Shortest assignment value looked at (``=`` padding not counted).
_MIN_VALUE = 4
#: ``name = value`` / ``"name": "value"`` / ``name: value``; the name is checked in Python.
_ASSIGNMENT_RE: Final = re.compile(
    rf"(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{{1,64}})[\"'`]?\s{{0,8}}{_SEPARATOR}\s{{0,8}}[\"'`]?"
    rf"(?!//)({_VALUE}={{0,3}})"
)
#: ``name = "value"`` / ``'name': 'value'``: a quoted value is taken whole (symbols, spaces).
_QUOTED_VALUE_RE: Final = re.compile(
    _SEPARATOR + r"[ \t]{0,8}(?:\"([^\"\n]{1,512})\"|'([^'\n]{1,512})')"
)
#: The name in front of such a value (searched in the 73 characters before the separator:
#: scanning for the separator first keeps the cost linear).
_QUOTED_NAME_RE: Final = re.compile(r"(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,64})[\"'`]?[ \t]{0,8}\Z")
#: Shell / dotenv ``NAME=value`` (line start, after whitespace, ``;`` or ``export``): the value
#: runs to the next whitespace, whatever symbols it holds.
_ENV_VALUE_RE: Final = re.compile(r"=([^\s\"'`]{4,512})")
_ENV_WIDE_VALUE_RE: Final = re.compile(r"＝([^\s\"'`]{4,512})")
_ENV_NAME_RE: Final = re.compile(r"(?<![^\s;])(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]{0,63})\Z")
_NAME_REACH: Final = 64 + 1 + 8
#: A password stated in English prose: "my password is hunter2!", "the password for the db
#: is …", "passphrase: …". Matched only where a password word starts (see ``_PROSE_WORDS``).
_PROSE_PASSWORD_RE: Final = re.compile(
    r"(?<![A-Za-z])(?i:password|passwd|passphrase|passcode|pwd)(?![A-Za-z])"
    r"(?:[ \t]{1,4}(?i:for|of|to|on|at)(?:[ \t]{1,4}[^\s:=：＝]{1,40}){1,4}?)?"
    r"(?:[ \t]{1,4}(?i:is|was)(?:[ \t]{0,4}[:=：＝])?[ \t]{1,4}"
    r"|[*_]{0,2}[ \t]{0,4}[:=：＝](?:[*_]{1,2})?[ \t]{0,4})"
    r"(?:[\"'“‘`]([^\"'”’`\n]{1,128})[\"'”’`]|([^\s\"'`“”‘’]{1,128}))"
)
_PROSE_WORDS: Final = ("password", "passwd", "passphrase", "passcode", "pwd")
#: The same in Chinese, Japanese and Korean: "密码是 …", "密码：…", "パスワードは …", and
#: keys / tokens / credentials stated the same way ("API密钥：…", "访问令牌：…", "密钥是 …").
_CJK_PASSWORD_WORDS: Final = ("密码", "密碼", "口令", "パスワード", "비밀번호")
_CJK_KEY_WORDS: Final = (
    *("密钥", "密鑰", "秘钥", "秘鑰", "金鑰"),  # key
    *("令牌", "凭证", "憑證", "凭据", "憑據"),  # token, credential
)
_CJK_SECRET_WORDS: Final = _CJK_PASSWORD_WORDS + _CJK_KEY_WORDS
#: Matched where one of those words starts (found with :data:`_CJK_SECRET_WORD_RE`, a scan
#: ``re`` runs fast on the words' first characters).
_CJK_SECRET_WORD_RE: Final = re.compile("|".join(_CJK_SECRET_WORDS))
_CJK_SECRET_RE: Final = re.compile(
    rf"(?:(?P<password>{'|'.join(_CJK_PASSWORD_WORDS)})|{'|'.join(_CJK_KEY_WORDS)})"
    r"(?:(?:[ \t]{0,4}(?:是|为|為|は|는|：|:|=|＝)){1,2}[ \t]{0,4}|(?P<spaced>[ \t]{1,4}))"
    r"(?:[\"'“‘「](?P<quoted>[^\"'”’」\n]{1,128})[\"'”’」]|(?P<bare>[!-~]{1,128}))"
)
#: "新密码 …" / "旧密码 …": a new / old / initial / default password needs no separator.
_CJK_PASSWORD_QUALIFIERS: Final = ("新", "旧", "舊", "原", "初始", "默认", "默認")
#: Sentence punctuation stripped from the end of a bare value found in prose.
_TRAILING_PUNCTUATION: Final = ".,!?;:)]}>"
_NAME_WORD_RE: Final = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_SECRET_NAME_WORDS: Final = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "pwd", "credential", "credentials"}
)
#: Names whose value is a password: a last word in this set (``DB_PASS``, ``smtpPw``) …
_PASSWORD_NAME_WORDS: Final = frozenset({"password", "passwd", "passphrase", "pass", "pwd", "pw"})
#: … or a last word ending with one of these (``PGPASSWORD``, ``mysqlpassword``).
_PASSWORD_NAME_ENDINGS: Final = ("password", "passwd", "passphrase")

#: Every secret-looking assignment name contains one of these (cheap pre-check).
_NAME_HINTS: Final = ("key", "token", "secret", "pass", "pw", "credential")

_MIN_URL_PASSWORD = 4
#: Secrets at least this long are masked wherever they occur, even inside a longer word;
#: shorter ones only where they stand alone (so a URL password "pa55" leaves "bypa55ed" be).
_ANYWHERE_LEN = 12


def _looks_secret(value: str) -> bool:
    """A generic value is treated as a secret when it looks machine-generated."""
    if len(value) < 8:
        return False
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    if has_letter and has_digit:
        return True
    classes = (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + has_digit
        + any(not c.isalnum() for c in value)
    )
    return len(value) >= 20 and classes >= 3


#: A key / token named with one of these words in front holds an identifier, not a credential
#: (``public_key``, ``primary_key``, ``idempotency_key``, ``next_page_token``; gitleaks'
#: generic-api-key allow-list names several of them too).
_IDENTIFIER_QUALIFIERS: Final = frozenset(
    {
        "public", "pub", "primary", "foreign", "unique", "composite", "surrogate", "natural",
        "candidate", "sort", "partition", "range", "row", "shard", "routing", "index",
        "idx", "schema", "sequence", "bucket", "object", "cache", "idempotency", "dedup",
        "dedupe", "deduplication", "lookup", "group", "order", "map", "dict", "message",
        "translation", "i18n", "hot", "host", "recv", "next", "page", "pagination",
        "continuation", "cursor",
    }
)  # fmt: skip


def _name_words(name: str) -> list[str]:
    return [word.lower() for word in _NAME_WORD_RE.findall(name)]


def _is_secret_name(name: str) -> bool:
    words = _name_words(name)
    if not words:
        return False
    if len(words) > 1 and words[-2] in _IDENTIFIER_QUALIFIERS:
        return False
    # Rails-style SECRET_KEY_BASE / *_KEY_BASE: the key material is the base.
    return words[-1] in _SECRET_NAME_WORDS or words[-2:] == ["key", "base"]


def _is_password_name(name: str) -> bool:
    words = _NAME_WORD_RE.findall(name)
    if not words:
        return False
    last = words[-1].lower()
    return last in _PASSWORD_NAME_WORDS or last.endswith(_PASSWORD_NAME_ENDINGS)


#: Values that stand for a password rather than being one.
_PLACEHOLDER_WORDS: Final = frozenset(
    {"none", "null", "nil", "true", "false", "empty", "unset", "redacted", "hidden", "secret"}
)


def _is_placeholder(value: str) -> bool:
    return (
        value.startswith(("$", "%", "<", "{", "[", "(", "@"))
        or len(set(value)) == 1
        or value.lower() in _PLACEHOLDER_WORDS
        or value == REDACTED
    )


#: A code reference rather than a literal: ``getpass.getpass()``, ``settings.DB_PASSWORD``.
_CODE_REFERENCE_RE: Final = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(.*)?|[A-Za-z_][A-Za-z0-9_]*\(.*"
)
#: A file path (``/home/alice``, ``~/x``, ``./x``, ``C:\\x``, ``//host/share``).
_PATH_RE: Final = re.compile(r"(?:~|\.{1,2})?/|[A-Za-z]:\\")


def _is_path(value: str) -> bool:
    return _PATH_RE.match(value) is not None


def _password_value_ok(value: str, *, literal: bool) -> bool:
    """Whether ``value``, given as a password, is one.

    ``literal`` values (quoted, or assigned to an upper-case environment name) count from
    4 characters; a bare word in prose or config only when it is not an ordinary word: it
    must hold a digit, a symbol or an upper-case letter after the first character
    (``hunter2`` yes, ``required`` no).
    """
    if not 4 <= len(value) <= 512 or _is_placeholder(value):
        return False
    if _is_path(value):
        return False
    if literal:
        return True
    if _CODE_REFERENCE_RE.fullmatch(value):
        return False
    return any(c.isdigit() or not c.isalnum() for c in value) or any(c.isupper() for c in value[1:])


def _plain_segments(text: str) -> Iterator[tuple[bool, str]]:
    """Split ``text`` into ``(is_data_url, piece)`` parts, in order."""
    position = 0
    if "data:" not in _lowered(text):
        if text:
            yield False, text
        return
    for match in _DATA_URL_RE.finditer(text):
        if match.start() > position:
            yield False, text[position : match.start()]
        yield True, match.group()
        position = match.end()
    if position < len(text):
        yield False, text[position:]


#: Literals every match of the corresponding :data:`_SPECIFIC` regex contains (case as
#: written): a regex whose literals are all absent from the text is not run at all.
_SPECIFIC_LITERALS: Final[tuple[tuple[str, ...], ...]] = (
    ("-----BEGIN ",),
    ("sk-ant-",),
    ("sk-",),
    ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ("github_pat_",),
    ("AKIA", "ASIA"),
    ("xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"),
    ("AIza",),
    ("eyJ",),
    ("SG.",),
)
#: Where an assignment's value can end, from its ``=``/``:`` (same shape as the regex).
_ASSIGNMENT_TAIL_RE: Final = re.compile(rf"{_SEPARATOR}\s{{0,8}}[\"']?(?:{_VALUE})?={{0,3}}")
#: A name is at most 64 characters, then an optional quote and up to 8 whitespace.
_NAME_SPAN = 64 + 1 + 8
#: With more separators than one per this many characters, scan the text in one pass.
_DENSE_SEPARATORS = 64


def _assignment_windows(text: str) -> list[tuple[int, int]]:
    """Disjoint ``(start, end)`` stretches that hold every match of :data:`_ASSIGNMENT_RE`.

    Each match contains a ``=``/``:`` at most ``_NAME_SPAN`` characters after its start and
    ends where :data:`_ASSIGNMENT_TAIL_RE` run from that separator ends. Overlapping
    stretches are merged, so no match straddles two windows and ``finditer`` run window by
    window yields exactly the matches of one ``finditer`` over the whole text.
    """
    windows: list[tuple[int, int]] = []
    separators = sorted(index for char in _SEPARATORS for index in _find_all(text, char))
    for index in separators:
        tail = _ASSIGNMENT_TAIL_RE.match(text, index)
        end = tail.end() if tail is not None else index + 1
        start = max(0, index - _NAME_SPAN)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(windows[-1][1], end))
        else:
            windows.append((start, end))
    return windows


def _find_all(text: str, char: str) -> list[int]:
    found: list[int] = []
    index = text.find(char)
    while index >= 0:
        found.append(index)
        index = text.find(char, index + 1)
    return found


def _assignments(text: str, lowered: str) -> Iterator[re.Match[str]]:
    """Every match of :data:`_ASSIGNMENT_RE` in ``text``, as one ``finditer`` would give."""
    dense = sum(text.count(char) for char in _SEPARATORS) * _DENSE_SEPARATORS > len(text)
    if dense or len(lowered) != len(text):
        yield from _ASSIGNMENT_RE.finditer(text)
        return
    for start, end in _assignment_windows(text):
        window = lowered[start:end]
        if any(word in window for word in _NAME_HINTS):
            yield from _ASSIGNMENT_RE.finditer(text, start, end)


#: Characters ``re.IGNORECASE`` equates with an ASCII letter that ``str.lower`` keeps apart.
_CASE_FOLD: Final = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"))


def _lowered(text: str) -> str:
    """``text.lower()`` for literal pre-checks: conservative for case-insensitive regexes."""
    for char, letter in _CASE_FOLD:
        if char in text:
            text = text.replace(char, letter)
    return text.lower()


# --- command lines ------------------------------------------------------------------------------

#: A command-line option value: quoted (taken whole) or bare (to the next whitespace; an
#: option such as ``--verbose`` is not a value).
_CLI_VALUE = r"""(?:"([^"\n]{1,256})"|'([^'\n]{1,256})'|(?!-)([^\s"'`]{1,256}))"""
#: Commands whose ``-p`` is a password (``mysql -pSECRET``, ``sshpass -p SECRET``,
#: ``docker login -u bob -p SECRET``), the option on the same command (no newline, ``;``,
#: ``|`` or ``&`` in between). Elsewhere ``-p`` is a port, a parent flag, a plugin…
_CLI_PASSWORD_RE: Final = re.compile(
    r"(?<![\w-])(?i:(mysql(?:dump|admin|import|check|show|slap)?|mariadb(?:-dump|-admin)?)"
    r"|sshpass|(?:docker|podman|nerdctl|buildah|skopeo|oras|crane|helm[ \t]+registry)"
    r"[ \t]+login)(?![\w-])[^\n;|&]{0,512}?(?<!\S)-p([ \t]+)?" + _CLI_VALUE
)
_CLI_COMMAND_HINTS: Final = ("mysql", "mariadb", "sshpass", "login")
#: ``curl -u user:password`` / ``--user=user:password``.
_CLI_USER_RE: Final = re.compile(
    r"-(?<![\w-]-)(?:u|-user)(?:=|[ \t]{0,5})([\"']?)[^\s:\"'@/]{1,128}:([^\s\"']{1,256})\1"
)
#: ``--password SECRET`` / ``--api-key=SECRET`` (the name is checked in Python).
_CLI_LONG_OPTION_RE: Final = re.compile(
    r"--(?<![\w-]--)([A-Za-z][A-Za-z0-9-]{0,40})(=|[ \t]+)" + _CLI_VALUE
)
#: A ``--…-key VALUE`` option (space-separated) names a credential only after one of these;
#: ``--key 2`` sorts, ``--recv-key ID`` names a public key.
_CLI_KEY_QUALIFIERS: Final = frozenset(
    {"api", "secret", "access", "private", "auth", "client", "master", "encryption"}
)
#: What ends a bare value on a command line besides whitespace (``-pX&&next``, ``-pX;``).
_CLI_TRAILING: Final = ";&|)"


def _cli_value(match: re.Match[str], first: int) -> tuple[str, bool]:
    """``(value, quoted)`` from the three :data:`_CLI_VALUE` groups starting at ``first``."""
    for group in (first, first + 1):
        if match.group(group) is not None:
            return match.group(group), True
    return match.group(first + 2).rstrip(_CLI_TRAILING), False


def _command_lines(text: str, lowered: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each line holding one of :data:`_CLI_COMMAND_HINTS`, in order (the
    whole text when lower-casing changed its length). Linear: every search moves forward."""
    if len(lowered) != len(text):
        yield 0, len(text)
        return
    upcoming = {hint: lowered.find(hint) for hint in _CLI_COMMAND_HINTS}
    position = 0
    while True:
        index = min((i for i in upcoming.values() if i >= 0), default=-1)
        if index < 0:
            return
        newline = text.rfind("\n", position, index)
        end = text.find("\n", index)
        end = len(text) if end < 0 else end
        yield (position if newline < 0 else newline + 1), end
        position = end + 1
        for hint, at in upcoming.items():
            if 0 <= at < position:
                upcoming[hint] = lowered.find(hint, position)


def _find_command_line_passwords(text: str, lowered: str, found: set[str]) -> None:
    matches = (
        match
        for start, end in _command_lines(text, lowered)
        for match in _CLI_PASSWORD_RE.finditer(text, start, end)
    )
    for match in matches:
        if match.group(1) is not None and match.group(2) is not None:
            continue  # "mysql -p dbname": -p prompts, the word after it is a database
        value, quoted = _cli_value(match, 3)
        if _password_value_ok(value, literal=quoted):
            found.add(value)


def _find_command_line_users(text: str, found: set[str]) -> None:
    for match in _CLI_USER_RE.finditer(text):
        password = match.group(2).rstrip(_CLI_TRAILING)
        # "-u 1000:1000" / "-u www-data:www-data" are a uid and a group, not credentials.
        generated = any(c.isalpha() for c in password) and any(c.isdigit() for c in password)
        if _password_value_ok(password, literal=False) and (generated or _looks_secret(password)):
            found.add(password)


def _find_long_options(text: str, found: set[str]) -> None:
    for match in _CLI_LONG_OPTION_RE.finditer(text):
        name = match.group(1)
        if match.group(2) != "=" and not _is_option_credential(name):
            continue
        value, quoted = _cli_value(match, 3)
        if _assignment_is_secret(name, value, literal=quoted):
            found.add(value)


def _is_option_credential(name: str) -> bool:
    """Whether ``--name VALUE`` (space-separated) passes a credential."""
    if _is_password_name(name):
        return True
    words = _name_words(name)
    if words[-1:] == ["key"]:
        return words[-2:-1] != [] and words[-2] in _CLI_KEY_QUALIFIERS
    return _is_secret_name(name)


# --- tokens split over lines -------------------------------------------------------------------

#: A line break between two token characters, with at least 8 of them before it: where a
#: token wrapped by a terminal or an editor may continue on the next line.
_LINE_SPLIT_RE: Final = re.compile(
    r"\n(?:(?<=[A-Za-z0-9_-]{8}\n)|(?<=[A-Za-z0-9_-]{8}\r\n))(?=[A-Za-z0-9_-])"
)
#: What the two pieces of a split token are made of (base64 and URL-safe alphabets).
_SPLIT_TOKEN_CHARS: Final = string.ascii_letters + string.digits + "_.+/=-"
_SPLIT_REACH = 200
_RIGHT_TOKEN_RE: Final = re.compile(rf"[{re.escape(_SPLIT_TOKEN_CHARS)}]{{1,{_SPLIT_REACH}}}")
#: The start of a continuation line judged before joining (up to its first ``_ - . =``).
_LEADING_RUN_RE: Final = re.compile(r"[A-Za-z0-9+/]*")
#: Continuation lines joined to one token at most.
_SPLIT_LINES = 4


@cache
def _split_prefix_re() -> re.Pattern[str]:
    """Lower-cased prefixes of the known token shapes (gitleaks' token rules and ours)."""
    prefixes = {literal.lower() for literals in _SPECIFIC_LITERALS for literal in literals}
    prefixes.update(_secret_rules.load_rules().token_keywords(min_length=3))
    # At the start of the token or of one of its parts ("token=ghp_…", not "…xghp_…").
    return re.compile(r"(?<![a-z0-9])" + _secret_rules.trie_regex(prefixes))


def _find_split_tokens(text: str, found: set[str]) -> None:
    """Known-prefix tokens that a line break cuts in two ("ghp_…\\n…").

    The pieces are joined and read again; a secret that runs across the break is kept in
    its written form, line break included. The next line counts as a continuation only
    if what the secret takes of it looks generated (a digit, or mixed case): shapes such
    as ``sk-…`` or ``ghp_`` + 20 have no fixed length, so "sk-…\\nThe end" keeps "The",
    "KEY=sk-…\\nGITHUB_TOKEN=…" the next name and "ghp_…\\nhello" the "hello".
    """
    for split in _LINE_SPLIT_RE.finditer(text):
        newline = split.start()
        line_end = newline - 1 if text[newline - 1] == "\r" else newline
        before = text[max(0, line_end - _SPLIT_REACH) : line_end]
        head = before[len(before.rstrip(_SPLIT_TOKEN_CHARS)) :]
        if not _split_prefix_re().search(head.lower()):
            continue
        pieces = _continuation(text, newline + 1)
        run = _LEADING_RUN_RE.match(text, pieces[0][0])
        if run is None or not _looks_generated(run.group()):
            continue
        joined = head + "".join(text[a:b] for a, b in pieces)
        for secret in _token_secrets(joined):
            start = joined.find(secret)
            if not start < len(head) < start + len(secret):
                continue  # wholly on one line: the ordinary scan has it
            cut = start + len(secret) - len(head)
            taken = joined[len(head) : len(head) + min(cut, pieces[0][1] - pieces[0][0])]
            if not _looks_generated(taken):
                continue
            found.add(text[line_end - len(head) + start : _text_offset(pieces, cut)])


def _continuation(text: str, start: int) -> list[tuple[int, int]]:
    """Spans of the token starting at ``start`` and of the tokens filling the lines after it
    that look generated (at most :data:`_SPLIT_LINES` in all)."""
    pieces: list[tuple[int, int]] = []
    while len(pieces) < _SPLIT_LINES:
        token = _RIGHT_TOKEN_RE.match(text, start)
        if token is None or (pieces and not _looks_generated(token.group())):
            break
        pieces.append(token.span())
        end = token.end()
        if text.startswith("\r\n", end):
            start = end + 2
        elif text.startswith("\n", end):
            start = end + 1
        else:
            break
    return pieces


def _text_offset(pieces: list[tuple[int, int]], cut: int) -> int:
    """Where in the text the ``cut``-th character of the joined pieces ends."""
    for start, end in pieces:
        if cut <= end - start:
            return start + cut
        cut -= end - start
    return pieces[-1][1]


def _looks_generated(piece: str) -> bool:
    """A digit, or upper case after the first letter next to lower case: not a plain word."""
    return any(c.isdigit() for c in piece) or (
        any(c.isupper() for c in piece[1:]) and any(c.islower() for c in piece)
    )


def _token_secrets(text: str) -> set[str]:
    """Secrets of a known shape (a vendor prefix, a JWT, a PEM block) in ``text``."""
    found: set[str] = set()
    for pattern, literals in zip(_SPECIFIC, _SPECIFIC_LITERALS, strict=True):
        if any(literal in text for literal in literals):
            found.update(_unwrapped(text, match) for match in pattern.finditer(text))
    found.update(_secret_rules.load_rules().find_secrets(text))
    return found


def _unwrapped(text: str, match: re.Match[str]) -> str:
    """A token without the closing ``_`` of ``_token_`` emphasis its regex took in."""
    token = match.group()
    if token.endswith("_") and text[match.start() - 1 : match.start()] == "_":
        return token.rstrip("_")
    return token


def _find_in_plain(text: str, found: set[str]) -> None:
    mine: set[str] = set()
    _find_in_plain_shapes(text, mine)
    mine.update(extra_secrets(text))
    found.update(mine - public_values(text, mine))


def _find_in_plain_shapes(text: str, found: set[str]) -> None:
    found.update(_token_secrets(text))
    lowered = _lowered(text)
    if "aws" in lowered:
        found.update(match.group(1) for match in _AWS_SECRET_RE.finditer(text))
    if "bearer" in lowered or "basic" in lowered:
        for match in _AUTH_SCHEME_RE.finditer(text):
            if _looks_secret(match.group(1)):
                found.add(match.group(1))
    if "://" in text:
        _find_url_passwords(text, found)
    if "\n" in text:
        _find_split_tokens(text, found)
    wide = not text.isascii()  # full-width separators, CJK words
    if wide:
        for hit in _CJK_SECRET_WORD_RE.finditer(text):
            stated = _CJK_SECRET_RE.match(text, hit.start())
            if stated is not None:
                _add_cjk_secret(text, stated, found)
    if "-u" in text:  # also in "--user"
        _find_command_line_users(text, found)
    if any(command in lowered for command in _CLI_COMMAND_HINTS):
        _find_command_line_passwords(text, lowered, found)
    if not any(word in lowered for word in _NAME_HINTS):
        return
    _find_assignments(text, lowered, found, wide=wide)
    if "--" in text:
        _find_long_options(text, found)
    if len(lowered) == len(text):
        for word in _PROSE_WORDS:
            index = lowered.find(word)
            while index >= 0:
                prose = _PROSE_PASSWORD_RE.match(text, index)
                if prose is not None:
                    _add_stated_password(prose, found)
                index = lowered.find(word, index + 1)


def _find_url_passwords(text: str, found: set[str]) -> None:
    for match in _URL_CREDENTIALS_RE.finditer(text):
        if len(match.group(1)) >= _MIN_URL_PASSWORD:
            found.add(match.group(1))
    for match in _URL_WIDE_CREDENTIALS_RE.finditer(text):
        password = match.group(1)
        port, slash, _ = password.partition("/")
        if slash and port.isdigit():
            continue  # "host:8080/path@x" is a port and a path, not a password
        if len(password) >= _MIN_URL_PASSWORD and ("@" in password or slash):
            found.add(password)


def _find_assignments(text: str, lowered: str, found: set[str], *, wide: bool) -> None:
    """``name = value`` (bare, quoted, shell / dotenv) whose name says secret; ``wide``:
    the text has non-ASCII characters (so maybe full-width separators)."""
    for match in _assignments(text, lowered):
        value = match.group(2)
        if len(value.rstrip("=")) >= _MIN_VALUE and _assignment_is_secret(
            match.group(1), value, literal=False
        ):
            found.add(value)
    if "=" in text or ":" in text or (wide and ("＝" in text or "：" in text)):
        for match in _QUOTED_VALUE_RE.finditer(text):
            start = match.start()
            named = _QUOTED_NAME_RE.search(text, max(0, start - _NAME_REACH), start)
            value = match.group(1) if match.group(1) is not None else match.group(2)
            if named is not None and _assignment_is_secret(named.group(1), value, literal=True):
                found.add(value)
    for env_value in (_ENV_VALUE_RE, _ENV_WIDE_VALUE_RE) if wide else (_ENV_VALUE_RE,):
        if env_value.pattern[0] not in text:
            continue
        for match in env_value.finditer(text):
            start = match.start()
            named = _ENV_NAME_RE.search(text, max(0, start - _NAME_REACH - 16), start)
            if named is None:
                continue
            name = named.group(1)
            # "token=…; Path=/", "export KEY=…;": the semicolon ends the value
            value = match.group(1).removesuffix(";")
            if _assignment_is_secret(name, value, literal=name.isupper()):
                found.add(value)


def _assignment_is_secret(name: str, value: str, *, literal: bool) -> bool:
    if _is_password_name(name):
        return _password_value_ok(value, literal=literal)
    return _is_secret_name(name) and _looks_secret(value) and not _is_path(value)


def _add_cjk_secret(text: str, match: re.Match[str], found: set[str]) -> None:
    """Add the value of a :data:`_CJK_SECRET_RE` match: a password word's value is checked
    like a password, a key / token word's like a generated value."""
    is_password = match.group("password") is not None
    if match.group("spaced") is not None and not (
        is_password and any(text.endswith(q, 0, match.start()) for q in _CJK_PASSWORD_QUALIFIERS)
    ):
        return
    quoted, bare = match.group("quoted"), match.group("bare")
    value = quoted if quoted is not None else bare.rstrip(_TRAILING_PUNCTUATION)
    if is_password:
        ok = _password_value_ok(value, literal=quoted is not None)
    else:
        ok = _looks_secret(value) and not _is_path(value) and not _is_placeholder(value)
    if ok:
        found.add(value)


def _add_stated_password(match: re.Match[str], found: set[str]) -> None:
    """Add the password of a prose match: group 1 quoted (taken as is), group 2 bare."""
    if match.group(1) is not None:
        if _password_value_ok(match.group(1), literal=True):
            found.add(match.group(1))
        return
    value = match.group(2)
    query = _NEXT_QUERY_PARAMETER_RE.search(value)  # "?password=Tr0u&b4&next=/home"
    value = (value if query is None else value[: query.start()]).rstrip(_TRAILING_PUNCTUATION)
    if _password_value_ok(value, literal=False):
        found.add(value)


def find_secrets(text: str) -> set[str]:
    """Return every secret value recognised in ``text`` (outside ``data:`` URLs).

    For assignments, URL credentials and ``Bearer`` headers only the secret value itself is
    returned (not the name, user or scheme).
    """
    found: set[str] = set()
    if not text:
        return found
    for is_data, piece in _plain_segments(text):
        if not is_data:
            _find_in_plain(piece, found)
    found.discard(REDACTED)
    return found


#: How many levels of JSON text inside JSON text are looked into (tool calls stored as JSON
#: text hold their arguments as JSON text again).
_JSON_DEPTH: Final = 3


def _collect(value: object, found: set[str], depth: int = 0) -> None:
    if isinstance(value, str):
        secrets = find_secrets(value)
        for secret in secrets:
            found.update(_escaped(secret, depth))
        decoded = _json_container(value) if depth < _JSON_DEPTH else None
        if decoded is not None:
            _collect(decoded, found, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, found, depth)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect(item, found, depth)


def _json_container(text: str) -> object | None:
    """``text`` decoded when it is a JSON object or array (``None`` otherwise)."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "[") or stripped[-1:] not in ("}", "]"):
        return None
    try:
        decoded: object = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return decoded if isinstance(decoded, dict | list) else None


def _escaped(secret: str, depth: int) -> set[str]:
    """``secret`` as it reads inside ``depth`` levels of JSON text (with and without
    ``\\uXXXX`` escapes for non-ASCII), so every spelling of it is masked in the outer text."""
    spellings = {secret}
    for _ in range(depth):
        spellings |= {
            json.dumps(s, ensure_ascii=ascii_only)[1:-1]
            for s in spellings
            for ascii_only in (False, True)
        }
    return spellings


#: Where a short secret may start: not inside a word, except right after a glued ``-p``
#: option (``mysql -pS3cr3tPw``).
_SHORT_START: Final = r"(?:(?<![A-Za-z0-9])|(?<=(?<!\S)-p))"


class _Masker:
    """Replace a fixed set of secrets in plain text (longest first)."""

    def __init__(self, secrets: set[str]) -> None:
        ordered = sorted(secrets, key=len, reverse=True)
        # Long secrets: plain substring replacement (fast, even for a multi-KB PEM block).
        self._long = [s for s in ordered if len(s) >= _ANYWHERE_LEN]
        short = [s for s in ordered if len(s) < _ANYWHERE_LEN]
        self._short: re.Pattern[str] | None = None
        if short:
            alternatives = "|".join(re.escape(s) for s in short)
            self._short = re.compile(f"{_SHORT_START}(?:{alternatives})(?![A-Za-z0-9])")

    def mask(self, text: str) -> str:
        for secret in self._long:
            if secret in text:
                text = text.replace(secret, REDACTED)
        if self._short is not None:
            text = self._short.sub(REDACTED, text)
        return text


def _replace(value: object, masker: _Masker) -> object:
    if isinstance(value, str):
        return "".join(
            piece if is_data else masker.mask(piece) for is_data, piece in _plain_segments(value)
        )
    if isinstance(value, dict):
        return {key: _replace(item, masker) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace(item, masker) for item in value]
    if isinstance(value, tuple):
        return tuple(_replace(item, masker) for item in value)
    return value


def scrub_secrets(value: T) -> T:
    """Return ``value`` with every secret replaced by ``"[redacted]"``, keeping its shape.

    Accepts a ``str`` or any nesting of ``dict`` / ``list`` / ``tuple``; other scalars (numbers,
    ``None``, bytes…) are returned unchanged, and so are dict keys. Secrets are first
    collected across the whole value, then every occurrence of each — wherever it appears
    in the value, with or without the context that identified it — is masked. Occurrences
    of a short secret (under 12 characters) glued to letters or digits are left alone (they
    are part of a different word).
    ``data:`` URLs are never modified. The input is never mutated: when a secret is found,
    containers are rebuilt; when none is, ``value`` itself is returned.
    """
    found: set[str] = set()
    _collect(value, found)
    if not found:
        return value
    return _replace(value, _Masker(found))  # type: ignore[return-value]
