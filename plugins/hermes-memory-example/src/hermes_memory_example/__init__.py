"""A tiny reference memory provider for hermes-memory, used by tests and the tutorial."""
