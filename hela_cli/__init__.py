"""hela: local-first Hebbian associative memory for LLM agents (HeLa-Mem).

The public Python API, imported lazily (``hela --help`` does not load it)::

    from hela_cli import Memory, load_config, HelaError

    with Memory(load_config(overrides={"db": "agent.db"})) as mem:
        mem.add("alice", "I moved to Lisbon in May", speaker="Alice")
        hits = mem.retrieve("Where does Alice live?", "alice").memories
"""

from __future__ import annotations

__version__ = "0.1.0"

_EXPORTS = {
    "Memory": "hela_cli.memory",
    "Config": "hela_cli.config",
    "load_config": "hela_cli.config",
    "HelaError": "hela_cli.errors",
    "InputError": "hela_cli.errors",
    "ModelError": "hela_cli.errors",
    "StoreError": "hela_cli.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hela_cli' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
