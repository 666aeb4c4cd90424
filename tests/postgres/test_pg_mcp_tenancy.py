"""Tenancy through the MCP server: two homes point at one database with different owners; a
real MCP client (the official ``mcp`` stdio client, the installed ``hermes-memory-mcp``
script) on one home sees its own rows and nothing of the other owner's, through
``session_search`` (discovery, CJK, browse, scroll), the ``memory`` tool and the resources."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from hermes_memory_postgres import PostgresMemoryStore, PostgresSessionArchive

pytestmark = pytest.mark.timeout(120)

SCRIPT = Path(sys.executable).with_name("hermes-memory-mcp")
MEMORY_URI = "hermes-memory://memories/MEMORY.md"
USER_URI = "hermes-memory://memories/USER.md"
SNAPSHOT_URI = "hermes-memory://snapshot"


def make_home(path: Path, owner: str) -> Path:
    path.mkdir(parents=True, mode=0o700)
    (path / "config.yaml").write_text(
        "memory:\n  backend: postgres\nsessions:\n  backend: postgres\n"
        f"postgres:\n  owner: {json.dumps(owner)}\n",
        encoding="utf-8",
    )
    return path


def seed(dsn: str, owner: str, word: str, cjk: str, fact: str) -> tuple[str, int]:
    """One session holding ``word`` and ``cjk``, and a curated fact in both targets."""
    archive = PostgresSessionArchive(dsn, owner=owner)
    sid = f"20240301_101500_{owner[-6:]}"
    archive.create_session(sid, source="cli", title=f"Vault {word}")
    archive.append_message(sid, "user", f"The vault code is {word}, remember it.")
    reply = archive.append_message(sid, "assistant", f"Noted: {word}. 记住{cjk}在书房。")
    archive.end_session(sid, "user_exit")
    archive.close()
    store = PostgresMemoryStore(dsn, owner=owner)
    assert store.add("memory", fact)["success"]
    assert store.add("user", f"Profile: {fact}")["success"]
    store.close()
    return sid, reply


def payload(result: Any) -> dict[str, Any]:
    assert result.is_error is False, result.content[0].text
    data = json.loads(result.content[0].text)
    assert isinstance(data, dict)
    return data


def run_client(home: Path, dsn: str, body: Any, errlog: Path) -> Any:
    params = StdioServerParameters(
        command=str(SCRIPT),
        args=["--home", str(home)],
        env={"HERMES_MEMORY_PG_DSN": dsn, "PATH": os.environ.get("PATH", "")},
    )

    async def main() -> Any:
        with errlog.open("a", encoding="utf-8") as err, anyio.fail_after(90):
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await body(session)

    try:
        return anyio.run(main)
    except BaseException:
        sys.stderr.write("--- server stderr ---\n" + errlog.read_text(encoding="utf-8"))
        raise


def test_mcp_client_sees_only_its_owners_rows(pg_dsn, owner, tmp_path):
    assert SCRIPT.exists(), f"console script missing: {SCRIPT}"
    owner_a, owner_b = owner + "-alice", owner + "-bob"
    a_sid, a_reply = seed(pg_dsn, owner_a, "heron7", "金库钥匙", "Alice keeps the heron7 key")
    b_sid, _ = seed(pg_dsn, owner_b, "kestrel9", "花园", "Bob keeps the kestrel9 key")
    home_b = make_home(tmp_path / "home-b", owner_b)

    async def body(session: ClientSession) -> dict[str, Any]:
        call = session.call_tool
        return {
            "own": await call("session_search", {"query": "kestrel9"}),
            "own_cjk": await call("session_search", {"query": "花园"}),
            "word": await call("session_search", {"query": "heron7"}),
            "prefix": await call("session_search", {"query": "hero*"}),
            "cjk1": await call("session_search", {"query": "金"}),
            "cjk2": await call("session_search", {"query": "金库"}),
            "natural": await call(
                "session_search", {"query": "which vault code did alice use for heron7"}
            ),
            "title": await call("session_search", {"query": "Vault"}),
            "browse": await call("session_search", {}),
            "scroll": await call(
                "session_search", {"session_id": a_sid, "around_message_id": a_reply}
            ),
            "remove": await call(
                "memory", {"action": "remove", "target": "memory", "old_text": "heron7"}
            ),
            "memory": await session.read_resource(MEMORY_URI),
            "user": await session.read_resource(USER_URI),
            "snapshot": await session.read_resource(SNAPSHOT_URI),
            "instructions": session.instructions or "",
        }

    got = run_client(home_b, pg_dsn, body, tmp_path / "stderr-b.txt")
    # Bob's own rows are there (so an empty answer below means "not visible", not "broken").
    assert [r["session_id"] for r in payload(got["own"])["results"]] == [b_sid]
    assert [r["session_id"] for r in payload(got["own_cjk"])["results"]] == [b_sid]
    assert "kestrel9" in got["memory"].contents[0].text
    assert "Profile: Bob keeps the kestrel9 key" in got["user"].contents[0].text
    assert "kestrel9" in got["snapshot"].contents[0].text
    # Nothing of Alice's, by any route.
    for key in ("word", "prefix", "cjk1", "cjk2"):
        assert payload(got[key]).get("results", []) == [], key
    # "vault code" is in Bob's session too: the fallback finds his, never hers.
    assert {r["session_id"] for r in payload(got["natural"])["results"]} == {b_sid}
    assert [r["session_id"] for r in payload(got["title"])["results"]] == [b_sid]
    browsed = payload(got["browse"])
    assert a_sid not in json.dumps(browsed) and b_sid in json.dumps(browsed)
    assert "heron7" not in got["scroll"].content[0].text
    assert json.loads(got["remove"].content[0].text)["success"] is False
    shown = [json.dumps(payload(got[k]).get("results", []), ensure_ascii=False) for k in
             ("own", "own_cjk", "word", "prefix", "cjk1", "cjk2", "natural", "title")]  # fmt: skip
    shown += [json.dumps(browsed, ensure_ascii=False), got["scroll"].content[0].text]
    shown += [got[k].contents[0].text for k in ("memory", "user", "snapshot")]
    everything = "\n".join([*shown, got["instructions"]])  # queries echoed back are left out
    for secret in ("heron7", "金库", "Alice"):
        assert secret not in everything, secret

    # Alice's memory is untouched by Bob's remove, and her home sees it (the same server
    # code, another owner key).
    home_a = make_home(tmp_path / "home-a", owner_a)

    async def body_a(session: ClientSession) -> tuple[Any, Any]:
        found = await session.call_tool("session_search", {"query": "金库"})
        return found, await session.read_resource(MEMORY_URI)

    found, memory = run_client(home_a, pg_dsn, body_a, tmp_path / "stderr-a.txt")
    assert [r["session_id"] for r in payload(found)["results"]] == [a_sid]
    assert memory.contents[0].text == "Alice keeps the heron7 key"
