"""Secret kinds the rule set missed, and identifiers it took for secrets (issue 21)."""

from __future__ import annotations

import pytest

from hermes_memory_guard._redact import REDACTED, scrub_secrets

# Every sample is assembled at run time: test values, not credentials.
GOOGLE = "GOCSPX-" + "1a2B3c4D5e6F7g8H9i0JkLmNoPqR"
SIG = "Zm9vYmFyYmF6cXV4cXV1eDEy" + "MzQ1Njc4OTBhYmNkZWY%3D"
PUTTY_PRIVATE = "AAAAIFx7q9bGZ3kNwP0aRtYv" + "UeS1mLcH2dJ8oQ4iK6fT"
MAC = "8f3a1b2c3d4e5f60718293a4b5c6d7e8" + "f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4"
COOKIE = "8d7f6a5b4c3e2d1f" + "0a9b8c7d6e5f4a3b"
HOOK = (
    "1a2b3c4d-1111-2222-3333-444455556666@1a2b3c4d-1111-2222-3333-444455556666"
    "/IncomingWebhook/0123456789abcdef0123456789abcdef/1a2b3c4d-1111-2222-3333-444455556666"
)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"OAuth client secret {GOOGLE} from the console", GOOGLE),
        (f"https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig={SIG}", SIG),
        (
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: k\n"
            f"Public-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\nPrivate-Lines: 1\n{PUTTY_PRIVATE}\n"
            f"Private-MAC: {MAC}",
            PUTTY_PRIVATE,
        ),
        (f"Cookie: sessionid={COOKIE}; theme=dark", COOKIE),
        (f"Set-Cookie: session={COOKIE}; Path=/; HttpOnly", COOKIE),
        # a cookie header pasted inside quotes (curl, requests, fetch)
        (f'curl -H "Cookie: session={COOKIE}" https://app.example/api', COOKIE),
        (f"curl -H 'cookie: _app_session={COOKIE}; theme=dark' https://x.example", COOKIE),
        (f'requests.get(url, headers={{"Cookie": "sessionid={COOKIE}"}})', COOKIE),
        (f"Teams hook: https://outlook.office.com/webhook/{HOOK}", HOOK),
    ],
)
def test_missing_secret_kinds_are_masked(text: str, secret: str) -> None:
    masked = scrub_secrets(text)
    assert secret not in masked and REDACTED in masked
    # and nothing of the usable webhook path is left
    assert "IncomingWebhook/0123" not in masked


@pytest.mark.parametrize(
    "text",
    [
        "partition key: customer_id_region_v2",
        "host key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
        "const key = process.env.STRIPE_SECRET_KEY",
        "secret: settings.JWT_SECRET_KEY_V2",
        "Cookie: theme=dark; lang=en-GB-oxendict",
        'The "cookie: theme=dark-mode-v2" header is harmless',
    ],
)
def test_identifiers_are_not_secrets(text: str) -> None:
    assert scrub_secrets(text) == text


def test_the_semicolon_after_a_cookie_or_shell_value_is_kept() -> None:
    masked = scrub_secrets(f"Set-Cookie: remember_user_token={COOKIE}; path=/")
    assert masked == f"Set-Cookie: remember_user_token={REDACTED}; path=/"
    assert scrub_secrets(f"export API_TOKEN={COOKIE}; make") == f"export API_TOKEN={REDACTED}; make"


def test_a_snake_case_password_is_still_a_password() -> None:
    assert scrub_secrets("password = correct_horse_battery_staple") == f"password = {REDACTED}"
