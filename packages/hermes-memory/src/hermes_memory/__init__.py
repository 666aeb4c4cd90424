"""Long-term memory for LLM agents: core, curated store, session archive and the hermes-memory CLI."""
