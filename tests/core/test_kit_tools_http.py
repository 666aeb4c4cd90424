"""The kit's tool table, JSON client, background recall, turn buffer and test server, with
real sockets (a `FakeService` on 127.0.0.1), real threads and a real `Guard`."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_core.kit import (
    BackgroundRecall,
    CallFailed,
    Failure,
    FailureKind,
    Guard,
    JsonClient,
    Queued,
    SerialWorker,
    ServiceError,
    Tool,
    ToolTable,
    TurnBuffer,
    Unavailable,
    blank,
    call_or_queue,
    classify_http,
    close_when_idle,
    overlay,
    path_segment,
    tool_schema,
    visible_text,
)
from hermes_memory_testing import FakeService, Raw, Seen, SilentServer, refused_url


# ---------------------------------------------------------------------- the tool table
class Notes:
    """A provider stand-in: two tools by method name, one by function."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def _search(self, args: dict[str, Any], client: str, guard: str) -> dict[str, Any]:
        self.ran.append("search")
        if args.get("boom") == "value":
            raise ValueError("'query' must be a string")
        if args.get("boom") == "down":
            raise Unavailable("Notes is temporarily unavailable")
        if args.get("boom") == "failed":
            raise CallFailed(Failure(FailureKind.SERVER, "HTTP 503"))
        if args.get("boom") == "queued":
            raise Queued("saved and sent later")
        return {"found": ["京都の蜂"], "client": client, "guard": guard}

    def _add(self, args: dict[str, Any], client: str, guard: str) -> str:
        self.ran.append("add")
        return '{"raw": true}'


def _forget(owner: Notes, args: dict[str, Any], client: str, guard: str) -> dict[str, Any]:
    owner.ran.append("forget")
    return {"forgotten": args.get("id")}


def table(**options: Any) -> ToolTable:
    return ToolTable(
        Tool(
            tool_schema("notes_search", "Search.", {"query": {"type": "string"}}, ["query"]),
            "_search",
        ),
        Tool(tool_schema("notes_add", "Add."), "_add", writes=True),
        Tool(
            tool_schema("notes_forget", "Forget."),
            _forget,
            writes=True,
            read_only="this agent may not forget notes",
        ),
        service="Notes",
        **options,
    )


