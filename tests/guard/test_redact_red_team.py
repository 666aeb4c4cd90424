"""Shapes a red-team review found the scrubber missing or over-masking (all values are fake):
markup around known-prefix tokens, full-width separators, Chinese names for keys and tokens,
``&`` inside values, tokens wrapped over lines, command-line credentials, and identifiers
named like keys."""

from __future__ import annotations

import pytest

from hermes_memory_guard import REDACTED, find_secrets, scrub_secrets

# Prefixes are split so no literal here looks like a live key.
STRIPE = "sk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dcX9Qz"
NPM = "np" + "m_" + "S2GiV1BDrZVW1ouPr9ebYejJHVsn9HVZ8rEV"
HF = "h" + "f_" + "zfvLhDhCTavSmRITMUStRjtxrSXqBGBQlh"
GHP = "gh" + "p_" + "cnLjSxQ0A5CSVPNbBZkjuaKFjNxL9MaFg2UX"
OPENAI = "sk-" + "proj-" + "Zx9_Yw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Qq9Ww8Ee7"
PASSWORD = "Tr0ub4dor&3xQ"


def _masked(text: str, expected: str) -> None:
    assert scrub_secrets(text) == expected, find_secrets(text)


# --- 1. known-prefix tokens inside Markdown / HTML -----------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"**{STRIPE}**", f"**{REDACTED}**"),
        (f"_{STRIPE}_", f"_{REDACTED}_"),
        (f"__{STRIPE}__", f"__{REDACTED}__"),
        (f"~~{NPM}~~", f"~~{REDACTED}~~"),
        (f"<code>{HF}</code>", f"<code>{REDACTED}</code>"),
        (f"|{NPM}|", f"|{REDACTED}|"),
        (
            f"https://registry.example/?token={NPM}&page=2",
            f"https://registry.example/?token={REDACTED}&page=2",
        ),
        # our own shapes too (sk-, ghp_): the closing "_" is not part of the token
        (f"_{GHP}_", f"_{REDACTED}_"),
        (f"_{OPENAI}_", f"_{REDACTED}_"),
    ],
)
def test_tokens_wrapped_in_markup_are_masked(text: str, expected: str) -> None:
    _masked(text, expected)


def test_an_underscore_inside_an_identifier_is_no_boundary() -> None:
    # snake_case going on after a stripe-like prefix is an identifier, not a token end
    text = "def test" + "_sk" + "_test_placeholder_value(): pass"
    assert scrub_secrets(text) == text


# --- 2. full-width separators --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"DB_PASSWORD＝{PASSWORD}", f"DB_PASSWORD＝{REDACTED}"),
        (f"api_key＝{PASSWORD}", f"api_key＝{REDACTED}"),
        ("api_key：Ab12Cd34Ef56，然后重启", f"api_key：{REDACTED}，然后重启"),
        (
            '"client_secret"：「x」 token＝"Zq8Wx7Ec6Rv5"',
            f'"client_secret"：「x」 token＝"{REDACTED}"',
        ),
        (f"my password＝{PASSWORD}", f"my password＝{REDACTED}"),
    ],
)
def test_full_width_separators(text: str, expected: str) -> None:
    _masked(text, expected)


# --- 3. Chinese names for keys, tokens and credentials ------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"API密钥：{PASSWORD}", f"API密钥：{REDACTED}"),
        (f"访问令牌：{PASSWORD}", f"访问令牌：{REDACTED}"),
        (f"密钥是 {PASSWORD}", f"密钥是 {REDACTED}"),
        (f"新密码 {PASSWORD}", f"新密码 {REDACTED}"),
        (f"旧密码 {PASSWORD}，新密码为 Qz7!xw9Lm", f"旧密码 {REDACTED}，新密码为 {REDACTED}"),
        (f"秘钥为「{PASSWORD}」", f"秘钥为「{REDACTED}」"),
        (f"服务凭证：{PASSWORD}。", f"服务凭证：{REDACTED}。"),
        (f"**Password:** {PASSWORD}", f"**Password:** {REDACTED}"),
    ],
)
def test_stated_keys_and_tokens(text: str, expected: str) -> None:
    _masked(text, expected)


@pytest.mark.parametrize(
    "text",
    [
        "密钥是 AES-256 加密的",  # a key *kind*, not a key
        "令牌：Bearer 方式",
        "新密码 必须包含数字",
        "密码 HTTPS2 配置",  # no separator and no "new"/"old": not a statement
        "访问令牌已过期，请重新登录",
        "凭证为空",
    ],
)
def test_chinese_key_words_in_ordinary_text(text: str) -> None:
    assert scrub_secrets(text) == text, find_secrets(text)


# --- 4. values holding "&" -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("api_key: K9&xP2mQ7vL4wZ", f"api_key: {REDACTED}"),
        ("client_secret: q7&Rt5Lm2Wx9Pz", f"client_secret: {REDACTED}"),
        (f"pgpassword: {PASSWORD}", f"pgpassword: {REDACTED}"),
        # in a URL query "&name=" starts the next parameter
        (
            "https://api.example/v1?api_key=Q9w8E7r6T5y4&x=1&token=Zz9Yy8Xx7Ww6",
            f"https://api.example/v1?api_key={REDACTED}&x=1&token={REDACTED}",
        ),
        (
            f"https://x.example/?a=1&b=2&password={PASSWORD}&c=3",
            f"https://x.example/?a=1&b=2&password={REDACTED}&c=3",
        ),
        ("export API_KEY=Zq8Wx7Ec6Rv5 && run", f"export API_KEY={REDACTED} && run"),
    ],
)
def test_ampersand_inside_values(text: str, expected: str) -> None:
    _masked(text, expected)


