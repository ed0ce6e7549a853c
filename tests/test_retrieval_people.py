"""Retrieval round 3 (issue 47): the turn that answers, names said only to address someone, the speakers'
names out of the BM25 query, the person prior. Pure logic on the hash embedder (no model file)."""

import pytest

from hela_cli.mechanics.dynamics import person_factor
from hela_cli.text.turns import asks_for_reply, only_addressed


@pytest.mark.parametrize("text, expected", [
    ("Did you go to the concert last week?", True),
    ("Such a fun day! How about you?", True),
    ("The build fails with a linker error.", True),
    ("My laptop doesn't start since the update.", True),
    ("I'm stuck on the second chapter.", True),
    ("We went hiking on Saturday.", False),
    ("Thanks, that's lovely.", False),
    ("", False),
])
def test_asks_for_reply(text, expected):
    assert asks_for_reply(text) is expected


def test_a_question_early_in_a_long_turn_does_not_ask():
    assert not asks_for_reply("Why not? " + "We drove along the coast and stopped at every beach. " * 8)


@pytest.mark.parametrize("text, name, expected", [
    ("Thanks, Melanie! That's really sweet.", "Melanie", True),
    ("Wow Mel, that's stunning!", "Mel", True),
    ("Melanie, those bowls are amazing!", "Melanie", True),
    ("Yep, Joanna. It's great!", "Joanna", True),
    ("Great to see you, Caroline.", "Caroline", True),
    ("Hey Jon! Long time no see.", "Jon", True),
    ("I saw Melanie's painting at the fair.", "Melanie", False),
    ("I told Melanie about it.", "Melanie", False),
    ("Caroline went to the park.", "Caroline", False),
    # addressed once and spoken of once: the turn is (also) about her
    ("Hey Jon! Did Jon's band play?", "Jon", False),
    ("No name here at all.", "Jon", False),
    ("Thanks, Jonathan!", "Jon", False),
])
def test_only_addressed(text, name, expected):
    assert only_addressed(text, name) is expected


def test_round3_defaults():
    from hela_cli.config import Config

    r = Config().retrieval
    assert (r.replies, r.vocatives, r.bm25_names, r.person_prior) == (1, True, False, 0.0)


def test_person_factor():
    assert person_factor(True, 0.3) == 1.0
    assert person_factor(False, 0.3) == pytest.approx(0.7)
    assert person_factor(False, 0.0) == 1.0


def _chat(mem, space="chat"):
    turns = [
        ("Caroline", "s1", "Hi Melanie! How was your weekend?"),
        ("Melanie", "s1", "We drove to the lake and I finished a watercolour of the sunrise."),
        ("Caroline", "s1", "Thanks, Melanie! That watercolour sounds lovely."),
        ("Melanie", "s2", "The kids baked bread on Sunday."),
        ("Caroline", "s2", "Did you see the new museum exhibit?"),
        ("Melanie", "s2", "Yes, the sculptures were huge."),
    ]
    ids = []
    for i, (speaker, session, text) in enumerate(turns):
        ids.append(mem.add(space, text, speaker=speaker, session=session, time=f"2024-05-0{i + 1}T10:00:00Z"))
    return ids


def test_next_turns_stay_in_their_session(make_memory, hash_embedder):
    with make_memory(embedder=hash_embedder) as mem:
        ids = _chat(mem)
        sp = mem.store.require_space("chat")
        nxt = mem.store.next_turns(sp.id, ids)
        assert nxt == {ids[0]: ids[1], ids[1]: ids[2], ids[3]: ids[4], ids[4]: ids[5]}   # s1's last has none


def test_a_recalled_question_brings_its_reply_within_the_budget(make_memory, hash_embedder):
    with make_memory(embedder=hash_embedder, retrieval__k=2, retrieval__m=1, retrieval__spreading=False,
                     retrieval__replies=0, ingest__context_window=0) as mem:   # each turn embedded alone: the reply shares no word
        ids = _chat(mem)
        q = "Did you see the new museum exhibit?"
        before = mem.retrieve(q, "chat", learn=False).memories
        assert before[0]["id"] == ids[4] and ids[5] not in [m["id"] for m in before]
        mem.config.retrieval.replies = 1
        after = mem.retrieve(q, "chat", learn=False).memories
        assert [m["id"] for m in after][:2] == [ids[4], ids[5]]   # the reply right below its question
        assert after[1]["path"] == "reply" and after[1]["score"] < after[0]["score"]
        assert len(after) == len(before) == 3                      # within k + m
        assert [m["id"] for m in after][2] == [m["id"] for m in before][1]   # the last one made room


def test_a_name_said_only_to_address_someone_is_no_keyword(make_memory, hash_embedder):
    with make_memory(embedder=hash_embedder, retrieval__spreading=False, retrieval__vocatives=False) as mem:
        ids = _chat(mem)
        q = "What did Melanie paint, a watercolour?"

        def keyword_of(mems, nid):
            return next(m["keyword"] for m in mems if m["id"] == nid)

        off = mem.retrieve(q, "chat", learn=False).memories
        mem.config.retrieval.vocatives = True
        on = mem.retrieve(q, "chat", learn=False).memories
        # Caroline's "Thanks, Melanie! That watercolour ..." loses the name; Melanie's own turn keeps it
        assert keyword_of(on, ids[2]) < keyword_of(off, ids[2])
        assert keyword_of(on, ids[1]) == pytest.approx(keyword_of(off, ids[1]))


def test_person_prior_and_bm25_names(make_memory, hash_embedder):
    with make_memory(embedder=hash_embedder, retrieval__spreading=False, retrieval__vocatives=False,
                     retrieval__bm25_names=True) as mem:
        ids = _chat(mem)
        q = "What did Melanie say about the watercolour?"
        off = {m["id"]: m for m in mem.retrieve(q, "chat", learn=False).memories}
        mem.config.retrieval.person_prior = 0.5
        mem.config.retrieval.vocatives = True
        on = {m["id"]: m for m in mem.retrieve(q, "chat", learn=False).memories}
        # a turn neither spoken by Melanie nor speaking of her is weighed down; hers are not
        assert on[ids[4]]["time_factor"] == pytest.approx(0.5) and off[ids[4]]["time_factor"] == 1.0
        assert on[ids[1]]["time_factor"] == 1.0
        # with the names out of the BM25 query the same question still finds her turn first
        mem.config.retrieval.bm25_names = False
        names_out = mem.retrieve(q, "chat", learn=False).memories
        assert names_out[0]["id"] == ids[1]


def test_session_cover_picks_a_second_session_before_a_third_of_one():
    from hela_cli.mechanics.dynamics import dual_path, session_cover

    s = {1: 1.0, 2: 0.95, 3: 0.9, 4: 0.8, 5: 0.5}
    sess = {1: "a", 2: "a", 3: "a", 4: "b", 5: "b"}
    assert session_cover(s, sess, 3, 1.0) == [1, 2, 3]          # decay 1: Eq.5's top-k
    assert session_cover(s, sess, 3, 0.8) == [1, 4, 2]          # 0.95 * 0.8 = 0.76 < 0.8 < 0.9 * 0.8
    assert session_cover(s, {}, 3, 0.5) == [1, 2, 3]            # no sessions: nothing to cover
    chosen = dual_path(s, s, 3, 1, base=session_cover(s, sess, 3, 0.8))
    assert chosen == [(1, "base"), (4, "base"), (2, "base"), (3, "base")]
