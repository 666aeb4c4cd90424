"""mem0 adapter for hermes-memory (platform, self-hosted and OSS modes)."""
