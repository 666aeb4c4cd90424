"""Per-keystroke cost of ``hermes-memory sessions browse`` (the picker's data side).

Each keystroke in the filter re-runs the archive's discovery and groups the hits into
sessions (`BrowseModel.set_query`); moving the selection reads the preview
(`BrowseModel.preview`). This prints p50/p95 milliseconds of both, typed one character at a
time, on the mixed English + Chinese archive of ``bench_sessions.py`` (built once and kept
in ``benchmarks/_data/``), plus the time to load the newest 1,000 sessions at start.

Usage::

    python benchmarks/bench_browse.py --messages 100000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sessions import DATA, build

from hermes_memory_cli._commands._browse_data import PICKER_ROWS, BrowseModel
from hermes_memory_sessions import SessionStore

#: What a person types, one character at a time.
TYPED = ["kubernetes ingress", "postgres vacuum", "sourdough", "部署", "数据库", "zzzz"]


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[max(0, min(len(values) - 1, round(q * (len(values) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=100_000)
    args = ap.parse_args()
    DATA.mkdir(exist_ok=True)
    path = DATA / f"sessions_{args.messages}.db"
    if not path.exists():
        print(f"building {path.name} ...", file=sys.stderr)
        build(path, args.messages)
    store = SessionStore(path)
    stats = store.stats()
    print(f"== sessions browse: {stats['sessions']:,} sessions, {stats['messages']:,} messages ==")
    t = time.perf_counter()
    model = BrowseModel(store, limit=PICKER_ROWS)
    print(
        f"start (newest {len(model.sessions):,} sessions): {(time.perf_counter() - t) * 1e3:.1f} ms"
    )
    for text in TYPED:
        keystrokes: list[float] = []
        previews: list[float] = []
        for i in range(1, len(text) + 1):
            t = time.perf_counter()
            model.set_query(text[:i])
            keystrokes.append((time.perf_counter() - t) * 1e3)
            for row in model.rows[:3]:
                t = time.perf_counter()
                model.preview(row)
                previews.append((time.perf_counter() - t) * 1e3)
        shown = f"p50 {_pct(keystrokes, 0.5):6.1f}  p95 {_pct(keystrokes, 0.95):6.1f}  max {max(keystrokes):6.1f}"
        worst = text[: keystrokes.index(max(keystrokes)) + 1]
        shown += f" ({worst!r})"
        pv = f"preview p50 {_pct(previews, 0.5):5.1f} ms" if previews else "no preview"
        print(f"typing {text!r:22} keystroke ms {shown}   {len(model.rows):>4} sessions   {pv}")
    store.close()


if __name__ == "__main__":
    main()
