"""One set of conversations, written into a real Hermes ``state.db`` by Hermes' own code.

Covers what a switching user's archive holds: a titled CLI session with tool calls, a
compression lineage with a numbered continuation title, a session compacted in place, a
delegated subagent, a cron run, a Chinese conversation, and an untitled session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_agent import HermesAgent

BUILD = """
from hermes_state import SessionDB
db = SessionDB()
clock = [1764493200.0]
def tick():
    clock[0] += 60.0
    return clock[0]
def conv(sid, source, messages, *, title=None, parent=None, model_config=None, end=None):
    db.create_session(sid, source, model="gpt-5-mini", parent_session_id=parent,
                      model_config=model_config)
    for m in messages:
        db.append_message(sid, m[0], m[1], tool_name=(m[2] if len(m) > 2 else None),
                          tool_calls=(m[3] if len(m) > 3 else None),
                          tool_call_id=(m[4] if len(m) > 4 else None), timestamp=tick())
    if title:
        db.set_session_title(sid, title)
    if end:
        db.end_session(sid, end)

conv(CLI, "cli", [
    ("user", "How do I rotate the postgres backups on the NAS?"),
    ("assistant", "", None, [{"id": "call_1", "type": "function",
        "function": {"name": "terminal", "arguments": "{\\"cmd\\": \\"ls /mnt/nas/pg\\"}"}}]),
    ("tool", "pg-2026-11-28.dump pg-2026-11-29.dump", "terminal", None, "call_1"),
    ("assistant", "Keep pg_dump at 03:00 with a 14-day retention; prune older dumps."),
    ("user", "Thanks, that settles the retention question."),
    ("assistant", "Glad it helps."),
], title="backup plan", end="user_exit")

conv(PARENT, "cli", [
    ("user", "Let's write the deploy notes for the kubernetes rollout."),
    ("assistant", "Start with the helm chart version and the rollback command."),
], title="deploy notes", end="compression")
conv(CHILD, "cli", [
    ("user", "[CONTEXT SUMMARY]: deploy notes so far: helm chart and rollback."),
    ("user", "Add the canary step to the deploy notes."),
    ("assistant", "Canary: 10 percent of pods for 15 minutes, then full rollout."),
], parent=PARENT)
db.set_session_title(CHILD, db.get_next_title_in_lineage("deploy notes"))

conv(COMPACTED, "cli", [
    ("user", "The grafana dashboard for latency is broken."),
    ("assistant", "Which panel? The p95 one uses a deleted recording rule."),
    ("user", "Yes the p95 panel."),
    ("assistant", "Recreate the rule latency:p95 in prometheus."),
    ("user", "Done, it works again."),
    ("assistant", "Great."),
    ("user", "Also the alert for disk usage fires too often."),
    ("assistant", "Raise the threshold to 90 percent for 10 minutes."),
], title="grafana fixes")
db.archive_and_compact(COMPACTED, [
    {"role": "user", "content": "[CONTEXT SUMMARY]: fixed grafana p95 panel and disk alert."},
    {"role": "user", "content": "Anything else on grafana?"},
])

conv(SUBAGENT, "subagent", [
    ("user", "Summarise the postgres backup logs."),
    ("assistant", "The postgres backups all succeeded this week."),
], model_config={"_delegate_from": CLI})

conv(CRON, "cron", [
    ("user", "Nightly job: check the postgres backups."),
    ("assistant", "postgres backups verified: 14 dumps present."),
], end="cron_complete")

conv(CJK, "telegram", [
    ("user", "数据库备份昨晚失败了，报错 disk full。怎么办？"),
    ("assistant", "NAS 满了。把备份保留期从 14 天改成 7 天。"),
])

conv(UNTITLED, "cli", [
    ("user", "What is the wifi password for the office guest network?"),
    ("assistant", "I don't have that; ask the office manager."),
])
result = {"sessions": [r["id"] for r in db.list_sessions_rich(limit=50)]}
"""

IDS = {
    "CLI": "20261130_090000_a1a1a1",
    "PARENT": "20261130_100000_b2b2b2",
    "CHILD": "20261130_100500_c3c3c3",
    "COMPACTED": "20261130_110000_d4d4d4",
    "SUBAGENT": "20261130_120000_e5e5e5",
    "CRON": "20261130_130000_f6f6f6",
    "CJK": "20261130_140000_a7a7a7",
    "UNTITLED": "20261130_150000_b8b8b8",
}


def build_hermes_home(hermes: HermesAgent, home: Path) -> dict[str, Any]:
    """Fill ``home/state.db`` through Hermes' own ``SessionDB``; return what Hermes lists."""
    home.mkdir(parents=True, exist_ok=True)
    return hermes.run(BUILD, home, **IDS)  # type: ignore[no-any-return]
