"""Unsent writes saved at shutdown: per-process files, kept on disk until resent.

Real SDK + MockTransport `FakeHoncho`, real files under a temporary home, and a real
subprocess that is killed (``os._exit``) after claiming saved writes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from honcho_fake import FakeHoncho

from hermes_memory_honcho import HonchoProvider

SETTINGS = {
    "honcho": {
        "base_url": "http://honcho.test",
        "peer_name": "alice",
        "max_retries": 0,
        "shutdown_timeout": 1,
        "flush_timeout": 2,
    }
}


def _provider(home: Path, fake: FakeHoncho, session: str) -> HonchoProvider:
    provider = HonchoProvider(
        hermes_home=home, config=SETTINGS, transport=fake.transport(), environ={}
    )
    provider.initialize(session, hermes_home=str(home))
    return provider


def _down() -> FakeHoncho:
    fake = FakeHoncho()
    fake.fail(503, times=10_000)
    return fake


def test_two_providers_sharing_a_home_keep_both_sets_of_writes(home: Path):
    """Two providers (as two processes would) shut down with unsent writes: both are saved
    and the next start sends all of them, then removes the files."""
    first = _provider(home, _down(), "s1")
    second = _provider(home, _down(), "s2")
    first.sync_turn("from the first", "ok 1")
    second.sync_turn("from the second", "ok 2")
    first.shutdown()
    second.shutdown()
    saved = sorted(home.glob("honcho_pending.*.json"))
    assert len(saved) == 2
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in saved) or os.name == "nt"

    up = FakeHoncho()
    third = _provider(home, up, "s3")
    third.on_session_end([])
    sent = {(m["session_id"], m["content"]) for m in up.stored_messages()}
    assert sent == {
        ("s1", "from the first"),
        ("s1", "ok 1"),
        ("s2", "from the second"),
        ("s2", "ok 2"),
    }
    assert not list(home.glob("honcho_pending*"))
    third.shutdown()


def test_a_second_provider_does_not_resend_writes_another_has_claimed(home: Path):
    """A provider that restored saved writes but cannot send them yet keeps its claim: a
    provider starting next to it does not send the same writes again."""
    saver = _provider(home, _down(), "s1")
    saver.sync_turn("only once", "ok")
    saver.shutdown()
    holder = _provider(home, _down(), "s2")  # claims the file, server still down
    holder.on_session_end([])
    (claimed,) = home.glob("honcho_pending.*.sending")
    assert "only once" in claimed.read_text(encoding="utf-8")

    up = FakeHoncho()
    other = _provider(home, up, "s3")
    other.on_session_end([])
    assert up.stored_messages() == []
    other.shutdown()
    holder.shutdown()  # re-saves the writes to its own file, drops the claim
    assert not list(home.glob("honcho_pending.*.sending"))
    (resaved,) = home.glob("honcho_pending.*.json")
    assert "only once" in resaved.read_text(encoding="utf-8")


def test_writes_claimed_by_a_crashed_process_are_resent(home: Path):
    """A real process claims the saved writes, fails to send them and dies without shutdown:
    the file stays on disk and the next start sends its writes."""
    saver = _provider(home, _down(), "s1")
    saver.sync_turn("survive the crash", "ok")
    saver.shutdown()
    script = textwrap.dedent(
        f"""
        import json, os, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from honcho_fake import FakeHoncho
        from hermes_memory_honcho import HonchoProvider
        fake = FakeHoncho()
        fake.fail(503, times=10_000)
        p = HonchoProvider(hermes_home={str(home)!r}, config=json.loads({json.dumps(json.dumps(SETTINGS))}),
                           transport=fake.transport(), environ={{}})
        p.initialize("crash", hermes_home={str(home)!r})
        p.on_session_end([])
        os._exit(9)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert proc.returncode == 9, proc.stderr.decode()
    (claimed,) = home.glob("honcho_pending.*.sending")
    assert "survive the crash" in claimed.read_text(encoding="utf-8")

    up = FakeHoncho()
    after = _provider(home, up, "s2")
    after.on_session_end([])
    assert [(m["session_id"], m["content"]) for m in up.stored_messages()] == [
        ("s1", "survive the crash"),
        ("s1", "ok"),
    ]
    assert not list(home.glob("honcho_pending*"))
    after.shutdown()


def test_legacy_single_file_is_still_resent(home: Path):
    """The ``honcho_pending.json`` written by earlier versions is read, sent and removed."""
    legacy = [{"kind": "messages", "session": "old", "items": [["alice", "legacy write"]]}]
    (home / "honcho_pending.json").write_text(json.dumps(legacy), encoding="utf-8")
    up = FakeHoncho()
    provider = _provider(home, up, "s1")
    provider.on_session_end([])
    assert [(m["session_id"], m["content"]) for m in up.stored_messages()] == [
        ("old", "legacy write")
    ]
    assert not list(home.glob("honcho_pending*"))
    provider.shutdown()