# --- 5. tokens wrapped over lines ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"{GHP[:20]}\n{GHP[20:]}", REDACTED),
        (f"token={GHP[:20]}\n{GHP[20:]} done", f"token={REDACTED} done"),
        (f"key {STRIPE[:20]}\n{STRIPE[20:]}\nthanks", f"key {REDACTED}\nthanks"),
        (f"{STRIPE[:20]}\r\n{STRIPE[20:]}", REDACTED),
        (f"{OPENAI[:30]}\n{OPENAI[30:]}", REDACTED),
        # over three lines
        (f"{GHP[:16]}\n{GHP[16:28]}\n{GHP[28:]}\nbye", f"{REDACTED}\nbye"),
    ],
)
def test_tokens_split_over_lines(text: str, expected: str) -> None:
    _masked(text, expected)


@pytest.mark.parametrize(
    "text",
    [
        # the next line is prose, not a continuation
        f"key: {OPENAI}\nThe end",
        f"OPENAI_API_KEY={OPENAI}\nGITHUB_TOKEN=ghp-style-placeholder",
        # too short to complete the token: the next word is left alone
        f"{GHP[:20]}\nhello",
        "The deployment finished successfully\nafterwards the dashboards updated",
    ],
)
def test_next_line_is_kept_when_it_does_not_continue_a_token(text: str) -> None:
    scrubbed = scrub_secrets(text)
    assert scrubbed.split("\n")[1] == text.split("\n")[1], scrubbed


# --- 6. command-line credentials --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"mysql -u root -p{PASSWORD}", f"mysql -u root -p{REDACTED}"),
        (f"mysqldump -uroot -p'{PASSWORD}' app", f"mysqldump -uroot -p'{REDACTED}' app"),
        ("mysql -h db -pS3cretPw app", f"mysql -h db -p{REDACTED} app"),  # short, glued
        (f"curl -u admin:{PASSWORD} https://x", f"curl -u admin:{REDACTED} https://x"),
        (f"docker login -u bob -p {PASSWORD}", f"docker login -u bob -p {REDACTED}"),
        (f"sshpass -p '{PASSWORD}' ssh ops@db", f"sshpass -p '{REDACTED}' ssh ops@db"),
        (f"tool --password={PASSWORD}", f"tool --password={REDACTED}"),
        (f"tool --password {PASSWORD} --verbose", f"tool --password {REDACTED} --verbose"),
        ("cli --api-key Zq8Wx7Ec6Rv5 run", f"cli --api-key {REDACTED} run"),
    ],
)
def test_command_line_credentials(text: str, expected: str) -> None:
    _masked(text, expected)


@pytest.mark.parametrize(
    "text",
    [
        "docker run -p 8080:80 -v /srv:/data nginx",
        "ssh -p 2222 alice@host",
        "mkdir -p build/output2024",
        "psql -h db -p 5432 -U app",
        "mysql -u root -p appdb2024",  # "-p" then a word: prompt, and the database's name
        "docker login registry.example.com && docker run -p 8080:80 web2024x",
        "docker run -u 1000:1000 img; docker run -u www-data:www-data img",
        "sort --key 2 file; gpg --recv-key ABCD1234EF; cli --password --verbose",
        "pytest -p no:cacheprovider; sshpass -p 1 ssh host",
    ],
)
def test_command_line_look_alikes(text: str) -> None:
    assert scrub_secrets(text) == text, find_secrets(text)


# --- 7. identifiers named like keys ------------------------------------------------------------


def test_a_public_key_is_not_masked_anywhere() -> None:
    value = {
        "note": "public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG3 alice",
        "q": "How do I generate an ssh-ed25519 key?",
    }
    assert scrub_secrets(value) is value


@pytest.mark.parametrize(
    "name",
    [
        "public_key", "pubKey", "primary_key", "foreign_key", "sort_key", "partition_key",
        "idempotency_key", "cache_key", "key_id", "routing_key", "next_page_token",
    ],
)  # fmt: skip
def test_identifier_names_do_not_make_a_secret(name: str) -> None:
    text = f"{name}: order-2024-0042 (see order-2024-0042)"
    assert scrub_secrets(text) == text, find_secrets(text)
    assert scrub_secrets(f"{name} = user_id2 and the user_id2 column").count(REDACTED) == 0


@pytest.mark.parametrize("name", ["api_key", "secret_key", "private_key", "access_token"])
def test_credential_names_still_do(name: str) -> None:
    assert scrub_secrets(f"{name}: order-2024-0042") == f"{name}: {REDACTED}"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("`password`: S3cretPass1", "S3cretPass1"),
        ("`API_KEY`=`S3cretPass1xyz`", "S3cretPass1xyz"),
        ("Set `db_password` = `Tr0ub4dor&3xQ` in staging", "Tr0ub4dor&3xQ"),
    ],
)
def test_a_name_in_backticks_still_names_a_secret(text: str, secret: str) -> None:
    masked = scrub_secrets(text)
    assert secret not in masked
    assert REDACTED in masked


def test_backticked_names_of_ordinary_settings_stay() -> None:
    for text in ("set `timeout`: 30s", "`max_tokens`: 1024", "`token_count` = 5"):
        assert scrub_secrets(text) == text
