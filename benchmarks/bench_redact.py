"""Coverage, false positives and cost of the egress secret scrubber (scrub_secrets).

Run: uv run --all-packages python benchmarks/bench_redact.py
Prints:
  * secrets masked %   (synthetic fake secrets, tests/guard/redact_corpus.py, by category)
  * benign altered %   (ordinary chat, code, logs, ids, hashes, data: images, CJK)
  * cost per KB        (benign turns, turns with secrets, a 500 KB text)
  * first-scrub cost   (parsing the gitleaks rule file; compiling regexes on first use)
  * slowest adversarial inputs (shapes aimed at the rules' backtracking)
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "guard"))

from redact_corpus import benign_texts, secret_cases

from hermes_memory_guard import _secret_rules, scrub_secrets


def best_of(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def kb(text: str) -> float:
    return len(text.encode("utf-8")) / 1024


def first_scrub_cost() -> tuple[float, float]:
    """(load + first scrub, compile every rule) in a fresh interpreter, seconds."""
    code = (
        "import time; import hermes_memory_core as h;"
        "t=time.perf_counter(); h.scrub_secrets('hello world, key=abc'); a=time.perf_counter()-t;"
        "from hermes_memory_guard import _secret_rules as s; t=time.perf_counter();"
        "[r.compile() for r in s.load_rules().rules]; print(a, time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, compile_all = (float(x) for x in out.stdout.split())
    return first, compile_all


def main() -> None:
    rules = _secret_rules.load_rules()
    print(
        f"rules: {rules.total} in gitleaks v8.30.0, {len(rules.rules)} applied, "
        f"{len(rules.excluded)} excluded (path-only)"
    )

    cases = secret_cases(1) + secret_cases(11) + secret_cases(21)
    missed = Counter(c.category for c in cases if c.secret in scrub_secrets(c.text))
    total = Counter(c.category for c in cases)
    masked = len(cases) - sum(missed.values())
    print(f"secrets masked: {masked}/{len(cases)} = {100 * masked / len(cases):.1f}%")
    for category, count in sorted(missed.items()):
        print(f"  missed {category}: {count}/{total[category]}")

    benign = benign_texts(2) + benign_texts(12) + benign_texts(22)
    altered = [t for t in benign if scrub_secrets(t) != t]
    print(f"benign altered: {len(altered)}/{len(benign)} = {100 * len(altered) / len(benign):.1f}%")
    for text in altered[:5]:
        print(f"  altered: {text[:70]!r}")

    turn = "\n".join(t for t in benign_texts(2) if "base64" not in t)[:2000]
    secret_turn = "\n".join(c.text for c in secret_cases(1)[:12])[:2000]
    t = best_of(lambda: [scrub_secrets(turn) for _ in range(200)], 5) / 200
    print(
        f"cost, benign 2 KB turn:        {t * 1e6 / kb(turn):7.1f} us/KB  ({t * 1e3:.3f} ms/turn)"
    )
    t = best_of(lambda: [scrub_secrets(secret_turn) for _ in range(200)], 5) / 200
    print(
        f"cost, 2 KB turn with secrets:  {t * 1e6 / kb(secret_turn):7.1f} us/KB  "
        f"({t * 1e3:.3f} ms/turn)"
    )
    big = ("\n".join(benign_texts(3)) + "\n") * 60
    big = big[:500_000]
    t = best_of(lambda: scrub_secrets(big), 3)
    print(f"cost, 500 KB benign text:      {t * 1e6 / kb(big):7.1f} us/KB  ({t * 1e3:.0f} ms)")

    first, compile_all = first_scrub_cost()
    print(f"first scrub in a fresh process (rule file parsed): {first * 1e3:.1f} ms")
    print(
        f"compiling all {len(rules.rules)} rules (never needed at once): {compile_all * 1e3:.1f} ms"
    )

    adversarial = {
        "curl x 100k": "curl " * 100_000,
        "curl -H ' x 50k": "curl -H '" * 50_000,
        "api_key x 70k": "api_key" * 70_000,
        "key= x 125k": "key=" * 125_000,
        "password is x 40k": "password is " * 40_000,
        "密码是 x 150k": "密码是" * 150_000,
        "postgres://u: + @ x 500k": "postgres://u:" + "@" * 500_000,
        "BEGIN PRIVATE KEY + A x 500k": "-----BEGIN PRIVATE KEY-----" + "A" * 500_000,
        "eyJ + a x 500k": "eyJ" + "a" * 500_000,
        "sk_live_ x 60k": "sk_live_" * 60_000,
        "hooks.slack.com/ x 30k": "hooks.slack.com/" * 30_000,
        "login x 100k": "login " * 100_000,
        "--password x 40k": "--password " * 40_000,
        "api_key=a&a& x 250k": "api_key=" + "a&" * 250_000,
        "sk- + line break x 25k": "sk-abcdefgh1234\nAb1 " * 25_000,
    }
    print("adversarial ~500 KB inputs (one run each):")
    for name, text in adversarial.items():
        t = best_of(lambda text=text: scrub_secrets(text), 1)
        print(f"  {name:32s} {t * 1e3:8.0f} ms")


if __name__ == "__main__":
    main()
