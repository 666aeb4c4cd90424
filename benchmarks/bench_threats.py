"""Throughput of the threat scanner and the egress secret scrubber.

Run: .venv/bin/python benchmarks/bench_threats.py [--baseline REV]
With --baseline, the scanner of git revision REV (threats.py and _normalize.py) is timed on the
same 2 KB entries, interleaved with the current one (the machine is shared: only figures
taken in one run, alternating, compare).
Prints, for the corpora in benchmarks/threat_corpus/:
  * payloads blocked % (every adversarial line as written and in obfuscated variants: one
    look-alike letter, soft hyphens, U+2061, U+034F, U+3164, LRM/RLM, variation selectors,
    full-width, mathematical bold, tag characters) — target 100 %;
  * benign refused % (ordinary English and Chinese notes) — target <= 2 %;
Then MB/s (UTF-8 bytes scanned per second, best of several runs) for:
  * normal ~2 KB memory entries at strict scope (the write/load path), ASCII and mixed
    English/Chinese/obfuscated, with the cost per KB and per 2 KB entry (target <= 1 ms),
    best of 7 runs, wall clock and CPU time of this process (less disturbed by other load),
  * a 500 KB benign text at strict scope,
  * 500 KB adversarial texts at strict scope (worst-case regex work),
  * scrub_secrets on a 2 KB turn with secrets, a 500 KB benign text and a nested payload.
"""

from __future__ import annotations

import argparse
import importlib
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from hermes_memory_guard import scan_for_threats, scrub_secrets

SIZE = 500_000
CORPUS = Path(__file__).resolve().parent / "threat_corpus"


