"""Throughput of the threat scanner and the egress secret scrubber.

Run: .venv/bin/python benchmarks/bench_threats.py
Prints MB/s (UTF-8 bytes scanned per second, best of several runs) for:
  * normal ~2 KB memory entries at strict scope (the write/load path),
  * a 500 KB benign text at strict scope,
  * 500 KB adversarial texts at strict scope (worst-case regex work),
  * scrub_secrets on a 2 KB turn with secrets, a 500 KB benign text and a nested payload.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from hermes_memory_core.redact import scrub_secrets
from hermes_memory_core.threats import scan_for_threats

SIZE = 500_000


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


def main() -> None:
    print("threat scan, scope=strict (MB/s, best of runs)")
    entries = memory_entries(200)
    total = sum(mb(e) for e in entries)
    t = best_of(lambda: [scan_for_threats(e, "strict") for e in entries], 5)
    print(f"  200 x 2 KB memory entries      {total / t:8.2f} MB/s  ({t / 200 * 1e3:.3f} ms/entry)")

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
