"""A deterministic embedder and a scripted LLM for mem0's OSS ``Memory``, offline.

Both are plugged in through mem0's own factories (see `register`): the embedder by name in
``EmbedderFactory.provider_to_class``, the LLM with ``LlmFactory.register_provider``. The
``Memory`` object, its qdrant store, history database, hashing, dedup and search all run for
real; only the two model calls are replaced.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Callable
from typing import Any, ClassVar

from mem0.embeddings.base import EmbeddingBase
from mem0.llms.base import LLMBase
from mem0.utils.factory import EmbedderFactory, LlmFactory
from mem0_fake import tokens

DIMS = 256
EMBEDDER_NAME = "hermes_test_hash"
LLM_NAME = "hermes_test_scripted"


class HashEmbedder(EmbeddingBase):
    """Bag-of-words hashed into 256 dimensions, L2-normalised (CJK: one token per character).

    Non-negative weights: texts sharing a word always score above texts sharing none.
    """

    def embed(self, text: Any, memory_action: Any = None) -> list[float]:
        vector = [0.0] * DIMS
        for token in tokens(str(text)):
            digest = hashlib.sha256(token.encode()).digest()
            vector[int.from_bytes(digest[:2], "big") % DIMS] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]


class ScriptedLLM(LLMBase):
    """Answers mem0's extraction prompt from a script; records every call it got.

    ``ScriptedLLM.script`` maps the latest user message to the list of facts to extract;
    unknown messages extract nothing.
    """

    script: ClassVar[dict[str, list[str]]] = {}
    calls: ClassVar[list[list[dict[str, str]]]] = []
    lock = threading.Lock()

    def __init__(self, config: Any = None) -> None:
        super().__init__(config)

    def generate_response(
        self,
        messages: list[dict[str, str]],
        tools: Any = None,
        tool_choice: str = "auto",
        **kwargs: Any,
    ) -> str:
        with self.lock:
            type(self).calls.append(messages)
        prompt = messages[-1]["content"]
        facts: list[str] = []
        for trigger, extracted in type(self).script.items():
            if trigger in prompt:
                facts.extend(extracted)
        return json.dumps({"memory": [{"text": f} for f in facts]}, ensure_ascii=False)


def register() -> Callable[[], None]:
    """Plug both fakes into mem0's factories; returns an undo function."""
    EmbedderFactory.provider_to_class[EMBEDDER_NAME] = f"{__name__}.HashEmbedder"
    LlmFactory.register_provider(LLM_NAME, f"{__name__}.ScriptedLLM")

    def undo() -> None:
        EmbedderFactory.provider_to_class.pop(EMBEDDER_NAME, None)
        LlmFactory.provider_to_class.pop(LLM_NAME, None)

    return undo


def oss_section() -> dict[str, Any]:
    """The ``mem0.oss`` block that selects the fakes (store path defaults under the home)."""
    return {
        "llm": {"provider": LLM_NAME},
        "embedder": {"provider": EMBEDDER_NAME},
        "vector_store": {"provider": "qdrant", "config": {"embedding_model_dims": DIMS}},
    }
