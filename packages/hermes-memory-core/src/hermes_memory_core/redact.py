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
"…"``, ``password: …`` — only the value is masked).

Generic values (assignments, ``Bearer``) are masked only when they *look* secret: at least
8 characters with both a letter and a digit, or at least 20 characters mixing three of
lower case / upper case / digits / symbols. So ``token_count = 5`` or ``password: required``
stay readable. URL passwords are masked from 4 characters on. ``data:`` URLs are passed
through untouched (a base64 image must not be mangled), and dict keys are never rewritten.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Final, TypeVar

from hermes_memory_core import _secret_rules

__all__ = ["REDACTED", "find_secrets", "scrub_secrets"]

#: What every secret is replaced with.
REDACTED: Final[str] = "[redacted]"

T = TypeVar("T")

_WORD_START = r"(?<![A-Za-z0-9_-])"
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
#: ``name = value`` / ``"name": "value"`` / ``name: value``; the name is checked in Python.
_ASSIGNMENT_RE: Final = re.compile(
    r"(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,64})[\"']?\s{0,8}[=:]\s{0,8}[\"']?"
    r"(?!//)([^\s\"'`,;&?#<>(){}\[\]=:]{4,4096}={0,3})"
)
#: ``name = "value"`` / ``'name': 'value'``: a quoted value is taken whole (symbols, spaces).
_QUOTED_VALUE_RE: Final = re.compile(r"[=:][ \t]{0,8}(?:\"([^\"\n]{1,512})\"|'([^'\n]{1,512})')")
#: The name in front of such a value (searched in the 73 characters before the separator:
#: scanning for the separator first keeps the cost linear).
_QUOTED_NAME_RE: Final = re.compile(r"(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,64})[\"']?[ \t]{0,8}\Z")
#: Shell / dotenv ``NAME=value`` (line start, after whitespace, ``;`` or ``export``): the value
#: runs to the next whitespace, whatever symbols it holds.
_ENV_VALUE_RE: Final = re.compile(r"=([^\s\"'`]{4,512})")
_ENV_NAME_RE: Final = re.compile(r"(?<![^\s;])(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]{0,63})\Z")
_NAME_REACH: Final = 64 + 1 + 8
#: A password stated in English prose: "my password is hunter2!", "the password for the db
#: is …", "passphrase: …". Matched only where a password word starts (see ``_PROSE_WORDS``).
_PROSE_PASSWORD_RE: Final = re.compile(
    r"(?<![A-Za-z])(?i:password|passwd|passphrase|passcode|pwd)(?![A-Za-z])"
    r"(?:[ \t]{1,4}(?i:for|of|to|on|at)(?:[ \t]{1,4}[^\s:=：]{1,40}){1,4}?)?"
    r"(?:[ \t]{1,4}(?i:is|was)(?:[ \t]{0,4}[:=])?[ \t]{1,4}|[ \t]{0,4}[:=：][ \t]{0,4})"
    r"(?:[\"'“‘`]([^\"'”’`\n]{1,128})[\"'”’`]|([^\s\"'`“”‘’]{1,128}))"
)
_PROSE_WORDS: Final = ("password", "passwd", "passphrase", "passcode", "pwd")
#: The same in Chinese, Japanese and Korean: "密码是 …", "密码：…", "パスワードは …".
_CJK_PASSWORD_WORDS: Final = ("密码", "密碼", "口令", "パスワード", "비밀번호")
_CJK_PASSWORD_RE: Final = re.compile(
    r"(?:密码|密碼|口令|パスワード|비밀번호)(?:[ \t]{0,4}(?:是|为|為|は|는|：|:|=)){1,2}[ \t]{0,4}"
    r"(?:[\"'“‘「]([^\"'”’」\n]{1,128})[\"'”’」]|([!-~]{1,128}))"
)
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


def _is_secret_name(name: str) -> bool:
    words = [word.lower() for word in _NAME_WORD_RE.findall(name)]
    if not words:
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
_ASSIGNMENT_TAIL_RE: Final = re.compile(
    r"[=:]\s{0,8}[\"']?[^\s\"'`,;&?#<>(){}\[\]=:]{0,4096}={0,3}"
)
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
    separators = sorted(index for char in "=:" for index in _find_all(text, char))
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
    dense = (text.count("=") + text.count(":")) * _DENSE_SEPARATORS > len(text)
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


def _find_in_plain(text: str, found: set[str]) -> None:
    for pattern, literals in zip(_SPECIFIC, _SPECIFIC_LITERALS, strict=True):
        if any(literal in text for literal in literals):
            found.update(match.group() for match in pattern.finditer(text))
    lowered = _lowered(text)
    if "aws" in lowered:
        found.update(match.group(1) for match in _AWS_SECRET_RE.finditer(text))
    if "bearer" in lowered or "basic" in lowered:
        for match in _AUTH_SCHEME_RE.finditer(text):
            if _looks_secret(match.group(1)):
                found.add(match.group(1))
    if "://" in text:
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
    found.update(_secret_rules.load_rules().find_secrets(text))
    if any(word in text for word in _CJK_PASSWORD_WORDS):
        for match in _CJK_PASSWORD_RE.finditer(text):
            _add_stated_password(match, found)
    if not any(word in lowered for word in _NAME_HINTS):
        return
    for match in _assignments(text, lowered):
        if _assignment_is_secret(match.group(1), match.group(2), literal=False):
            found.add(match.group(2))
    if "=" in text or ":" in text:
        for match in _QUOTED_VALUE_RE.finditer(text):
            start = match.start()
            named = _QUOTED_NAME_RE.search(text, max(0, start - _NAME_REACH), start)
            value = match.group(1) if match.group(1) is not None else match.group(2)
            if named is not None and _assignment_is_secret(named.group(1), value, literal=True):
                found.add(value)
    if "=" in text:
        for match in _ENV_VALUE_RE.finditer(text):
            start = match.start()
            named = _ENV_NAME_RE.search(text, max(0, start - _NAME_REACH - 16), start)
            if named is None:
                continue
            name = named.group(1)
            if _assignment_is_secret(name, match.group(1), literal=name.isupper()):
                found.add(match.group(1))
    if len(lowered) == len(text):
        for word in _PROSE_WORDS:
            index = lowered.find(word)
            while index >= 0:
                prose = _PROSE_PASSWORD_RE.match(text, index)
                if prose is not None:
                    _add_stated_password(prose, found)
                index = lowered.find(word, index + 1)


def _assignment_is_secret(name: str, value: str, *, literal: bool) -> bool:
    if _is_password_name(name):
        return _password_value_ok(value, literal=literal)
    return _is_secret_name(name) and _looks_secret(value) and not _is_path(value)


def _add_stated_password(match: re.Match[str], found: set[str]) -> None:
    """Add the password of a prose match: group 1 quoted (taken as is), group 2 bare."""
    if match.group(1) is not None:
        if _password_value_ok(match.group(1), literal=True):
            found.add(match.group(1))
        return
    value = match.group(2).rstrip(_TRAILING_PUNCTUATION)
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
            self._short = re.compile(f"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])")

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
