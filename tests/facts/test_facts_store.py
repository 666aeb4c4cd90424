"""FactStore on real SQLite files: dedupe, entities and aliases, search (CJK, full-width,
invisible characters), trust feedback, update/remove, contradictions, HRR queries and their
entity-link fallback, dimension changes, concurrent writers, unusable files."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from hermes_memory_facts import FactStore, FactStoreError
from hermes_memory_facts._text import extract_entities, extract_session_facts, terms


@pytest.fixture(params=[True, False], ids=["hrr", "links"])
def store(request, tmp_path: Path):
    s = FactStore(tmp_path / "facts.db", use_hrr=request.param, hrr_dim=512)
    yield s
    s.close()


def contents(found):
    return [fact.content for fact, _ in found]


def test_add_dedupes_normalised_spellings(store):
    fact_id, created = store.add("Alice uses Neovim", category="user_pref", tags="editor")
    assert created
    for spelling in ("alice uses neovim", "Ａｌｉｃｅ uses Neovim", "Alice\u200b uses  Neovim"):
        assert store.add(spelling) == (fact_id, False)
    assert store.count() == 1
    assert store.get(fact_id).category == "user_pref"


def test_bad_input_is_refused_with_a_reason(store):
    with pytest.raises(FactStoreError, match="empty"):
        store.add("   \u200b ")
    with pytest.raises(FactStoreError, match="category"):
        store.add("x y z", category="secrets")
    with pytest.raises(FactStoreError, match="at most"):
        store.add("word " * 2000)
    assert store.count() == 0


def test_entities_and_aliases_are_linked(store):
    fact_id, _ = store.add('Robert Smith aka Bob leads the "Hermes Agent" project at Acme Corp')
    assert {"Robert Smith", "Hermes Agent", "Acme Corp"} <= set(store.get(fact_id).entities)
    other, _ = store.add("Bob prefers dark mode")
    assert store.entity_id("Bob") == store.entity_id("robert smith")
    assert store.get(other).entities == ("Robert Smith",)
    assert fact_id in [f.fact_id for f, _ in store.probe("Bob")]


def test_entity_extraction_rules():
    found = extract_entities(
        "The \u201cHermes Agent\u201d runs on Alice's laptop; We met Bob Smith in New York"
    )
    assert found == ["Hermes Agent", "Alice", "Bob Smith", "New York"]
    assert extract_entities("we use 「東京タワー」 daily") == ["東京タワー"]


def test_search_ranks_and_filters(store):
    store.add("The deploy target is Kubernetes on AWS", category="project")
    store.add("Alice likes green tea", category="user_pref")
    low, _ = store.add("The deploy target was Heroku")
    store.update(low, trust_delta=-0.4)  # 0.1: below min_trust
    found = store.search("where do we deploy?")
    assert contents(found) == ["The deploy target is Kubernetes on AWS"]
    assert contents(store.search("deploy", min_trust=0.0))[1] == "The deploy target was Heroku"
    assert store.search("deploy", category="user_pref") == []
    assert store.search("?!") == []


def test_search_finds_cjk_fullwidth_and_split_payloads(store):
    store.add("我们决定用 docker compose 部署服务")
    store.add("ユーザーは東京に住んでいる")
    assert contents(store.search("部署"))  # two characters inside a run
    assert contents(store.search("東京"))
    assert contents(store.search("ＤＯＣＫＥＲ"))  # full-width query
    assert contents(store.search("dock\u200ber"))  # zero-width space inside the word
    assert store.search("kubernetes") == []


def test_search_counts_retrievals(store):
    fact_id, _ = store.add("Python is the main language")
    store.search("python")
    store.search("python", count_retrieval=False)
    assert store.get(fact_id).retrieval_count == 1


def test_feedback_adjusts_and_clamps_trust(store):
    fact_id, _ = store.add("Alice is vegetarian")
    up = store.feedback(fact_id, helpful=True)
    assert up == {"fact_id": fact_id, "old_trust": 0.5, "new_trust": 0.55, "helpful_count": 1}
    for _ in range(12):
        store.feedback(fact_id, helpful=False)
    assert store.get(fact_id).trust == 0.0
    assert store.feedback(999, helpful=True) is None
    assert store.search("vegetarian") == []  # below the default min_trust


def test_update_reextracts_entities_and_refuses_collisions(store):
    a, _ = store.add("Alice works at Acme Corp")
    b, _ = store.add("Bob works remotely")
    assert store.update(a, content="Alice works at Globex")
    assert "Globex" in store.get(a).entities and "Acme Corp" not in store.get(a).entities
    assert contents(store.search("globex")) == ["Alice works at Globex"]
    assert store.search("acme") == []
    with pytest.raises(FactStoreError, match="already holds"):
        store.update(b, content="alice works at globex")
    assert store.update(12345, content="x") is False


def test_remove_deletes_fact_links_and_index(store):
    fact_id, _ = store.add("Carol owns the billing service")
    assert store.remove(fact_id)
    assert not store.remove(fact_id)
    assert store.search("billing") == [] and store.probe("Carol") == []


def test_contradictions_between_facts_sharing_entities(store):
    tabs, _ = store.add("Alice prefers tabs for indentation")
    spaces, _ = store.add("Alice prefers spaces for indentation")
    store.add("Alice lives in Lisbon")  # shares Alice, says something unrelated
    store.add("Bob prefers tabs for indentation")  # same words, other entity
    pairs = store.contradictions()
    assert len(pairs) == 1
    pair = pairs[0]
    assert {pair["fact_a"]["fact_id"], pair["fact_b"]["fact_id"]} == {tabs, spaces}
    assert pair["shared_entities"] == ["Alice"]
    assert pair["contradiction_score"] >= 0.3
    negated, _ = store.add("Bob does not prefer tabs for indentation")
    ids = [
        {p["fact_a"]["fact_id"], p["fact_b"]["fact_id"]}
        for p in store.contradictions(fact_ids=[negated])
    ]
    assert ids and all(negated in pair for pair in ids)


def test_probe_related_reason(store):
    a, _ = store.add("Alice and Bob Smith pair on the Payments API")
    b, _ = store.add("Alice maintains the Search Service")
    c, _ = store.add("Bob Smith maintains the Payments API docs")
    assert {f.fact_id for f, _ in store.probe("Alice")} == {a, b}
    assert [f.fact_id for f, _ in store.reason(["Alice", "Payments API"])] == [a]
    assert {f.fact_id for f, _ in store.reason(["bob smith", "Payments API"])} == {a, c}
    assert store.reason(["Alice", "Nobody"]) == []
    assert {a, b} <= {f.fact_id for f, _ in store.related("Alice")}
    with pytest.raises(FactStoreError):
        store.reason([])


def test_hrr_vectors_follow_a_dimension_change(tmp_path: Path):
    path = tmp_path / "facts.db"
    first = FactStore(path, hrr_dim=256)
    fact_id, _ = first.add("Dana runs the Berlin office")
    first.close()
    second = FactStore(path, hrr_dim=512)  # re-encoded instead of failing
    assert [f.fact_id for f, _ in second.probe("Dana")] == [fact_id]
    blob = sqlite3.connect(path).execute("SELECT hrr_vector FROM facts").fetchone()[0]
    assert len(blob) == 4 + 8 * 512
    second.close()


def test_a_store_written_without_hrr_gets_vectors_later(tmp_path: Path):
    path = tmp_path / "facts.db"
    plain = FactStore(path, use_hrr=False)
    plain.add("Erin reviews every Terraform change")
    plain.close()
    assert sqlite3.connect(path).execute("SELECT hrr_vector FROM facts").fetchone()[0] is None
    with_hrr = FactStore(path, hrr_dim=256)
    assert with_hrr.use_hrr and with_hrr.probe("Erin")
    with_hrr.close()


def test_unusable_files_raise_a_clear_error(tmp_path: Path):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(FactStoreError, match=r"garbage\.db"):
        FactStore(garbage)
    assert garbage.read_bytes().startswith(b"this is not sqlite")  # never replaced
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(FactStoreError):
        FactStore(blocker / "facts.db")


def test_two_stores_on_one_file_from_threads(tmp_path: Path):
    path = tmp_path / "facts.db"
    stores = [FactStore(path, hrr_dim=128) for _ in range(2)]
    errors: list[BaseException] = []

    def writer(s: FactStore, n: int) -> None:
        try:
            for i in range(25):
                s.add(f"writer {n} fact number {i}")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=writer, args=(s, n)) for n, s in enumerate(stores) for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert stores[0].count() == 50  # each writer twice: duplicates collapse
    for s in stores:
        s.close()


def test_terms_mix_words_and_cjk_bigrams():
    assert terms("We deploy 部署服务 with Docker") == ["deploy", "部署", "署服", "服务", "docker"]


def test_session_facts_are_extracted_by_rule():
    messages = [
        {"role": "user", "content": "I prefer pytest over unittest. What's the weather?"},
        {"role": "assistant", "content": "I prefer sunny days."},
        {"role": "user", "content": "We decided to ship on Fridays. 我们决定用 PostgreSQL。"},
        {"role": "user", "content": "[context summary] I always use vim"},
        {"role": "user", "content": "ok"},
    ]
    assert extract_session_facts(messages) == [
        ("user_pref", "I prefer pytest over unittest."),
        ("project", "We decided to ship on Fridays."),
        ("project", "我们决定用 PostgreSQL。"),
    ]
