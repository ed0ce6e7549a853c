"""A stored turn: its content hash and its row in the ``nodes`` table, the same for ingest and ``hela add``."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hela_cli.formats import Turn
from hela_cli.store.base import source_hash  # noqa: F401 - the ingest paths' name for it
from hela_cli.text.keywords import keywords


def turn_hash(turn: Turn, position: int) -> str:
    payload = json.dumps([turn.session, position, turn.speaker, turn.timestamp, turn.source_id, turn.text],
                         ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()



def node_row(turn: Turn, ord: int, hash: str, source: str) -> dict[str, Any]:
    """The ``nodes`` row of a turn: its fields, its keywords (:func:`hela_cli.text.keywords.keywords`), its place
    ``ord`` in the space, its content ``hash`` (idempotence) and the ``source`` it came from."""
    return dict(text=turn.text, speaker=turn.speaker, role=turn.role, ts=turn.timestamp, time_str=turn.time_str,
                keywords=keywords(turn.text), source_id=turn.source_id, session=turn.session, ord=ord, hash=hash,
                source=source)
