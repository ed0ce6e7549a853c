"""The store's declared interface (``hela_cli/store/interface/``) and its two engines.

* the shape: ``StoreAPI`` is its parts, each member declared in exactly one; ARCHITECTURE.md names, for
  each mechanism, every part its ``store.`` calls reach; both engine classes implement every member of
  ``StoreAPI`` (so of every part) with its parameter names, supply
  every engine hook ``StoreCore`` declares from their own package, and the shared modules hold no
  engine's SQL (no sqlite-utils table API, no engine-only table, no engine import);
* the behaviour: one scenario through ``StoreAPI`` only, run on SQLite and on Postgres
  (tests/pg_support.py starts a local server), must give the same answers on both; each engine's BM25
  scores match a computation written from FTS5's formula in Python; each keyword statistic that can drift
  (``spaces.fts_docs`` / ``fts_len``, postings in another space, a memory's length, missing postings) is
  reported by ``integrity_problems`` once corrupted;
* lock errors come from the driver's error codes as ``StoreLocked`` (exit 70), and the store writes
  nothing to stdout / stderr unless a caller passes a progress callback.
"""

from __future__ import annotations

import ast
import inspect
import re
import threading
from pathlib import Path

import numpy as np
import pytest

from hela_cli.errors import StoreError, StoreLocked
from hela_cli.store import NodeFilter, Store, StoreAPI
from hela_cli.store.core import ENGINE_HOOKS
from hela_cli.store.sqlite import SqliteStore

STORE = Path(__file__).resolve().parent.parent / "hela_cli" / "store"
SHARED = sorted(p for p in STORE.glob("*.py"))
API = sorted(name for name, _ in inspect.getmembers(StoreAPI) if not name.startswith("_") or name in
             ("__enter__", "__exit__"))


def _engines() -> list[type]:
    engines: list[type] = [SqliteStore]
    try:
        from hela_cli.store.postgres import PgStore
    except ImportError:  # pragma: no cover - psycopg is a test dependency
        return engines
    return [*engines, PgStore]


def _params(fn: object) -> list[str]:
    return [p.name for p in inspect.signature(inspect.unwrap(fn)).parameters.values()]  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- the shape
@pytest.mark.parametrize("engine", _engines(), ids=lambda e: e.__name__)
def test_every_engine_implements_the_interface_with_its_signatures(engine):
    missing = [n for n in API if not hasattr(engine, n)]
    assert not missing, f"{engine.__name__} lacks {missing}"
    for name in API:
        declared = inspect.getattr_static(StoreAPI, name)
        if isinstance(declared, property) or not callable(declared):
            continue
        want = _params(getattr(StoreAPI, name))
        have = _params(getattr(engine, name))
        assert have == want, f"{engine.__name__}.{name}{have} != StoreAPI.{name}{want}"
    assert not inspect.isabstract(engine), f"{engine.__name__} misses hooks {sorted(engine.__abstractmethods__)}"


@pytest.mark.parametrize("engine", _engines(), ids=lambda e: e.__name__)
def test_each_engine_supplies_every_hook_from_its_own_package(engine):
    package = engine.__module__            # hela_cli.store.sqlite / hela_cli.store.postgres
    for hook in ENGINE_HOOKS:
        owner = next(c for c in engine.__mro__ if hook in c.__dict__)
        assert owner.__module__.startswith(package), f"{engine.__name__}.{hook} comes from {owner.__module__}"


def _members(part: type) -> set[str]:
    return {n for n in part.__dict__ if not n.startswith("_") or n in ("__enter__", "__exit__")} | \
        set(part.__dict__.get("__annotations__", {}))


def test_storeapi_is_its_parts_each_member_in_one():
    from hela_cli.store.interface import PARTS

    seen: dict[str, str] = {}
    for part in PARTS:
        assert part.__module__.startswith("hela_cli.store.interface."), part
        for name in _members(part):
            assert name not in seen, f"{name} is declared in {seen[name]} and {part.__name__}"
            seen[name] = part.__name__
    assert set(API) <= set(seen) and StoreAPI.__bases__[:-1] == PARTS
    assert not _members(StoreAPI) - {"__annotations__"}, "StoreAPI declares members of its own: put them in a part"


