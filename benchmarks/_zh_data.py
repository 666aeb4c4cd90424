"""Loader of the Chinese recall set ``benchmarks/zh_recall/conversations.txt`` (our own data;
see the header of that file for the format, the categories and the dev/held split)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

DATA = Path(__file__).resolve().parent / "zh_recall" / "conversations.txt"
CATEGORIES = ("direct", "paraphrase", "update", "mixed", "script")
#: Questions nothing in their conversation answers (no evidence).
ABSENT = "absent"


@dataclass
class ZhTurn:
    dia_id: str  # "S<session>:<turn>"
    role: str
    text: str


@dataclass
class ZhSession:
    number: int
    started_at: float
    turns: list[ZhTurn] = field(default_factory=list)


@dataclass
class ZhQuestion:
    text: str
    category: str
    gold: frozenset[str]


@dataclass
class ZhConversation:
    conv_id: str
    split: str
    sessions: list[ZhSession] = field(default_factory=list)
    questions: list[ZhQuestion] = field(default_factory=list)


def load(path: Path = DATA) -> list[ZhConversation]:
    """Parse the set; raises ValueError on a malformed line or an unknown evidence id."""
    convs: list[ZhConversation] = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or (line.startswith("#") and not line.startswith("##")):
            continue
        if line.startswith("= "):
            conv_id, split = line[2:].split()
            if split not in ("dev", "held"):
                raise ValueError(f"line {n}: split must be dev or held")
            convs.append(ZhConversation(conv_id, split))
        elif line.startswith("## "):
            when = datetime.strptime(line[3:].strip(), "%Y-%m-%d %H:%M")
            conv = convs[-1]
            conv.sessions.append(
                ZhSession(len(conv.sessions) + 1, when.replace(tzinfo=UTC).timestamp())
            )
        elif line[:2] in ("u:", "a:"):
            sess = convs[-1].sessions[-1]
            role = "user" if line[0] == "u" else "assistant"
            sess.turns.append(
                ZhTurn(f"S{sess.number}:{len(sess.turns) + 1}", role, line[2:].strip())
            )
        elif line.startswith("? "):
            category, question, evidence = (p.strip() for p in line[2:].split("|"))
            if category not in (*CATEGORIES, ABSENT):
                raise ValueError(f"line {n}: unknown category {category!r}")
            gold = frozenset(e.strip() for e in evidence.split(",") if e.strip() != "-")
            if (category == ABSENT) != (not gold):
                raise ValueError(f"line {n}: only 'absent' questions have no evidence")
            convs[-1].questions.append(ZhQuestion(question, category, gold))
        else:
            raise ValueError(f"line {n}: cannot parse {raw!r}")
    for conv in convs:
        known = {t.dia_id for s in conv.sessions for t in s.turns}
        for q in conv.questions:
            if not q.gold <= known:
                raise ValueError(f"{conv.conv_id}: unknown evidence {sorted(q.gold - known)}")
    return convs
