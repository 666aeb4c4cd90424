"""Keep the message catalogues in step with the source: extract, update, compile.

    uv run python tools/i18n.py            # extract + update every .po, then compile .mo
    uv run python tools/i18n.py compile    # only compile (after editing translations)

Each domain lists the source folders whose messages it holds and the functions that mark a
message for translation. Babel does the work (a development dependency only: the installed
CLI reads the compiled .mo files with the standard library). Translators edit
``locale/zh_CN/LC_MESSAGES/<domain>.po``; a test fails when a marked message has no
translation or a .mo file is older than its .po.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from unittest import mock

from babel.messages.frontend import CommandLineInterface

ROOT = Path(__file__).resolve().parent.parent
CLI_SRC = ROOT / "packages/hermes-memory-cli/src/hermes_memory_cli"
LOCALE_DIR = CLI_SRC / "locale"
LANGUAGES = ["zh_CN"]
# domain -> (folders scanned, folders skipped, marker functions)
DOMAINS: dict[str, tuple[list[Path], list[str], list[str]]] = {
    "cli": ([CLI_SRC], ["_dashboard", "locale"], ["_", "cli_gettext", "N_"]),
    # the web dashboard: Python marks text with N_ (translated when rendered), templates
    # with _() and {% trans %}
    "dashboard": ([CLI_SRC / "_dashboard"], ["static"], ["_", "N_", "gettext"]),
}
# domain -> extra Babel method maps and options (e.g. templates), beside "**.py": "python"
EXTRA_METHODS: dict[str, list[tuple[str, str]]] = {
    "dashboard": [("templates/**.html", "jinja2.ext.babel_extract")],
}
EXTRA_OPTIONS: dict[str, dict[str, dict[str, str]]] = {
    "dashboard": {"templates/**.html": {"extensions": "jinja2.ext.i18n"}},
}


def parser_messages() -> list[str]:
    """Every description and help text of the ``hermes-memory`` parser (domain ``cli``).

    They stay plain English where the parsers are built (no ``_()`` around each one, so that
    adding a command stays a one-line change) and are translated when help is shown; this
    collects them from the parser itself. Command groups other distributions contribute are
    left out: their text belongs to them.
    """
    from hermes_memory_cli import _cli as cli

    with mock.patch.object(cli, "_register_contributed", return_value=None):
        parser = cli.build_parser()
    found: dict[str, None] = {}
    seen: set[int] = set()

    def walk(node: argparse.ArgumentParser) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if node.description:
            found[node.description] = None
        for action in node._actions:
            if action.help and action.help != argparse.SUPPRESS:
                found[action.help] = None
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    if choice.help:
                        found[choice.help] = None
                for child in action.choices.values():
                    walk(child)

    walk(parser)
    return sorted(found)


# domain -> messages that are not marked in the source but looked up at run time
UNMARKED = {"cli": parser_messages}


def _add_unmarked(domain: str) -> None:
    """Put the domain's unmarked run-time messages into its freshly extracted template."""
    from babel.messages.pofile import read_po, write_po

    collect = UNMARKED.get(domain)
    if collect is None:
        return
    path = template_path(domain)
    with path.open("rb") as handle:
        catalog = read_po(handle)
    for message in collect():
        if message not in catalog:
            catalog.add(message, auto_comments=["argparse help (collected by tools/i18n.py)"])
    with path.open("wb") as handle:
        write_po(handle, catalog, omit_header=True, sort_output=True, no_location=True)


def _pybabel(*args: str) -> None:
    CommandLineInterface().run(["pybabel", "-q", *args])


def template_path(domain: str) -> Path:
    return LOCALE_DIR / f"{domain}.pot"


def _mapping(domain: str) -> str:
    """A Babel mapping file's text: Python sources, plus the domain's extra methods."""
    lines = ["[python: **.py]"]
    for pattern, method in EXTRA_METHODS.get(domain, []):
        lines.append(f"[{method}: {pattern}]")
        lines += [f"{k} = {v}" for k, v in EXTRA_OPTIONS.get(domain, {}).get(pattern, {}).items()]
    return "\n".join(lines) + "\n"


def extract(domain: str) -> None:
    LOCALE_DIR.mkdir(exist_ok=True)
    folders, skipped, keywords = DOMAINS[domain]
    with tempfile.NamedTemporaryFile("w", suffix=".cfg", delete=False) as mapping:
        mapping.write(_mapping(domain))
    args = ["extract", "--no-location", "--sort-output", "--omit-header", "-F", mapping.name]
    args += [f"--ignore-dirs={' '.join(skipped)}"] if skipped else []
    for keyword in keywords:
        args += ["-k", keyword]
    args += ["-o", str(template_path(domain)), *map(str, folders)]
    try:
        _pybabel(*args)
    finally:
        Path(mapping.name).unlink()
    _add_unmarked(domain)


def update(domain: str) -> None:
    for language in LANGUAGES:
        po = LOCALE_DIR / language / "LC_MESSAGES" / f"{domain}.po"
        verb = "update" if po.exists() else "init"
        extra = ["--no-fuzzy-matching", "--ignore-obsolete"] if verb == "update" else []
        _pybabel(
            verb,
            "-D",
            domain,
            "-i",
            str(template_path(domain)),
            "-d",
            str(LOCALE_DIR),
            "-l",
            language,
            *extra,
        )


def compile_all() -> None:
    for domain in DOMAINS:
        _pybabel("compile", "-D", domain, "-d", str(LOCALE_DIR), "--statistics")


def main(argv: list[str]) -> int:
    if argv[:1] != ["compile"]:
        for domain in DOMAINS:
            extract(domain)
            update(domain)
    compile_all()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
