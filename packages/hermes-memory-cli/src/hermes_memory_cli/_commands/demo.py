"""``hermes-memory demo``: three scripted sessions on a temporary home, narrated step by step.

No network and no LLM: the "assistant" turns are scripted, but everything else is the real
stack. Each session builds ``MemoryManager.from_config(home)`` as an agent process would,
initialises it, reads the system prompt, records turns with ``sync_all``, saves facts
through ``handle_tool_call("memory", ...)``, runs a background memory review with a
scripted model callable (``run_review``) and searches earlier sessions through
``handle_tool_call("session_search", ...)``.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from hermes_memory_builtin import MEMORY_GUIDANCE
from hermes_memory_cli._context import CLIError, Context
from hermes_memory_cli._install import install_command

# (user message, assistant reply, memory tool calls made during the turn)
Turn = tuple[str, str, list[dict[str, Any]]]

SESSION_1: list[Turn] = [
    (
        "Hi, I'm Ada. I look after our team's Postgres backups. Keep answers short, please.",
        "Nice to meet you, Ada. Noted: short answers.",
        [
            {
                "action": "add",
                "target": "user",
                "content": "Ada; looks after the team's Postgres backups; wants short answers.",
            }
        ],
    ),
    (
        "The backup job runs pg_dump at 03:00 to the NAS at /mnt/nas/pg and keeps 14 days.",
        "Got it: nightly pg_dump 03:00 to /mnt/nas/pg, 14-day retention.",
        [
            {
                "action": "add",
                "target": "memory",
                "content": "Backups: pg_dump 03:00 to /mnt/nas/pg, 14-day retention.",
            }
        ],
    ),
]

SESSION_2: list[Turn] = [
    (
        "数据库备份昨晚失败了，报错 disk full。怎么办？",
        "NAS 满了。把备份保留期从 14 天改成 7 天，再删掉最旧的备份文件。",
        [
            {
                "action": "replace",
                "target": "memory",
                "old_text": "14-day retention",
                "content": "Backups: pg_dump 03:00 to /mnt/nas/pg, 7-day retention (NAS got full).",
            }
        ],
    ),
]

#: A turn in which the assistant saves nothing: the background review picks the fact up.
SESSION_2_UNSAVED: Turn = (
    "If a backup fails again, tell me in Slack #db-alerts, not by email.",
    "OK — Slack #db-alerts from now on.",
    [],
)
REVIEW_FACT = "Ada wants backup-failure alerts in Slack #db-alerts, not by email."
#: The demo home's config: a review is due after every user turn without a memory call.
DEMO_CONFIG = "memory:\n  nudge_interval: 1   # the default is 10 user turns\n"

QUESTION_3 = "Why did we shorten the backup retention?"
#: Hybrid recall (when hermes-memory-vectors is installed): a question sharing no word with
#: the conversation that answers it.
PARAPHRASE_3 = "how long do we hold on to old database copies?"
DEMO_EMBEDDER_CONFIG = "sessions:\n  embedder: default   # offline model of hermes-memory-vectors\n"


def _embedder_installed() -> bool:
    """Whether the offline default embedder can run here (the demo then shows hybrid recall)."""
    try:
        from hermes_memory_vectors import EmbedderUnavailable, default_embedder
    except ImportError:
        return False
    try:
        default_embedder()
    except EmbedderUnavailable:
        return False
    return True


def _vectors_ready(manager: Any, timeout: float = 60.0) -> bool:
    """Wait for the sessions tier's embedder (loaded in the background) and embed the rest."""
    provider = next((p for p in manager.providers if p.name == "sessions"), None)
    store: Any = getattr(provider, "store", None)
    deadline = time.monotonic() + timeout
    while getattr(store, "vector_index", None) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if getattr(store, "vector_index", None) is None:
        return False
    store.embed_pending()  # what earlier sessions' background workers had not done yet
    return True


class _Narrator:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.step = 0

    def header(self, text: str) -> None:
        self.ctx.say()
        self.ctx.say(f"== {text}", style="bold")

    def do(self, text: str) -> None:
        self.step += 1
        self.ctx.say(f"[{self.step:>2}] {text}")

    def detail(self, text: str) -> None:
        for line in text.splitlines() or [""]:
            self.ctx.say(f"     {line}")


def _new_manager(home: Path, session_id: str) -> Any:
    from hermes_memory_core import MemoryManager

    manager = MemoryManager.from_config(home)
    missing = {"builtin", "sessions"} - {p.name for p in manager.providers}
    if missing:
        raise CLIError(
            f"the demo needs the {', '.join(sorted(missing))} tier(s): "
            + install_command("hermes-memory-builtin", "hermes-memory-sessions")
        )
    manager.initialize_all(session_id, platform="cli", agent_context="primary")
    return manager


