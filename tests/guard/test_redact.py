"""Egress secret scrubber: credential shapes, the everywhere rule, pass-through cases."""

from __future__ import annotations

import json
import random

import pytest

from hermes_memory_guard import _redact as redact
from hermes_memory_guard._redact import REDACTED, find_secrets, scrub_secrets

# Synthetic credentials in the real shapes (none of them is a live key).
OPENAI = "sk-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3Ab4Cd5E"
OPENAI_PROJ = "sk-proj-" + "Zx9_Yw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7"
ANTHROPIC = "sk-ant-api03-" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0X1c2V3b4N5m6"
GITHUB = {
    "ghp": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "gho": "gho_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2",
    "ghs": "ghs_" + "M1n2B3v4C5x6Z7a8S9d0F1g2H3j4K5l6Q7w8",
    "pat": "github_pat_"
    + "11ABCDEFG0"
    + "abcdefghijKLMNOPQRST_0123456789uvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123",
}
AWS_ID = "AKIA" + "QWERTYUIOP123456"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY1234567890"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
GOOGLE = "AIza" + "SyD4-9fK2LmN0pQrStUvWxYz_1234567890"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACD3x0Wm1Xq0yJ5cJ8qKZ3m6Rt1Lw9kq+H2YJvX8f0q7WgAAAJgH4mT7B+Jk\n"
    "-----END OPENSSH PRIVATE KEY-----"
)


def test_shape_constants() -> None:
    assert len(GOOGLE) == 39
    assert len(AWS_ID) == 20
    assert len(AWS_SECRET) == 40


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"key is {OPENAI} ok", OPENAI),
        (f"export OPENAI_API_KEY={OPENAI_PROJ}", OPENAI_PROJ),
        (f"x-api-key: {ANTHROPIC}", ANTHROPIC),
        (f"token {GITHUB['ghp']}", GITHUB["ghp"]),
        (f"oauth {GITHUB['gho']}.", GITHUB["gho"]),
        (f"({GITHUB['ghs']})", GITHUB["ghs"]),
        (f"GH={GITHUB['pat']}", GITHUB["pat"]),
        (f"aws id {AWS_ID} in use", AWS_ID),
        (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
        (f'"AWS_SECRET_ACCESS_KEY": "{AWS_SECRET}"', AWS_SECRET),
        (f"slack {SLACK}", SLACK),
        (f"maps key {GOOGLE}", GOOGLE),
        (f"cookie={JWT};", JWT),
        ("Authorization: Bearer abc123def456ghi789", "abc123def456ghi789"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==", "dXNlcjpwYXNzd29yZDEyMw=="),
        (f"key file:\n{PEM}\nend", PEM),
        ("DATABASE_URL=postgres://admin:s3cretPW9@db.example:5432/app", "s3cretPW9"),
        ("redis://:pa55word@cache:6379", "pa55word"),
        ("password: hunter22x", "hunter22x"),
        ("db_password='Tr0ub4dor&3x'", "Tr0ub4dor&3x"),
        ('{"apiKey": "AbC123dEf456"}', "AbC123dEf456"),
        ("client.secret = 9f8e7d6c5b4a", "9f8e7d6c5b4a"),
        ("https://api.example/v1?api_key=Q9w8E7r6T5y4&x=1", "Q9w8E7r6T5y4"),
        ("ACCESS_TOKEN=zzzzzzzzzzzzzzzzYYYYYYYYYYYY----", "zzzzzzzzzzzzzzzzYYYYYYYYYYYY----"),
    ],
)
def test_each_shape_is_found_and_masked(text: str, secret: str) -> None:
    assert secret in find_secrets(text)
    scrubbed = scrub_secrets(text)
    assert secret not in scrubbed
    assert REDACTED in scrubbed


def test_assignment_masks_value_only() -> None:
    assert scrub_secrets("MY_API_KEY=Ab12Cd34Ef56") == f"MY_API_KEY={REDACTED}"
    assert scrub_secrets("postgres://u:pw123456@h/db") == f"postgres://u:{REDACTED}@h/db"
    assert scrub_secrets("Bearer abc123def456ghi789") == f"Bearer {REDACTED}"


def test_truncated_pem_is_masked() -> None:
    head = PEM.split("-----END")[0]
    assert scrub_secrets("leak:\n" + head) == "leak:\n" + REDACTED


