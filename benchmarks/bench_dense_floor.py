"""The similarity floor of semantic-only hits in small archives: absolute floors measured,
and the shipped reference background compared with them.

`hermes_memory_sessions.hybrid` drops a message that only the dense side found when its
cosine does not stand out from the background: with 20 or more dense candidates the
background is the median of the query's own candidates (the margin); with fewer there is
no background to speak of (a small archive on one topic). Two ways to stand in for it were
measured here, never on the demo archive:

* an **absolute floor** per query script: the 99th percentile of the *background* of dev
  questions — the cosine between a question and every message of its conversation that is
  *not* its evidence (LoCoMo dev conversations for Latin-script questions, the dev
  conversations of our Chinese set for CJK ones; "absent" questions contribute every
  message) — printed with the share of *related* pairs (question, evidence message) that
  clear it, and a table of other floors;
* the **shipped rule** (`hybrid.small_pool_floors`): the query's similarity to reference
  texts on unrelated topics in the message's script, at `REFERENCE_QUANTILE`, plus the
  margin; the same pairs, the share of background and related pairs that clear it.

Vectors are the archive's own (each message with its two context messages, int8), read
from archives built through the real `SessionStore` with the default embedder (cached in
``benchmarks/_data``). LoCoMo is read from ``../shared/benchdata/locomo-dev.json``.

    .venv/bin/python benchmarks/bench_dense_floor.py [--locomo N] [--quantile 99]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _zh_data
from bench_locomo import DEFAULT_DATA, Archive, _make_embedder, load

import hermes_memory_sessions.search._hybrid as hybrid
import hermes_memory_sessions.vectors._index as vectors_mod
from hermes_memory_sessions.search._cjk import has_cjk
from hermes_memory_sessions.storage._store import SessionStore
from hermes_memory_sessions.vectors._binary_codes import unit_rows


def _vectors(store: SessionStore) -> tuple[list[int], Any]:
    def read(conn: Any) -> list[Any]:
        return list(conn.execute("SELECT message_id, vec FROM hm_vectors ORDER BY message_id"))

    rows = store.read_with(read)
    return [int(r[0]) for r in rows], unit_rows([bytes(r[1]) for r in rows])


#: Per pair kind ("related", "background"): how many pairs clear the shipped small-archive
#: floor (`hybrid.small_pool_floors`: reference background of the message's script).
REFERENCE_KEPT: dict[str, list[int]] = {"related": [0, 0], "background": [0, 0]}


def _pairs(
    store: SessionStore, dia_of: dict[int, str], questions: list[tuple[str, frozenset[str]]]
) -> tuple[list[float], list[float]]:
    """(related, background) cosines of ``questions`` against the archive's messages; also
    counts in `REFERENCE_KEPT` the pairs that clear the shipped small-archive floor."""
    index = store.vector_index
    assert index is not None
    ids, matrix = _vectors(store)
    texts = dict(store.read_with(vectors_mod._documents, ids))
    scripts = ["cjk" if has_cjk(texts.get(mid, "")) else "latin" for mid in ids]
    related: list[float] = []
    background: list[float] = []
    for text, gold in questions:
        q = index.query_vector(text)
        if q is None:
            raise RuntimeError("query embedding failed: the calibration would be wrong")
        floors = hybrid.small_pool_floors(index, q)
        cos = matrix @ q
        for mid, c, script in zip(ids, cos.tolist(), scripts, strict=True):
            kind = "related" if dia_of.get(mid) in gold else "background"
            (related if kind == "related" else background).append(float(c))
            if floors is not None:
                REFERENCE_KEPT[kind][0] += int(c >= floors[script])
                REFERENCE_KEPT[kind][1] += 1
    return related, background


def _reference_line() -> str:
    kept = {k: 100 * v[0] / max(v[1], 1) for k, v in REFERENCE_KEPT.items()}
    for v in REFERENCE_KEPT.values():
        v[0] = v[1] = 0
    return (
        f"  shipped small-archive floor (reference background, p"
        f"{100 * hybrid.REFERENCE_QUANTILE:g} + margin, per message script):"
        f" background kept {kept['background']:.1f}%, related kept {kept['related']:.1f}%"
    )


def _report(name: str, related: list[float], background: list[float], quantile: float) -> float:
    bg = np.asarray(background)
    rel = np.asarray(related) if related else np.zeros(1)
    floor = float(np.percentile(bg, quantile))
    print(f"\n{name}: {len(related)} related pairs, {len(background)} background pairs")
    qs = (50, 90, 95, 99, 99.9)
    print("  background percentiles " + ", ".join(f"p{q:g} {np.percentile(bg, q):.3f}" for q in qs))
    print(
        "  related percentiles    "
        + ", ".join(f"p{q:g} {np.percentile(rel, q):.3f}" for q in (10, 25, 50, 75, 90))
    )
    print(f"  {'floor':>8}{'background kept':>18}{'related kept':>15}")
    for f in sorted({round(floor, 3), *np.round(np.arange(0.78, 0.90, 0.01), 2).tolist()}):
        mark = f"  <- p{quantile:g} of background" if abs(f - round(floor, 3)) < 1e-9 else ""
        print(
            f"  {f:8.3f}{100 * float((bg >= f).mean()):17.1f}%"
            f"{100 * float((rel >= f).mean()):14.1f}%{mark}"
        )
    return floor


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo JSON file")
    ap.add_argument("--locomo", type=int, default=5, help="LoCoMo conversations used")
    ap.add_argument("--quantile", type=float, default=99.0)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    embedder = _make_embedder("default", args.threads)
    assert embedder is not None
    floors: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="dense-floor-") as tmp:
        related: list[float] = []
        background: list[float] = []
        if args.data.is_file():
            for conv in load(args.data)[: args.locomo]:
                archive = Archive(conv, Path(tmp), embedder)
                try:
                    r, b = _pairs(
                        archive.store, archive.dia_of, [(q.text, q.gold) for q in conv.questions]
                    )
                finally:
                    archive.close()
                related += r
                background += b
            floors["latin"] = _report(
                f"LoCoMo dev ({args.locomo} conversations), English questions",
                related,
                background,
                args.quantile,
            )
            print(_reference_line())
        else:
            print(f"LoCoMo data not found: {args.data}; Latin floor not measured", file=sys.stderr)
        related, background = [], []
        for zconv in _zh_data.load():
            if zconv.split != "dev":
                continue  # held conversations are never used to choose settings
            store = SessionStore(
                Path(tmp) / f"{zconv.conv_id}.db", embedder=embedder, embed_in_background=False
            )
            dia_of: dict[int, str] = {}
            try:
                for s in zconv.sessions:
                    sid = f"{zconv.conv_id}-s{s.number}"
                    store.create_session(sid, source="cli", started_at=s.started_at)
                    ids = store.append_messages(
                        sid,
                        [
                            {"role": t.role, "content": t.text, "timestamp": s.started_at + i}
                            for i, t in enumerate(s.turns)
                        ],
                    )
                    dia_of.update(zip(ids, (t.dia_id for t in s.turns), strict=True))
                store.embed_pending(batch_size=256)
                r, b = _pairs(store, dia_of, [(q.text, q.gold) for q in zconv.questions])
            finally:
                store.close()
            related += r
            background += b
        floors["cjk"] = _report(
            "Chinese set, dev conversations, CJK questions", related, background, args.quantile
        )
        print(_reference_line())
    print(
        f"\nFloors (p{args.quantile:g} of background): "
        + ", ".join(f"{k} {v:.3f}" for k, v in floors.items())
    )
    if embedder.query_failures:
        print(f"WARNING: {embedder.query_failures} query embeddings failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
