"""Generate a text that a gitleaks rule matches, from the rule's own regex.

A small exrex-style walk over Python's parse tree of the converted regex: literals are
copied, a class yields a random member (letters and digits first), a repeat yields its
minimum count plus a few (``{0,n}`` filler such as ``[\\s'"]{0,3}`` yields nothing), one
alternative of a branch is taken at random, assertions are skipped (the caller checks the
result with the rule itself). Characters drawn from a class repeated at least
:data:`SECRET_RUN` times are recorded as *secret runs*: the random material that makes the
credential usable, which masking must not leave visible.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass, field
from re import _constants as c  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

#: A class repeated at least this often is credential material.
SECRET_RUN = 8
_PREFERRED = string.ascii_letters + string.digits
_PRINTABLE = [chr(code) for code in range(33, 127)]
_CATEGORIES: dict[Any, str] = {
    c.CATEGORY_DIGIT: string.digits,
    c.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    c.CATEGORY_SPACE: " ",
    c.CATEGORY_NOT_DIGIT: string.ascii_letters,
    c.CATEGORY_NOT_WORD: "-.:/",
    c.CATEGORY_NOT_SPACE: _PREFERRED,
}


@dataclass
class Sample:
    text: str
    #: ``(start, end)`` of each run of random credential material in ``text``.
    secret_runs: list[tuple[int, int]] = field(default_factory=list)
    #: Text with the first secret run one character short of its minimum (or ``None``).
    near_miss: str | None = None


def _class_members(items: list[tuple[Any, Any]]) -> list[str]:
    negate = any(op is c.NEGATE for op, _ in items)
    members: set[str] = set()
    for op, arg in items:
        if op is c.LITERAL:
            members.add(chr(arg))
        elif op is c.RANGE:
            members.update(chr(code) for code in range(arg[0], arg[1] + 1))
        elif op is c.CATEGORY:
            members.update(_CATEGORIES.get(arg, ""))
    if negate:
        return [ch for ch in _PREFERRED if ch not in members]
    printable = sorted(ch for ch in members if " " < ch < "\x7f")
    preferred = [ch for ch in printable if ch in _PREFERRED]
    return preferred or printable or sorted(members)


class _Walker:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.out: list[str] = []
        self.groups: dict[int, str] = {}
        #: ``(start, end, minimum count)`` of every run of one repeated class.
        self.all_runs: list[tuple[int, int, int]] = []

    @property
    def pos(self) -> int:
        return sum(map(len, self.out))

    def one(self, op: Any, arg: Any) -> None:
        if op is c.LITERAL:
            self.out.append(chr(arg))
        elif op is c.NOT_LITERAL:
            self.out.append(self.rng.choice([ch for ch in _PREFERRED if ord(ch) != arg]))
        elif op is c.ANY:
            self.out.append(".")  # an unescaped "." in a host name (gems.contribsys.com)
        elif op is c.IN:
            self.out.append(self.rng.choice(_class_members(arg)))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            low, high, sub = arg
            if low == 0:
                return
            high = min(high, low + 64) if high != c.MAXREPEAT else low + 64
            count = self.rng.randint(low, min(high, low + 12))
            start = self.pos
            for _ in range(count):
                self.seq(sub)
            simple = len(sub) == 1 and sub[0][0] in (c.IN, c.ANY, c.NOT_LITERAL)
            if simple and "".join(self.out)[start:].strip():
                self.all_runs.append((start, self.pos, low))
        elif op is c.SUBPATTERN:
            group, _add, _del, sub = arg
            start = self.pos
            self.seq(sub)
            if group:
                self.groups[group] = "".join(self.out)[start:]
        elif op is c.ATOMIC_GROUP:
            self.seq(arg)
        elif op is c.BRANCH:
            self.seq(self.rng.choice(arg[1]))
        elif op is c.GROUPREF:
            self.out.append(self.groups.get(arg, ""))
        # AT, ASSERT, ASSERT_NOT, GROUPREF_EXISTS: nothing to emit

    def seq(self, items: Any) -> None:
        for op, arg in items:
            self.one(op, arg)


def generate(pattern: re.Pattern[str], rng: random.Random) -> Sample:
    """One text shaped by ``pattern`` (not guaranteed to match: check it)."""
    walker = _Walker(rng)
    walker.seq(_parser.parse(pattern.pattern, pattern.flags))
    text = "".join(walker.out)
    runs = [run for run in walker.all_runs if run[2] >= SECRET_RUN]
    if not runs and walker.all_runs:
        # Short groups only (1Password's A3-XXXXXX-…, Slack's xapp-1-[A-Z0-9]+): the longest.
        longest = max(run[2] for run in walker.all_runs)
        runs = [run for run in walker.all_runs if run[2] == longest]
    if not runs:
        runs = [(0, len(text), len(text))]  # a literal-only rule: the whole match
    near = None
    if runs:
        start, end, low = runs[-1]
        near = text[:start] + text[start : start + low - 1] + text[end:]
    return Sample(text, [(start, end) for start, end, _ in runs], near)