def _memory_blocks(prompt: str) -> str:
    """The remembered part of the system prompt (the fixed guidance block left out)."""
    return prompt.removeprefix(MEMORY_GUIDANCE).strip()


def _prompt_summary(prompt: str) -> str:
    memory = _memory_blocks(prompt)
    return memory if memory else "(empty: nothing is remembered yet)"


def _memory_call(say: _Narrator, manager: Any, call: dict[str, Any]) -> None:
    result = json.loads(manager.handle_tool_call("memory", call))
    what = f"memory(action={call['action']!r}, target={call['target']!r})"
    if not result.get("success"):
        raise CLIError(f"demo step failed: {what}: {result.get('error')}")
    say.do(f"assistant calls {what}")
    say.detail(f"→ {result.get('message')} usage {result.get('usage')}")


def _turns(
    say: _Narrator, manager: Any, session_id: str, turns: list[Turn]
) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for number, (user, assistant, calls) in enumerate(turns, 1):
        manager.on_turn_start(number, user)
        say.do(f"user: {user}")
        for call in calls:
            _memory_call(say, manager, call)
        say.do(f"assistant: {assistant}")
        manager.sync_all(user, assistant, session_id=session_id)
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    return messages


def _scripted_review_model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    """Stands in for an LLM: saves the alert preference once, then says it is done."""
    from hermes_memory_core import ModelReply, ToolCall

    if messages[-1].get("role") == "tool":
        return ModelReply("Saved the alert preference.")
    if not any("#db-alerts" in str(m.get("content")) for m in messages):
        return ModelReply("Nothing to save.")
    call = ToolCall("memory", {"action": "add", "target": "user", "content": REVIEW_FACT})
    return ModelReply("", [call])


def _review(say: _Narrator, manager: Any, messages: list[dict[str, Any]]) -> None:
    """After the reply: the nudge says a review is due, and a scripted model runs it."""
    if not manager.review_due:
        raise CLIError("demo step failed: the review nudge did not fire")
    say.do(
        "reply delivered; a user turn passed without a memory call, so manager.review_due "
        "is True (demo config: memory.nudge_interval: 1)"
    )
    say.do("manager.run_review(model, messages): background thread, scripted model, no LLM")
    say.detail("(the model sees the conversation plus the review prompt and the memory tool)")
    handle = manager.run_review(_scripted_review_model, messages)
    if not handle.wait(30) or handle.result.status != "completed":
        raise CLIError(f"demo step failed: background review {handle.result.status}")
    for action in handle.result.actions:
        args = action.arguments
        say.detail(
            f"→ review calls memory(action={args.get('action')!r}, target={args.get('target')!r})"
            f": {action.outcome.get('message')}"
        )
    say.detail(
        f"review {handle.result.status} after {handle.result.turns} model call(s); writes are "
        "tagged origin 'background_review' (it may add; replace/remove wait in "
        "'hermes-memory memory pending')"
    )


def _end(say: _Narrator, manager: Any, messages: list[dict[str, Any]], session_id: str) -> None:
    manager.flush_pending(10)
    manager.on_session_end(messages)
    manager.shutdown_all()
    say.do(f"session {session_id} ends: {len(messages)} messages archived")


