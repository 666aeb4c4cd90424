"""Honcho adapter for hermes-memory (workspace, peers and sessions)."""