@pytest.mark.parametrize(
    "text",
    [
        "token_count = 5",
        "max_tokens = 1024",
        "password: required",
        "the secret: patience",
        "api_key = os.environ['API_KEY']",
        "token = ${GITHUB_TOKEN}",
        "monkey = banana12345",
        "keyboard: qwerty123",
        "Use a Bearer token for the request.",
        "Bearer authentication is described in RFC 6750.",
        "def get_token(self) -> str: return self._token",
        "sk-learn style estimators",
        "ask-me-anything",
        "The user's password policy needs 12 characters.",
        "postgres://user@localhost/db",
        "用户的密码是安全的，令牌已过期。",
        "",
    ],
)
def test_no_false_positives(text: str) -> None:
    assert find_secrets(text) == set()
    assert scrub_secrets(text) == text


def test_everywhere_rule_across_fields() -> None:
    payload = {
        "query": "curl -H 'Authorization: Bearer tok9Secret77xyz' https://api",
        "messages": [
            {"role": "user", "content": "the value was tok9Secret77xyz, keep it"},
            {"role": "assistant", "content": ("again:", "tok9Secret77xyz")},
        ],
        "count": 3,
        "ratio": 0.5,
        "flag": None,
    }
    scrubbed = scrub_secrets(payload)
    assert scrubbed == {
        "query": f"curl -H 'Authorization: Bearer {REDACTED}' https://api",
        "messages": [
            {"role": "user", "content": f"the value was {REDACTED}, keep it"},
            {"role": "assistant", "content": ("again:", REDACTED)},
        ],
        "count": 3,
        "ratio": 0.5,
        "flag": None,
    }
    # Input not mutated.
    assert payload["messages"][0]["content"] == "the value was tok9Secret77xyz, keep it"


def test_everywhere_rule_within_one_string() -> None:
    text = "password=Zq8Wx7Ec6R and later the bare Zq8Wx7Ec6R again"
    assert scrub_secrets(text) == f"password={REDACTED} and later the bare {REDACTED} again"


def test_short_secret_not_masked_inside_other_words() -> None:
    text = "redis://:pa55word@cache and xpa55wordx and pa55word"
    assert scrub_secrets(text) == f"redis://:{REDACTED}@cache and xpa55wordx and {REDACTED}"


def test_short_url_passwords_are_placeholders() -> None:
    assert scrub_secrets("postgres://u:x@h/db") == "postgres://u:x@h/db"


def test_shapes_are_preserved() -> None:
    value = ["a", ("b", [OPENAI]), {"k": {"kk": [1, 2.5, True, None, b"raw"]}}]
    out = scrub_secrets(value)
    assert isinstance(out, list)
    assert isinstance(out[1], tuple)
    assert out == ["a", ("b", [REDACTED]), {"k": {"kk": [1, 2.5, True, None, b"raw"]}}]
    assert scrub_secrets(42) == 42
    assert scrub_secrets(None) is None
    clean = {"a": ["b"]}
    assert scrub_secrets(clean) is clean


def test_dict_keys_are_not_rewritten() -> None:
    out = scrub_secrets({OPENAI: "value mentions " + OPENAI})
    assert out == {OPENAI: f"value mentions {REDACTED}"}


def test_data_urls_pass_through() -> None:
    # A base64 payload that happens to contain JWT- and key-shaped runs.
    payload = JWT + "AAAA" + AWS_ID + "+/" + GOOGLE + "=="
    image = f"data:image/png;base64,{payload}"
    text = f"look: {image} (and nothing else)"
    assert find_secrets(text) == set()
    assert scrub_secrets(text) == text
    assert scrub_secrets({"image_url": {"url": image}}) == {"image_url": {"url": image}}


def test_data_url_untouched_even_when_secret_found_elsewhere() -> None:
    image = f"data:image/jpeg;base64,/9j/{GOOGLE}xx=="
    value = [f"key {GOOGLE}", image]
    assert scrub_secrets(value) == [f"key {REDACTED}", image]


def test_cjk_passthrough_and_cjk_around_secrets() -> None:
    text = f"我的密钥是 {OPENAI} ，请保密。パスワード=Abc12345xyz"
    assert scrub_secrets(text) == f"我的密钥是 {REDACTED} ，请保密。パスワード={REDACTED}"
    assert scrub_secrets("记忆系统：用户喜欢喝茶。") == "记忆系统：用户喜欢喝茶。"


