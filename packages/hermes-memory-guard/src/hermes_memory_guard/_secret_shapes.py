"""Secret shapes the rule set misses, and values it takes for secrets that are not.

Used by `hermes_memory_guard._redact` on every plain-text segment:

* `extra_secrets` finds Google OAuth client secrets (``GOCSPX-…``), Azure SAS signatures
  (``…&sig=…``), the private lines of a PuTTY key file, session cookies in ``Cookie:`` /
  ``Set-Cookie:`` headers (also quoted, as in ``curl -H "Cookie: …"``), and the path of a
  Microsoft Teams / Office 365 incoming webhook (the whole path is the credential; masking
  a GUID of it left a usable URL).
* `public_values` names found values that are not secrets: SSH host-key fingerprints
  (``SHA256:…``, colon-separated MD5), references to where a secret lives
  (``process.env.STRIPE_SECRET_KEY``, ``settings.JWT_SECRET_KEY``, ``os.environ[…]``) and
  lower-case snake_case identifiers named as a key (``partition key: customer_id_region_v2``)
  — but never a value named as a password, secret or token.

Every regex is bounded and gated by a literal.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["extra_secrets", "public_values"]

_GOOGLE_RE: Final = re.compile(r"(?<![A-Za-z0-9_-])(GOCSPX-[A-Za-z0-9_-]{20,64})(?![A-Za-z0-9_-])")
_SAS_RE: Final = re.compile(r"[?&]sig=([A-Za-z0-9%+/=]{16,256})")
_PUTTY_RE: Final = re.compile(
    r"PuTTY-User-Key-File-\d{1,2}:[^\n]{0,200}\n(?:[^\n]{0,2000}\n){0,80}?"
    r"Private-Lines:[ \t]*\d{1,3}[ \t]*\r?\n((?:[A-Za-z0-9+/=]{1,128}(?:\r?\n|\Z)){1,64})"
)
_PUTTY_MAC_RE: Final = re.compile(r"Private-MAC:[ \t]*([0-9a-fA-F]{32,128})")
_COOKIE_LINE_RE: Final = re.compile(
    r"(?im)^[ \t>*-]{0,8}(?:set-)?cookie[ \t]*:[ \t]*([^\n]{1,4096})"
)
#: A cookie header inside quotes: ``curl -H "Cookie: sid=…"``, ``{"Cookie": "sid=…"}``.
_COOKIE_QUOTED_RE: Final = re.compile(
    r"(?i)[\"'](?:set-)?cookie(?:[\"'][ \t]{0,8})?:[ \t]{0,8}[\"']?([^\n\"']{1,4096})"
)
_COOKIE_PAIR_RE: Final = re.compile(r"(?:^|;)\s*([A-Za-z0-9_.-]{1,64})=([^;\s]{8,1024})")
_SESSION_NAME_RE: Final = re.compile(r"(?i)sess|sid|token|auth|jwt|remember|login|csrf|xsrf")
_WEBHOOK_RE: Final = re.compile(
    r"https://[A-Za-z0-9.-]{0,64}(?:outlook\.office(?:365)?\.com|webhook\.office\.com)"
    r"/webhook(?:b2)?/([^\s\"'<>)\]]{16,512})"
)

_FINGERPRINT_RE: Final = re.compile(r"(?i)(?:sha256|sha512|sha1|md5):([A-Za-z0-9+/=:]{16,128})")
_REFERENCE_RE: Final = re.compile(
    r"(?:[A-Za-z_][A-Za-z0-9_]{0,63}\.){1,6}[A-Za-z_][A-Za-z0-9_]{0,127}"
    r"|(?:os\.)?environ(?:\.get)?[\[(][\"'][A-Za-z0-9_]{1,128}[\"'][\])]"
    r"|(?:os\.)?getenv\([\"'][A-Za-z0-9_]{1,128}[\"']\)"
)
_REFERENCE_ROOTS: Final = frozenset(
    {"process", "env", "settings", "config", "conf", "os", "environ", "secrets", "vault", "ENV"}
)
_SNAKE_RE: Final = re.compile(r"[a-z][a-z0-9]{0,31}(?:_[a-z0-9]{1,31}){2,8}")
#: A value named by one of these words is never treated as an identifier.
_SECRET_NAME_RE: Final = re.compile(r"(?i)pass|pwd|secret|token|credential|auth|private")


def extra_secrets(text: str) -> set[str]:
    """Secrets of the shapes listed in the module docstring found in ``text``."""
    found: set[str] = set()
    if "GOCSPX-" in text:
        found.update(m.group(1) for m in _GOOGLE_RE.finditer(text))
    if "sig=" in text:
        found.update(m.group(1) for m in _SAS_RE.finditer(text))
    if "PuTTY-User-Key-File-" in text:
        for match in _PUTTY_RE.finditer(text):
            found.update(line.strip() for line in match.group(1).splitlines() if line.strip())
        found.update(m.group(1) for m in _PUTTY_MAC_RE.finditer(text))
    lowered = text.lower()
    if "cookie" in lowered:
        for regex in (_COOKIE_LINE_RE, _COOKIE_QUOTED_RE):
            for line in regex.finditer(text):
                for pair in _COOKIE_PAIR_RE.finditer(line.group(1)):
                    if _SESSION_NAME_RE.search(pair.group(1)):
                        found.add(pair.group(2))
    if "webhook" in lowered:
        found.update(m.group(1) for m in _WEBHOOK_RE.finditer(text))
    return found


def public_values(text: str, found: set[str]) -> set[str]:
    """The values of ``found`` that are not secrets (see the module docstring)."""
    public: set[str] = set()
    if not found:
        return public
    if ":" in text:
        for match in _FINGERPRINT_RE.finditer(text):
            public.update(value for value in found if value in match.group(1))
    for value in found:
        if value in public:
            continue
        if _is_reference(value) or (_is_identifier(value) and not _named_secret(text, value)):
            public.add(value)
    return public


def _is_reference(value: str) -> bool:
    """``process.env.X``, ``settings.JWT_SECRET_KEY``, ``os.environ["X"]``: where a secret
    lives, not the secret."""
    if _REFERENCE_RE.fullmatch(value) is None:
        return False
    root = re.split(r"[.\[(]", value, maxsplit=1)[0]
    return root in _REFERENCE_ROOTS or "environ" in value or "getenv" in value


def _is_identifier(value: str) -> bool:
    """``customer_id_region_v2``: snake_case words. A long part mixing letters and digits
    is generated (``live_pub_8fc9fb6494384932af3bda6fe8102c0``, a Lob key), not a word."""
    if _SNAKE_RE.fullmatch(value) is None:
        return False
    return not any(
        len(part) >= 12 and not part.isalpha() and not part.isdigit() for part in value.split("_")
    )


def _named_secret(text: str, value: str) -> bool:
    """Whether some occurrence of ``value`` is named as a password, secret or token (the
    64 characters before it say so)."""
    start = text.find(value)
    while start >= 0:
        if _SECRET_NAME_RE.search(text[max(0, start - 64) : start]):
            return True
        start = text.find(value, start + 1)
    return False
