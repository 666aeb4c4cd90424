"""CJK questions found by the user-level audit of issue 22, on every backend.

* Particles typed after digits or Latin words (``返回502了吗``) form a CJK run of their own;
  they are grammar there too and must not be required by the implicit AND.
* Katakana with voiced marks (``データベース``): the PostgreSQL index folds its tokens
  (diacritic removal drops the marks), so the query's tokens must be folded alike.
"""

from __future__ import annotations

MESSAGES = [
    ("proxy", "昨天晚上 nginx 反向代理突然返回 502，日志里全是 upstream timed out。"),
    ("plan", "来週の会議で新しいデータベース移行計画を説明します。"),
    ("garden", "花园里的番茄每天要浇两次水，好的我记住了吗？"),
]


def _seed(archive) -> dict[str, int]:
    ids = {}
    for n, (sid, text) in enumerate(MESSAGES):
        archive.create_session(sid, source="cli", started_at=1_760_000_000 + n)
        ids[sid] = archive.append_message(sid, "user", text, timestamp=1_760_000_000 + n)
    return ids


def _ids(archive, query: str) -> list[int]:
    hits = archive.find_hits(query)
    return [] if hits is None else [int(r["id"]) for r in hits.rows]


def test_particles_after_digits_are_not_required(archive):
    ids = _seed(archive)
    assert _ids(archive, "反向代理返回502了吗") == [ids["proxy"]]
    assert _ids(archive, "nginx返回502了没有") == [ids["proxy"]]
    assert _ids(archive, "反向代理返回502 了吗") == [ids["proxy"]]  # a separate token too
    # Particles alone are still searched for as typed (nothing else to look for).
    assert _ids(archive, "了吗") == [ids["garden"]]
    # Operators keep the query as written.
    assert _ids(archive, "番茄 NOT 了") == []


def test_katakana_with_voiced_marks_is_found(archive):
    ids = _seed(archive)
    assert _ids(archive, "データベース") == [ids["plan"]]
    assert _ids(archive, "データベース移行計画") == [ids["plan"]]
    assert _ids(archive, "ベース") == [ids["plan"]]
