"""Both hermes-memory tiers on PostgreSQL (see the package README)."""
