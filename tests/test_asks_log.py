"""The asks log stays bounded: recalls that never got feedback are pruned to the newest
``answer.keep_recalls`` per space; asks and recalls with feedback stay."""

from __future__ import annotations

from hela_cli.store.asks import PRUNE_EVERY


def _kinds(mem, space_id):
    rows = mem.store.db.execute("SELECT kind, used IS NOT NULL, id FROM asks WHERE space_id = ? ORDER BY id",
                                (space_id,)).fetchall()
    return [(k, bool(u), i) for k, u, i in rows]


def test_old_recalls_without_feedback_are_pruned_and_the_rest_kept(make_memory, hash_embedder):
    mem = make_memory(embedder=hash_embedder, answer__keep_recalls=5)
    mem.add_batch("a", [{"text": f"turn {i} about tea and boats"} for i in range(6)])
    mem.add_batch("b", [{"text": "another space entirely"}])
    first = mem.retrieve("tea", "a", learn=True)
    mem.reinforce("a", [first.memories[0]["id"]], recall_id=first.recall_id)
    other = mem.retrieve("space", "b", learn=True)
    ids = [mem.retrieve(f"boats {i}", "a", learn=True).recall_id for i in range(2 * PRUNE_EVERY + 3)]
    sp = mem.space("a")
    rows = _kinds(mem, sp.id)
    plain = [i for k, u, i in rows if k == "recall" and not u]
    # pruned at the last multiple of PRUNE_EVERY: at most keep + PRUNE_EVERY - 1 remain, the newest ones
    assert 5 <= len(plain) < 5 + PRUNE_EVERY and plain == ids[-len(plain):]
    assert (first.recall_id in [i for _, u, i in rows if u])                     # the use trace stays
    assert [k for k, _, _ in _kinds(mem, mem.space("b").id)] == ["recall"]      # another space untouched
    assert other.recall_id is not None


def test_keep_recalls_zero_keeps_every_recall(make_memory, hash_embedder):
    mem = make_memory(embedder=hash_embedder, answer__keep_recalls=0)
    mem.add_batch("a", [{"text": f"turn {i} about tea"} for i in range(4)])
    for i in range(PRUNE_EVERY + 2):
        mem.retrieve(f"tea {i}", "a", learn=True)
    assert len(_kinds(mem, mem.space("a").id)) == PRUNE_EVERY + 2


def test_use_traces_are_cached_until_they_change(make_memory, hash_embedder):
    """The decoded traces are reused while the space's traces stay; new feedback, another process's feedback
    and a deleted memory each make the next recall read them again."""
    mem = make_memory(embedder=hash_embedder)
    mem.add_batch("a", [{"text": f"turn {i} about tea and boats"} for i in range(8)])
    sp = mem.space("a")
    first = mem.retrieve("tea", "a", learn=True)
    used = first.memories[0]["id"]
    mem.reinforce("a", [used], recall_id=first.recall_id)
    vecs, sets = mem.store.use_traces(sp.id)
    assert sets == [[used]]
    assert mem.store.use_traces(sp.id)[0] is vecs                      # cached: the same array
    second = mem.retrieve("boats", "a", learn=True)
    other = second.memories[1]["id"]
    with mem.store.transaction():                                     # as another process would: no cache call
        mem.store.mark_feedback(second.recall_id, [other], 0.0)
    assert mem.store.use_traces(sp.id)[1] == [[other], [used]]
    mem.delete("a", [used])        # every logged recall that retrieved it goes with it: both traces here
    assert mem.store.use_traces(sp.id)[1] == []
