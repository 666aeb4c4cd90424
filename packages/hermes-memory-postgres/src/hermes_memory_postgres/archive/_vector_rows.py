"""The SQL of the PostgreSQL vector index (``hm_vectors``, schemas 6-7), one owner at a time.

Same layout and rules as the SQLite archive's (`hermes_memory_sessions.vectors`): one int8
vector per embeddable message (user/assistant with text) and model (schema 7: the fast and
the quality tier) in the blob format of ``hermes_memory_vectors.quantize_int8``, each
embedded with the two conversational messages before it in its session; ``model`` is the
embedder's name plus the context window.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.rows import tuple_row

import hermes_memory_sessions.vectors as vectors_mod  # CONTEXT_BEFORE read per call

__all__ = [
    "EMBEDDABLE",
    "code_rows",
    "coverage",
    "documents",
    "embedded_among",
    "newest_pending",
    "pending_ids",
    "store_vectors",
    "vector_rows",
]

#: The messages that get a vector (over ``hm_messages m``): `EMBEDDABLE` of SQLite.
EMBEDDABLE = "m.role IN ('user', 'assistant') AND m.content IS NOT NULL AND btrim(m.content) <> ''"


def documents(
    conn: psycopg.Connection[Any], owner: str, ids: Sequence[int]
) -> list[tuple[int, str]]:
    """``(id, text)`` of the embeddable messages among ``ids``, with their context."""
    if not ids:
        return []
    cur = conn.cursor(row_factory=tuple_row)
    rows = cur.execute(
        f"SELECT m.id, m.content, ARRAY(SELECT p.content FROM hm_messages p"  # noqa: S608
        f" WHERE p.owner = m.owner AND p.session_id = m.session_id AND p.id < m.id"
        f" AND {EMBEDDABLE.replace('m.', 'p.')} ORDER BY p.id DESC LIMIT %s)"
        f" FROM hm_messages m WHERE m.owner = %s AND m.id = ANY(%s) AND {EMBEDDABLE}"
        " ORDER BY m.id",
        (vectors_mod.CONTEXT_BEFORE, owner, [int(i) for i in ids]),
    ).fetchall()
    return [
        (
            int(mid),
            vectors_mod.document_text(str(content), [str(b) for b in reversed(before or [])]),
        )
        for mid, content, before in rows
    ]


def embedded_among(
    conn: psycopg.Connection[Any],
    owner: str,
    model: str,
    ids: Sequence[int],
    above: str | None = None,
) -> set[int]:
    """The ids among ``ids`` that already have a vector of ``model`` (or of ``above``, the
    better tier's model)."""
    cur = conn.cursor(row_factory=tuple_row)
    rows = cur.execute(
        "SELECT message_id FROM hm_vectors WHERE owner = %s AND model IN (%s, %s)"
        " AND message_id = ANY(%s)",
        (owner, model, above or model, [int(i) for i in ids]),
    ).fetchall()
    return {int(r[0]) for r in rows}


def store_vectors(
    conn: psycopg.Connection[Any],
    owner: str,
    model: str,
    pairs: Sequence[tuple[int, bytes]],
    above: str | None = None,
) -> None:
    """Store (replace) the vectors of messages that still exist: other models' vectors of
    them go (a model change; the fast tier's when the quality one lands), never those of
    ``above`` (the better tier), and a message holding one gets none of ``model``."""
    if not pairs:
        return
    ids = [p[0] for p in pairs]
    conn.execute(
        "DELETE FROM hm_vectors WHERE owner = %s AND message_id = ANY(%s) AND model <> %s",
        (owner, ids, above or ""),
    )
    conn.execute(
        "INSERT INTO hm_vectors (owner, message_id, model, vec)"
        " SELECT %s, u.id, %s, u.vec FROM unnest(%s::bigint[], %s::bytea[]) AS u(id, vec)"
        " WHERE EXISTS (SELECT 1 FROM hm_messages m WHERE m.owner = %s AND m.id = u.id)"
        " AND NOT EXISTS (SELECT 1 FROM hm_vectors a WHERE a.owner = %s"
        " AND a.message_id = u.id AND a.model = %s)",
        (owner, model, ids, [p[1] for p in pairs], owner, owner, above or ""),
    )


def pending_ids(
    conn: psycopg.Connection[Any],
    owner: str,
    model: str,
    after: int,
    limit: int,
    before: int | None = None,
    above: str | None = None,
) -> list[int]:
    """Embeddable messages without a vector of ``model`` (nor of ``above``): ascending ids
    > ``after``, or with ``before``, descending ids < ``before`` (newest first, as the
    SQLite archive)."""
    where, order, bound = (
        ("m.id < %s", "DESC", before) if before is not None else ("m.id > %s", "", after)
    )
    cur = conn.cursor(row_factory=tuple_row)
    rows = cur.execute(
        f"SELECT m.id FROM hm_messages m LEFT JOIN hm_vectors v ON v.owner = m.owner"  # noqa: S608
        f" AND v.message_id = m.id AND v.model IN (%s, %s) WHERE m.owner = %s AND {where}"
        f" AND v.message_id IS NULL AND {EMBEDDABLE} ORDER BY m.id {order} LIMIT %s",
        (model, above or model, owner, int(bound), int(limit)),
    ).fetchall()
    return [int(r[0]) for r in rows]


def newest_pending(
    conn: psycopg.Connection[Any], owner: str, model: str, newest: int, above: str | None = None
) -> list[int]:
    """Pending messages among the ``newest`` messages of ``owner`` (ascending)."""
    cur = conn.cursor(row_factory=tuple_row)
    rows = cur.execute(
        f"SELECT m.id FROM (SELECT * FROM hm_messages WHERE owner = %s"  # noqa: S608
        f" ORDER BY id DESC LIMIT %s) m LEFT JOIN hm_vectors v ON v.owner = m.owner"
        f" AND v.message_id = m.id AND v.model IN (%s, %s) WHERE v.message_id IS NULL"
        f" AND {EMBEDDABLE} ORDER BY m.id",
        (owner, int(newest), model, above or model),
    ).fetchall()
    return [int(r[0]) for r in rows]


def coverage(conn: psycopg.Connection[Any], owner: str, model: str | None) -> dict[str, Any]:
    """``{"model", "embedded", "total", "other_models", "by_model"}`` of one owner."""
    cur = conn.cursor(row_factory=tuple_row)
    total_row = cur.execute(
        f"SELECT COUNT(*) FROM hm_messages m WHERE m.owner = %s AND {EMBEDDABLE}",  # noqa: S608
        (owner,),
    ).fetchone()
    total = int(total_row[0]) if total_row else 0
    by_model = {
        str(r[0]): int(r[1])
        for r in cur.execute(
            "SELECT model, COUNT(*) FROM hm_vectors WHERE owner = %s GROUP BY model", (owner,)
        ).fetchall()
    }
    if model is None:
        embedded, other = sum(by_model.values()), 0
    else:
        embedded = by_model.get(model, 0)
        other = sum(n for name, n in by_model.items() if name != model)
    return {
        "model": model,
        "embedded": embedded,
        "total": total,
        "other_models": other,
        "by_model": by_model,
    }


def code_rows(
    conn: psycopg.Connection[Any], owner: str, after_seq: int, top: int, limit: int
) -> list[tuple[int, int, bytes, str]]:
    """``(seq, message_id, vec, model)`` of vectors stored after ``after_seq``, by seq
    (binary results: ``bytea`` as bytes, not hex text to decode)."""
    cur = conn.cursor(row_factory=tuple_row, binary=True)
    rows = cur.execute(
        "SELECT seq, message_id, vec, model FROM hm_vectors WHERE owner = %s AND seq > %s"
        " AND seq <= %s ORDER BY seq LIMIT %s",
        (owner, int(after_seq), int(top), int(limit)),
    ).fetchall()
    return [(int(r[0]), int(r[1]), bytes(r[2]), str(r[3])) for r in rows]


def vector_rows(
    conn: psycopg.Connection[Any], owner: str, model: str, ids: Sequence[int]
) -> list[tuple[int, bytes]]:
    """``(message_id, vec)`` of ``model``'s vectors of ``ids``. Binary results: the
    thousand rescoring candidates' vectors arrive as 0.4 MB of bytes instead of 0.8 MB of
    hex text that the server encodes and the client decodes (2-3 ms at 1M messages)."""
    cur = conn.cursor(row_factory=tuple_row, binary=True)
    rows = cur.execute(
        "SELECT message_id, vec FROM hm_vectors WHERE owner = %s AND model = %s"
        " AND message_id = ANY(%s)",
        (owner, model, [int(i) for i in ids]),
    ).fetchall()
    return [(int(r[0]), bytes(r[1])) for r in rows]