def _search(say: _Narrator, manager: Any, args: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(manager.handle_tool_call("session_search", args))
    if not result.get("success", True) or "error" in result:
        raise CLIError(f"demo step failed: session_search {args}: {result.get('error')}")
    return result


def _show_hit(say: _Narrator, result: dict[str, Any]) -> dict[str, Any]:
    if not result.get("results"):
        raise CLIError(f"demo step failed: no session found for {result.get('query')!r}")
    top = result["results"][0]
    say.detail(
        f"→ {result['count']} session(s); best: {top['session_id']} ({top['when']}), "
        f"message #{top['match_message_id']} ({top['matched_role']})"
    )
    say.detail(f"  snippet: {' '.join(str(top['snippet']).split())}")
    return dict(top)


def run_demo(ctx: Context, home: Path, *, hybrid: bool = False) -> None:
    """The scripted conversation against ``home`` (an empty directory); ``hybrid``: the home
    is configured with the default embedder and session 3 also searches by meaning."""
    say = _Narrator(ctx)
    stamp = time.strftime("%Y%m%d_%H%M%S")
    ids = [f"{stamp}_demo{n}" for n in (1, 2, 3)]

    say.header(f"Session 1 ({ids[0]}): the agent learns about the user")
    manager = _new_manager(home, ids[0])
    say.do("agent starts; system prompt memory: " + _prompt_summary(manager.build_system_prompt()))
    say.detail(
        f"(the prompt also opens with the memory guidance block, {len(MEMORY_GUIDANCE):,} chars,"
        " telling the model what is worth saving)"
    )
    messages = _turns(say, manager, ids[0], SESSION_1)
    frozen = _memory_blocks(manager.build_system_prompt())
    say.do(
        "system prompt is still the frozen snapshot taken at session start: "
        + ("unchanged, empty" if not frozen.strip() else "unchanged")
    )
    say.detail("(new facts are on disk now and reach the prompt at the next session)")
    _end(say, manager, messages, ids[0])

    say.header(f"Session 2 ({ids[1]}): a new session sees the saved facts")
    manager = _new_manager(home, ids[1])
    say.do("agent starts; system prompt memory now holds what session 1 saved:")
    say.detail(_memory_blocks(manager.build_system_prompt()))
    messages = _turns(say, manager, ids[1], SESSION_2)
    messages += _turns(say, manager, ids[1], [SESSION_2_UNSAVED])
    _review(say, manager, messages)
    _end(say, manager, messages, ids[1])

    say.header(f"Session 3 ({ids[2]}): finding an earlier conversation")
    manager = _new_manager(home, ids[2])
    say.do("system prompt memory now (session 2's replace and the review's fact are in):")
    say.detail(_memory_blocks(manager.build_system_prompt()))
    # The embedder loads in the background: wait for it first, so every search below runs
    # the same way (fused) on every run, not lexical or fused depending on timing.
    hybrid = hybrid and _vectors_ready(manager)
    manager.on_turn_start(1, QUESTION_3)
    say.do(f"user: {QUESTION_3}")
    say.do("assistant calls session_search(query='retention')   (English)")
    _show_hit(say, _search(say, manager, {"query": "retention", "limit": 3}))
    say.do("assistant calls session_search(query='备份')   (Chinese: 'backup')")
    hit = _show_hit(say, _search(say, manager, {"query": "备份", "limit": 3}))
    say.do(
        f"assistant scrolls: session_search(session_id={hit['session_id']!r}, "
        f"around_message_id={hit['match_message_id']}, window=2)"
    )
    scroll = _search(
        say,
        manager,
        {
            "session_id": hit["session_id"],
            "around_message_id": hit["match_message_id"],
            "window": 2,
        },
    )
    for msg in scroll.get("messages", []):
        mark = ">>" if msg.get("id") == hit["match_message_id"] else "  "
        say.detail(f"{mark} #{msg['id']} {msg['role']}: {' '.join(str(msg['content']).split())}")
    if hybrid:
        say.do(
            f"assistant calls session_search(query={PARAPHRASE_3!r})   (hybrid recall: no word"
            " in common with the conversation)"
        )
        found = _search(say, manager, {"query": PARAPHRASE_3, "limit": 3})
        _show_hit(say, found)
        say.detail(f"  match: {found['results'][0].get('match', 'and')}")
    answer = "Because the NAS filled up (disk full) — we went from 14 to 7 days of backups."
    say.do(f"assistant: {answer}")
    manager.sync_all(QUESTION_3, answer, session_id=ids[2])
    _end(
        say,
        manager,
        [{"role": "user", "content": QUESTION_3}, {"role": "assistant", "content": answer}],
        ids[2],
    )


def demo(ctx: Context) -> int:
    """Run the demo on a temporary home (removed afterwards unless ``--keep``)."""
    import os

    home = Path(tempfile.mkdtemp(prefix="hermes-memory-demo-"))
    started = time.monotonic()
    saved = {k: os.environ.get(k) for k in ("HERMES_HOME",)}
    os.environ["HERMES_HOME"] = str(home)  # anything resolving the default home sees the demo
    try:
        ctx.say(f"Demo home: {home} (temporary; no network, no LLM — assistant turns are scripted)")
        hybrid = _embedder_installed()
        config = DEMO_CONFIG + (DEMO_EMBEDDER_CONFIG if hybrid else "")
        (home / "config.yaml").write_text(config, encoding="utf-8")
        run_demo(ctx, home, hybrid=hybrid)
        ctx.say()
        ctx.say(f"Demo finished in {time.monotonic() - started:.1f}s.")
        if ctx.args.keep:
            where = shlex.quote(str(home))
            ctx.say(f"The demo home is kept at {home}. Look around:")
            ctx.say(f"  hermes-memory --home {where} sessions search 备份")
            ctx.say(f"  hermes-memory --home {where} sessions list")
            ctx.say(f"  hermes-memory --home {where} memory show")
            ctx.say(f"Remove it when done: rm -rf {where}")
        else:
            ctx.say(
                "The demo home has been deleted. To keep it and explore it with "
                "'hermes-memory --home DIR sessions search 备份', run: hermes-memory demo --keep"
            )
        return 0
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if not ctx.args.keep:
            shutil.rmtree(home, ignore_errors=True)