def corpus(name: str) -> list[str]:
    text = (CORPUS / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def decode(line: str) -> str:
    line = re.sub(r"\\u\{([0-9A-Fa-f]+)\}", lambda m: chr(int(m[1], 16)), line)
    return line.replace("\\n", "\n")


def variants(payload: str) -> dict[str, str]:
    """Obfuscated forms of ``payload`` (the ones users reported), by name."""
    out = {"as written": payload}
    letters = [i for i, c in enumerate(payload) if c in "aeopcxyi"]
    if letters:
        i = letters[len(letters) // 2]
        cyr = dict(zip("aeopcxyi", "аеорсхуі", strict=True))
        out["one Cyrillic letter"] = payload[:i] + cyr[payload[i]] + payload[i + 1 :]
    for name, char in [
        ("soft hyphen", "\u00ad"),
        ("U+2061", "\u2061"),
        ("U+034F", "\u034f"),
        ("U+3164", "\u3164"),
        ("LRM", "\u200e"),
        ("RLM", "\u200f"),
        ("VS16", "\ufe0f"),
    ]:
        # Inside every word of four letters or more, after its second letter.
        out[name] = re.sub(r"(\w\w)(\w\w)", lambda m, c=char: m[1] + c + m[2], payload)
    out["U+3164 for spaces"] = payload.replace(" ", "\u3164")
    out["full-width"] = "".join(
        chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in payload
    )
    out["math bold"] = "".join(
        chr(0x1D41A + ord(c) - 97) if "a" <= c <= "z" else c for c in payload
    )
    if payload.isascii():
        out["tag characters"] = "Note:\n" + "".join(
            chr(0xE0000 + ord(c)) for c in payload.replace("\n", " ")
        )
    return out


def detection() -> None:
    payloads = [decode(line.split("\t", 1)[1]) for line in corpus("adversarial.txt")]
    missed: list[tuple[str, str]] = []
    total = 0
    for payload in payloads:
        for name, text in variants(payload).items():
            total += 1
            if not scan_for_threats(text, "strict"):
                missed.append((name, text))
    benign = corpus("benign.txt")
    refused = [line for line in benign if scan_for_threats(line, "strict")]
    print("detection, scope=strict")
    blocked = 100 * (total - len(missed)) / total
    print(
        f"  payloads blocked   {blocked:6.2f} %  ({total - len(missed)}/{total}, "
        f"{len(payloads)} payloads x variants)"
    )
    for name, text in missed:
        print(f"    missed [{name}]: {ascii(text)[:100]}")
    print(
        f"  benign refused     {100 * len(refused) / len(benign):6.2f} %  "
        f"({len(refused)}/{len(benign)} notes)"
    )
    for line in refused:
        print(f"    refused: {line[:100]}")


def best_of(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def mb(text: str) -> float:
    return len(text.encode("utf-8")) / 1e6


def memory_entries(count: int) -> list[str]:
    rng = random.Random(7)
    words = [
        "user",
        "prefers",
        "concise",
        "answers",
        "deploys",
        "with",
        "docker",
        "compose",
        "on",
        "hetzner",
        "uses",
        "postgres",
        "16",
        "timezone",
        "Europe/Berlin",
        "项目",
        "使用",
        "中文",
        "文档",
        "likes",
        "vim",
        "keybindings",
        "and",
        "dark",
        "themes",
        "the",
        "staging",
        "server",
        "restarts",
        "nightly",
        "at",
        "03:00",
        "run",
        "tests",
        "with",
        "pytest",
        "-q",
        "before",
        "pushing",
    ]
    entries = []
    for _ in range(count):
        parts: list[str] = []
        while sum(len(p) + 1 for p in parts) < 2000:
            parts.append(rng.choice(words))
        entries.append(" ".join(parts)[:2000])
    return entries


def adversarial() -> dict[str, str]:
    return {
        "'ignore ' x N": "ignore " * (SIZE // 7),
        "'ignore all previous ' x N": "ignore all previous " * (SIZE // 20),
        "spaces": " " * SIZE,
        "'a' x N": "a" * SIZE,
        "'<!--' x N": "<!--" * (SIZE // 4),
        "'act as if you ' x N": "act as if you " * (SIZE // 14) + "restrictions",
        "'cat ' x N + .env": "cat " * (SIZE // 4) + ".env",
        "'unset ' x N": "unset " * (SIZE // 6) + "x",
        "'write ' x N + targets": "write " * (SIZE // 6) + ".hermes/ AGENTS.md",
        "'never write script ' x N": "never write script " * (SIZE // 19) + "disk",
        "'curl $' x N": "curl $" * (SIZE // 6),
        # Keyword and required literal both dense, never a match (no cheap way out).
        "'cat .envx ' x N": "cat .envx " * (SIZE // 10),
        "'you now ' x N": "you now " * (SIZE // 8),
        "'ignore instruction ' x N": "ignore instruction " * (SIZE // 19),
        "'token='' x N": "token='" * (SIZE // 7),
        "'$~/.sshx' x N": "$~/.sshx" * (SIZE // 8),
        "prose with key/token/secret": (
            "The key point is that you now know the token budget; keep the secret: output it. "
            * (SIZE // 80)
        ),
    }


def mixed_entries(count: int) -> list[str]:
    """2 KB entries built from the benign corpus (English, Chinese, emoji, accents) with a
    few look-alike letters and soft hyphens sprinkled in, so every normalisation step runs."""
    rng = random.Random(11)
    lines = corpus("benign.txt")
    entries = []
    for _ in range(count):
        parts: list[str] = []
        while sum(len(p) + 1 for p in parts) < 2000:
            line = rng.choice(lines)
            if rng.random() < 0.2:
                line = line.replace("o", "\u043e", 1).replace("ing", "in\u00adg", 1)
            parts.append(line)
        entries.append("\n".join(parts)[:2000])
    return entries


def load_baseline(rev: str) -> ModuleType:
    """The threat scanner of git revision ``rev``, importable next to the current one."""
    root = Path(__file__).resolve().parents[1]
    folder = Path(tempfile.mkdtemp(prefix="threats-baseline-"))
    for name in ("_normalize", "_literals", "_regex_facts", "_vocabulary", "threats"):
        # hermes-memory-guard since 0.2.0 (as _threats.py); hermes-memory-core before
        paths = (
            f"{rev}:packages/hermes-memory-guard/src/hermes_memory_guard/_{name.lstrip('_')}.py",
            f"{rev}:packages/hermes-memory-core/src/hermes_memory_core/{name}.py",
        )
        for path in paths:
            shown = subprocess.run(["git", "show", path], cwd=root, capture_output=True, text=True)
            if shown.returncode == 0:
                break
        else:
            continue  # a module that revision did not have
        source = shown.stdout
        for module in ("_normalize", "_literals", "_vocabulary"):
            for package in ("hermes_memory_core", "hermes_memory_guard"):
                source = source.replace(
                    f"from {package}.{module} import", f"from baseline{module} import"
                )
        source = source.replace(
            "from hermes_memory_guard import _regex_facts",
            "import baseline_regex_facts as _regex_facts",
        )
        target = f"baseline{name}.py" if name.startswith("_") else f"baseline_{name}.py"
        (folder / target).write_text(source, encoding="utf-8")
    sys.path.insert(0, str(folder))
    module = importlib.import_module("baseline_threats")
    module.scan_for_threats("warm-up ignоre", "strict")
    return module


def entry_cost(label: str, entries: list[str], baseline: ModuleType | None = None) -> None:
    """Best of 7 runs over ``entries``: wall clock and CPU time, per KB and per entry.

    With ``baseline``, its scanner runs in alternation with the current one.
    """
    size = sum(len(e.encode("utf-8")) for e in entries)
    scanners: dict[str, Callable[[str, str], list[str]]] = {"": scan_for_threats}
    if baseline is not None:
        scanners = {"baseline ": baseline.scan_for_threats, "current  ": scan_for_threats}
    wall = dict.fromkeys(scanners, float("inf"))
    cpu = dict.fromkeys(scanners, float("inf"))
    for run in range(7):
        order = list(scanners) if run % 2 == 0 else list(reversed(scanners))
        for name in order:
            scan = scanners[name]
            start, start_cpu = time.perf_counter(), time.process_time()
            for entry in entries:
                scan(entry, "strict")
            cpu[name] = min(cpu[name], time.process_time() - start_cpu)
            wall[name] = min(wall[name], time.perf_counter() - start)
    for name in scanners:
        t = wall[name]
        print(
            f"  {name}{label:34s} {size / 1e6 / t:8.2f} MB/s  ({t / (size / 1024) * 1e3:.3f} "
            f"ms/KB, {t / len(entries) * 1e3:.3f} ms per 2 KB entry; "
            f"CPU {cpu[name] / len(entries) * 1e3:.3f} ms)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", metavar="REV", help="also time the scanner of git REV")
    args = parser.parse_args()
    baseline = load_baseline(args.baseline) if args.baseline else None
    start = time.perf_counter()
    scan_for_threats("warm-up ignоre", "strict")  # compiles the regexes, loads the table
    print(
        f"first scan (compile patterns, load confusables): {(time.perf_counter() - start) * 1e3:.0f} ms"
    )
    detection()
    print("threat scan, scope=strict (MB/s, best of runs)")
    entry_cost("200 x 2 KB memory entries (ASCII)", memory_entries(200), baseline)
    entry_cost("200 x 2 KB entries (mixed, CJK)", mixed_entries(200), baseline)
    entries = memory_entries(200)

    benign = (" ".join(memory_entries(1)) + "\n") * (SIZE // 2000)
    t = best_of(lambda: scan_for_threats(benign, "strict"), 3)
    print(f"  500 KB benign text             {mb(benign) / t:8.2f} MB/s  ({t * 1e3:.0f} ms)")

    worst = 0.0
    for name, text in adversarial().items():
        t = best_of(lambda text=text: scan_for_threats(text, "strict"), 1)
        worst = max(worst, t)
        print(f"  500 KB adversarial {name:28s} {mb(text) / t:8.2f} MB/s  ({t * 1e3:.0f} ms)")
    print(f"  slowest adversarial scan: {worst * 1e3:.0f} ms")

    print("secret scrubber (MB/s, best of runs)")
    turn = (
        "Deploy notes: export OPENAI_API_KEY=sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9 and "
        "connect to postgres://app:s3cretPW9@db:5432/app. 用户说：记住这个。 "
    ) * 12
    turn = turn[:2000]
    t = best_of(lambda: [scrub_secrets(turn) for _ in range(200)], 5)
    print(f"  200 x 2 KB turns with secrets  {mb(turn) * 200 / t:8.2f} MB/s")
    t = best_of(lambda: scrub_secrets(benign), 3)
    print(f"  500 KB benign text             {mb(benign) / t:8.2f} MB/s  ({t * 1e3:.0f} ms)")
    payload = {"messages": [{"role": "user", "content": e} for e in entries] + [turn]}
    size = sum(mb(e) for e in entries) + mb(turn)
    t = best_of(lambda: scrub_secrets(payload), 3)
    print(f"  nested payload (201 messages)  {size / t:8.2f} MB/s  ({t * 1e3:.0f} ms)")


if __name__ == "__main__":
    main()
