"""Facts that change, detected at write time (issue 38): the model-free decision (cues, slots, vetoes), the
candidates and marks through the write paths (``add``, ``add_batch`` as hook capture uses it, batch ingest),
and the per-pair judge function a library caller may pass (the deferred batched judge: tests/test_judge.py)."""

from __future__ import annotations

import json

import pytest

from hela_cli.mechanics.supersession import Found, judge_prompt, parse_judgement, _judged
from hela_cli.text.changes import cues, decide, has_signal, slots

DAY = 86_400.0
T0 = 1_700_000_000.0


# ----------------------------------------------------------------------------------------------- decide

@pytest.mark.parametrize("old, new, status, detector", [
    # a cue that names the old value
    ("Our model server is vLLM 0.6 behind nginx, and the GPU box is called orca.",
     "Update: we replaced vLLM with SGLang last week because of the prefix cache; orca still hosts it.",
     "superseded", "cue"),
    ("We use Redis for caching.", "We switched from Redis to Memcached for caching.", "superseded", "cue"),
    ("Static files are served by WhiteNoise.", "Static files now come from the CDN, WhiteNoise is gone.",
     "superseded", "cue"),
    ("The ranking owner is Oskar.", "Oskar handed ranking over to Yara, he is on the ads team now.",
     "superseded", "cue"),
    ("I work at a bank downtown.", "I no longer work at the bank, I opened my own dance studio.", "superseded", "cue"),
    ("CSS is written in Sass modules.", "CSS: we're moving to Tailwind instead of Sass, new components only.",
     "superseded", "cue"),
    # a slot with another value, tied to a cue
    ("Postgres listens on port 5432.", "Postgres listens on port 6432 now, behind pgbouncer.", "superseded", "slot"),
    ("The API runs Python 3.10.", "We upgraded the API to Python 3.12 yesterday.", "superseded", "slot"),
    ("Batch size is batch_size=32 per GPU.", "Batch size is now batch_size=64 per GPU.", "superseded", "slot"),
    ("Trials last 14 days.", "Trials last 30 days from now on.", "superseded", "slot"),
    # a slot with another value and no cue: possible (hides nothing)
    ("I've written four short stories so far.", "I've managed to complete seven short stories.", "possible", "slot"),
])
def test_changes_are_detected(old, new, status, detector):
    v = decide(old, new)
    assert (v.status, v.detector) == (status, detector), v


@pytest.mark.parametrize("old, new", [
    ("We use Redis for caching.", "If we switched from Redis to Memcached, would it be faster?"),     # hypothetical
    ("We use Redis for caching.", "Should we replace Redis with Memcached?"),                          # question
    ("We're on Postgres 14.", "We're thinking about moving to Postgres 16 next quarter."),            # a plan
    ("The API runs Python 3.10.", "My friend moved his API to Python 3.12."),                         # someone else
    ("Crash reports go to Sentry.", "Our partner's app uses Bugsnag instead of Sentry."),             # someone else
    ("I have a dog named Max.", "I got another dog, a second pup named Luna!"),                       # additive
    ("We use Prometheus for metrics.", "We added Tempo for traces next to Prometheus."),               # additive
    ("Postgres 14 runs on db1.", "For the record, the old runbook still says Postgres 14 on db1."),   # quoted
    ("The docs are built with MkDocs.", 'I said in March "the docs are built with MkDocs", before the move.'),
    ("Secrets are in AWS Secrets Manager.", "Secrets: still AWS Secrets Manager, nothing changed there."),
    ("The license is MIT.", "Somebody asked whether the license changed to Apache; it didn't."),     # negated
    ("The HTTP client is reqwest.", "A contributor's fork switched to ureq instead of reqwest, we did not."),
    ("I'm tired right now.", "Right now I'm just relaxing at home."),                                 # "now", other sense
    ("The build is slow.", "Now that the cache works, the build takes 2 minutes."),
    ("What if we moved to Kafka?", "We moved from NATS to Kafka."),                                   # old: a question
])
def test_distractors_are_not_changes(old, new):
    assert decide(old, new).status is None


def test_old_value_must_be_in_the_old_text():
    """A cue naming something the old memory does not say ties nothing to it."""
    assert decide("Comments use Disqus.", "Deployment switched from GitHub Pages to Netlify.").status is None
    assert decide("We moved the docs from MkDocs to Docusaurus.", "Sam is no longer reviewing docs.").status is None


