"""Helpers the byterover tests import by name (a conftest module cannot be imported safely:
every test folder has one and they share the module name)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

FAKE = Path(__file__).with_name("fake_brv.py")


FAKE_COMMAND = shlex.join([sys.executable, str(FAKE)])
