"""The SessionArchive protocol, one suite, every backend (SQLite always, PostgreSQL when a
server is reachable): sessions, messages, search policy, CJK, views, imports, the tool."""

from __future__ import annotations

import itertools
import json
import time

import pytest

from hermes_memory_sessions.protocol import SessionArchive
from hermes_memory_sessions.tool import session_search


def seed(archive, sid="s1", texts=(), *, source="cli", parent=None, title=None, start=None):
    archive.create_session(
        sid, source=source, parent_session_id=parent, title=title, started_at=start
    )
    ids = []
    for i, text in enumerate(texts):
        role = "user" if i % 2 == 0 else "assistant"
        ids.append(archive.append_message(sid, role, text, timestamp=1_700_000_000 + i))
    return ids


def hit_ids(archive, query, **kw):
    hits = archive.find_hits(query, **kw)
    return [] if hits is None else [r["id"] for r in hits.rows]


def test_satisfies_protocol(archive):
    assert isinstance(archive, SessionArchive)


def test_sessions_round_trip(archive):
    archive.create_session(
        "a", source="telegram", model="m1", title="  Planning   day ", started_at=100.0
    )
    archive.create_session("a", source="other")  # idempotent
    row = archive.get_session("a")
    assert row["source"] == "telegram" and row["model"] == "m1"
    assert row["title"] == "Planning day" and row["started_at"] == 100.0
    assert archive.get_session("nope") is None
    with pytest.raises(ValueError, match="already in use"):
        archive.create_session("b", title="Planning day")
    assert archive.end_session("a", "done") is True
    assert archive.end_session("a", "again") is False
    assert archive.get_session("a")["end_reason"] == "done"
    assert archive.set_title("a", "Renamed") == "Renamed"
    with pytest.raises(ValueError):
        archive.set_title("missing", "x")
    with pytest.raises(ValueError):
        archive.create_session("bad\x00id")