def test_slots_and_cues_read_values():
    got = {(s.key, s.value) for s in slots("Postgres 15 on db2.internal, port 6432, timeout=30, 3 replicas")}
    assert {(("version", "postgr"), "15"), (("host", ""), "db2.internal"), (("port", ""), "6432"),
            (("setting", "timeout"), "30"), (("count", "replica"), "3")} <= got
    (c,) = cues("We moved the CI from GitHub Actions to Buildkite.")
    assert (c.kind, c.old) == ("from_to", "GitHub Actions") and c.new.startswith("Buildkite")
    assert not has_signal("Thanks, that sounds lovely!")
    assert has_signal("We replaced vLLM with SGLang.")


# ----------------------------------------------------------------------------------------------- write paths

def _marks(mem, space):
    sp = mem.space(space)
    return [(r["old_id"], r["new_id"], r["status"], r["detector"]) for r in mem.store.space_supersessions(sp.id)]


def _facts():
    return [
        {"text": "Our model server is vLLM 0.6 behind nginx.", "speaker": "user", "time": T0},
        {"text": "The CI runs on GitHub Actions with a self-hosted runner.", "speaker": "user", "time": T0 + DAY},
        {"text": "If we replaced vLLM with SGLang, would the prefix cache help?", "speaker": "assistant",
         "time": T0 + 2 * DAY},
        {"text": "Update: we replaced vLLM with SGLang for the model server.", "speaker": "user", "time": T0 + 9 * DAY},
    ]


def test_add_marks_the_replaced_memory(make_memory, hash_embedder):
    mem = make_memory(embedder=hash_embedder, supersession__min_similarity=-1.0)
    ids = mem.add_many("p", _facts())
    assert _marks(mem, "p") == [(ids[0], ids[3], "superseded", "cue")]
    row = mem.store.supersessions_for([ids[0]])[ids[0]][0]
    assert row["invalid_at"] == T0 + 9 * DAY and row["confidence"] == 0.9


def test_detection_off_marks_nothing(make_memory, hash_embedder):
    mem = make_memory(embedder=hash_embedder, supersession__min_similarity=-1.0, supersession__detect=False)
    mem.add_many("p", _facts())
    assert _marks(mem, "p") == []


def test_add_batch_reports_its_marks(make_memory, hash_embedder):
    """``add_batch`` (hook capture's write) returns the marks it wrote; another speaker's earlier memory is
    never a candidate (a person's own facts)."""
    mem = make_memory(embedder=hash_embedder, supersession__min_similarity=-1.0)
    mem.add_many("p", [{"text": "The dev server runs on port 3000.", "speaker": "assistant", "time": T0}])
    rep = mem.add_batch("p", [{"text": "The dev server is on port 5173 now.", "speaker": "user", "time": T0 + DAY}])
    assert rep["supersessions"] == []
    first = mem.add_many("p", [{"text": "The dev server runs on port 3000.", "speaker": "user", "time": T0 + 2 * DAY}])
    rep = mem.add_batch("p", [{"text": "The dev server is on port 5173 now.", "speaker": "user", "time": T0 + 3 * DAY}])
    assert [(m["old"], m["status"], m["detector"]) for m in rep["supersessions"]] == [(first[0], "superseded", "slot")]


def test_batch_ingest_marks_within_and_across_batches(make_memory, hash_embedder, tmp_path):
    f = tmp_path / "chat.jsonl"
    turns = [{"role": "user", "content": "We ship a release every two weeks.", "timestamp": "2024-01-01T10:00:00Z"},
             {"role": "assistant", "content": "Noted.", "timestamp": "2024-01-01T10:01:00Z"},
             {"role": "user", "content": "The frontend is built with webpack 5.", "timestamp": "2024-01-02T10:00:00Z"},
             {"role": "user", "content": "We switched the build from webpack to Vite.", "timestamp": "2024-02-01T10:00:00Z"},
             {"role": "user", "content": "We ship weekly now instead of every two weeks.", "timestamp": "2024-02-02T10:00:00Z"}]
    f.write_text("".join(json.dumps(t) + "\n" for t in turns))
    mem = make_memory(embedder=hash_embedder, supersession__min_similarity=-1.0, ingest__batch_size=2)
    rep = mem.ingest([str(f)], space="p")
    assert rep["supersessions"] == 2
    texts = {r["id"]: r["text"] for r in mem.memories("p")}
    got = {(texts[o][:12], texts[n][:11]) for o, n, _, _ in _marks(mem, "p")}
    assert got == {("The frontend", "We switched"), ("We ship a re", "We ship wee")}