def run(tools: ToolTable, owner: Notes, name: str, args: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("context", ("client", "guard"))
    return json.loads(tools.dispatch(owner, name, args, **kwargs))


def test_a_tool_runs_with_its_context_and_answers_json() -> None:
    owner = Notes()
    assert run(table(), owner, "notes_search", {"query": "x"}) == {
        "found": ["京都の蜂"],
        "client": "client",
        "guard": "guard",
    }
    assert table().dispatch(owner, "notes_search", {}, context=("c", "g")).count("京都") == 1
    assert run(table(), owner, "notes_add", {}) == {"raw": True}  # a str answer passes through
    assert run(table(), owner, "notes_forget", {"id": "n1"}) == {"forgotten": "n1"}
    assert owner.ran == ["search", "search", "add", "forget"]


def test_unknown_tools_and_non_object_arguments_never_reach_a_method() -> None:
    owner = Notes()
    assert run(table(), owner, "notes_drop", {}) == {"error": "Unknown tool: notes_drop"}
    for args in (None, [], "query", 3):
        answer = run(table(), owner, "notes_search", args)
        assert answer == {"error": "notes_search: arguments must be a JSON object"}
    assert owner.ran == []


def test_a_provider_that_is_not_ready_names_why() -> None:
    owner = Notes()
    answer = run(table(), owner, "notes_search", {}, context=None, reason="set NOTES_URL")
    assert answer == {"error": "Notes is not available: set NOTES_URL"}
    answer = run(table(), owner, "notes_search", {}, context=None)
    assert answer["error"].endswith("not initialised or was shut down")
    assert owner.ran == []


def test_writing_tools_are_refused_in_a_read_only_context_before_they_run() -> None:
    owner = Notes()
    answer = run(table(), owner, "notes_add", {}, writes=False)
    assert answer == {
        "error": "notes_add: this agent context is read-only (only the primary agent writes)"
    }
    answer = run(table(), owner, "notes_forget", {}, writes=False)
    assert answer == {"error": "notes_forget: this agent may not forget notes"}
    assert run(table(), owner, "notes_search", {}, writes=False)["found"]  # reading is fine
    assert owner.ran == ["search"]


@pytest.mark.parametrize(
    ("boom", "default", "named"),
    [
        (
            "value",
            "notes_search: 'query' must be a string",
            "notes_search: 'query' must be a string",
        ),
        (
            "down",
            "Notes is temporarily unavailable",
            "notes_search: Notes is temporarily unavailable",
        ),
        ("failed", "HTTP 503", "notes_search failed: HTTP 503"),
    ],
)
def test_failures_become_tool_errors_in_the_tables_wording(
    boom: str, default: str, named: str
) -> None:
    assert run(table(), Notes(), "notes_search", {"boom": boom}) == {"error": default}
    wording = table(unavailable_error="{tool}: {message}", failed_error="{tool} failed: {message}")
    assert run(wording, Notes(), "notes_search", {"boom": boom}) == {"error": named}


def test_a_queued_write_answers_queued_not_an_error() -> None:
    answer = run(table(), Notes(), "notes_search", {"boom": "queued"})
    assert answer == {"queued": True, "note": "saved and sent later"}


def test_the_schemas_are_copies_and_names_are_unique() -> None:
    tools = table()
    schemas = tools.schemas()
    assert [s["name"] for s in schemas] == ["notes_search", "notes_add", "notes_forget"]
    assert schemas[0]["parameters"] == {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    }
    schemas[0]["name"] = "changed"
    assert tools.schemas()[0]["name"] == "notes_search"
    assert tools.names == frozenset({"notes_search", "notes_add", "notes_forget"})
    with pytest.raises(ValueError, match="share a name"):
        ToolTable(
            Tool(tool_schema("a", "A."), "_a"), Tool(tool_schema("a", "B."), "_b"), service="X"
        )


# ---------------------------------------------------------------------- call_or_queue
def guard(threshold: int = 5) -> Guard:
    return Guard(
        "notes",
        lambda exc: classify_http(exc, "Notes"),
        threshold=threshold,
        cooldown=60.0,
        label="Notes",
    )


def test_call_or_queue_sends_now_when_it_can() -> None:
    queued: list[str] = []
    assert call_or_queue(guard(), "add", lambda: "id-1", lambda: queued.append("x")) == "id-1"
    assert queued == []


def test_call_or_queue_queues_when_the_service_cannot_be_reached() -> None:
    queued: list[str] = []
    g = guard(threshold=1)

    def refused() -> None:
        raise ConnectionRefusedError("refused")

    with pytest.raises(Queued, match="Notes is unreachable; saved and sent later"):
        call_or_queue(g, "add", refused, lambda: queued.append("first"))
    with pytest.raises(Queued, match=r"saved and sent later .*temporarily unavailable"):
        call_or_queue(g, "add", lambda: None, lambda: queued.append("breaker open"))
    assert queued == ["first", "breaker open"]


def test_call_or_queue_does_not_queue_what_the_service_refused() -> None:
    queued: list[str] = []

    def refused() -> None:
        raise ServiceError(422, "Notes POST /notes: HTTP 422 text is required")

    with pytest.raises(CallFailed) as caught:
        call_or_queue(guard(), "add", refused, lambda: queued.append("x"))
    assert caught.value.failure.kind is FailureKind.INVALID and queued == []


# ---------------------------------------------------------------------- JsonClient
SECRET = "sk-live-0123456789abcdef"


class Service(FakeService):
    """An envelope service: ``{"ok": true, "data": ...}`` or ``{"ok": false, "why": ...}``."""

    redirect_to = ""

    def route(self, seen: Seen) -> tuple[int, Any]:
        if seen.path == "/echo":
            return 200, {"ok": True, "data": {"query": seen.query, "body": seen.body}}
        if seen.path == "/refused-in-200":
            return 200, {"ok": False, "why": "quota"}
        if seen.path == "/secret":
            return 401, {"why": f"key {SECRET} is revoked"}
        if seen.path == "/html":
            return 200, Raw(b"<html>proxy login</html>", "text/html")
        if seen.path == "/redirect":
            return 302, Raw(b"", None, (("Location", f"{self.redirect_to}/stolen"),))
        if seen.path == "/blob":
            return 200, Raw(bytes(range(256)) * 40)
        return 404, {"why": "no route"}


class EnvelopeClient(JsonClient):
    def error_detail(self, payload: Any) -> tuple[str, str]:
        return "", str(payload.get("why", "")) if isinstance(payload, dict) else ""

    def answer_failed(self, payload: Any) -> bool:
        return isinstance(payload, dict) and payload.get("ok") is False

    def unwrap(self, payload: Any, method: str, path: str) -> Any:
        return payload.get("data")


@pytest.fixture
def service() -> Iterator[Service]:
    with Service() as running:
        yield running


@pytest.fixture
def client(service: Service) -> Iterator[EnvelopeClient]:
    made = EnvelopeClient(
        service.url + "/",
        service="Notes",
        timeout=2.0,
        secret=SECRET,
        headers={"X-Key": SECRET, "User-Agent": "tests"},
    )
    yield made
    made.close()


def test_requests_carry_the_headers_params_and_json_body(
    client: EnvelopeClient, service: Service
) -> None:
    answer = client.request("POST", "/echo", params={"q": "蜂"}, body={"text": "京都"})
    assert answer == {"query": {"q": "蜂"}, "body": {"text": "京都"}}
    [seen] = service.calls("/echo", "POST")
    assert seen.headers["X-Key"] == SECRET and seen.headers["Accept"] == "application/json"
    assert seen.headers["User-Agent"] == "tests"


def test_error_answers_are_one_line_with_the_secret_masked(client: EnvelopeClient) -> None:
    with pytest.raises(ServiceError) as caught:
        client.request("GET", "/secret")
    assert caught.value.status == 401 and SECRET not in str(caught.value)
    assert str(caught.value) == "Notes GET /secret: HTTP 401 key *** is revoked"
    failure = classify_http(caught.value, "Notes", auth_hint="NOTES_KEY")
    assert failure.kind is FailureKind.AUTH and failure.message.endswith("Check NOTES_KEY.")
    with pytest.raises(ServiceError) as caught:
        client.request("GET", "/refused-in-200")
    assert caught.value.status == 500 and "quota" in str(caught.value)


def test_an_answer_that_is_not_json_is_a_server_failure(client: EnvelopeClient) -> None:
    with pytest.raises(ServiceError) as caught:
        client.request("GET", "/html")
    assert caught.value.status == 0
    assert classify_http(caught.value, "Notes").kind is FailureKind.SERVER


def test_redirects_are_not_followed(client: EnvelopeClient, service: Service) -> None:
    with Service() as elsewhere:
        service.redirect_to = elsewhere.url
        assert client.request("GET", "/redirect") is None  # an empty answer, not followed
        assert service.paths() == ["GET /redirect"] and elsewhere.seen == []


def test_downloads_are_capped(client: EnvelopeClient) -> None:
    data, complete = client.download("/blob", 100, timeout=5.0)
    assert data == bytes(range(100)) and complete is False
    data, complete = client.download("/blob", 1 << 20, timeout=5.0)
    assert len(data) == 256 * 40 and complete is True
    with pytest.raises(ServiceError):
        client.download("/missing", 100, timeout=5.0)


def test_a_silent_or_absent_server_is_a_timeout_or_a_connection_failure() -> None:
    with SilentServer() as silent:
        hung = JsonClient(silent.url, service="Notes", timeout=0.3)
        with pytest.raises(Exception) as caught:
            hung.request("GET", "/x")
        hung.close()
    assert classify_http(caught.value, "Notes").kind is FailureKind.TIMEOUT
    gone = JsonClient(refused_url(), service="Notes", timeout=2.0)
    with pytest.raises(Exception) as caught:
        gone.request("GET", "/x")
    gone.close()
    failure = classify_http(caught.value, "Notes")
    assert failure.kind is FailureKind.CONNECTION and failure.message.startswith("Notes: ")


@pytest.mark.parametrize(
    "bad",
    ["", " ", ".", "..", " .. ", "a" * 257, "a\u200bb", "evil\u202etxt", "a\nb", "a\u2028b"],
)
def test_path_segments_that_could_move_the_path_or_hide_text_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="memory id"):
        path_segment(bad, "memory id")


