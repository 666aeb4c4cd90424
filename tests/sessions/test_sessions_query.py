"""The query sanitiser: documented rewrites, and no input ever reaches FTS5 as bad syntax."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from hermes_memory_sessions.search._lexical import build_expression
from hermes_memory_sessions.search._query import MAX_QUERY_CHARS, parse_query
from hermes_memory_sessions.storage._store import SessionStore


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("docker deploy", '"docker" "deploy"'),
        ("chat-send", '"chat-send"'),
        ("chat-send*", '"chat-send"*'),
        ("scripts/deploy.sh", '"scripts/deploy.sh"'),
        ("user@example.com", '"user@example.com"'),
        ("61.2%", '"61.2%"'),
        ("P2.2 my-app.config.ts", '"P2.2" "my-app.config.ts"'),
        ('"exact phrase" other', '"exact phrase" "other"'),
        ('unbalanced "quote here', '"unbalanced" "quote" "here"'),
        ("OR docker AND", '"docker"'),
        ("NOT docker", '"docker"'),
        ("a OR OR b NOT", '"a" OR "b"'),
        ("**deploy* ***", '"deploy"*'),
        ("(docker) {x}: ^y | z", '"docker" "x" "y" "z"'),
        ("!!! ??? ---", ""),
        ("", ""),
        ("docker NOT swarm", '"docker" NOT "swarm"'),
        ("部署 OR 上线", '"部署" OR "上线"'),
    ],
)
def test_rewrites(raw: str, expected: str) -> None:
    assert parse_query(raw).fts() == expected


def test_non_string_and_cap() -> None:
    assert parse_query(None).fts() == ""
    assert parse_query(123).fts() == ""
    long = "word " * 2000
    assert len(parse_query(long).terms) == -(-MAX_QUERY_CHARS // 5)  # last one cut short


def _nasty_corpus(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    atoms = [
        '"',
        "'",
        "*",
        "**",
        "(",
        ")",
        "{",
        "}",
        ":",
        "^",
        "-",
        "+",
        "NOT",
        "OR",
        "AND",
        "NEAR",
        "NEAR(",
        "\\",
        "/",
        "@",
        "%",
        ".",
        "_",
        "部署",
        "部",
        "ｶﾀｶﾅ",
        "한",
        "\x00",
        "\u200b",
        "é",
        "\U0001f600",
        "col:",
        "content:",
        "rank",
        "x",
        "docker",
        "  ",
        "\n",
        ";",
        "$",
        "#",
        "~",
        "[",
        "]",
        "<",
        ">",
        ",",
        "!",
        "?",
        "=",
        "&",
        "|",
        "0",
        "1e9",
        "\ud800",
        "𠀀",
        "'; DROP TABLE messages; --",
        '""',
        '"*"',
        '*"a"*',
    ]
    out = []
    for _ in range(n):
        k = rng.randint(1, 12)
        out.append(
            "".join(rng.choice(atoms) + (" " if rng.random() < 0.5 else "") for _ in range(k))
        )
    out += [
        '"' * 50_000 + " word" * 10_000,
        "NOT",
        "OR",
        "*",
        '"',
        "()",
        "NEAR(a b)",
        "a NOT NOT b",
        "\x00\x00",
        "部" * 3000,
    ]
    return out


def test_fuzz_never_raises_or_leaks_fts_errors(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions.db")
    store.create_session("s")
    store.append_message("s", "user", "docker 部署 user@example.com NEAR rank x 1e9")
    conn = store.conn
    for q in _nasty_corpus(seed=4242, n=1500):
        parsed = parse_query(q)
        for cjk in (False, True):
            for any_term in (False, True):
                expr = build_expression(parsed, cjk=cjk, any_term=any_term)
                if expr:
                    table = "hm_fts_cjk" if cjk else "hm_fts_words"
                    try:
                        conn.execute(
                            f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (expr,)
                        ).fetchall()
                    except sqlite3.OperationalError as exc:  # pragma: no cover - the failure
                        pytest.fail(f"query {q!r} -> {expr!r} raised {exc}")
        assert isinstance(store.search_messages(q), list)
    store.close()