def test_messages_ids_order_and_counters(archive):
    ids = seed(archive, "s", ["one", "two", "three"])
    assert ids == sorted(ids) and len(set(ids)) == 3
    calls = [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    more = archive.append_messages(
        "s",
        [
            {"role": "assistant", "content": None, "tool_calls": calls, "timestamp": 5.0},
            {"role": "tool", "content": "result 世界", "tool_call_id": "c1", "tool_name": "f"},
        ],
    )
    assert more[0] > ids[-1]
    msgs = archive.get_messages("s")
    assert [m["content"] for m in msgs] == ["one", "two", "three", None, "result 世界"]
    assert json.loads(msgs[3]["tool_calls"]) == calls
    assert msgs[3]["timestamp"] == 5.0
    row = archive.get_session("s")
    assert row["message_count"] == 5 and row["tool_call_count"] == 1
    assert [m["content"] for m in archive.tail_messages("s", 2)] == [None, "result 世界"]
    with pytest.raises(ValueError):
        archive.append_message("missing", "user", "x")
    with pytest.raises(ValueError):
        archive.append_messages("s", [{"role": "", "content": "x"}])
    assert archive.message_session(ids[0]) == "s"
    assert archive.first_user_message("s") == "one"
    assert archive.live_messages("s")[3]["tool_calls"] == calls


def test_list_lineage_prefix_delete(archive):
    seed(archive, "root-1", ["a"], start=10.0)
    seed(archive, "child-1", ["b"], parent="root-1", start=20.0)
    seed(archive, "grandchild", ["c"], parent="child-1", start=30.0)
    assert archive.lineage_root("grandchild") == "root-1"
    assert [s["id"] for s in archive.list_sessions()] == ["grandchild", "child-1", "root-1"]
    assert [s["id"] for s in archive.list_sessions(order="started_asc", limit=2)] == [
        "root-1",
        "child-1",
    ]
    assert [s["id"] for s in archive.iter_sessions()] == ["root-1", "child-1", "grandchild"]
    assert archive.resolve_session_id("gran") == "grandchild"
    assert archive.resolve_session_id("r") == "root-1"
    assert archive.matching_session_ids("", 10) == ["child-1", "grandchild", "root-1"]
    assert archive.delete_session("child-1") is True
    assert archive.delete_session("child-1") is False
    assert archive.get_session("grandchild")["parent_session_id"] is None
    assert archive.get_messages("child-1") == []
    assert archive.count_open_sessions() == 2


def test_prune_and_stale(archive):
    seed(archive, "old", ["x"], start=time.time() - 40 * 86400)
    seed(archive, "live", ["y"], start=time.time() - 40 * 86400)
    archive.end_session("old", "done")
    assert archive.prune(30) == 1
    assert archive.get_session("old") is None and archive.get_session("live") is not None
    assert archive.end_stale_sessions(1) == ["live"]
    assert archive.get_session("live")["end_reason"] == "stale"


def test_word_search_and_syntax(archive):
    ids = seed(
        archive,
        "s",
        [
            "deploy the billing service to staging",
            "the café opens at nine",
            "run scripts/deploy.sh tonight",
            "billing report for march",
            "prefixes: kubernetes and kubectl",
        ],
    )
    assert hit_ids(archive, "billing deploy") == [ids[0]]
    assert set(hit_ids(archive, "billing")) == {ids[0], ids[3]}
    assert set(hit_ids(archive, "staging OR march")) == {ids[0], ids[3]}
    assert hit_ids(archive, "billing NOT march") == [ids[0]]
    assert hit_ids(archive, "cafe") == [ids[1]]  # diacritics folded both ways
    assert hit_ids(archive, "CAFÉ") == [ids[1]]
    assert hit_ids(archive, "scripts/deploy.sh") == [ids[2]]
    assert set(hit_ids(archive, "kube*")) == {ids[4]}
    assert hit_ids(archive, '"billing report"') == [ids[3]]
    assert hit_ids(archive, '"report billing"') == []
    for bad in ['"unbalanced', "AND OR NOT", "((", "*", "", "NEAR(", "a:b", "'; DROP TABLE x"]:
        archive.find_hits(bad)  # never raises
    rows = archive.search_messages("billing", limit=1, sort="newest")
    assert rows[0]["id"] == ids[3] and ">>>billing<<<" in rows[0]["snippet"].lower()
    assert rows[0]["context"]


def test_cjk_one_two_and_longer(archive):
    ids = seed(
        archive,
        "z",
        [
            "我们明天去北京开会",
            "数据库迁移已经完成",
            "修改youer服务端的配置",
            "東京の天気は晴れ",
            "한국어 검색 테스트",
        ],
    )
    assert hit_ids(archive, "京") == [ids[3], ids[0]] or set(hit_ids(archive, "京")) == {
        ids[0],
        ids[3],
    }
    assert hit_ids(archive, "北京") == [ids[0]]
    assert hit_ids(archive, "迁移") == [ids[1]]
    assert hit_ids(archive, "数据库迁移") == [ids[1]]
    assert hit_ids(archive, "库据") == []
    assert hit_ids(archive, "youer") == [ids[2]]
    assert hit_ids(archive, "天気") == [ids[3]]
    assert hit_ids(archive, "검색") == [ids[4]]
    rows = archive.search_messages("北京")
    assert ">>>北京<<<" in rows[0]["snippet"]


def test_natural_language_fallback(archive):
    ids = seed(
        archive,
        "n",
        [
            "my sister adopted a greyhound named Pixel",
            "that sounds lovely",
            "we talked about the weather",
        ],
    )
    assert hit_ids(archive, "what dog breed did my sister adopt") == []
    found = hit_ids(archive, "what greyhound did my sister adopt", any_terms=True)
    assert found and found[0] == ids[0]


def test_roles_sources_and_inactive(archive):
    seed(archive, "a", ["alpha word"], source="cli")
    seed(archive, "b", ["alpha word"], source="subagent")
    archive.append_messages("a", [{"role": "tool", "content": "alpha from a tool"}])
    assert len(hit_ids(archive, "alpha")) == 3
    assert len(hit_ids(archive, "alpha", exclude_sources=["subagent"])) == 2
    assert len(hit_ids(archive, "alpha", source_filter=["subagent"])) == 1
    assert len(hit_ids(archive, "alpha", role_filter=["user"])) == 2
    assert len(hit_ids(archive, "alpha", role_filter=["tool"])) == 1
    # Each hit carries its own session's columns, ranked, by time and in the fallback.
    for kw in ({}, {"sort": "newest"}, {"sort": "oldest"}, {"any_terms": True}):
        hits = archive.find_hits("alpha word", exclude_sources=["cli"], **kw)
        assert hits is not None and [r["source"] for r in hits.rows] == ["subagent"], kw
        hits = archive.find_hits("alpha word", source_filter=["cli"], **kw)
        assert hits is not None and {r["source"] for r in hits.rows} == {"cli"}, kw
    archive.append_messages("a", [{"role": "user", "content": "zeta hidden", "active": 0}])
    assert hit_ids(archive, "zeta") == []
    assert len(hit_ids(archive, "zeta", include_inactive=True)) == 1


def test_tool_output_and_the_conversation_are_searched_apart(archive):
    # Tool output has its own word index (SQLite: its own table; PostgreSQL: its own part
    # of the word index). 250 newer tool results saying "alpha" fill any window of the
    # newest matches of both; a search of the conversation still finds the older turn.
    # (Without a role filter SQLite ranks a window of each table, PostgreSQL one window
    # over both: archive/_filters.py.)
    (said,) = seed(archive, "t", ["alpha, alpha: alpha was the first plan"])
    tools = archive.append_messages(
        "t", [{"role": "tool", "content": f"alpha log line {i}"} for i in range(250)]
    )
    assert hit_ids(archive, "alpha", role_filter=["user", "assistant"]) == [said]
    assert hit_ids(archive, "alpha", role_filter=["user"], any_terms=True) == [said]
    found = hit_ids(archive, "alpha", role_filter=["tool"], limit=300)
    assert said not in found and set(found) <= set(tools) and len(found) >= 200


def test_views(archive):
    ids = seed(archive, "v", [f"message number {i}" for i in range(12)])
    view = archive.get_messages_around("v", ids[5], 2)
    assert [m["id"] for m in view["window"]] == ids[3:8]
    assert view["messages_before"] == 2 and view["messages_after"] == 2
    assert archive.get_messages_around("v", 10**9, 2)["window"] == []
    anchored = archive.get_anchored_view("v", ids[5], window=2, bookend=2)
    assert [m["id"] for m in anchored["bookend_start"]] == ids[:2]
    assert [m["id"] for m in anchored["bookend_end"]] == ids[10:]


def test_import_keep_ids_round_trip(archive):
    session = {
        "id": "imp",
        "source": "telegram",
        "title": "Imported",
        "started_at": 50.0,
        "ended_at": 60.0,
        "end_reason": "done",
        "model": "x",
        "parent_session_id": None,
    }
    msgs = [
        {"id": 1001, "role": "user", "content": "hello 你好", "timestamp": 51.0},
        {
            "id": 1005,
            "role": "assistant",
            "content": "hi",
            "timestamp": 52.5,
            "finish_reason": "stop",
            "token_count": 3,
        },
    ]
    assert archive.import_session(session, msgs, keep_ids=True) == "imp"
    got = archive.get_messages("imp")
    assert [(m["id"], m["timestamp"], m["content"]) for m in got] == [
        (1001, 51.0, "hello 你好"),
        (1005, 52.5, "hi"),
    ]
    assert got[1]["finish_reason"] == "stop" and got[1]["token_count"] == 3
    row = archive.get_session("imp")
    assert (row["title"], row["ended_at"], row["end_reason"]) == ("Imported", 60.0, "done")
    with pytest.raises(ValueError):
        archive.import_session(session, [])
    with pytest.raises(ValueError, match="1001"):
        archive.import_session(
            {"id": "imp2"}, [{"id": 1001, "role": "user", "content": "x"}], keep_ids=True
        )
    assert archive.get_session("imp2") is None  # nothing half-imported
    assert archive.append_message("imp", "user", "later") > 1005
    assert hit_ids(archive, "你好") == [1001]


def test_import_bookkeeping(archive):
    archive.import_session(
        {"id": "h1"}, [{"role": "user", "content": "x"}], import_source="hermes:a", source_last_id=7
    )
    archive.set_import_watermark("hermes:a", 9, sessions=1, messages=1)
    assert archive.import_state("hermes:a") == (9, {"h1": 7})
    assert (
        archive.import_more(
            "h1",
            [{"role": "assistant", "content": "y"}],
            import_source="hermes:a",
            source_last_id=8,
        )
        is True
    )
    assert archive.import_state("hermes:a")[1] == {"h1": 8}
    archive.forget_import_source("hermes:a")
    assert archive.import_state("hermes:a") == (0, {})


def test_session_search_tool_shapes(archive):
    seed(
        archive,
        "old",
        ["we chose PostgreSQL for the gateway", "good choice"],
        title="Gateway db",
        start=1000.0,
    )
    seed(archive, "cur", ["what did we pick for the gateway database?"], start=2000.0)
    out = json.loads(
        session_search({"query": "PostgreSQL gateway"}, store=archive, current_session_id="cur")
    )
    assert out["success"] and out["mode"] == "discover" and out["count"] == 1
    result = out["results"][0]
    assert result["session_id"] == "old" and ">>>" in result["snippet"]
    mid = result["match_message_id"]
    scroll = json.loads(
        session_search({"session_id": "old", "around_message_id": mid}, store=archive)
    )
    assert scroll["mode"] == "scroll" and any(m.get("anchor") for m in scroll["messages"])
    read = json.loads(session_search({"session_id": "old"}, store=archive))
    assert read["mode"] == "read" and read["message_count"] == 2
    browse = json.loads(session_search({}, store=archive, current_session_id="cur"))
    assert [r["session_id"] for r in browse["results"]] == ["old"]
    titled = json.loads(session_search({"query": "Gateway db"}, store=archive))
    assert titled["results"][0]["matched_role"] == "session_title"
    nl = json.loads(
        session_search(
            {"query": "which database engine for the gateway did we choose"},
            store=archive,
            current_session_id="cur",
        )
    )
    assert nl["results"] and nl["results"][0]["session_id"] == "old"
    # the current lineage is never shown
    child = json.loads(
        session_search({"query": "gateway"}, store=archive, current_session_id="old")
    )
    assert all(r["session_id"] != "old" for r in child["results"])


def test_stats(archive):
    seed(archive, "s", ["abc", "def"])
    st = archive.stats()
    assert st["sessions"] == 1 and st["messages"] == 2 and st["text_bytes"] == 6
    assert isinstance(archive.index_sizes(), dict)


# ---------------------------------------------------------------------- lineage titles


def _compressed_chain(archive, title, length):
    ids = [f"c{i}" for i in range(length)]
    archive.create_session(ids[0], title=title)
    for parent, child in itertools.pairwise(ids):
        archive.end_session(parent, "compression")
        archive.create_session(child, parent_session_id=parent)
    return ids


def test_titles_number_compression_continuations(archive):
    assert archive.get_next_title_in_lineage("my project") == "my project"
    ids = _compressed_chain(archive, "数据库迁移", 3)
    assert [archive.get_session(i)["title"] for i in ids] == [
        "数据库迁移",
        "数据库迁移 #2",
        "数据库迁移 #3",
    ]
    assert archive.get_next_title_in_lineage("数据库迁移 #2") == "数据库迁移 #4"
    archive.create_session("d", title="100%_done")
    assert archive.get_next_title_in_lineage("100%") == "100%"  # LIKE wildcards are literal
    assert archive.get_next_title_in_lineage("100%_done") == "100%_done #2"
    # a branch or a reset child inherits nothing
    archive.create_session("p", title="release plan")
    archive.end_session("p", "branched")
    archive.create_session("b", parent_session_id="p")
    assert archive.get_session("b")["title"] is None


def test_title_moves_from_compression_ancestor_to_heir(archive):
    root, child, grandchild = _compressed_chain(archive, "deploy notes", 3)
    assert archive.set_title(grandchild, "deploy notes") == "deploy notes"
    assert archive.get_session(root)["title"] is None
    assert archive.get_session(child)["title"] == "deploy notes #2"
    assert archive.session_by_title("deploy notes") in (grandchild, child)
    archive.create_session("x", title="shared name")
    archive.end_session("x", "branched")
    archive.create_session("z", parent_session_id="x")
    with pytest.raises(ValueError, match="already in use by session x"):
        archive.set_title("z", "shared name")  # a branch child is not an heir


def test_title_provenance_ranks(archive):
    archive.create_session("s")
    assert archive.set_title("s", "first guess", source="derived") == "first guess"
    assert archive.set_title("s", "better guess", source="llm") == "better guess"
    assert archive.set_title("s", "worse guess", source="derived") == "better guess"
    assert archive.set_title("s", "Mine", source="user") == "Mine"
    assert archive.set_title("s", "robot", source="llm") == "Mine"
    assert archive.get_session("s")["title_source"] == "user"
    archive.create_session("t", title="typed at creation")
    assert archive.set_title("t", "robot", source="derived") == "typed at creation"
    with pytest.raises(ValueError, match="title source"):
        archive.set_title("t", "x", source="model")
    archive.create_session("u", title="auto", started_at=1.0)
    archive.set_title("u", None)
    assert archive.set_title("u", "llm title", source="llm") == "llm title"
    archive.end_session("u", "compression")
    archive.create_session("u2", parent_session_id="u")
    row = archive.get_session("u2")
    assert (row["title"], row["title_source"]) == ("llm title #2", "llm")


def test_nul_characters_round_trip_exactly(archive):
    """U+0000 (which PostgreSQL text cannot hold) comes back exactly from get_messages and
    tail_messages, so export and migration are exact; search still finds the words around it."""
    archive.create_session("n")
    calls = [{"id": "c\x00", "function": {"name": "f", "arguments": '{"a": "\\u0000"}'}}]
    ids = archive.append_messages(
        "n",
        [
            {"role": "user", "content": "before\x00after zebra\x00\x00 end", "timestamp": 1.0},
            {"role": "assistant", "content": None, "tool_calls": calls, "timestamp": 2.0},
            {"role": "tool", "content": "\x00", "tool_call_id": "c\x00", "timestamp": 3.0},
        ],
    )
    got = archive.get_messages("n")
    assert got[0]["content"] == "before\x00after zebra\x00\x00 end"
    assert json.loads(got[1]["tool_calls"]) == calls
    assert got[2]["content"] == "\x00" and got[2]["tool_call_id"] == "c\x00"
    assert [m["content"] for m in archive.tail_messages("n", 1)] == ["\x00"]
    assert hit_ids(archive, "zebra") == [ids[0]]
    assert "\ufffd" not in json.dumps([m["content"] for m in got])


def test_more_matches_than_asked_keep_the_best_ranked(archive):
    # Sixty messages of sixty words, "alpha" i times in message i: with more matches than
    # a first read takes, the best-ranked ones (most "alpha") are kept, best first, by the
    # AND pass and by the natural-language fallback alike.
    ids = seed(
        archive, "r", [" ".join(["alpha"] * i + ["filler"] * (60 - i)) for i in range(1, 61)]
    )
    best = list(reversed(ids))[:5]
    assert hit_ids(archive, "alpha", limit=5) == best
    assert hit_ids(archive, "where did alpha go", any_terms=True, limit=5) == best