def test_path_segments_are_encoded_whole() -> None:
    assert path_segment("../../admin", "id") == "..%2F..%2Fadmin"
    assert path_segment("記憶 1", "id") == "%E8%A8%98%E6%86%B6%201"
    assert path_segment("a?b#c", "id") == "a%3Fb%23c"


def test_the_kit_does_not_import_httpx() -> None:
    code = "import sys, hermes_memory_core.kit; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------- background recall
def test_a_late_recall_is_kept_for_the_next_turn_and_fetched_once() -> None:
    recall = BackgroundRecall("test-recall")
    release = threading.Event()
    calls: list[str] = []

    def fetch() -> tuple[str, int]:
        calls.append("fetch")
        release.wait(10)
        return "## Memory\n- 京都", 1

    assert recall.answer("s", "bees", fetch, 0.05) == ("", 0)  # not ready yet
    assert recall.start("s", "bees", fetch) is recall.running  # joined, not started again
    release.set()
    assert recall.running is not None and recall.running.wait(10)
    assert recall.answer("s", "bees", fetch, 5) == ("## Memory\n- 京都", 1)
    assert recall.answer("other", "bees", fetch, 5) == ("## Memory\n- 京都", 1)
    assert calls == ["fetch", "fetch"]  # once per session, then from the cache
    recall.close()


