"""hela: local-first Hebbian associative memory for LLM agents (HeLa-Mem)."""

__version__ = "0.1.0"
