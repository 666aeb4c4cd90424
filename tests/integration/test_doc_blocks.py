"""Every runnable code block of docs/ and the READMEs runs as written.

The convention (CONTRIBUTING.md): a fenced block preceded by an HTML comment starting with
``<!-- not-run`` (``<!-- not-run: needs a Mem0 API key -->``) is not run; everything else is:

* ``python`` blocks of one page run in order in one fresh interpreter (they may build on each
  other), in an empty directory with an empty ``HERMES_HOME``;
* ``bash`` / ``sh`` blocks run in bash with ``set -euo pipefail``; ``console`` blocks run each
  ``$ command`` line and expect success, or failure when the transcript shows
  ``hermes-memory: error:`` for it;
* ``yaml``, ``json`` and ``toml`` blocks must parse.

Commands that name the demo's home (``/tmp/hermes-memory-demo-dxp4srwu``) run against a home
the demo really made, and their output must match the transcript after the run's own session
stamp, path and clock are put back to the ones the docs show: the transcripts in the docs are
produced by the demo and stay so.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PAGES = sorted(
    [*ROOT.glob("docs/**/*.md"), *ROOT.glob("README*.md")],
    key=lambda p: str(p.relative_to(ROOT)),
)
DOC_HOME = "/tmp/hermes-memory-demo-dxp4srwu"
DOC_STAMP = "20261130_054739"
_FENCE = re.compile(
    r"^(?P<fence>`{3,})(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)
_NOT_RUN = re.compile(r"<!--\s*not-run\b[^>]*-->\s*$")


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    body: str
    run: bool

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    out = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        out.append(
            Block(
                page,
                text.count("\n", 0, match.start()) + 1,
                match.group("lang").lower(),
                match.group("body"),
                not _NOT_RUN.search(before),
            )
        )
    return out


ALL = [b for page in PAGES for b in blocks(page)]


def _ids(block: Block) -> str:
    return block.where


# ----------------------------------------------------------------------------- the demo
@dataclass
class Demo:
    home: str
    stamp: str
    output: str


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    home = tmp_path_factory.mktemp("demo-env")
    proc = subprocess.run(
        [str(BIN / "hermes-memory"), "demo", "--keep"],
        capture_output=True,
        text=True,
        env=_env(home),
        timeout=600,
        check=True,
    )
    kept = re.search(r"^The demo home is kept at (\S+)\. ", proc.stdout, re.M)
    stamp = re.search(r"\((\d{8}_\d{6})_demo1\)", proc.stdout)
    assert kept and stamp, proc.stdout
    yield Demo(kept.group(1), stamp.group(1), proc.stdout)
    subprocess.run(["rm", "-rf", kept.group(1)], check=False)


def normalize(text: str, demo: Demo) -> str:
    """The run's stamp, home, clock and duration replaced by the ones the docs show."""
    text = text.replace(demo.home, DOC_HOME).replace(demo.stamp, DOC_STAMP)
    text = re.sub(r"\b\d{4}-\d\d-\d\d \d\d:\d\d\b", "2026-11-30 05:47", text)
    text = re.sub(
        r"\b[A-Z][a-z]+ \d\d, \d{4} at \d\d:\d\d [AP]M", "November 30, 2026 at 05:47 AM", text
    )
    text = re.sub(r"Demo finished in [\d.]+s\.", "Demo finished in 1.0s.", text)
    return "\n".join(line.rstrip() for line in text.splitlines())


def _env(tmp: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HERMES_", "MEM0_", "HONCHO_")) and k not in ("VISUAL", "EDITOR")
    }
    env.update(
        HOME=str(tmp),
        PATH=f"{BIN}:{env.get('PATH', '')}",
        PYTHONIOENCODING="utf-8",
        COLUMNS="200",
        HERMES_MEMORY_NO_PROGRESS="1",
        LANG="C.UTF-8",
    )
    env.pop("LANGUAGE", None)
    env.pop("LC_ALL", None)
    return env


# ----------------------------------------------------------------------------- data blocks
@pytest.mark.parametrize(
    "block", [b for b in ALL if b.run and b.lang in ("yaml", "json", "toml")], ids=_ids
)
def test_data_blocks_parse(block: Block) -> None:
    if block.lang == "yaml":
        yaml.safe_load(block.body)
    elif block.lang == "json":
        try:
            json.loads(block.body)
        except ValueError:  # JSON Lines: one document per line
            for line in block.body.splitlines():
                if line.strip():
                    json.loads(line)
    else:
        tomllib.loads(block.body)


