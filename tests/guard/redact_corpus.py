"""Synthetic corpora for the secret scrubber: fake secrets by category, and ordinary chat.

Every credential is assembled at run time from a seeded generator, so no literal in this
repository looks like a live key (GitHub push protection and scanners stay quiet) and the
values have the entropy real keys have. Used by tests/guard/test_redact_*.py and by
benchmarks/bench_redact.py.
"""

from __future__ import annotations

import base64
import random
import string
import uuid
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_ALNUM = string.ascii_uppercase + string.digits


@dataclass(frozen=True)
class SecretCase:
    """One text holding one secret; ``secret`` must not survive scrubbing."""

    category: str
    text: str
    secret: str


def _rand(rng: random.Random, length: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def _p(*parts: str) -> str:
    """Join prefix pieces (keeps whole key prefixes out of the source text)."""
    return "".join(parts)


def secret_cases(seed: int = 1) -> list[SecretCase]:
    """About 60 texts, several per category, each with a freshly generated fake secret."""
    rng = random.Random(seed)
    cases: list[SecretCase] = []

    def add(category: str, template: str, secret: str) -> None:
        cases.append(SecretCase(category, template.format(s=secret), secret))

    def b64(n: int) -> str:
        return base64.b64encode(rng.randbytes(n)).decode()

    for _ in range(2):
        body = "\n".join(b64(48) for _ in range(6))
        pgp = (
            _p("-----BEGIN PGP ", "PRIVATE KEY BLOCK-----")
            + f"\n\n{body}\n={_rand(rng, 4)}\n"
            + _p("-----END PGP ", "PRIVATE KEY BLOCK-----")
        )
        add("pgp-private-key", "my key, for the backup script:\n{s}\nthanks", pgp)
        pem = (
            _p("-----BEGIN RSA ", "PRIVATE KEY-----")
            + f"\n{body}\n"
            + _p("-----END RSA ", "PRIVATE KEY-----")
        )
        add("pem-private-key", "{s}", pem)
        add("stripe", "charge with {s} please", _p("sk", "_live_") + _rand(rng, 24))
        add("stripe", "STRIPE_KEY={s}", _p("rk", "_live_") + _rand(rng, 34))
        add(
            "huggingface",
            "huggingface-cli login --token {s}",
            _p("h", "f_") + _rand(rng, 34, string.ascii_letters),
        )
        add(
            "gitlab",
            "git clone https://oauth2:{s}@gitlab.com/x/y.git",
            _p("glp", "at-") + _rand(rng, 20, ALNUM + "_-"),
        )
        add("gitlab", "token: {s}", _p("glp", "at-") + _rand(rng, 26, ALNUM))
        add("npm", "//registry.npmjs.org/:_authToken={s}", _p("np", "m_") + _rand(rng, 36))
        hook = _p("https://hooks.", "slack.com/services/") + (
            f"T{_rand(rng, 8, UPPER_ALNUM)}/B{_rand(rng, 10, UPPER_ALNUM)}/{_rand(rng, 24)}"
        )
        add("slack-webhook", "post alerts to {s}", hook)
        add(
            "sendgrid",
            "SENDGRID={s}",
            _p("S", "G.") + _rand(rng, 22, ALNUM + "_-") + "." + _rand(rng, 43, ALNUM + "_-"),
        )
        add("openai", "use {s} for the eval", _p("sk", "-proj-") + _rand(rng, 48, ALNUM + "_-"))
        add(
            "anthropic",
            "ANTHROPIC_API_KEY={s}",
            _p("sk-", "ant-api03-") + _rand(rng, 80, ALNUM + "_-"),
        )
        add("github", "push with {s}", _p("gh", "p_") + _rand(rng, 36))
        add("aws", "id {s} in us-east-1", _p("AK", "IA") + _rand(rng, 16, UPPER_ALNUM))
        add("aws", "aws_secret_access_key = {s}", _rand(rng, 40, ALNUM + "/+"))
        add(
            "slack-token",
            "bot token {s}",
            _p("xo", "xb-")
            + f"{_rand(rng, 12, string.digits)}-{_rand(rng, 13, string.digits)}-{_rand(rng, 24)}",
        )
        add("google", "maps key {s}", _p("AI", "za") + _rand(rng, 35, ALNUM + "_-"))
        jwt = "eyJ" + _rand(rng, 30) + ".eyJ" + _rand(rng, 40) + "." + _rand(rng, 43, ALNUM + "_-")
        add("jwt", "cookie session={s}; path=/", jwt)
        add("env-password", "PGPASSWORD={s} psql -h db -U app", _rand(rng, 10))
        add("env-password", "export DB_PASS={s}", _rand(rng, 6) + "!" + _rand(rng, 3))
        add("env-password", "SECRET_KEY_BASE={s}", _rand(rng, 96, HEX))
        add("env-password", "MYSQL_ROOT_PASSWORD={s}", "sunshine" + _rand(rng, 2, string.digits))
        add("prose-password", "my password is {s}!", "hunter" + _rand(rng, 2, string.digits))
        add(
            "prose-password",
            "The password for the db is {s}.",
            "Tr0ub4dor&" + _rand(rng, 2, string.digits),
        )
        add("prose-password", 'the wifi passphrase is "{s}"', "correct horse " + _rand(rng, 5))
        add("prose-password", "密码是 {s}，别告诉别人", "abc" + _rand(rng, 5, string.digits))
        add("prose-password", "数据库密码：{s}", "Qwe!" + _rand(rng, 6))
        add("prose-password", "パスワードは {s} です", "Pw" + _rand(rng, 6))
        add(
            "url-password",
            "DATABASE_URL=postgres://user:{s}@db.internal:5432/app",
            "p@ss/w0rd" + _rand(rng, 3, string.digits),
        )
        add("url-password", "redis://:{s}@cache:6379/0", _rand(rng, 16))
        add("bearer", "Authorization: Bearer {s}", _rand(rng, 32))
        add("curl", "curl -u admin:{s} https://api.example.com", _rand(rng, 14))
        add("assignment", 'config = {{"client_secret": "{s}"}}', _rand(rng, 32))
        add("assignment", "heroku_api_key: {s}", str(uuid.UUID(int=rng.getrandbits(128))))
        # Generic values must look generated (a digit, or 20+ characters): keep one in.
        add("assignment", "api_key: {s}", _rand(rng, 2) + "&" + _rand(rng, 10) + "9")
        add("assignment", "pgpassword: {s}", "Tr0ub4dor&" + _rand(rng, 3))
        add("fullwidth-assignment", "DB_PASSWORD＝{s}", _rand(rng, 9) + "&" + _rand(rng, 3))
        add("fullwidth-assignment", "api_key＝{s}，然后重启", _rand(rng, 13) + "7")
        add("cjk-key", "API密钥：{s}", _rand(rng, 16))
        add("cjk-key", "访问令牌：{s}", _rand(rng, 12) + "&" + _rand(rng, 3))
        add("cjk-key", "密钥是 {s}", _rand(rng, 20))
        add("prose-password", "新密码 {s}", "Tr0ub4dor&" + _rand(rng, 3))
        add("prose-password", "**Password:** {s}", "Pw" + _rand(rng, 8))
        add("markup-token", "**{s}**", _p("sk", "_live_") + _rand(rng, 28))
        add("markup-token", "_{s}_", _p("sk", "_live_") + _rand(rng, 28))
        add("markup-token", "~~{s}~~", _p("np", "m_") + _rand(rng, 36))
        add(
            "markup-token",
            "<code>{s}</code>",
            _p("h", "f_") + _rand(rng, 34, string.ascii_letters),
        )
        add("command-line", "mysql -u root -p{s} app", _rand(rng, 9) + "&" + _rand(rng, 3))
        add("command-line", "docker login -u bob -p {s} registry.example", _rand(rng, 14))
        add("command-line", "sshpass -p '{s}' ssh ops@db", _rand(rng, 10) + "&" + _rand(rng, 3))
        add("command-line", "curl -u admin:{s} https://x.example", "Tr0ub4dor&" + _rand(rng, 3))
        add("command-line", "pg_dump --password {s} app", _rand(rng, 12))
        # A token wrapped by a terminal: the second half must go too.
        ghp = _p("gh", "p_") + _rand(rng, 36)
        add("split-token", ghp[:20] + "\n{s} is my token", ghp[20:])
        live = _p("sk", "_live_") + _rand(rng, 28)
        add("split-token", "key " + live[:20] + "\n{s}\nthanks", live[20:])
        proj = _p("sk", "-proj-") + _rand(rng, 48, ALNUM + "_-")
        add("split-token", proj[:30] + "\r\n{s}", proj[30:])
    return cases


def benign_texts(seed: int = 2) -> list[str]:
    """Ordinary chat, code and logs that must come out of the scrubber unchanged."""
    rng = random.Random(seed)
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + rng.randbytes(3000)).decode()
    commit = _rand(rng, 40, HEX)
    texts = [
        f"Fixed in commit {commit} (short {commit[:7]}), see PR #4821.",
        f"request id {uuid.UUID(int=rng.getrandbits(128))} took 231 ms",
        f"![chart](data:image/png;base64,{png})",
        "2026-11-30T14:05:33.123456+01:00 INFO worker started pid=48211",
        "Upgrade numpy from 1.26.4 to 2.1.3 and python 3.11.7 -> 3.12.1; node v20.11.0.",
        "Open /home/alice/projects/hermes/src/hermes_memory_core/redact.py line 120",
        r"C:\Users\bob\AppData\Local\Temp\build-2231\out.log",
        "用户喜欢喝绿茶，住在东京，周末去爬山。密码学是她的研究方向。",
        "記憶システム：ユーザーはPythonが好きです。パスワードの再設定方法を聞かれた。",
        "def get_token(self) -> str:\n    return self._token\n\nmax_tokens = 1024\ntoken_count = 5",
        "api_key = os.environ['OPENAI_API_KEY']\npassword = getpass.getpass()",
        "token = ${GITHUB_TOKEN}\nsecret: ${{ secrets.DEPLOY_KEY }}",
        "The password is required and must have 12 characters; the password is incorrect.",
        "Reset your password at https://example.com/account/password?next=/home",
        "Use a Bearer token for the request; Bearer authentication is in RFC 6750.",
        "monkey = banana12345\nkeyboard: qwerty\nhotkey = ctrl+shift+p",
        f"sha256:{_rand(rng, 64, HEX)}  hermes_memory-0.1.0-py3-none-any.whl",
        "docker run -p 8080:80 -v /srv/data:/data nginx:1.27-alpine",
        "git log --oneline -5 && git rebase -i HEAD~3",
        "SELECT id, created_at FROM sessions WHERE user_id = 42 ORDER BY created_at DESC;",
        "Email me at alice@example.com or ping @bob on Slack; meeting at 10:30.",
        "Visit http://localhost:8000/docs and https://medium.com/@alice/post-123",
        "The access log shows auth failures from 10.0.0.12:51514 at 03:12.",
        "const key = `${prefix}-${id}`; map.set(key, value);",
        "pip install 'requests>=2.31,<3' && uv lock --upgrade-package pyyaml",
        "Timezone Europe/Berlin; cron '*/15 * * * *'; TTL 3600s; port 5432.",
        "I passed the exam! The pass rate was 82%. Bypass mode: off.",
        "Secret Santa gift ideas: a book, tea, a scarf.",
        "你的令牌已过期，请重新登录。会话 ID: 8f3c2a91。",
        "Key points: 1) caching, 2) retries, 3) timeouts. Token budget: 8k.",
        "PATH=/usr/local/bin:/usr/bin:/bin\nHOME=/home/alice\nLANG=en_US.UTF-8\nPWD=/home/alice",
        "curl -s https://api.github.com/repos/owner/repo | jq .stargazers_count",
        "Commit messages: 'fix: handle empty token list', 'feat: add key rotation docs'",
        "The function returns {'status': 'ok', 'count': 3, 'next_cursor': None}",
        "| name | version |\n|---|---|\n| hermes | 0.1.0 |\n| pluggy | 1.5.0 |",
        f"Build {rng.randrange(10**6)} finished in 4m12s; artifact id {rng.getrandbits(64):x}",
        # Identifiers named like keys, public keys, and the same words elsewhere.
        f"public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_rand(rng, 43)} alice@laptop",
        "How do I generate an ssh-ed25519 key? And an ed25519 key id?",
        "primary_key = user_id2 and the user_id2 column is indexed",
        "idempotency_key: order-2024-0042 (retry of order-2024-0042)",
        f"sort_key: created_at2; partition_key: tenant_{rng.randrange(100)}x; cache_key: v2",
        # Command lines whose -p / -u are not credentials.
        "docker run -p 8080:80 -u 1000:1000 app; ssh -p 2222 alice@host; mkdir -p build/out2",
        "psql -h db -p 5432 -U app; mysql -u root -p appdb2024; pytest -p no:cacheprovider",
        "docker login registry.example.com && docker run -p 8080:80 web2024x",
        "sort --key 2 data.tsv; gpg --recv-key ABCD1234EF; cli --password --verbose",
        # Markup, query strings, CJK and full-width punctuation.
        "**Note:** use _snake_case_ names like `token_count`; ~~old~~ <code>new</code>.",
        "https://example.com/search?q=tokens&page=2&sort=asc&lang=zh",
        "密钥是 AES-256 加密的；令牌：Bearer 方式；新密码 必须包含数字；访问令牌已过期。",
        "比例＝3：1，时间：10：30，会话 ID：8f3c2a91。",
        # A long word at a line end, then more text.
        "The deployment finished successfully\nafterwards the monitoring dashboards updated",
    ]
    return texts
