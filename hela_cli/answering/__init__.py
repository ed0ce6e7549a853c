"""Answering: prompts A.1 / A.2 and answer cleaning, streaming, citations."""
