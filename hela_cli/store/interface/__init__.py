"""The store's declared interface: what everything above the store may call, on either engine, by concern.

:class:`StoreAPI` is a :class:`typing.Protocol` composed of one smaller protocol per concern, each in its
own module with its methods' signatures and one line each, so a reader sees which part a mechanism needs:

======================  ==============================================================================
:class:`AdminAPI`       spaces and administration: connection, transactions, meta and the embedder
                        binding, spaces, re-embedding, the integrity check (``admin.py``)
:class:`MemoriesAPI`    memories: written at ingest, read back, corrected (``memories.py``)
:class:`LinksAPI`       links: edge weights under Eq.1's decay, the step counter, pruning (``links.py``)
:class:`SearchAPI`      search: vector KNN, BM25 keywords, passages, time windows (``search.py``)
:class:`MarksAPI`       marks: facts that change, which memory superseded which (``marks.py``)
:class:`RecordsAPI`     semantic records and consolidation's hub state (``records.py``)
:class:`RecallsAPI`     the asks log: recalls, feedback, use traces (``recalls.py``)
:class:`TransferAPI`    transfer: backup, the restore of an import, a space's dump and load (``transfer.py``)
:class:`BrowseAPI`      browsing for ``hela ui`` (``browse.py``)
======================  ==============================================================================

ARCHITECTURE.md ("The store seam") lists which parts each module of ``mechanics/``, ``ingest/`` and
``maintenance/`` calls. ``Store(...)`` / ``Store.open(...)`` (:mod:`hela_cli.store`) return an object of the
engine the location names (:class:`~hela_cli.store.sqlite.SqliteStore`,
:class:`~hela_cli.store.postgres.PgStore`); both implement every member of every part, which
``tests/test_store_contract.py`` checks (names and signatures) and then exercises on both engines. A method
an engine's code adds for itself is not part of the contract until it is listed in the part of its concern;
callers above the store use nothing else (the store's tests may).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from hela_cli.store.interface.admin import AdminAPI
from hela_cli.store.interface.browse import BrowseAPI
from hela_cli.store.interface.links import LinksAPI
from hela_cli.store.interface.marks import MarksAPI
from hela_cli.store.interface.memories import MemoriesAPI
from hela_cli.store.interface.recalls import RecallsAPI
from hela_cli.store.interface.records import RecordsAPI
from hela_cli.store.interface.search import SearchAPI
from hela_cli.store.interface.transfer import TransferAPI

#: the parts of :class:`StoreAPI`, in the order of the table above
PARTS = (AdminAPI, MemoriesAPI, LinksAPI, SearchAPI, MarksAPI, RecordsAPI, RecallsAPI, TransferAPI, BrowseAPI)


@runtime_checkable
class StoreAPI(AdminAPI, MemoriesAPI, LinksAPI, SearchAPI, MarksAPI, RecordsAPI, RecallsAPI, TransferAPI,
               BrowseAPI, Protocol):
    """A hela database: every part (see the module docstring)."""


__all__ = ["PARTS", "StoreAPI", "AdminAPI", "MemoriesAPI", "LinksAPI", "SearchAPI", "MarksAPI", "RecordsAPI",
           "RecallsAPI", "TransferAPI", "BrowseAPI"]
