"""The five RetainDB file-store tools against the loopback fake: round trip, failures, and
the confinement of uploads (working directory, regular files, size cap)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from retaindb_fake import FakeRetainDB

from hermes_memory_core.health import read_provider_status
from hermes_memory_retaindb import RetainDBProvider
from hermes_memory_retaindb._files import MAX_READ_CHARS, MAX_UPLOAD_BYTES


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    root = tmp_path / "工作"
    root.mkdir()
    return root


@pytest.fixture
def provider(make_provider, hermes_home: Path, workdir: Path) -> RetainDBProvider:
    made: RetainDBProvider = make_provider(init=False, file_timeout=2.0)
    made.initialize("s1", hermes_home=str(hermes_home), cwd=str(workdir))
    return made


def call(provider: RetainDBProvider, tool: str, **args: Any) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(provider.handle_tool_call(tool, args))
    return answer


def test_upload_list_read_ingest_delete_with_cjk(
    provider: RetainDBProvider, fake: FakeRetainDB, workdir: Path
) -> None:
    (workdir / "笔记.md").write_text("会议在京都举行\n記憶の整理 🍵\n", encoding="utf-8")
    uploaded = call(
        provider,
        "retaindb_upload_file",
        local_path="笔记.md",
        remote_path="/报告/笔记.md",
        scope="USER",
    )
    file = uploaded["file"]
    assert file["name"] == "笔记.md" and file["path"] == "/报告/笔记.md"
    assert file["scope"] == "USER" and file["rdb_uri"] == "rdb://p/报告/笔记.md"
    assert fake.blobs[file["id"]] == (workdir / "笔记.md").read_bytes()
    listed = call(provider, "retaindb_list_files", prefix="/报告/")
    assert [f["id"] for f in listed["files"]] == [file["id"]]
    assert call(provider, "retaindb_list_files", prefix="/other/")["files"] == []
    read = call(provider, "retaindb_read_file", file_id=file["id"])
    assert read["content"] == "会议在京都举行\n記憶の整理 🍵\n" and read["truncated"] is False
    ingested = call(provider, "retaindb_ingest_file", file_id=file["id"])
    assert ingested["result"]["memories"] == 2
    assert "会议在京都举行" in fake.contents()
    [request] = fake.calls(f"/v1/files/{file['id']}/ingest")
    assert request.body["user_id"] == "alice"
    assert call(provider, "retaindb_delete_file", file_id=file["id"]) == {"deleted": file["id"]}
    assert fake.files == {}
    missing = call(provider, "retaindb_read_file", file_id=file["id"])
    assert "404" in missing["error"]


def test_upload_with_ingest_and_the_default_remote_path(
    provider: RetainDBProvider, fake: FakeRetainDB, workdir: Path
) -> None:
    (workdir / "a.txt").write_text("one fact\n", encoding="utf-8")
    answer = call(provider, "retaindb_upload_file", local_path=str(workdir / "a.txt"), ingest=True)
    assert answer["file"]["path"] == "/a.txt" and answer["bytes"] == 9
    assert answer["ingest"]["memories"] == 1 and "one fact" in fake.contents()


def test_read_caps_what_the_model_gets(
    provider: RetainDBProvider, fake: FakeRetainDB, workdir: Path
) -> None:
    (workdir / "big.txt").write_text("漢" * (MAX_READ_CHARS + 500), encoding="utf-8")
    file_id = call(provider, "retaindb_upload_file", local_path="big.txt")["file"]["id"]
    read = call(provider, "retaindb_read_file", file_id=file_id)
    assert read["truncated"] is True and len(read["content"]) == MAX_READ_CHARS
    assert "\ufffd" not in read["content"]  # no character split into a replacement mark
    (workdir / "blob.bin").write_bytes(b"\x00\xff\xfe" * 100)
    binary_id = call(provider, "retaindb_upload_file", local_path="blob.bin")["file"]["id"]
    binary = call(provider, "retaindb_read_file", file_id=binary_id)
    assert binary["content"] is None and "binary" in binary["note"]


def _refused(provider: RetainDBProvider, fake: FakeRetainDB, local_path: str, words: str) -> None:
    answer = call(provider, "retaindb_upload_file", local_path=local_path)
    assert words in answer["error"], answer
    assert not fake.calls("/v1/files")  # refused before any request


def test_upload_refuses_an_oversized_file(
    provider: RetainDBProvider, fake: FakeRetainDB, workdir: Path
) -> None:
    with (workdir / "huge.bin").open("wb") as handle:
        handle.truncate(MAX_UPLOAD_BYTES + 1)  # sparse: no 10 MiB written
    _refused(provider, fake, "huge.bin", "limit")


def test_upload_refuses_symlinks_out_of_the_working_directory(
    provider: RetainDBProvider, fake: FakeRetainDB, workdir: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("token=abc", encoding="utf-8")
    (workdir / "link.txt").symlink_to(secret)
    _refused(provider, fake, "link.txt", "outside the working directory")
    (workdir / "dir").symlink_to(tmp_path)
    _refused(provider, fake, "dir/secret.txt", "outside the working directory")
    _refused(provider, fake, str(secret), "outside the working directory")
    _refused(provider, fake, "../secret.txt", "outside the working directory")


def test_a_symlink_inside_the_working_directory_is_followed(
    provider: RetainDBProvider, fake: FakeRetainDB, workdir: Path
) -> None:
    (workdir / "real.txt").write_text("inside", encoding="utf-8")
    (workdir / "alias.txt").symlink_to(workdir / "real.txt")
    answer = call(provider, "retaindb_upload_file", local_path="alias.txt")
    assert fake.blobs[answer["file"]["id"]] == b"inside"


def test_upload_refuses_fifos_devices_and_directories(
    provider: RetainDBProvider, fake: FakeRetainDB, workdir: Path
) -> None:
    os.mkfifo(workdir / "pipe")  # nobody writes: a blocking open would hang the tool
    _refused(provider, fake, "pipe", "not a regular file")
    _refused(provider, fake, "/dev/zero", "system file")
    (workdir / "sub").mkdir()
    _refused(provider, fake, "sub", "not a regular file")
    _refused(provider, fake, "nope.txt", "no such file")
    _refused(provider, fake, "a\u200b.txt", "invisible")


@pytest.mark.parametrize(
    ("file_id", "words"),
    [
        ("..", "not a valid identifier"),
        (".", "not a valid identifier"),
        ("file_1\u2060", "invisible"),
        ("file\r1", "control"),
        ("  ", "non-empty string"),
    ],
)
@pytest.mark.parametrize(
    "tool", ["retaindb_read_file", "retaindb_ingest_file", "retaindb_delete_file"]
)
def test_bad_file_ids_are_refused_before_any_request(
    provider: RetainDBProvider, fake: FakeRetainDB, tool: str, file_id: str, words: str
) -> None:
    answer = call(provider, tool, file_id=file_id)
    assert words in answer["error"]
    assert not fake.calls("/v1/files")


def test_a_slash_in_a_file_id_stays_in_one_segment(
    provider: RetainDBProvider, fake: FakeRetainDB
) -> None:
    answer = call(provider, "retaindb_delete_file", file_id="../../v1/memory")
    assert "404" in answer["error"]
    assert fake.calls("/v1/files/")[-1].path == "/v1/files/..%2F..%2Fv1%2Fmemory"


def test_bad_arguments(provider: RetainDBProvider, fake: FakeRetainDB, workdir: Path) -> None:
    (workdir / "a.txt").write_text("x", encoding="utf-8")
    for args, words in (
        ({"local_path": "a.txt", "scope": "WORLD"}, "must be one of"),
        ({"local_path": "a.txt", "ingest": "yes"}, "true or false"),
        ({"local_path": "a.txt", "remote_path": "/a\nb"}, "control"),
    ):
        assert words in call(provider, "retaindb_upload_file", **args)["error"]
    assert "integer" in call(provider, "retaindb_list_files", limit="many")["error"]
    assert not fake.calls("/v1/files")


def test_401_fails_open_and_opens_the_breaker(
    provider: RetainDBProvider, fake: FakeRetainDB, workdir: Path, hermes_home: Path
) -> None:
    fake.key = "another-key"
    (workdir / "a.txt").write_text("x", encoding="utf-8")
    answer = call(provider, "retaindb_upload_file", local_path="a.txt")
    # The session-start profile read runs in the background and may meet the bad key first:
    # then the breaker is already open when the upload comes.
    assert ("401" in answer["error"] and "RETAINDB_API_KEY" in answer["error"]) or (
        "temporarily unavailable" in answer["error"]
    )
    record = None
    for _ in range(100):  # the health record is written by whichever call failed first
        record = read_provider_status(hermes_home, "retaindb")
        if record is not None and record["state"] == "circuit_open":
            break
        time.sleep(0.05)
    assert record is not None and record["state"] == "circuit_open"
    assert record["last_error_kind"] == "auth"
    assert "temporarily unavailable" in call(provider, "retaindb_list_files")["error"]


def test_a_subagent_cannot_change_the_file_store(
    make_provider, fake: FakeRetainDB, hermes_home: Path, workdir: Path
) -> None:
    (workdir / "a.txt").write_text("x", encoding="utf-8")
    sub: RetainDBProvider = make_provider(init=False)
    sub.initialize("s1", hermes_home=str(hermes_home), cwd=str(workdir), agent_context="subagent")
    for tool, args in (
        ("retaindb_upload_file", {"local_path": "a.txt"}),
        ("retaindb_ingest_file", {"file_id": "f"}),
        ("retaindb_delete_file", {"file_id": "f"}),
    ):
        assert "read-only" in call(sub, tool, **args)["error"]
    assert call(sub, "retaindb_list_files") == {"files": []}


def test_a_hanging_server_is_bounded_by_the_timeouts(
    make_provider, fake: FakeRetainDB, hermes_home: Path, workdir: Path
) -> None:
    (workdir / "a.txt").write_text("x", encoding="utf-8")
    provider: RetainDBProvider = make_provider(
        init=False, timeout=0.5, file_timeout=0.5, breaker_threshold=10
    )
    provider.initialize("s1", hermes_home=str(hermes_home), cwd=str(workdir))
    fake.drop.set()
    started = time.monotonic()
    for tool, args in (
        ("retaindb_upload_file", {"local_path": "a.txt"}),
        ("retaindb_list_files", {}),
        ("retaindb_read_file", {"file_id": "f"}),
        ("retaindb_ingest_file", {"file_id": "f"}),
        ("retaindb_delete_file", {"file_id": "f"}),
    ):
        answer = call(provider, tool, **args)
        assert "timed out" in answer["error"].lower() or "timeout" in answer["error"].lower()
    assert time.monotonic() - started < 20.0  # generous: the bound is 0.5 s per request
    record = read_provider_status(hermes_home, "retaindb")
    assert record is not None and record["last_error_kind"] == "timeout"


@pytest.mark.parametrize(
    "name",
    [
        ".env",
        ".env.production",
        "id_ed25519",
        "server.PEM",
        ".ssh/config",
        ".aws/credentials",
        ".git/config",
        "deploy/.netrc",
        "keys/tls.key",
    ],
)
def test_upload_refuses_credential_files(
    provider: RetainDBProvider, fake: FakeRetainDB, workdir: Path, name: str
) -> None:
    """A prompt-injected model must not be able to send the project's secrets away."""
    target = workdir / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("SECRET=1\n", encoding="utf-8")
    _refused(provider, fake, name, "credential file")


def test_ordinary_files_with_similar_names_are_uploaded(
    provider: RetainDBProvider, fake: FakeRetainDB, workdir: Path
) -> None:
    (workdir / "env_setup.md").write_text("how to set up the environment\n", encoding="utf-8")
    (workdir / "keynote.txt").write_text("slides\n", encoding="utf-8")
    for name in ("env_setup.md", "keynote.txt"):
        assert "file" in call(provider, "retaindb_upload_file", local_path=name)
