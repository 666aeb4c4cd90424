"""``sessions.embedder`` naming no installed embedder is warned about at load, like a key typo."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from hermes_memory_core import load_config


def _load(home: Path, value: str, caplog: pytest.LogCaptureFixture) -> list[str]:
    (home / "config.yaml").write_text(f"sessions:\n  embedder: {value}\n", encoding="utf-8")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hermes_memory_core.config"):
        cfg = load_config(home)
    assert cfg.sessions.embedder["embedder"] is not None  # kept as written either way
    return [r.getMessage() for r in caplog.records]


def test_a_misspelt_embedder_gets_a_did_you_mean(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (message,) = _load(tmp_path, "defualt", caplog)
    assert "sessions.embedder 'defualt' is not an installed embedder" in message
    assert "(did you mean default?)" in message
    assert "installed: default, fastembed, onnx, openai" in message


def test_an_unrelated_name_lists_the_installed_ones(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (message,) = _load(tmp_path, "typo", caplog)
    assert "did you mean" not in message
    assert "installed: default" in message


@pytest.mark.parametrize("value", ["default", "openai", "fastembed", "onnx", "off", "none", "'no'"])
def test_installed_names_and_off_words_are_quiet(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, value: str
) -> None:
    assert _load(tmp_path, value, caplog) == []


def test_the_builtin_names_match_the_vectors_package() -> None:
    from hermes_memory_core import config
    from hermes_memory_vectors.config import BUILTIN_EMBEDDERS

    assert set(BUILTIN_EMBEDDERS) == config._BUILTIN_EMBEDDERS
