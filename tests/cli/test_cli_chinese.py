"""The CLI in 简体中文: messages for people follow the locale, exit codes and JSON do not.

Every test runs the installed ``hermes-memory`` script with a real home and a real locale
environment; the compiled catalogue is the one shipped in the package.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from babel.messages.pofile import read_po

from hermes_memory_cli import _i18n

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import i18n as catalogue_tool  # noqa: E402

sys.path.pop(0)

CHINESE = {"LANG": "zh_CN.UTF-8", "LC_ALL": "", "LC_MESSAGES": "", "LANGUAGE": ""}
ENGLISH = {"LANG": "en_US.UTF-8", "LC_ALL": "", "LC_MESSAGES": "", "LANGUAGE": ""}
POSIX = {"LANG": "C", "LC_ALL": "", "LC_MESSAGES": "", "LANGUAGE": ""}


def _last_line(result: Any) -> str:
    return [line for line in result.err.splitlines() if line.strip()][-1]


def test_every_help_text_is_translated() -> None:
    """Help texts are collected from the parser itself: a new option's help needs a line."""
    po = _i18n.LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / "cli.po"
    with po.open("rb") as handle:
        catalog = read_po(handle)
    missing = []
    for message in catalogue_tool.parser_messages():
        entry = catalog.get(message)
        if entry is None or not entry.string or entry.fuzzy:
            missing.append(message)
    assert not missing, f"help texts without a translation (run tools/i18n.py): {missing}"


@pytest.mark.parametrize(
    ("args", "code", "english", "chinese"),
    [
        (["memory", "add", " "], 2, "the entry is empty", "条目为空"),
        (["sessions", "list", "--limit", "0"], 2, "expected a number from 1", "需要 1 到"),
        (["memory", "show", "--target", "x"], 2, "invalid choice", "无效的选择"),
        (["provider", "use", "nosuch"], 1, "no provider named 'nosuch'", "没有安装名为"),
        (["provider", "use", "builtin"], 1, "is always on", "始终启用"),
        ([], 2, "choose a COMMAND from the list above", "请从上面的列表中选择一个 COMMAND"),
    ],
)
def test_errors_in_chinese_keep_their_exit_code(
    cli: Any, args: list[str], code: int, english: str, chinese: str
) -> None:
    en = cli(*args, env=ENGLISH)
    zh = cli(*args, env=CHINESE)
    assert en.code == zh.code == code, (en.err, zh.err)
    assert "Traceback" not in zh.err
    assert english in _last_line(en)
    assert _last_line(zh).startswith("hermes-memory") and "错误:" in _last_line(zh)
    assert chinese in _last_line(zh), _last_line(zh)


def test_missing_home_in_chinese_creates_nothing(cli: Any, tmp_path: Path) -> None:
    missing = tmp_path / "typo-home"
    zh = cli("--home", str(missing), "sessions", "list", env=CHINESE)
    en = cli("--home", str(missing), "sessions", "list", env=ENGLISH)
    assert zh.code == en.code == 1
    assert f"Hermes 主目录 {missing} 不存在（来自 --home）" in _last_line(zh)
    assert "does not exist (from --home)" in _last_line(en)
    assert not missing.exists()


def test_output_for_people_in_chinese(cli: Any) -> None:
    added = cli("memory", "add", "--target", "user", "Prefers answers in British English")
    assert added.code == 0, added.err
    shown = cli("memory", "show", "--target", "user", env=CHINESE)
    assert shown.code == 0, shown.err
    assert "下一个会话的系统提示词将得到的快照：" in shown.out
    assert "Prefers answers in British English" in shown.out  # stored text stays as stored
    refused = cli("memory", "remove", "--target", "user", "British", env=CHINESE)
    assert refused.code == 1
    assert "删除这个条目？——未经确认，拒绝执行：请加上 --yes 重新运行" in _last_line(refused)
    helped = cli("memory", "--help", env=CHINESE)
    assert helped.code == 0
    assert helped.out.startswith("用法：hermes-memory memory")
    assert "精选记忆：MEMORY.md（智能体笔记）和 USER.md（用户档案）" in helped.out
    assert helped.out.count("选项:") == 1


@pytest.mark.parametrize("environ", [POSIX, ENGLISH, {**POSIX, "LANGUAGE": "zh_CN"}])
def test_english_locales_stay_english(cli: Any, environ: dict[str, str]) -> None:
    result = cli("memory", "add", " ", env=environ)
    assert result.code == 2
    assert _last_line(result) == ("hermes-memory: error: the entry is empty; nothing was changed")
    helped = cli("--help", env=environ)
    assert helped.out.startswith("usage: hermes-memory")
    assert "options:" in helped.out