def test_architecture_names_the_parts_each_mechanism_uses():
    """The table between ``<!-- parts -->`` and ``<!-- /parts -->`` in ARCHITECTURE.md: every part a module's
    ``store.NAME`` calls reach is in its row (a new call into another part adds that part to the row)."""
    from hela_cli.store.interface import PARTS

    part_of = {name: part.__name__.removesuffix("API") for part in PARTS for name in _members(part)}
    doc = (STORE.parent.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([\w/]+\.py)` \| ([^|]+) \|$", doc.split("<!-- parts -->")[1].split("<!-- /parts -->")[0],
                      re.M)
    assert len(rows) >= 10
    for module, listed in rows:
        text = (STORE.parent / module).read_text(encoding="utf-8")
        used = {part_of[n] for n in re.findall(r"\bstore\.(\w+)", text) if n in part_of}
        named = set(re.findall(r"\w+", listed)) & set(part_of.values())
        assert used <= named, f"ARCHITECTURE.md: {module} also uses {sorted(used - named)} of the store"


# names that exist on one engine only: the shared modules must not write SQL that names them
ENGINE_ONLY = ("node_vec", "semantic_vec", "node_fts", "sign_blocks", "sign_state", "vec0", "bm25(", " MATCH ",
               "semantic_emb", "json_each", "unnest", "pg_", "PRAGMA", "::", "sqlite_master")
# the backup's copy is a SQLite file on both engines: its check opens that file (not the store's database)
EXEMPT = {("backup.py", "_check_copy"), ("backup.py", "file_counts")}


def _strings_by_function(path: Path) -> list[tuple[str, str]]:
    """``(enclosing function, string)`` for every string literal of the module but its docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    out: list[tuple[str, str]] = []

    def walk(node: ast.AST, fn: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else fn
            if isinstance(child, ast.Constant) and isinstance(child.value, str) and id(child) not in docs:
                out.append((name, child.value))
            walk(child, name)

    walk(tree, "")
    return out


@pytest.mark.parametrize("path", [p for p in SHARED if p.name not in ("__init__.py",)], ids=lambda p: p.name)
def test_shared_modules_hold_no_engine_sql(path):
    text = path.read_text(encoding="utf-8")
    assert ".sdb" not in text and "sqlite_utils" not in text, f"{path.name}: sqlite-utils in shared code"
    tree = ast.parse(text)
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not {m for m in imported if m.startswith(("hela_cli.store.sqlite", "hela_cli.store.postgres"))}, \
        f"{path.name} imports an engine"
    if path.name in ("dialect.py", "core.py"):
        return
    for fn, s in _strings_by_function(path):
        if (path.name, fn) in EXEMPT:
            continue
        hits = [w for w in ENGINE_ONLY if w in s]
        assert not hits, f"{path.name}:{fn}: engine-only SQL {hits} in {s[:80]!r}"


def test_engines_do_not_import_each_other():
    for engine, other in (("sqlite", "postgres"), ("postgres", "sqlite")):
        for path in (STORE / engine).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module and \
                        node.module.startswith(f"hela_cli.store.{other}"):
                    # a Postgres backup writes a SQLite file: the one crossing, on purpose
                    assert (engine, path.name, node.module) == ("postgres", "correct.py", "hela_cli.store.sqlite"), \
                        f"{engine}/{path.name} imports {node.module}"


# ----------------------------------------------------------------------------- the behaviour, on both engines
def _unit(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


WORDS = ["apple", "banana", "cherry", "delta", "echo", "fig", "grape"]


def _rows(n: int) -> list[dict]:
    return [{"text": f"turn {i} about {WORDS[i % 7]} and {WORDS[(i * 3) % 7]}", "speaker": "ana" if i % 2 else "bo",
             "ts": 1_700_000_000.0 + 60 * i, "ord": i, "hash": f"h{i}", "session": f"s{i // 10}",
             "source_id": f"d{i}", "keywords": [WORDS[i % 7], WORDS[(i * 3) % 7]]} for i in range(n)]


def _scenario(s: StoreAPI) -> dict:
    """Everything a retrieval, a learning step, consolidation and a correction ask of the store, through
    ``StoreAPI`` only; the answers, with ids made relative to the first node's."""
    out: dict = {}
    assert isinstance(s, StoreAPI)
    vecs = _unit(40)
    s.bind_embedder("contract-embedder", 16)
    sp = s.ensure_space("beta")
    s.ensure_space("Alpha")
    with s.transaction(space=sp.id):
        ids = s.insert_nodes(sp.id, _rows(40) + _rows(2), np.concatenate([vecs, vecs[:2]]))
    base = ids[0]

    def rel(x):
        return [i - base for i in x]

    out["ids"] = [(-1 if i == -1 else i - base) for i in ids]
    out["spaces"] = [(r["name"], r["nodes"]) for r in s.spaces()]
    with s.reading(sp.id):
        out["knn"] = [(i - base, round(c, 6)) for i, c in s.knn(sp.id, vecs[3], 5)]
        out["knn_among"] = [(i - base, round(c, 6)) for i, c in s.knn_among(sp.id, vecs[3], 3, set(ids[10:20]))]
        out["kw"] = [(i - base, round(c, 6)) for i, c in s.keyword_search(sp.id, ["apple", "fig"], 6)]
        out["kw_among"] = [(i - base, round(c, 6)) for i, c in
                           s.keyword_search_among(sp.id, ["apple", "fig"], 6, speaker="ana")]
        out["df"] = s.term_counts(sp.id, ["apple", "grape", "nothing"])
        out["postings"] = {t: rel(v) for t, v in s.term_postings(sp.id, ["apple", "zzz"], 10).items()}
        out["window"] = rel(s.nodes_in_window(sp.id, 1_700_000_000.0 + 600, 1_700_000_000.0 + 900, 10))
        out["features"] = s.node_features(ids[:3], sp.id)[ids[1]]
    out["speakers"] = s.speaker_counts(sp.id)
    apple = NodeFilter(terms=("apple",), speaker="ana")
    out["browse"] = ([n["id"] - base for n in s.browse_nodes(sp.id, apple, 5)], s.count_browse(sp.id, apple),
                     s.count_browse(sp.id, NodeFilter(contains="TURN 1")))
    out["latest"] = [n["text"] for n in s.latest_nodes(sp.id, 2)]
    with s.transaction(space=sp.id):
        space = s.advance_step(sp.id, 0.9)
        s.set_edges(space, {(ids[0], ids[1]): 0.5, (ids[1], ids[2]): 0.25}, 0.9)
        s.set_priors(space, {(ids[2], ids[3]): 0.1})
        s.touch_nodes([ids[0], ids[0], ids[1]], 5.0)
    space = s.refresh_space(space)
    with s.transaction(space=sp.id):
        space = s.advance_step(sp.id, 0.9)
    out["edges"] = [(a - base, b - base, round(w, 9)) for a, b, w in s.all_edges(space)]
    out["strengths"] = {k - base: (round(v[0], 9), v[1]) for k, v in s.edge_strengths(space, with_priors=True).items()}
    out["neighbours"] = {k - base: sorted((n - base, round(w, 9)) for n, w in v)
                         for k, v in s.neighbours(space, [ids[1]]).items()}
    with s.transaction(space=sp.id):
        rec = s.insert_semantic(sp.id, "fact", "Ana", "Ana likes apples", 0.9, None, ids[0], [ids[0], ids[1]],
                                vecs[0])
        s.set_hub_state(sp.id, ids[0], [ids[0], ids[1]], 1, "ok")
    out["semantic"] = [(r["text"], rel(r["evidence"])) for r in s.get_semantic(space_id=sp.id)]
    out["semantic_knn"] = [i == rec for i, _ in s.semantic_knn(sp.id, vecs[0], 1)]
    out["semantic_vector"] = bool(np.allclose(s.semantic_vector(rec), vecs[0], atol=1e-6))
    out["hubs"] = {k - base: v["status"] for k, v in s.hub_state(sp.id).items()}
    with s.transaction(space=sp.id):
        s.delete_nodes([ids[5]])
    rep = s.erase_nodes(sp.id, [ids[1]], scrub=False)
    out["erased"] = (rel(rep["deleted"]), len(rep["semantic"]))
    out["after"] = (s.count_nodes(sp.id), s.count_semantic(sp.id), s.count_edges(sp.id),
                    [n["id"] - base for n in s.iter_nodes(sp.id)][:6])
    out["kw_after"] = [(i - base, round(c, 6)) for i, c in s.keyword_search(sp.id, ["apple"], 3)]
    edited = s.replace_node_text(sp.id, ids[2], "turn 2 now about grape", ["grape"], vecs[2], None)
    out["edited"] = (edited["previous"], [h["text"] for h in s.node_history(ids[2])],
                     [i - base for i, _ in s.keyword_search(sp.id, ["grape"], 20)].count(2))
    out["integrity"] = s.integrity_problems()
    s.rename_space("Alpha", "gamma")
    out["dropped"] = s.drop_space(s.require_space("gamma").id)["deleted"]
    out["spaces_after"] = [r["name"] for r in s.spaces()]
    return out


@pytest.fixture(params=["sqlite", "postgres"])
def contract_db(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "contract.db")
    from tests.pg_support import new_database

    return new_database(request.getfixturevalue("pg_server"))


def test_the_scenario_runs_on_each_engine(contract_db):
    with Store(contract_db) as s:
        got = _scenario(s)
    assert got["ids"][:40] == list(range(40)) and got["ids"][40:] == [-1, -1]
    assert got["spaces"] == [("Alpha", 0), ("beta", 40)]      # code point order on both engines
    assert got["integrity"] == [] and got["spaces_after"] == ["beta"]
    assert got["erased"] == ([1], 1) and got["after"][0] == 38
    assert got["browse"][1] == len([i for i in range(1, 40, 2) if "apple" in _rows(40)[i]["keywords"]]) > 0
    assert got["browse"][2] == 11      # "turn 1", "turn 10" .. "turn 19": LIKE ignores ASCII case on both


def test_both_engines_give_the_same_answers(tmp_path, pg_server):
    from tests.pg_support import new_database

    with Store(str(tmp_path / "a.db")) as s:
        lite = _scenario(s)
    with Store(new_database(pg_server)) as s:
        pg = _scenario(s)
    assert pg == lite


# ----------------------------------------------------------------------------- keyword statistics, both engines
# Keyword documents of two spaces: a keyword twice in one memory (tf 2), one with a diacritic and its plain
# spelling (one folded term), a hyphenated one (two tokens of length, one term), a memory without keywords
# (counted in N), a term in most memories of its space (IDF below 0: floored), and space "b" with other counts.
KW_DOCS = {
    "a": [["apple", "common"], ["apple", "apple", "fig", "common"], ["Café", "common"], ["cafe", "e-mail", "common"],
          ["grape", "fig", "banana", "common"], [], ["delta", "echo", "apple", "common"], ["common", "fig"]],
    "b": [["apple"], ["fig", "grape"], ["common", "fig", "fig", "fig"]],
}
KW_QUERIES = [["apple"], ["apple", "fig"], ["fig", "apple"], ["common"], ["café", "Cafe"], ["e-mail", "grape"],
              ["nothing"], ["banana", "nothing", "apple", "common"]]


def _fold(term: str) -> str:
    """Case and diacritics folded, as FTS5's unicode61 tokenizer (remove_diacritics) does."""
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFKD", term.lower()) if not unicodedata.combining(c))


def _bm25_reference(docs: dict[int, list[str]], space_id: int, query: list[str]) -> list[tuple[int, float]]:
    """BM25 written from FTS5's documented formula, independently of hela's SQL: for each query term t in
    query order, ``idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))`` summed, k1 = 1.2,
    b = 0.75, ``idf = ln((N - n + 0.5) / (n + 0.5))`` replaced by 1e-6 where it is not positive (FTS5's
    floor); N the space's memories, n those holding t, dl a memory's length in tokens of the space-scoped
    keyword document FTS5 indexed (``s<space>_<keyword>``, split at non-word characters), avgdl the mean dl.
    A query term repeated after folding counts twice; hela reports the score positive (FTS5's ``-bm25()``)."""
    import math
    import re

    k1, b = 1.2, 0.75
    n_docs = len(docs)
    length = {i: sum(len(re.findall(r"\w+", f"s{space_id}_{k}")) for k in kws) for i, kws in docs.items()}
    avgdl = sum(length.values()) / n_docs
    tf = {i: {} for i in docs}
    for i, kws in docs.items():
        for k in kws:
            tf[i][_fold(k)] = tf[i].get(_fold(k), 0) + 1
    scores: dict[int, float] = {}
    for t in dict.fromkeys(query):
        key = _fold(t)
        n = sum(1 for i in docs if key in tf[i])
        idf = math.log((n_docs - n + 0.5) / (n + 0.5))
        idf = idf if idf > 0 else 1e-6
        for i in docs:
            f = tf[i].get(key, 0)
            if f:
                scores[i] = scores.get(i, 0.0) + idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length[i] / avgdl))
    return sorted(scores.items(), key=lambda x: (-x[1], x[0]))


def test_bm25_matches_an_independent_computation(contract_db):
    """Each engine's keyword scores against :func:`_bm25_reference` (the two engines are also compared with
    each other in ``test_both_engines_give_the_same_answers``; this checks what both compute)."""
    with Store(contract_db) as s:
        s.bind_embedder("contract-embedder", 16)
        docs: dict[str, dict[int, list[str]]] = {}
        spaces = {}
        for name, kws in KW_DOCS.items():
            sp = spaces[name] = s.ensure_space(name)
            rows = [{"text": f"{name} {i}", "speaker": "ana", "ts": 1_700_000_000.0 + i, "ord": i,
                     "hash": f"{name}{i}", "keywords": k} for i, k in enumerate(kws)]
            with s.transaction(space=sp.id):
                ids = s.insert_nodes(sp.id, rows, _unit(len(rows), seed=len(name)))
            docs[name] = dict(zip(ids, kws))
        checked = 0
        for name, sp in spaces.items():
            for q in KW_QUERIES:
                want = _bm25_reference(docs[name], sp.id, q)
                got = s.keyword_search(sp.id, q, 20)
                assert [i for i, _ in got] == [i for i, _ in want], (name, q)
                assert [c for _, c in got] == pytest.approx([c for _, c in want], rel=1e-12, abs=0), (name, q)
                checked += len(want)
        assert checked > 30
        # the floor: "common" is in every memory of "a" but one, so its IDF is negative and becomes 1e-6
        assert all(c < 1e-5 for _, c in s.keyword_search(spaces["a"].id, ["common"], 20))
        assert s.integrity_problems() == []


# ----------------------------------------------------------------------------- integrity: the keyword statistics
class _Rollback(Exception):
    pass


INTEGRITY_CASES = {   # name of the check -> the corruption (``{a}``: a memory of space a, ``{sb}``: space b)
    "keyword statistics out of step": "UPDATE spaces SET fts_docs = fts_docs - 1 WHERE id = {sa}",
    "keyword lengths out of step": "UPDATE spaces SET fts_len = fts_len + 1 WHERE id = {sa}",
    "keyword postings in another space than their node": "UPDATE node_terms SET space_id = {sb} WHERE node_id = {a}",
    "keyword postings with two lengths for one memory":
        "UPDATE node_terms SET dl = dl + 1 WHERE node_id = {a} AND term = 'fig'",
    "memories with keywords but no postings": "DELETE FROM node_terms WHERE node_id = {a}",
    "keyword postings without node": "INSERT INTO node_terms(space_id, term, node_id, tf, dl) "
                                     "VALUES ({sa}, 'ghost', 987654321, 1, 1)",
}


def test_integrity_reports_each_drifted_keyword_statistic(contract_db):
    with Store(contract_db) as s:
        s.bind_embedder("contract-embedder", 16)
        sa, sb = s.ensure_space("a"), s.ensure_space("b")
        with s.transaction():
            ids = s.insert_nodes(sa.id, _rows(6), _unit(6))
            s.insert_nodes(sb.id, [{**r, "hash": "b" + r["hash"]} for r in _rows(3)], _unit(3, seed=1))
        assert s.integrity_problems() == []
        node = next(i for i, r in zip(ids, _rows(6)) if "fig" in r["keywords"] and len(set(r["keywords"])) == 2)
        for name, sql in INTEGRITY_CASES.items():
            with pytest.raises(_Rollback):
                with s.transaction():
                    s.db.execute(sql.format(a=node, sa=sa.id, sb=sb.id))
                    problems = s.integrity_problems()
                    raise _Rollback
            assert any(p.startswith(f"{name}: ") for p in problems), (name, problems)
        assert s.integrity_problems() == []     # every corruption was rolled back


# ----------------------------------------------------------------------------- lock errors from error codes
def test_sqlite_lock_is_store_locked_from_the_error_code(tmp_path, monkeypatch):
    import hela_cli.store.sqlite.connection as sc

    path = tmp_path / "l.db"
    with Store(path) as holder:
        holder.ensure_space("a")
        monkeypatch.setattr(sc, "BUSY_TIMEOUT_MS", 50)
        with Store(path) as waiter:
            waiter.db.execute("PRAGMA busy_timeout=50")
            with holder.transaction():
                with pytest.raises(StoreLocked) as e:
                    with waiter.transaction():
                        pass
    assert e.value.exit_code == 70 and "SQLITE_BUSY" in e.value.message and str(path) in e.value.message


def test_an_unrelated_sqlite_error_is_not_a_lock(tmp_path):
    with Store(tmp_path / "x.db") as s:
        with pytest.raises(Exception) as e:
            s.db.execute("SELECT * FROM no_such_table")
    assert not isinstance(e.value, StoreLocked)


def test_postgres_lock_timeout_is_store_locked_from_the_sqlstate(pg_url):
    with Store(pg_url) as holder, Store(pg_url) as waiter:
        sp = holder.ensure_space("a")
        waiter.db.execute("SET lock_timeout = '100ms'")
        held = threading.Event()
        done = threading.Event()

        def hold() -> None:
            with holder.transaction():
                holder.db.execute("SELECT * FROM spaces WHERE id = ? FOR UPDATE", (sp.id,))
                held.set()
                done.wait(10)

        t = threading.Thread(target=hold)
        t.start()
        try:
            held.wait(10)
            with pytest.raises(StoreLocked) as e:
                waiter.db.execute("UPDATE spaces SET step = step + 1 WHERE id = ?", (sp.id,))
        finally:
            done.set()
            t.join()
    assert e.value.exit_code == 70 and "lock" in e.value.message
    assert isinstance(e.value, StoreError)


# ----------------------------------------------------------------------------- silent unless asked
def _one_migration_behind(path: Path, monkeypatch) -> None:
    """A file with one node, written by the schema without the last migration (an upgrade reports on it)."""
    import hela_cli.store.sqlite.connection as sc
    from hela_cli.store.sqlite.schema import MIGRATIONS

    monkeypatch.setattr(sc, "MIGRATIONS", MIGRATIONS[:-1])
    with Store(path) as s:
        sp = s.ensure_space("a")
        with s.transaction():
            s.db.execute("INSERT INTO nodes(space_id, text, ts, ord, hash, keywords, created_at) "
                         "VALUES (?, 'x', 0, 0, 'h', 'apple', 0)", (sp.id,))
    monkeypatch.setattr(sc, "MIGRATIONS", MIGRATIONS)


def test_the_store_prints_nothing_without_a_progress_callback(tmp_path, monkeypatch, capfd):
    from hela_cli.store.sqlite.schema import MIGRATIONS

    _one_migration_behind(tmp_path / "old.db", monkeypatch)
    capfd.readouterr()
    with Store(tmp_path / "old.db") as s:          # upgrades the file: a step that reports, silently
        assert s.applied_migrations() == [n for n, _ in MIGRATIONS]
    assert capfd.readouterr() == ("", "")
    lines: list[str] = []
    _one_migration_behind(tmp_path / "old2.db", monkeypatch)
    capfd.readouterr()
    Store(tmp_path / "old2.db", progress=lines.append).close()
    assert lines and "upgrading the database" in lines[0]
    assert capfd.readouterr() == ("", "")


def test_no_print_or_stderr_write_in_the_store():
    for path in STORE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bprint\(|sys\.stderr|sys\.stdout", text), f"{path.relative_to(STORE)} writes output"