def test_a_turn_marks_at_most_max_per_turn(make_memory, hash_embedder):
    mem = make_memory(embedder=hash_embedder, supersession__min_similarity=-1.0, supersession__max_per_turn=1)
    mem.add_many("p", [{"text": "Postgres listens on port 5432.", "speaker": "user", "time": T0},
                       {"text": "Postgres listens on port 5433.", "speaker": "user", "time": T0 + DAY},
                       {"text": "Postgres listens on port 6432 now.", "speaker": "user", "time": T0 + 2 * DAY}])
    assert len([m for m in _marks(mem, "p") if m[1] == 3]) == 1


# ----------------------------------------------------------------------------------------------- the judge

def test_judge_prompt_and_parsing():
    p = judge_prompt("Our server is vLLM.", "We replaced vLLM with SGLang.")
    assert "Earlier: Our server is vLLM." in p and "Later: We replaced vLLM with SGLang." in p
    assert [parse_judgement(r) for r in ("YES", "Maybe.", "no, it adds", "**Yes**", "I cannot tell", "")] == \
        ["yes", "maybe", "no", "yes", None, None]
    f = Found(1, 2, 0.5, "possible", "slot", "r", 0.7)
    assert _judged(lambda p: "Yes", "a", "b", f).status == "superseded"
    assert _judged(lambda p: "Yes", "a", "b", f).detector == "judge"
    assert _judged(lambda p: "NO", "a", "b", f) is None
    assert _judged(lambda p: "maybe", "a", "b", f).status == "possible"
    assert _judged(lambda p: "hmm", "a", "b", f) == f            # no answer: the model-free verdict stands

    def down(prompt):
        raise OSError("endpoint down")
    assert _judged(down, "a", "b", f) == f                       # a judge that fails never fails the write


def test_no_model_in_the_write_path(make_memory, hash_embedder):
    """A write never calls the chat model, whatever it is: an undecided pair stays ``possible`` for the
    deferred judge (an openai: endpoint on a closed port would fail any call)."""
    mem = make_memory(embedder=hash_embedder, supersession__min_similarity=-1.0, supersession__judge=True,
                      models__chat="openai:judge@http://127.0.0.1:9/v1")
    rep = mem.add_batch("p", [{"text": "Our model server is vLLM 0.6 behind nginx.", "speaker": "user", "time": T0},
                              {"text": "We replaced vLLM with SGLang last week.", "speaker": "user", "time": T0 + DAY}])
    assert [(m["status"], m["detector"]) for m in rep["supersessions"]] == [("superseded", "cue")]


def test_hook_capture_marks_through_its_write(make_memory, hash_embedder):
    """The hooks' capture stores a transcript's new turns with ``store_turns`` (one ``add_batch``): the same
    detection runs there."""
    from hela_cli.formats import Turn
    from hela_cli.hooks.capture import store_turns

    mem = make_memory(embedder=hash_embedder, supersession__min_similarity=-1.0)
    first = store_turns(mem, "repo", [Turn("user", "Our model server is vLLM 0.6 behind nginx.", T0, "", "s1", "u1",
                                           "user")])
    assert first == {"added": 1, "skipped": 0}
    store_turns(mem, "repo", [Turn("user", "We replaced vLLM with SGLang last week.", T0 + DAY, "", "s2", "u2", "user")])
    assert [(m[2], m[3]) for m in _marks(mem, "repo")] == [("superseded", "cue")]


def test_a_long_snake_case_line_does_not_hang_the_rules():
    """A ``key: value`` setting's key is read possessively: a long snake_case word with no ":" after it made
    the old expression backtrack exponentially (a BookMinder console line hung a capture; this line took the
    old expression more than 20 s). A hang detector, not a speed check: the work runs in a thread given 120 s."""
    import threading

    line = "tests/test_" + "_".join(f"w{i}x" for i in range(40)) + " PASSED"
    done = []
    worker = threading.Thread(target=lambda: done.append((has_signal(line * 3), slots(line))), daemon=True)
    worker.start()
    worker.join(120)
    assert done, "the rules did not finish on a long snake_case line"
    assert any(s.key == ("setting", "retries_max_count") for s in slots("config retries_max_count: 5"))
