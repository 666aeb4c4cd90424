"""The curated MEMORY.md / USER.md store and the memory tool for hermes-memory."""
