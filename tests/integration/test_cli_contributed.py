"""Command groups contributed to ``hermes-memory`` through the ``hermes_memory.cli`` entry points."""

from __future__ import annotations

import argparse
import sys
import types
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import pytest

from hermes_memory_cli import _cli


def test_the_mcp_server_contributes_its_group_through_an_entry_point() -> None:
    [ep] = [e for e in entry_points(group=_cli.CLI_ENTRY_POINT_GROUP) if e.name == "mcp"]
    assert ep.value == "hermes_memory_mcp_server._cli:register"
    args = _cli.build_parser().parse_args(["mcp", "serve", "--http", "0"])
    assert args.func.__module__ == "hermes_memory_mcp_server._cli" and args.http == 0


def _with_entry_points(monkeypatch: pytest.MonkeyPatch, *extra: EntryPoint) -> None:
    real = entry_points

    def patched(**kw: Any) -> Any:
        found = list(real(**kw))
        return found + list(extra) if kw.get("group") == _cli.CLI_ENTRY_POINT_GROUP else found

    monkeypatch.setattr("importlib.metadata.entry_points", patched)


def test_a_contributed_group_that_fails_becomes_a_stub_saying_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = types.ModuleType("hm_cli_boom")

    def register(subparsers: Any, *, parents: list[argparse.ArgumentParser]) -> None:
        raise RuntimeError("cannot add my commands")

    module.register = register  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "hm_cli_boom", module)
    _with_entry_points(
        monkeypatch, EntryPoint("boom", "hm_cli_boom:register", _cli.CLI_ENTRY_POINT_GROUP)
    )
    args = _cli.build_parser().parse_args(["boom", "serve"])
    assert "RuntimeError: cannot add my commands" in args._missing
    # the other groups are untouched
    assert _cli.build_parser().parse_args(["mcp", "serve"]).func.__name__ == "run_serve"


def test_a_contributed_group_adds_its_own_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("hm_cli_hello")

    def register(subparsers: Any, *, parents: list[argparse.ArgumentParser]) -> None:
        group = subparsers.add_parser("hello").add_subparsers(dest="hello_command")
        group.add_parser("say", parents=parents).set_defaults(func=lambda args: 0)

    module.register = register  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "hm_cli_hello", module)
    _with_entry_points(
        monkeypatch, EntryPoint("hello", "hm_cli_hello:register", _cli.CLI_ENTRY_POINT_GROUP)
    )
    args = _cli.build_parser().parse_args(["hello", "say", "--home", "home-dir"])
    assert args.func(args) == 0 and args.home == "home-dir"
