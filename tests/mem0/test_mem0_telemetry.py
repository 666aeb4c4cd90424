"""mem0's PostHog telemetry stays off unless the user opts in.

Name resolution of any non-loopback host is refused inside the child (and recorded), so the
opted-in cases cannot reach the internet either.

Each case runs a fresh interpreter (mem0 reads ``MEM0_TELEMETRY`` once, at import) that
builds the provider, lets it import the real mem0 through a Platform connection to a
``MockTransport`` fake, and prints mem0's own switch and whether its PostHog client exists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent

SCRIPT = r"""
import json, socket, sys
attempts = []
_real_getaddrinfo = socket.getaddrinfo
def _guard(host, *args, **kwargs):
    if host not in ("127.0.0.1", "::1", "localhost"):
        attempts.append(str(host))
        raise socket.gaierror(f"offline test: {host}")
    return _real_getaddrinfo(host, *args, **kwargs)
socket.getaddrinfo = _guard
sys.path.insert(0, sys.argv[1])
from mem0_fake import FakeMem0
from hermes_memory_mem0 import Mem0Provider
assert "mem0" not in sys.modules  # importing the adapter does not import mem0
fake = FakeMem0("platform")
conf = json.loads(sys.argv[2])
conf.update({"mode": "platform", "api_key": fake.api_key})
p = Mem0Provider(hermes_home=sys.argv[3], config={"mem0": conf}, transport=fake.transport())
p.initialize("s1", hermes_home=sys.argv[3], platform="cli")
out = json.loads(p.handle_tool_call("mem0_search", {"query": "tea"}))
import mem0.memory.telemetry as t
print(json.dumps({"switch": t.MEM0_TELEMETRY, "posthog": t.client_telemetry.posthog is not None,
                  "search": out, "mem0_dir": __import__("os").environ.get("MEM0_DIR"),
                  "attempts": attempts}))
p.shutdown()
sys.stdout.flush()
import os
os._exit(0)  # skip PostHog's exit-time upload retries (they would only fail offline)
"""


def _run(tmp_path: Path, conf: dict, env_extra: dict[str, str]) -> dict:
    # Importing mem0 takes seconds (qdrant_client alone ~3 s idle, 12 s on a loaded machine):
    # the first tool call waits for it instead of answering "still connecting".
    conf = {"connect_timeout": 60.0, **conf}
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEM0_")}
    env.update(env_extra)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(HERE), json.dumps(conf), str(home)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_telemetry_off_by_default(tmp_path):
    """Fresh interpreter, no MEM0_* variables: the provider switches telemetry off first."""
    out = _run(tmp_path, {}, {})
    assert out["switch"] is False
    assert out["posthog"] is False
    assert out["search"].get("count") == 0, out["search"]
    assert out["attempts"] == []  # nothing tried to reach PostHog (or anything else)
    assert out["mem0_dir"] == str(tmp_path / "home" / "mem0")


def test_config_opt_in_turns_it_on(tmp_path):
    """Fresh interpreter, mem0.telemetry: true in config.yaml: mem0's own switch is on."""
    out = _run(tmp_path, {"telemetry": True}, {})
    assert out["switch"] is True
    assert out["posthog"] is True


@pytest.mark.parametrize(("value", "expected"), [("True", True), ("false", False)])
def test_user_set_variable_is_respected(tmp_path, value, expected):
    """Fresh interpreter with MEM0_TELEMETRY set by the user: left as the user set it."""
    out = _run(tmp_path, {}, {"MEM0_TELEMETRY": value, "MEM0_DIR": str(tmp_path / "own")})
    assert out["switch"] is expected
    assert out["mem0_dir"] == str(tmp_path / "own")
