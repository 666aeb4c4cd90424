"""The adapter kit with real files, real threads and real worker queues."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_core.health import read_provider_status
from hermes_memory_core.kit import (
    CallFailed,
    Failure,
    FailureKind,
    Field,
    Guard,
    PendingWrites,
    RecallCache,
    Settings,
    SettingsError,
    Spool,
    Unavailable,
    bullet_block,
    check_tool_call,
    classify_common,
    fact_key,
    int_arg,
    required_text,
    setting,
    truncate_text,
)


class Down(Exception):
    pass


class Bad(Exception):
    pass


def classify(exc: BaseException) -> Failure:
    if isinstance(exc, Bad):
        return Failure(FailureKind.INVALID, "bad request", 400)
    if isinstance(exc, PermissionError):
        return Failure(FailureKind.AUTH, "key rejected", 401)
    return Failure(FailureKind.SERVER, f"down: {exc}", 503)


def guard(home: Path | None, **kw: object) -> Guard:
    return Guard("svc", classify, threshold=2, cooldown=60.0, home=home, label="Svc", **kw)  # type: ignore[arg-type]


def fail(exc: BaseException) -> Callable[[], None]:
    def call() -> None:
        raise exc

    return call


# ------------------------------------------------------------------- guard
def test_guard_opens_after_threshold_and_records_health(tmp_path: Path) -> None:
    g = guard(tmp_path)
    assert g.call("ping", lambda: 42) == 42
    for _ in range(2):
        with pytest.raises(CallFailed) as info:
            g.call("write", fail(Down("boom")))
    assert info.value.failure.kind is FailureKind.SERVER
    record = read_provider_status(tmp_path, "svc")
    assert record is not None and record["state"] == "circuit_open"
    assert "circuit open after 2" in record["detail"]
    assert record["last_error_kind"] == "server"
    with pytest.raises(Unavailable, match="temporarily unavailable"):
        g.call("write", lambda: 1)


def test_guard_request_errors_do_not_trip_and_auth_opens_at_once(tmp_path: Path) -> None:
    g = guard(tmp_path)
    for _ in range(5):
        with pytest.raises(CallFailed):
            g.call("get", fail(Bad()))
    assert not g.is_open and g.failures == 0
    with pytest.raises(CallFailed):
        g.call("get", fail(PermissionError("401")))
    assert g.retry_in() > 0
    assert read_provider_status(tmp_path, "svc")["state"] == "circuit_open"  # type: ignore[index]


def test_guard_recovery_is_reported_ok(tmp_path: Path) -> None:
    clock = [0.0]
    g = guard(tmp_path, clock=lambda: clock[0])
    for _ in range(2):
        with pytest.raises(CallFailed):
            g.call("w", fail(Down("x")))
    clock[0] = 61.0
    assert g.call("w", lambda: "back") == "back"
    assert read_provider_status(tmp_path, "svc")["state"] == "ok"  # type: ignore[index]


def test_classify_common_knows_builtin_and_httpx_errors() -> None:
    import httpx

    assert classify_common(TimeoutError("slow")).kind is FailureKind.TIMEOUT  # type: ignore[union-attr]
    assert classify_common(ConnectionRefusedError()).kind is FailureKind.CONNECTION  # type: ignore[union-attr]
    request = httpx.Request("GET", "http://127.0.0.1/x")
    response = httpx.Response(429, request=request)
    failure = classify_common(httpx.HTTPStatusError("429", request=request, response=response))
    assert (
        failure is not None and failure.kind is FailureKind.RATE_LIMITED and failure.status == 429
    )
    assert classify_common(ValueError("?")) is None


# ------------------------------------------------------------------- pending writes
class Service:
    def __init__(self) -> None:
        self.received: list[str] = []
        self.down = False
        self.reject: set[str] = set()
        self.lock = threading.Lock()


def make_writes(home: Path | None, service: Service, **kw: object) -> PendingWrites:
    g = guard(home)

    def send(write: dict[str, Any]) -> None:
        def call() -> None:
            if service.down:
                raise Down("unreachable")
            if write["text"] in service.reject:
                raise Bad()
            with service.lock:
                service.received.append(write["text"])

        g.call("write", call)

    return PendingWrites(g, send, home=home, **kw)  # type: ignore[arg-type]


def test_writes_are_sent_in_order_and_a_rejected_one_is_dropped(tmp_path: Path) -> None:
    service = Service()
    service.reject = {"两"}
    writes = make_writes(tmp_path, service)
    for text in ["一", "两", "三"]:
        writes.enqueue({"text": text})
    assert writes.drain(5)
    assert service.received == ["一", "三"]
    assert len(writes) == 0
    assert writes.close(5)
    assert list(tmp_path.glob("svc_pending.*")) == []


def test_unsent_writes_are_spooled_at_shutdown_and_replayed_once(tmp_path: Path) -> None:
    service = Service()
    service.down = True
    first = make_writes(tmp_path, service)
    for text in ["a", "b"]:
        first.enqueue({"text": text})
    first.drain(5)
    assert service.received == [] and len(first) == 2
    first.close(5)
    [saved] = list(tmp_path.glob("svc_pending.*.json"))
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert [w["text"] for w in json.loads(saved.read_text(encoding="utf-8"))] == ["a", "b"]
    record = read_provider_status(tmp_path, "svc")
    assert record is not None and "saved to" in record["detail"]

    service.down = False
    second = make_writes(tmp_path, service)
    second.enqueue({"text": "c"})  # queued before the replay: replayed writes go first
    assert second.restore() == 2
    assert second.drain(5)
    assert service.received[-3:] in (["a", "b", "c"], ["c", "a", "b"])
    assert sorted(service.received) == ["a", "b", "c"]
    assert list(tmp_path.glob("svc_pending.*")) == []  # settled: the claimed file is gone
    second.close(5)
    third = make_writes(tmp_path, service)
    assert third.restore() == 0  # at-least-once, but not again after settling
    third.close(1)


def test_a_claim_left_by_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    pid = int(dead.stdout)
    (tmp_path / f"svc_pending.{pid}.5.sending").write_text('[{"text": "x"}]', encoding="utf-8")
    (tmp_path / f"svc_pending.{os.getpid()}.6.sending").write_text("[]", encoding="utf-8")
    claimed = Spool(tmp_path, "svc").claim()
    assert len(claimed) == 1 and Spool.read(claimed[0]) == [{"text": "x"}]


def test_a_corrupt_spool_file_is_left_in_place(tmp_path: Path) -> None:
    (tmp_path / "svc_pending.1.1.json").write_text("{not json", encoding="utf-8")
    writes = make_writes(tmp_path, Service())
    assert writes.restore() == 0
    assert len(list(tmp_path.glob("svc_pending.*"))) == 1
    writes.close(1)


def test_the_queue_is_bounded_and_drops_the_oldest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    service = Service()
    service.down = True
    writes = make_writes(tmp_path, service, max_pending=2)
    for text in ["1", "2", "3"]:
        writes.enqueue({"text": text})
    writes.drain(5)
    assert [w["text"] for w in writes.snapshot()] == ["2", "3"] and writes.dropped == 1
    assert "1 write(s) dropped: Svc unreachable and more than 2 pending" in caplog.text
    writes.close(1)


def test_without_a_home_unsent_writes_are_reported_lost(caplog: pytest.LogCaptureFixture) -> None:
    service = Service()
    service.down = True
    writes = make_writes(None, service)
    writes.enqueue({"text": "x"})
    writes.close(2)
    assert "are lost" in caplog.text


# ------------------------------------------------------------------- settings
@dataclass(frozen=True)
class SvcSettings(Settings):
    section = "svc"
    timeout: float = setting(8.0, "Seconds per request.", env="SVC_TIMEOUT", minimum=0.1)
    api_key: str = setting("", "The key.", env="SVC_API_KEY", secret=True)
    mode: str = setting("cloud", "Where.", choices=("cloud", "local"))
    retries: int = setting(1, "Retries.")
    enabled: bool = setting(True, "On or off.")


def test_settings_precedence_file_env_default() -> None:
    loaded = SvcSettings.load({"timeout": "2.5", "extra": 1},
                              environ={"SVC_TIMEOUT": "9", "SVC_API_KEY": " k "})  # fmt: skip
    assert loaded.timeout == 2.5 and loaded.api_key == "k"
    assert loaded.retries == 1 and loaded.enabled is True
    assert loaded.explicit == {"timeout", "api_key"} and loaded.unknown == ("extra",)


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"timeout": "soon"}, "svc.timeout must be a number"),
        ({"timeout": 0}, "svc.timeout must be at least 0.1"),
        ({"retries": 1.5}, "svc.retries must be an integer"),
        ({"enabled": "maybe"}, "svc.enabled"),
        ({"mode": "moon"}, "svc.mode must be one of cloud, local"),
        ({"api_key": ["x"]}, "svc.api_key must be a string"),
    ],
)
def test_settings_errors_name_the_key(section: dict[str, Any], message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace(".", r"\.")):
        SvcSettings.load(section, environ={})


def test_config_schema_marks_secrets_and_env_vars() -> None:
    schema = {f["key"]: f for f in SvcSettings.schema()}
    assert schema["api_key"]["secret"] is True and schema["api_key"]["env_var"] == "SVC_API_KEY"
    assert schema["mode"]["choices"] == ["cloud", "local"] and schema["timeout"]["type"] == "number"
    assert all(isinstance(f, Field) for f in SvcSettings.fields())


def test_the_older_settings_path_is_gone() -> None:
    from hermes_memory_core import kit

    for name in ("load_section", "LoadedSection", "config_schema"):
        assert not hasattr(kit, name) and name not in kit.__all__


# ------------------------------------------------------------------- recall and tool args
def test_fact_key_treats_widths_bullets_case_and_final_stops_alike() -> None:
    assert fact_key("- User likes Oolong tea.") == fact_key("user likes oolong tea")
    assert fact_key("ＡＢＣ住在京都。") == fact_key("abc住在京都")
    assert fact_key("   ") == ""


def test_bullet_block_drops_repeats_and_known_facts_within_limits() -> None:
    text, count = bullet_block(
        "## recall", ["Likes tea", "likes tea.", "住在京都", "Has a cat"],
        exclude={fact_key("Has a cat")}, max_chars=40,
    )  # fmt: skip
    assert text == "## recall\n- Likes tea\n- 住在京都" and count == 2
    assert bullet_block("## h", []) == ("", 0)


def test_recall_cache_is_per_session_and_bounded() -> None:
    cache = RecallCache(sessions=2, fresh_seconds=60)
    for sid in ("a", "b", "c"):
        cache.put(sid, "q", f"text {sid}", 1)
    assert cache.get("a") is None and cache.fresh("c", "q") and not cache.fresh("c", "other")


def test_tool_argument_helpers() -> None:
    assert check_tool_call("x", {}, ("y",)) == "Unknown tool: x"
    assert (
        check_tool_call("y", ["not", "a", "dict"], ("y",)) == "y: arguments must be a JSON object"
    )
    assert required_text({"q": "  hi "}, "q") == "hi"
    with pytest.raises(ValueError, match="'q' is required"):
        required_text({"q": "  "}, "q")
    assert int_arg({"k": "70"}, "k", 10, low=1, high=50) == 50
    with pytest.raises(ValueError, match="'k' must be an integer"):
        int_arg({"k": True}, "k", 10, low=1, high=50)
    assert truncate_text("One. Two three four five six.", 12) == "One."


def test_guard_retries_transient_failures_and_counts_only_the_last(tmp_path: Path) -> None:
    attempts: list[int] = []

    def flaky() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise Down("blip")
        return "ok"

    g = Guard("svc", classify, threshold=2, home=tmp_path, retries=2, backoff=0.01)
    assert g.call("get", flaky) == "ok" and len(attempts) == 3 and g.failures == 0
    attempts.clear()
    with pytest.raises(CallFailed):
        g.call("get", fail(Bad()))  # a refused request is never retried
    with pytest.raises(CallFailed):
        g.call("get", fail(Down("still down")))
    assert g.failures == 1  # three attempts, one failure counted
