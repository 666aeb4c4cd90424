"""Session ids for MCP connections, in Hermes' ``YYYYMMDD_HHMMSS_<6 hex>`` format."""

from __future__ import annotations

import re
import secrets
from datetime import datetime

__all__ = ["SESSION_ID_PATTERN", "new_session_id"]

SESSION_ID_PATTERN = re.compile(r"^\d{8}_\d{6}_[0-9a-f]{6}$")
"""What `new_session_id` returns: local date, local time and six random hex digits."""


def new_session_id(now: datetime | None = None) -> str:
    """A fresh session id such as ``20250114_093012_a1b2c3`` (local time, 6 random hex digits)."""
    stamp = (now or datetime.now()).strftime("%Y%m%d_%H%M%S")
    return f"{stamp}_{secrets.token_hex(3)}"
