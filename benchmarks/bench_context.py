"""Cost of context-file discovery in a large monorepo (hermes-memory-context).

Builds a synthetic git repository 30 directories deep holding 10,000 files (AGENTS.md in every
fifth directory, Cursor rules at the root), then times:

* ``build_context_section`` from the deepest directory (the start-of-session cost), with the
  context files present and with none at all (every kind probed in every directory);
* the same from a directory holding 10,000 files itself (discovery must not list it);
* ``ContextTracker.discover_for_path`` for 1,000 distinct paths (first touch of each
  directory) and for repeat touches;
* loading one 1 MiB context file (read, decode, threat scan, truncation).

Run: ``uv run --all-packages python benchmarks/bench_context.py``. Prints milliseconds
(median of several runs); no assertion, figures only.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hermes_memory_context import ContextTracker, build_context_section, load_context_file

DEPTH = 30
TOTAL_FILES = 10_000
RUNS = 15


def median_ms(fn: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def build_tree(root: Path, *, with_context: bool) -> list[Path]:
    (root / ".git").mkdir(parents=True)
    dirs = []
    current = root
    for level in range(DEPTH):
        current = current / f"level{level:02d}"
        current.mkdir()
        dirs.append(current)
    per_dir = TOTAL_FILES // DEPTH
    for level, directory in enumerate(dirs):
        for n in range(per_dir):
            (directory / f"module_{n:04d}.py").write_text("x = 1\n", encoding="utf-8")
        if with_context and level % 5 == 0:
            (directory / "AGENTS.md").write_text(
                f"Level {level}: run nox before pushing; 日本語のコメント可。\n" * 20,
                encoding="utf-8",
            )
    if with_context:
        (root / ".cursor" / "rules").mkdir(parents=True)
        (root / ".cursor" / "rules" / "style.mdc").write_text("Use tabs.\n", encoding="utf-8")
    return dirs


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        (home / "SOUL.md").write_text("You are calm and precise.\n", encoding="utf-8")

        t0 = time.perf_counter()
        dirs = build_tree(base / "with", with_context=True)
        bare = build_tree(base / "bare", with_context=False)
        print(
            f"tree: {DEPTH} levels, {TOTAL_FILES:,} files per tree, built in "
            f"{(time.perf_counter() - t0):.1f}s"
        )
        section = build_context_section(dirs[-1], home=home)
        print(f"section from the deepest directory: {len(section):,} chars")
        print(
            f"build_context_section, deepest dir, 6 AGENTS.md on the path: "
            f"{median_ms(lambda: build_context_section(dirs[-1], home=home)):.2f} ms"
        )
        print(
            f"build_context_section, deepest dir, no context files (all kinds probed): "
            f"{median_ms(lambda: build_context_section(bare[-1], home=home)):.2f} ms"
        )

        wide = base / "wide"
        (wide / ".git").mkdir(parents=True)
        for n in range(TOTAL_FILES):
            (wide / f"f{n:05d}.txt").write_text("", encoding="utf-8")
        print(
            f"build_context_section, one directory holding {TOTAL_FILES:,} files: "
            f"{median_ms(lambda: build_context_section(wide, home=home)):.2f} ms"
        )

        paths = [d / f"module_{n:04d}.py" for d in dirs for n in range(0, 330, 10)][:1000]

        def first_touches() -> None:
            tracker = ContextTracker(base / "with")
            for path in paths:
                tracker.discover_for_path(path)

        total = median_ms(first_touches, runs=5)
        print(
            f"ContextTracker: {len(paths):,} paths in {DEPTH} new directories: {total:.1f} ms "
            f"({total / len(paths) * 1000:.1f} µs per call)"
        )
        tracker = ContextTracker(base / "with")
        for path in paths:
            tracker.discover_for_path(path)

        def repeats() -> None:
            for path in paths:
                tracker.discover_for_path(path)

        total = median_ms(repeats, runs=5)
        print(
            f"ContextTracker: {len(paths):,} repeat touches: {total:.1f} ms "
            f"({total / len(paths) * 1000:.1f} µs per call)"
        )

        big = base / "with" / "BIG.md"
        line = "Run the formatter before committing. 提交前先运行格式化工具。\n"
        big.write_text(line * (1_000_000 // len(line.encode())), encoding="utf-8")
        size = big.stat().st_size
        ms = median_ms(lambda: load_context_file(big, root=base, label="BIG.md"), runs=5)
        print(f"load_context_file, {size / 1024:,.0f} KiB file (scan + truncate): {ms:.1f} ms")


if __name__ == "__main__":
    main()