def test_json_is_the_same_in_every_language(cli: Any) -> None:
    assert cli("memory", "add", "Backups: pg_dump 03:00 to /mnt/nas/pg").code == 0
    for args in (
        ["memory", "show", "--json"],
        ["plugins", "--json"],
        ["provider", "status", "--json"],
        ["sessions", "list", "--json"],
        ["memory", "add", "--json", "Backups: pg_dump 03:00 to /mnt/nas/pg"],
    ):
        en = cli(*args, env=ENGLISH)
        zh = cli(*args, env=CHINESE)
        assert en.code == zh.code == 0, (args, en.err, zh.err)
        assert en.out == zh.out, args
        assert en.json() == zh.json()


def _columns(line: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def test_chinese_help_is_wrapped_to_the_terminal(cli: Any) -> None:
    """argparse counts a CJK character as one column; a terminal draws it in two."""
    helped = cli("memory", "add", "--help", env={**CHINESE, "COLUMNS": "60"})
    assert helped.code == 0
    body = helped.out.split("\n\n", 1)[1]  # after the usage lines
    assert "即使被威胁扫描标记也写入" in body
    too_wide = [line for line in body.splitlines() if _columns(line) > 60 + 2]
    assert not too_wide, too_wide
    assert not any(line.rstrip().endswith("（") for line in body.splitlines())
    english = cli("memory", "add", "--help", env={**ENGLISH, "COLUMNS": "60"})
    assert "--allow-flagged       write it even though the threat" in english.out


def _archive(cli: Any) -> str:
    """One ended session with two messages in the home's archive; returns its id."""
    from hermes_memory_sessions.storage._store import SessionStore

    sid = "20250601_120000_zh0001"
    store = SessionStore(cli.archive)
    store.create_session(sid, title="备份", started_at=1_748_779_200.0, model="m1")
    store.append_message(sid, "user", "How do I rotate the postgres backups?")
    store.append_message(sid, "assistant", "用 pg_dump 做数据库备份，保留七天。")
    store.end_session(sid, "done")
    store.close()
    return sid


@pytest.mark.parametrize(
    ("args", "code", "english", "chinese"),
    [
        (
            ["sessions", "show", "nosuch"],
            1,
            "no session matches 'nosuch'",
            "没有与 'nosuch' 匹配的会话",
        ),
        (["sessions", "search", " "], 2, "the search query is empty", "搜索内容为空"),
        (["sessions", "resume"], 2, "give a session id, prefix or title", "请给出会话 ID"),
        (
            ["sessions", "resume", "x", "--source", "cli"],
            2,
            "--source goes with",
            "--source 只能与",
        ),
        (
            ["sessions", "embed", "--batch-size", "0"],
            1,
            "--batch-size must be",
            "--batch-size 必须在",
        ),
        (["sessions", "embed"], 1, "no embedder configured", "未配置嵌入模型"),
        (["sessions", "delete", "20250601"], 1, "Delete session 20250601_", "删除会话 20250601_"),
        (["sessions", "import", "/no/such.jsonl"], 1, "it does not exist", "它不存在"),
        (["config", "get", "memory.memory_char_limt"], 1, "did you mean", "是否想用"),
        (["config", "set", "memory.memory_char_limit", "many"], 2, "got 'many'", "得到的是 'many'"),
        (
            ["config", "set", "sessions.backend", "mysql"],
            2,
            "must be one of sqlite, postgres, got 'mysql'",
            "必须是以下之一：sqlite, postgres，得到的是 'mysql'",
        ),
        (["plugins", "--dry-run"], 2, "NAME and --dry-run go with", "只能与 'plugins install'"),
    ],
)
def test_sessions_and_config_errors_in_chinese(
    cli: Any, args: list[str], code: int, english: str, chinese: str
) -> None:
    _archive(cli)
    en = cli(*args, env=ENGLISH)
    zh = cli(*args, env=CHINESE)
    assert en.code == zh.code == code, (en.err, zh.err)
    assert "Traceback" not in zh.err + en.err
    assert english in _last_line(en), _last_line(en)
    assert "错误:" in _last_line(zh) and chinese in zh.err, zh.err
    assert not any("\u4e00" <= c <= "\u9fff" for c in en.err.replace("备份", ""))


def test_sessions_output_for_people_in_chinese(cli: Any) -> None:
    sid = _archive(cli)
    listed = cli("sessions", "list", env=CHINESE)
    assert listed.code == 0, listed.err
    assert listed.out.splitlines()[0].split() == [
        "ID",
        "开始时间",
        "来源",
        "消息数",
        "状态",
        "标题",
    ]
    assert "已结束" in listed.out and sid in listed.out
    english = cli("sessions", "list", env=ENGLISH)
    assert english.out.splitlines()[0].split() == [
        "ID",
        "STARTED",
        "SOURCE",
        "MSGS",
        "STATE",
        "TITLE",
    ]
    found = cli("sessions", "search", "pg_dump", env=CHINESE)
    assert found.code == 0, found.err
    assert "'pg_dump' 有 1 条匹配：" in found.out
    assert "查看命中消息的上下文：hermes-memory sessions show" in found.out
    stats = cli("sessions", "stats", env=CHINESE)
    assert stats.code == 0
    lines = stats.out.splitlines()
    assert lines[1].startswith("会话") and lines[1].split()[-1] == "1"
    assert lines[2].startswith("消息") and lines[2].split()[-1] == "2"
    # the values start in one terminal column (a CJK label is two columns a character)
    starts = {_columns(m.group(1)) for m in map(re.compile(r"^(.*?\s{2,})\S").match, lines) if m}
    assert len(starts) == 1, stats.out
    renamed = cli("sessions", "rename", sid, "新标题", env=CHINESE)
    assert renamed.code == 0 and f"已将 {sid} 重命名为 '新标题'。" in renamed.out
    nothing = cli("sessions", "prune", "--older-than", "100000", env=CHINESE)
    assert nothing.code == 0 and "无需清理" in nothing.out


def test_doctor_in_chinese_json_unchanged(cli: Any) -> None:
    _archive(cli)
    (cli.home / "config.yaml").write_text("memory:\n  memory_char_limt: 3000\n", encoding="utf-8")
    en = cli("doctor", env=ENGLISH)
    zh = cli("doctor", env=CHINESE)
    assert en.code == zh.code == 0, (en.out, zh.out)
    assert "unknown key memory.memory_char_limt (did you mean memory.memory_char_limit?)" in en.out
    assert "未知的键" in zh.out or "memory.memory_char_limt" in zh.out
    assert "sessions, 2 messages" in en.out
    assert "1 个会话，2 条消息" in zh.out
    assert "problem(s) found." in en.out.splitlines()[-1]
    assert zh.out.splitlines()[-1] == "发现 1 个问题。"
    assert not any("\u4e00" <= c <= "\u9fff" for c in en.out)
    en_json = cli("doctor", "--json", env=ENGLISH)
    zh_json = cli("doctor", "--json", env=CHINESE)
    assert en_json.code == zh_json.code == 0
    assert en_json.out == zh_json.out
    details = [c["detail"] for c in zh_json.json()["checks"]]
    assert "unknown key memory.memory_char_limt (did you mean memory.memory_char_limit?)" in details


def test_doctor_failure_keeps_its_exit_code_in_chinese(cli: Any, tmp_path: Path) -> None:
    missing = tmp_path / "no-home"
    en = cli("--home", str(missing), "doctor", env=ENGLISH)
    zh = cli("--home", str(missing), "doctor", env=CHINESE)
    assert en.code == zh.code == 1
    assert f"{missing} does not exist (nothing was created)" in en.out
    assert f"{missing} 不存在（未创建任何内容）" in zh.out
    assert "请检查 --home、--profile 和 $HERMES_HOME" in zh.out
    assert not missing.exists()


def test_sessions_json_is_the_same_in_every_language(cli: Any) -> None:
    sid = _archive(cli)
    for args in (
        ["sessions", "list", "--json"],
        ["sessions", "stats", "--json"],
        ["sessions", "search", "--json", "pg_dump"],
        ["sessions", "show", "--json", sid],
        ["sessions", "resume", "--json", sid],
        ["config", "list", "--json"],
    ):
        en = cli(*args, env=ENGLISH)
        zh = cli(*args, env=CHINESE)
        assert en.code == zh.code == 0, (args, en.err, zh.err)
        assert en.out == zh.out, args


def test_dashboard_messages_in_chinese(cli: Any) -> None:
    zh = cli("dashboard", "--stop", env=CHINESE)
    en = cli("dashboard", "--stop", env=ENGLISH)
    assert zh.code == en.code == 0
    assert zh.out.strip() == "仪表盘没有在运行；无需停止。"
    assert en.out.strip() == "The dashboard is not running; nothing to stop."
    zh = cli("dashboard", "--status", env=CHINESE)
    assert zh.code == 3 and "仪表盘没有在运行" in zh.out
