"""Honcho adapter for hermes-memory: workspace, user and AI peers, one session per conversation.

Install ``hermes-memory-honcho``, set ``memory.provider: honcho`` and either
``HONCHO_API_KEY`` (Honcho cloud) or ``HONCHO_BASE_URL`` (a self-hosted server).
"""

from hermes_memory_honcho.provider import HonchoProvider

__all__ = ["HonchoProvider", "__version__"]
__version__ = "0.1.0"
