"""Recognising turns that deserve no recall: greetings, acknowledgements, slash commands."""

from __future__ import annotations

import re

__all__ = ["is_trivial_prompt"]

_TRIVIAL = re.compile(
    r"(?:yes|no|ok|okay|sure|thanks|thank you|y|n|yep|nope|yeah|nah|hi|hey|hello|yo|sup|"
    r"continue|go ahead|do it|proceed|got it|cool|nice|great|done|next|lgtm|k)"
    r"[\s\W]{0,20}",
    re.IGNORECASE,
)


def is_trivial_prompt(text: str | None) -> bool:
    """True for None, blank text, a slash command, or a bare greeting or acknowledgement.

    "k8s" or "note" are not trivial: only whole-message matches count.
    """
    if text is None:
        return True
    stripped = text.strip()
    if not stripped:
        return True
    if stripped.startswith("/") and not stripped.startswith("//"):
        return True
    return len(stripped) <= 40 and _TRIVIAL.fullmatch(stripped) is not None
