"""Unit tests of the adapter's parts: settings, breaker, worker, recall formatting, errors."""

from __future__ import annotations

import httpx
import pytest

from hermes_memory_mem0 import ConfigError, Mem0Provider, load_settings
from hermes_memory_mem0._errors import BackendError, FailureKind, classify
from hermes_memory_mem0._recall import fact_key, format_recall, truncate_message


# ----------------------------------------------------------------------------- settings
def test_mode_resolution_and_precedence():
    assert load_settings({}, {}).mode == "platform"
    assert load_settings({}, {"MEM0_HOST": "http://h:8888/"}).mode == "selfhosted"
    assert load_settings({}, {"MEM0_HOST": "http://h:8888/"}).host == "http://h:8888"
    assert load_settings({"mem0": {"oss": {}}}, {"MEM0_HOST": "http://h"}).mode == "oss"
    env = {"MEM0_API_KEY": "env-key", "MEM0_USER_ID": "env-user", "MEM0_MODE": "platform"}
    s = load_settings({"mem0": {"user_id": "cfg-user", "mode": "self-hosted", "host": "x"}}, env)
    assert (s.mode, s.api_key, s.user_id) == ("selfhosted", "env-key", "cfg-user")
    assert load_settings({"mem0": {"user_id": "hermes-user"}}, {}).user_id is None


def test_bad_values_name_the_key():
    with pytest.raises(ConfigError, match=r"mem0\.timeout"):
        load_settings({"mem0": {"timeout": "soon"}}, {})
    with pytest.raises(ConfigError, match=r"mem0\.mode"):
        load_settings({"mem0": {"mode": "cloud"}}, {})
    with pytest.raises(ConfigError, match=r"mem0\.rerank"):
        load_settings({"mem0": {"rerank": "maybe"}}, {})
    with pytest.raises(ConfigError, match="mapping"):
        load_settings({"mem0": ["x"]}, {})
    assert load_settings({"mem0": {"colour": "red"}}, {}).unknown_keys == ("colour",)
    provider = Mem0Provider(config={"mem0": {"timeout": "soon"}}, environ={})
    assert provider.unavailable_reason() == (
        "configuration error: mem0.timeout must be a number, got 'soon'"
    )
    assert load_settings({}, {"MEM0_MODE": "Self_Hosted", "MEM0_HOST": "h"}).mode == "selfhosted"
    assert load_settings({"mem0": {"recall_top_k": 500}}, {}).recall_top_k == 50


def test_unavailable_reason_explains_what_is_missing(monkeypatch):
    assert "MEM0_API_KEY" in Mem0Provider().unavailable_reason()
    assert not Mem0Provider().is_available()
    monkeypatch.setenv("MEM0_API_KEY", "k")
    assert Mem0Provider().is_available()
    assert (
        Mem0Provider(config={"mem0": {"mode": "selfhosted"}})
        .unavailable_reason()
        .startswith("mem0 selfhosted mode needs the server URL")
    )
    broken = Mem0Provider(config={"mem0": {"timeout": "x"}})
    assert "configuration error" in broken.unavailable_reason()
    assert "error" in broken.handle_tool_call("mem0_search", {"query": "x"})
    broken.initialize("s", hermes_home="/nonexistent-dir-for-test", platform="cli")
    assert broken.prefetch("x") == ""


def test_config_schema_lists_every_env_var():
    schema = {f["key"]: f for f in Mem0Provider().get_config_schema()}
    assert schema["api_key"]["secret"] is True
    assert schema["api_key"]["env_var"] == "MEM0_API_KEY"
    assert schema["host"]["env_var"] == "MEM0_HOST"
    assert schema["mode"]["choices"] == ["platform", "selfhosted", "oss"]
    assert {"org_id", "project_id", "user_id", "telemetry", "oss"} <= set(schema)
    assert all(f["description"] for f in schema.values())


def test_constructor_is_cheap_and_tool_names():
    provider = Mem0Provider(hermes_home="/does/not/exist", config={"mem0": {"api_key": "k"}})
    names = [s["name"] for s in provider.get_tool_schemas()]
    assert names == ["mem0_search", "mem0_add", "mem0_update", "mem0_delete"]
    assert provider.name == "mem0"


# ----------------------------------------------------------------------------- recall
def test_recall_is_compact_deduplicated_and_bounded():
    results = [
        {"memory": "Likes  tea"},
        {"memory": "likes tea."},
        {"memory": "ＡＢＣ corp employee"},
        {"memory": "abc corp employee"},
        {"memory": "好きな色は青です。"},
        {"memory": "好きな色は青です"},
        {"memory": "Known already"},
        {"memory": ""},
    ]
    text, count = format_recall(results, exclude={fact_key("known already")})
    assert text.splitlines()[1:] == [
        "- Likes tea",
        "- ＡＢＣ corp employee",
        "- 好きな色は青です。",
    ]
    assert count == 3
    text, count = format_recall(
        [{"memory": "x" * 50}] * 1 + [{"memory": f"fact {i}"} for i in range(40)], max_chars=120
    )
    assert len(text) <= 120 and count >= 1
    assert format_recall([], max_items=3) == ("", 0)
    text, count = format_recall([{"memory": f"fact {i}"} for i in range(20)], max_items=3)
    assert count == 3


def test_truncation_prefers_sentence_ends():
    assert truncate_message("short", 450) == "short"
    text = "One sentence here. Another one follows! " + "z" * 500
    assert truncate_message(text, 100) == "One sentence here. Another one follows!"
    assert truncate_message("これは文です。" + "あ" * 100, 20) == "これは文です。"
    assert truncate_message("x" * 100, 10) == "x" * 10 + "…"


# ----------------------------------------------------------------------------- errors
def test_classification():
    request = httpx.Request("GET", "http://x")
    assert classify(httpx.ReadTimeout("t", request=request)).kind is FailureKind.TIMEOUT
    assert classify(httpx.ConnectError("refused", request=request)).kind is FailureKind.CONNECTION
    assert classify(BackendError(FailureKind.RATE_LIMITED, "429")).kind is FailureKind.RATE_LIMITED
    assert classify(ValueError("Memory with id 1 not found")).kind is FailureKind.NOT_FOUND
    assert classify(ValueError("Error: Invalid API key.")).kind is FailureKind.AUTH
    assert not FailureKind.NOT_FOUND.trips_breaker and FailureKind.SERVER.trips_breaker


def test_classification_of_real_mem0_exceptions():
    from mem0.exceptions import create_exception_from_response

    for status, kind in [
        (400, "invalid"),
        (401, "auth"),
        (404, "not_found"),
        (422, "invalid"),
        (429, "rate_limited"),
        (500, "server"),
        (503, "server"),
    ]:
        # called the way mem0's client calls it (client/utils.py _handle_http_error)
        exc = create_exception_from_response(
            status_code=status, response_text="boom", details={}, debug_info={"status_code": status}
        )
        assert classify(exc).kind.value == kind, (status, type(exc))