# ----------------------------------------------------------------------------- python
PY_PAGES = sorted({b.page for b in ALL if b.run and b.lang == "python"})


@pytest.mark.parametrize("page", PY_PAGES, ids=[str(p.relative_to(ROOT)) for p in PY_PAGES])
def test_python_blocks_run(page: Path, tmp_path: Path) -> None:
    code = "\n\n".join(b.body for b in blocks(page) if b.run and b.lang == "python")
    # each block may open with `from __future__ import …`: one file needs them first
    future = sorted(set(re.findall(r"^from __future__ import .*$", code, re.M)))
    code = "\n".join(future) + "\n" + re.sub(r"^from __future__ import .*$", "", code, flags=re.M)
    script = tmp_path / "page.py"
    script.write_text(code, encoding="utf-8")
    env = _env(tmp_path)
    env["HERMES_HOME"] = str(tmp_path / ".hermes")
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, f"{page.relative_to(ROOT)}:\n{proc.stderr[-3000:]}"


# ----------------------------------------------------------------------------- shell
def console_steps(body: str) -> list[tuple[str, list[str]]]:
    """``$ command`` lines with the output lines that follow each."""
    steps: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return steps


def _strip_comment(command: str) -> str:
    return re.sub(r"\s+#\s.*$", "", command)


SHELL = [b for b in ALL if b.run and b.lang in ("bash", "sh", "console", "shell")]


@pytest.mark.parametrize("block", SHELL, ids=_ids)
def test_shell_blocks_run(block: Block, tmp_path: Path, demo: Demo) -> None:
    env = _env(tmp_path)

    def run(command: str) -> subprocess.CompletedProcess[str]:
        command = command.replace(DOC_HOME, demo.home).replace(DOC_STAMP, demo.stamp)
        return subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + command],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )

    if block.lang != "console":
        proc = run(block.body)
        assert proc.returncode == 0, f"{block.where}:\n{proc.stderr[-3000:]}"
        return
    steps = console_steps(block.body)
    assert steps, f"{block.where}: a console block without '$ ' lines (mark it not-run)"
    for command, expected in steps:
        if command.strip().startswith("hermes-memory demo"):
            continue  # the demo fixture ran it; its transcript has a test of its own
        proc = run(_strip_comment(command))
        fails = any(line.startswith("hermes-memory: error:") for line in expected)
        assert (proc.returncode != 0) == fails, (
            f"{block.where}: {command!r} exited {proc.returncode}\n{proc.stderr[-3000:]}"
        )
        if DOC_HOME in command and expected and "demo" not in command.split()[:3]:
            got = normalize(proc.stdout + proc.stderr, demo)
            want = "\n".join(line.rstrip() for line in expected).strip("\n")
            assert got.strip("\n") == want, f"{block.where}: {command}"


# ----------------------------------------------------------------------------- the demo transcript
def _transcripts() -> list[tuple[Block, list[str]]]:
    found = []
    for block in ALL:
        if block.lang != "console":
            continue
        for command, expected in console_steps(block.body):
            if command.strip() == "hermes-memory demo --keep":
                found.append((block, expected))
    return found


@pytest.mark.parametrize("found", _transcripts(), ids=[b.where for b, _ in _transcripts()])
def test_demo_transcripts_are_what_the_demo_prints(
    found: tuple[Block, list[str]], demo: Demo
) -> None:
    """The doc's lines appear, in order, in the demo's output; ``...`` stands for lines left
    out. A transcript without ``...`` must be the whole output."""
    block, expected = found
    actual = normalize(demo.output, demo).splitlines()
    want = [line.rstrip() for line in expected]
    if "..." not in want:
        if "(hybrid recall:" in "\n".join(want) and "(hybrid recall:" not in demo.output:
            pytest.skip("hermes-memory-vectors is not installed: the demo has no hybrid step")
        assert want == actual, f"{block.where}: the transcript differs from the demo's output"
        return
    position = 0
    for line in want:
        if line == "...":
            continue
        try:
            position = actual.index(line, position) + 1
        except ValueError:
            pytest.fail(f"{block.where}: {line!r} is not (or not in this order) in the demo output")
