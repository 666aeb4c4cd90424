"""Session ids in Hermes' format: ``YYYYMMDD_HHMMSS_<6 hex>``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datetime import datetime

__all__ = ["SESSION_ID_PATTERN", "new_session_id"]

SESSION_ID_PATTERN = re.compile(r"^\d{8}_\d{6}_[0-9a-f]{6}$")
"""What `new_session_id` returns: local date, local time and six random hex digits."""


def new_session_id(now: datetime | None = None) -> str:
    """A fresh session id such as ``20250114_093012_a1b2c3``, as Hermes Agent makes them.

    Local date and time of ``now`` (default: this moment) and three random bytes in hex, so
    two sessions started in the same second still differ. Ids in this form sort by start
    time, and an archive shared with Hermes shows them like its own.
    """
    import secrets  # here, not at module top: `import hermes_memory_core` stays fast
    from datetime import datetime

    stamp = (now or datetime.now()).strftime("%Y%m%d_%H%M%S")
    return f"{stamp}_{secrets.token_hex(3)}"
