"""The CLI in 简体中文: messages for people follow the locale, exit codes and JSON do not.

Every test runs the installed ``hermes-memory`` script with a real home and a real locale
environment; the compiled catalogue is the one shipped in the package.
"""

from __future__ import annotations

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
