"""Messages for people follow the locale; catalogues stay complete and compiled."""

from __future__ import annotations

import gettext
import os
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from hermes_memory_cli import _i18n

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import i18n as catalogue_tool  # noqa: E402

sys.path.pop(0)


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"LANG": "zh_CN.UTF-8"}, "zh_CN"),
        ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_TW.UTF-8"}, "zh_CN"),
        ({"LANG": "zh_CN.UTF-8", "LC_ALL": "en_GB.UTF-8"}, "en"),
        ({"LANG": "en_US.UTF-8", "LANGUAGE": "fr:zh_CN:en"}, "zh_CN"),
        ({"LANG": "C", "LANGUAGE": "zh_CN"}, "en"),  # gettext ignores LANGUAGE under C
        ({"LANG": "de_DE.UTF-8"}, "en"),
        ({}, "en"),
    ],
)
def test_language_follows_the_environment(environ: dict[str, str], expected: str) -> None:
    assert _i18n.negotiate(_i18n.env_languages(environ)) == expected


def test_browser_style_tags_negotiate() -> None:
    assert _i18n.negotiate(["zh-Hans-CN", "en"]) == "zh_CN"
    assert _i18n.negotiate(["fr-FR", "en-US"]) == "en"


def _po(domain: str, language: str) -> Path:
    return _i18n.LOCALE_DIR / language / "LC_MESSAGES" / f"{domain}.po"


@pytest.mark.parametrize("domain", sorted(catalogue_tool.DOMAINS))
@pytest.mark.parametrize("language", catalogue_tool.LANGUAGES)
def test_every_marked_message_is_translated(domain: str, language: str) -> None:
    folders, skipped, keywords = catalogue_tool.DOMAINS[domain]
    with _po(domain, language).open("rb") as handle:
        catalog = read_po(handle)
    missing = set()
    for folder in folders:
        found = extract_from_dir(
            str(folder),
            method_map=[("**.py", "python"), *catalogue_tool.EXTRA_METHODS.get(domain, [])],
            keywords={k: None for k in keywords},
            options_map=catalogue_tool.EXTRA_OPTIONS.get(domain, {}),
        )
        for filename, _lineno, message, _comments, _context in found:
            if any(part in skipped for part in Path(filename).parts):
                continue
            msgid = message if isinstance(message, str) else message[0]
            entry = catalog.get(msgid)
            if entry is None or not entry.string or entry.fuzzy:
                missing.add(msgid)
    assert not missing, f"untranslated in {language}/{domain}.po (run tools/i18n.py): {missing}"


@pytest.mark.parametrize("domain", sorted(catalogue_tool.DOMAINS))
@pytest.mark.parametrize("language", catalogue_tool.LANGUAGES)
def test_compiled_catalogue_matches_its_source(domain: str, language: str) -> None:
    with _po(domain, language).open("rb") as handle:
        source = {m.id: m.string for m in read_po(handle) if m.id and m.string and not m.fuzzy}
    with _po(domain, language).with_suffix(".mo").open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    for msgid, text in source.items():
        key = msgid if isinstance(msgid, str) else msgid[0]
        expected = text if isinstance(text, str) else text[0]
        assert compiled.gettext(key) == expected, "stale .mo: run `python tools/i18n.py compile`"


def _cli(*args: str, lang: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG"))}
    env["LANG"] = lang
    return subprocess.run(
        [sys.executable, "-m", "hermes_memory_cli._cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_errors_speak_the_locale_and_keep_their_exit_code(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-home"
    english = _cli("--home", str(missing), "memory", "show", lang="en_US.UTF-8")
    chinese = _cli("--home", str(missing), "memory", "show", lang="zh_CN.UTF-8")
    assert english.returncode == chinese.returncode != 0
    assert "hermes-memory: error:" in english.stderr
    assert "hermes-memory: 错误:" in chinese.stderr
    assert not missing.exists()