@pytest.mark.timeout(120)
def test_adversarial_inputs_finish() -> None:
    n = 500_000
    inputs = [
        "key=" * (n // 4),
        "a=" * (n // 2),
        "sk-ant-" * (n // 7),
        "-----BEGIN RSA PRIVATE KEY-----" * (n // 31),
        "data:" * (n // 5),
        "x://" + "a:" * (n // 2),
        "Bearer " * (n // 7),
        "eyJ" + "a" * n,
    ]
    # No timing assertion (a loaded machine is slow): quadratic behaviour on 500 KB takes
    # far longer than pytest-timeout's bound; the costs are measured by bench_redact.py.
    for text in inputs:
        scrub_secrets(text)


# --- the windowed assignment search against one plain finditer -------------------------------


def _spans(matches: object) -> list[tuple[int, int, str, str]]:
    """Matches whose name could be secret (windows without a name hint are skipped)."""
    return [
        (m.start(), m.end(), m.group(1), m.group(2))
        for m in matches  # type: ignore[attr-defined]
        if redact._is_secret_name(m.group(1)) or redact._is_password_name(m.group(1))
    ]


_PARTS = [
    "api_key", "API_KEY", "token", "password", "secret", "Bearer ", "basic ", "=", ":", " = ",
    "aws_secret_access_key", "'", '"', "://", "u:pw12345678@h", "Ab12Cd34Ef56", AWS_SECRET,
    OPENAI_PROJ, "data:image/png;base64,AAAA", "x", "foo", "abc/secret_key", ",", "\n", " ",
    "\u0130", "\u017f", "Ab1" * 5, "==", "key", "-", "lorem ipsum " * 30, "z" * 70, "pass", "pw",
    "&", "&x=", "&&", "＝", "：", "，", "K9&xP2",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(3))
def test_windowed_assignments_equal_one_finditer(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(2000):
        text = "".join(rng.choice(_PARTS) for _ in range(rng.randint(1, 30)))
        lowered = redact._lowered(text)
        if not any(word in lowered for word in redact._NAME_HINTS):
            continue
        windowed = _spans(redact._assignments(text, lowered))
        assert windowed == _spans(redact._ASSIGNMENT_RE.finditer(text)), text


def test_assignment_windows_keep_finditer_chaining() -> None:
    # The first match ("foo=abc/secret_key=") swallows "secret_key=", so its value is never
    # read by this regex.
    text = "foo=abc/secret_key=Zx9Yw8Vu7Ts6 " + "filler " * 500 + "pwd: Qq11Ww22Ee33"
    windowed = _spans(redact._assignments(text, redact._lowered(text)))
    assert [m[3] for m in windowed] == ["Qq11Ww22Ee33"]
    assert windowed == _spans(redact._ASSIGNMENT_RE.finditer(text))
    # The gitleaks generic rule does read it: both values are masked in the end.
    assert {"Zx9Yw8Vu7Ts6", "Qq11Ww22Ee33"} <= find_secrets(text)


def test_secrets_inside_json_text_inside_json_text_are_masked() -> None:
    # Hosts store tool calls as JSON text whose arguments are JSON text again: the quotes
    # around "password" arrive escaped twice, so only the decoded text shows the assignment.
    arguments = json.dumps({"user": "ops", "password": "Tr0ub4dor&3xyz"})
    calls = json.dumps(
        [{"type": "function", "function": {"name": "login", "arguments": arguments}}]
    )
    masked = scrub_secrets({"role": "assistant", "tool_calls": calls})
    assert "Tr0ub4dor&3xyz" not in json.dumps(masked)
    decoded = json.loads(json.loads(masked["tool_calls"])[0]["function"]["arguments"])
    assert decoded == {"user": "ops", "password": REDACTED}
    # Non-ASCII escaped as \uXXXX by the encoder is masked in that spelling too.
    ascii_json = json.dumps({"a": json.dumps({"password": "密码X9y8z7abc"})}, ensure_ascii=True)
    assert "X9y8z7abc" not in scrub_secrets(ascii_json)


def test_json_text_without_secrets_is_returned_as_given() -> None:
    text = json.dumps({"id": "3f2c9a1e-8b7d-4c6e-9f0a-1b2c3d4e5f60", "sha": "a" * 40, "n": 5})
    assert scrub_secrets(text) is text
    nested = "[" * 100_000 + "]" * 100_000  # too deep for the decoder: read as plain text
    assert scrub_secrets(nested) is nested
