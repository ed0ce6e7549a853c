"""Ingest: parse transcripts, embed turns, store nodes and initial edges.

The package's modules: ``embedding`` (what the embedder sees of a turn: :func:`embedding_text`, passages),
``nodes`` (a stored turn: :func:`node_row`, :func:`turn_hash`), ``batch`` (files -> a space:
:func:`ingest_conversations`), ``links`` (conversation, keyword and association links) and ``live``
(``hela add`` / ``Memory.add``: :func:`add_turns`). The names below are the public ones.


* Every file is parsed and validated completely before anything is written (bad input writes nothing).
* Idempotent: a node's content hash (session, position, speaker, time, text) is unique per space, so the
  same file ingested twice adds nothing, and an interrupted ingest can simply be re-run. A keyed
  conversation (a coding agent's transcript: ``Conversation.keyed``) hashes each turn by its own id
  (:func:`source_hash`, as ``hela add --id`` does): a turn is stored once, whichever path stores it first.
* ``ingest.redact``: secrets are replaced (:func:`hela_cli.text.redact.redact`) before anything is embedded;
  AI-assistant transcripts always (``ingest.redact_assistant``, ``batch.ASSISTANT_FORMATS``).
* Atomic per batch: each batch of turns is one ``BEGIN IMMEDIATE`` transaction (nodes, vectors, keyword postings,
  edges); a crash leaves only whole batches. Embedding happens outside the write transaction.
* Links: consecutive turns of a session (``ingest.initial_weight``) in each batch's transaction; cold-start
  keyword links between sessions (``ingest.keyword_links``) in one transaction after a space's last batch
  (a crash before it leaves those turns without keyword links: ``hela link`` adds them). With
  ``ingest.fixed_links`` both are fixed priors that Eq.1's decay leaves alone.
* Long turns: the full text is stored and shown; the *embedding* sees the first
  ``ingest.max_turn_chars`` characters of each turn, and the whole embedding text (the turn with its
  preceding turn) is built within ``ingest.embed_tokens`` embedder tokens, the turn itself first (see
  :func:`embedding_text`). The summary counts the turns whose embedding does not see them whole
  (``embedding_truncated``; cut by ``max_turn_chars`` or by the token budget).
"""

from hela_cli.ingest.batch import add_passages, ingest_conversations, parse_all
from hela_cli.ingest.embedding import (LONG_WORD, embed_budget, embed_passages, embedder_token_counter,
                                       embedding_text, embedding_texts, split_passages)
from hela_cli.ingest.links import link_conversation, link_keywords, write_links
from hela_cli.ingest.live import ADD_SOURCE, SESSION_GAP_HOURS, add_turns, turn_from_mapping
from hela_cli.ingest.nodes import node_row, source_hash, turn_hash

__all__ = [
    "ADD_SOURCE", "LONG_WORD", "SESSION_GAP_HOURS", "add_passages", "add_turns", "embed_budget", "embed_passages",
    "embedder_token_counter", "embedding_text", "embedding_texts", "ingest_conversations", "link_conversation",
    "link_keywords", "node_row", "parse_all", "source_hash", "split_passages", "turn_from_mapping", "turn_hash", "write_links",
]
