"""A small archive where a question and its answer use different forms of a word
(shared by the SQLite and PostgreSQL suffix-folding tests)."""

from __future__ import annotations

from typing import Any

#: (session id, [(role, content), ...]). Only the swim turn answers the questions; the
#: noise shares one exact question word with them ("went", "weekend", "morning").
ARCHIVE: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "pool",
        [
            ("user", "Caroline: I swim forty lengths before work most days."),
            ("assistant", "Melanie: that is a serious routine!"),
        ],
    ),
    ("market", [("user", "Melanie: we went to the farmers market on Saturday.")]),
    ("kids", [("user", "Melanie: the kids went camping last weekend, rain all weekend.")]),
    ("coffee", [("user", "Caroline: morning coffee first, always, every morning.")]),
    ("studio", [("user", "Melanie: my pottery classes start again in March.")]),
]
#: The questions: "swimming" against "swim", "class" against "classes".
QUESTIONS = {
    "who went swimming": "Caroline: I swim forty lengths",
    "who enjoys swimming": "Caroline: I swim forty lengths",
    "when does the class begin": "Melanie: my pottery classes",
}


def fill(store: Any) -> None:
    """``ARCHIVE`` into ``store`` (a `SessionStore` or `PostgresSessionArchive`)."""
    for i, (sid, turns) in enumerate(ARCHIVE):
        store.create_session(sid, source="cli", started_at=1_700_000_000 + i * 3600)
        store.append_messages(
            sid,
            [
                {"role": role, "content": text, "timestamp": 1_700_000_000 + i * 3600 + j}
                for j, (role, text) in enumerate(turns)
            ],
        )
