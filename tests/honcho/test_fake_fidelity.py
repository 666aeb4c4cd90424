"""The fake itself against the real server's recorded answers.

Every exchange of ``honcho-3.0.12-sdk-2.7.0.jsonl`` (real honcho-ai 2.7.0 against a real
Honcho 3.0.12) is replayed, in order, into a fresh `FakeHoncho`; the status code and the
response shape (keys, and every value that is not server-generated) must match. This is
what lets the contract tests trust the fake.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from honcho_fake import FakeHoncho

RECORDING = Path(__file__).resolve().parents[1] / "recordings" / "honcho-3.0.12-sdk-2.7.0.jsonl"
GENERATED = {"id", "created_at", "token_count"}


def _load() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDING.read_text().splitlines() if line.strip()]


def _same_shape(real: Any, ours: Any, where: str, *, values: bool = True) -> None:
    if isinstance(real, dict):
        assert isinstance(ours, dict), where
        assert set(real) <= set(ours), f"{where}: missing {set(real) - set(ours)}"
        for key, value in real.items():
            _same_shape(value, ours[key], f"{where}.{key}", values=values)
    elif isinstance(real, list):
        assert isinstance(ours, list), where
        assert len(real) == len(ours), f"{where}: {len(real)} items vs {len(ours)}"
        for i, (a, b) in enumerate(zip(real, ours, strict=True)):
            _same_shape(a, b, f"{where}[{i}]", values=values)
    elif values and where.rsplit(".", 1)[-1] not in GENERATED:
        assert real == ours, f"{where}: {real!r} != {ours!r}"
    else:
        assert type(real) is type(ours), f"{where}: {type(real)} vs {type(ours)}"


def test_fake_reproduces_every_recorded_exchange() -> None:
    """Replays the 24 recorded requests into the fake; statuses and shapes must match."""
    fake = FakeHoncho()
    ids: dict[str, str] = {}
    for n, ex in enumerate(_load()):
        path = ex["path"]
        for real_id, fake_id in ids.items():
            path = path.replace(real_id, fake_id)
        request = httpx.Request(
            ex["method"],
            "http://honcho.test" + path,
            params=ex["query"],
            json=ex["request_body"] if ex["request_body"] is not None else None,
        )
        response = fake.handle(request)
        assert response.status_code == ex["status"], (n, ex["path"], response.text)
        real = ex["response_body"]
        if real is None:
            assert not response.content
            continue
        ours = response.json()
        if "conclusions" in ex["path"] and ex["method"] == "POST" and isinstance(real, list):
            for r, o in zip(real, ours, strict=True):
                ids[r["id"]] = o["id"]
        # chat answers are the recording's stub LLM text: compare their shape only
        _same_shape(
            _strip_ids(real),
            _strip_ids(ours),
            f"#{n} {ex['method']} {ex['path']}",
            values=not ex["path"].endswith("/chat"),
        )


def _strip_ids(value: Any) -> Any:
    """Server-generated message/conclusion ids differ between runs; entity ids do not."""
    if isinstance(value, list):
        return [_strip_ids(v) for v in value]
    if isinstance(value, dict):
        generated = "session_id" in value or "observer_id" in value
        return {k: _strip_ids(v) for k, v in value.items() if not (generated and k in GENERATED)}
    return value