def test_a_failed_fetch_is_not_cached_and_refresh_fetches_again() -> None:
    recall = BackgroundRecall("test-recall")
    answers: list[tuple[str, int] | None] = [None, ("one", 1), ("two", 2)]
    fetch = lambda: answers.pop(0)  # noqa: E731
    assert recall.answer("s", "q", fetch, 5) == ("", 0)
    assert recall.answer("s", "q", fetch, 5) == ("one", 1)
    assert recall.answer("s", "q", fetch, 5) == ("one", 1)  # fresh: no fetch
    assert recall.answer("s", "q", fetch, 5, refresh=True) == ("two", 2)
    assert recall.answer("s", "other", lambda: None, 5) == ("", 0)  # another query's answer
    recall.close()


# ---------------------------------------------------------------------- small pieces
def test_the_turn_buffer_keeps_what_was_said() -> None:
    turns = TurnBuffer()
    assert turns.add("  ", "\n") == 0
    assert turns.add("我住在京都", "") == 1
    assert turns.add("", "Noted.") == 2
    assert turns.add(" hi ", " hello ") == 3
    assert turns.take() == ["User: 我住在京都", "Assistant: Noted.", "User: hi\nAssistant: hello"]
    assert turns.take() == []


def test_invisible_text_is_not_text() -> None:
    for hidden in ("\u200b", " \u200d\u200c ", "\u2066\u2069", "\ufeff"):
        assert blank(hidden)
        with pytest.raises(ValueError, match="'content' is required"):
            visible_text({"content": hidden}, "content")
    assert visible_text({"content": " 蜂\u200b "}, "content") == "蜂\u200b"
    assert not blank("蜂")


def test_the_overlay_leaves_out_known_and_repeated_facts() -> None:
    text, count = overlay(
        "## Profile",
        ["Lives in Kyoto", "Keeps bees"],
        "## Memories",
        ["keeps bees.", "Likes tea", "LIKES TEA"],
        exclude={"lives in kyoto"},
    )
    assert text == "## Profile\n- Keeps bees\n\n## Memories\n- Likes tea"
    assert count == 2
    assert overlay("## P", [], "## M", [], exclude=()) == ("", 0)


def test_a_client_is_closed_only_once_its_workers_are_idle() -> None:
    closed = threading.Event()
    busy, release = SerialWorker("busy"), threading.Event()
    busy.submit(lambda: release.wait(10))
    close_when_idle(closed.set, (busy, None), drained=True, within=30, name="closer")
    assert not closed.wait(0.2)  # a call is in flight: not closed under it
    release.set()
    assert closed.wait(10)
    busy.close(1)
    now = threading.Event()
    close_when_idle(now.set, (None,), drained=True, within=30, name="closer")
    assert now.is_set()  # idle: closed at once, on the caller's thread


def test_two_failures_at_once_leave_the_newer_state_on_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thread B counts the first failure and is slow to write its record; thread A counts
    the second (the breaker opens) meanwhile. The record must end ``circuit_open``, not
    B's stale ``degraded``."""
    from hermes_memory_core.health import read_provider_status
    from hermes_memory_core.kit import _guard as guard_module

    writing, release = threading.Event(), threading.Event()
    write = guard_module.write_provider_status

    def slow_for_b(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == "B":
            writing.set()
            release.wait(1.0)  # B holds on between deciding its state and writing it
        return write(*args, **kwargs)

    monkeypatch.setattr(guard_module, "write_provider_status", slow_for_b)
    g = Guard(
        "race",
        lambda exc: classify_http(exc, "Race"),
        threshold=2,
        cooldown=60.0,
        home=tmp_path,
        label="Race",
    )
    failure = Failure(FailureKind.CONNECTION, "refused")
    b = threading.Thread(
        target=g.record_failure, args=(failure,), kwargs={"operation": "b"}, name="B"
    )
    a = threading.Thread(
        target=g.record_failure, args=(failure,), kwargs={"operation": "a"}, name="A"
    )
    b.start()
    assert writing.wait(5)
    a.start()
    a.join(0.3)  # without the guard's lock A would write its record now, before B
    release.set()
    a.join(5)
    b.join(5)
    record = read_provider_status(tmp_path, "race")
    assert record is not None
    assert record["state"] == "circuit_open"
