"""Facts that change, detected at write time (issue 38): the model-free decision (cues, slots, vetoes), the
candidates and marks through the write paths (``add``, ``add_batch`` as hook capture uses it, batch ingest),
and the per-pair judge function a library caller may pass (the deferred batched judge: tests/test_judge.py)."""

from __future__ import annotations

import json

import pytest

from hela_cli.facts.detect import Found, judge_prompt, parse_judgement, _judged
from hela_cli.facts.rules import Slot, cues, decide, has_signal, slots

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


# ------------------------------------------------------------ issue 45: precision first, changes as people say them

@pytest.mark.parametrize("old, new, status", [
    # the old value not named: a vocabulary of interchangeable things, a typed slot, a status of the old thing
    ("Team chat happens in Slack.", "Since Monday everyone is on Microsoft Teams.", "superseded"),
    ("Planning is every Monday at 11:00.", "From now on planning is on Thursdays instead.", "superseded"),
    ("Standup is at 9:30.", "Standup moved to 10:15 for everyone.", "superseded"),
    ("The old Jenkins box builds every branch.", "The Jenkins instance is read-only until we delete it.", "superseded"),
    ("Merges to main are squash merges.", "Going forward we use rebase and merge on main.", "superseded"),
    ("Retention for raw events is 30 days.", "Retention for raw events is 90 days now.", "superseded"),
    # a reversal said as people say it to an agent
    ("Plan: version the API with an Accept-Version header, store exports in S3.",
     "Actually, drop the header versioning and put the version in the path.", "superseded"),
    ("Decision: we keep the monolith for now.", "Scratch the monolith decision, we split out billing.", "superseded"),
    ("The search index is built by Elasticsearch.", "Elasticsearch was replaced by OpenSearch last sprint.", "superseded"),
    ("The request timeout is 30 seconds.", "We lowered the timeout from 30 to 10 seconds.", "superseded"),
])
def test_changes_said_the_way_people_say_them(old, new, status):
    assert decide(old, new).status == status, decide(old, new)


@pytest.mark.parametrize("old, new, status", [
    ("I work as a nurse at the county hospital.", "I handed in my notice and got laid off the same week, long story.",
     "superseded"),
    ("I live in Leeds, in a flat near the station.", "We moved to Bristol in the spring.", "superseded"),
    ("I drive an old Fiesta.", "I finally sold the Fiesta.", "superseded"),
    ("I eat meat most days.", "I went vegetarian in January.", "superseded"),
    ("My girlfriend Ana and I cook every Sunday.", "Ana and I broke up last month.", "superseded"),
    ("I'm studying accounting at night school.", "I dropped the accounting course.", "superseded"),
    ("I play hockey on Sundays.", "I gave up hockey after the knee injury.", "superseded"),
    ("I take the bus to work.", "I work from home full time now.", "superseded"),
])
def test_life_changes_told_as_stories(old, new, status):
    assert decide(old, new).status == status, decide(old, new)


@pytest.mark.parametrize("old, new", [
    ("The Android build uses JDK 17.", "We upgraded the backend to JDK 21."),                  # another component
    ("The US region runs Postgres 14.", "We upgraded the EU region to Postgres 16."),          # another environment
    ("The read replica runs on db2.internal.", "The primary moved to db3.internal."),          # replica vs primary
    ("The staging API listens on port 8080.", "The prod API listens on port 9090 now."),
    ("The project needs Node 18.", "I upgraded my laptop to Node 22."),                        # a personal machine
    ("I work at a bank downtown.", "My sister started a new job at a bank in York."),          # another person
    ("I live in Leeds.", "My brother moved to Manchester last week."),
    ("We use Slack for team chat.", "We also added Discord for the community now."),           # additive
    ("I play hockey on Sundays.", "I haven't quit hockey, whatever Tom says."),                # negated
    ("I live in Leeds.", "If I ever moved to London I'd have to sell the car."),               # hypothetical
    ("Team chat happens in Slack.", "The growth team uses Teams rather than Slack."),           # another team
])
def test_another_subject_is_not_replaced(old, new):
    assert decide(old, new).status is None, decide(old, new)


# ------------------------------------------------ issue 45, round 4: release notes, announcements, reasons and caveats

@pytest.mark.parametrize("old, new", [
    ("The gateway runs on Kong.", "Changelog entry 2.4: Kong → Envoy for the gateway."),              # arrow after a colon
    ("Transactional mail goes out through SendGrid.", "SendGrid's out, Postmark's in."),
    ("Dates are parsed with moment.js.", "moment.js was removed in favour of date-fns."),           # a hyphenated name
    ("The suite runs under nose.", "We ported the whole suite off nose onto pytest."),
    ("Flags live in LaunchDarkly.", "LaunchDarkly is no more, flags sit in Flagsmith."),
    ("Our VPN is OpenVPN.", "The VPN is WireGuard since the cutover."),                             # what a named thing is
    ("Invoices are generated every Sunday night.", "Invoices are generated daily as of this week."),  # a cadence
    ("The worker queue is consumed by cron jobs.",
     "The worker queue moved from cron to Temporal, which should make retries easier."),           # a reason with a modal
    ("The flag is called \"fast_path\".", "Renamed the \"fast_path\" flag to \"turbo\"; the old name still works."),
    ("Pool size is 10 per worker.", "Pool size: from 10 to 40 per worker, since we ran out."),      # no verb
    ("Our ORM is SQLAlchemy 1.4.", "SQLAlchemy was 1.4, now 2.0."),
    ("The app talks to the REST gateway.", "The app talks to the gRPC gateway; the REST gateway is no longer used."),
    ("Sessions are kept in Memcached.", "We turned Memcached off, sessions are in Redis now."),
    ("Backups are kept for 7 days.", "Effective March 3, backups are kept for 45 days."),
    ("CI secrets are stored in the repository settings.", "CI secrets now live in Vault, not in the repository settings."),
    ("The cluster has three nodes.", "The cluster was scaled from three nodes to six."),
    ("Triage is led by Hugo.", "Hugo no longer leads triage, Ines took it over."),                  # a role let go
    ("Refunds take 10 days.", "Refunds take 3 days now, the 10 day ones were too slow."),           # the old value again
])
def test_changes_said_in_release_notes_and_announcements(old, new):
    assert decide(old, new, told=False).status == "superseded", decide(old, new, told=False)


@pytest.mark.parametrize("old, new", [
    ("Tests run with nose.", "TICKET-12: investigate replacing nose with pytest."),                 # a plan
    ("Our HTTP client is requests.", "A downstream project swapped requests for httpx."),          # someone else
    ("The laptop image ships Ubuntu 22.04.", "The build servers run Ubuntu 24.04 now."),            # another machine
    ("Registry: Docker Hub.", "We're thinking about Quay instead of Docker Hub."),                  # a hypothetical
    ("The bot runs on Heroku.", "The old changelog still says the bot moved from Heroku to Render."),  # reported
    ("Deploys happen on Tuesdays.", "We'll move deploys to Fridays, but only if QA agrees."),        # a condition after it
    ("The staging cluster has three nodes.", "The prod cluster has six nodes, staging is unchanged."),
    ("Triage is led by Hugo.", "Hugo leads triage again this week."),
])
def test_release_note_look_alikes_are_not_changes(old, new):
    assert decide(old, new, told=False).status is None, decide(old, new, told=False)


def test_an_old_value_said_only_as_a_plan_is_not_replaced():
    old = "We're thinking about Quay instead of Docker Hub."
    assert decide(old, "Container images are pushed to GHCR from now on.", told=False).status is None
    assert decide("The registry is Docker Hub.", "Container images are pushed to GHCR from now on.",
                  told=False).status == "superseded"


def test_named_and_cadence_slots_need_a_change_word():
    # "the VPN is X" and "daily" are said of many things in passing: without a change word, no mark at all
    assert decide("Our release bot is Marvin.", "The release bot is Jarvis, it's fast.", told=False).status is None
    assert decide("Our release bot is Marvin.", "The release bot is Jarvis now.", told=False).status == "superseded"
    assert decide("Reports run weekly.", "Reports run daily, which is plenty.", told=False).status is None
    assert Slot(("named", "vpn"), "wireguard") in slots("The VPN is WireGuard since the cutover.")


def test_vocabularies_typed_and_life_slots():
    from hela_cli.facts.life import life_changes
    from hela_cli.facts.vocab import other_subject, typed_values, vocab_values
    assert vocab_values("We moved CI from Jenkins to GitHub Actions") == {("ci", "jenkins"), ("ci", "github actions")}
    assert ("language", "go") not in vocab_values("let's go with it")           # a common word is not a name
    assert typed_values("every Tuesday at 3pm, 16 GB") == {("weekday", "tue"), ("cadence", "weekly"), ("time", "15:00"),
                                                          ("size", "16gb")}
    assert {c for c, *_ in life_changes("I quit my job and moved to Porto")} == {"job", "home"}
    assert not life_changes("she quit her job")                                  # not the speaker's
    assert other_subject("The EU region runs Postgres 14", "the US region is on Postgres 16")
    assert not other_subject("The staging API is on port 8080", "the staging API moved to port 9090")


def _agent(text: str, role: str, i: int, day: float) -> dict:
    return {"text": text, "speaker": role, "role": role, "id": f"msg-{i}", "time": T0 + day * DAY}


def test_in_an_agent_session_the_user_reverses_the_assistants_plan(make_memory, hash_embedder):
    """Issue 45: turns with an agent's ids (a captured or imported session) speak with one voice: the user's
    reversal replaces the plan the assistant wrote, a long answer read by sentence. The same texts in a chat
    (no ids: LongMemEval, an export) are two speakers: nothing is marked."""
    plan = ("Here is the plan for the export feature. " + "We keep the code small and tested. " * 10 +
            "The API is versioned with an Accept-Version header. Exports are kept in S3 for 7 days.")
    assert len(plan) > 400
    reversal = "Actually, drop the header versioning: put the version in the path, /v1/exports."
    mem = make_memory(embedder=hash_embedder, supersession__min_similarity=-1.0)
    ids = mem.add_many("agent", [_agent("Plan the export feature.", "user", 1, 0), _agent(plan, "assistant", 2, 0),
                                 _agent(reversal, "user", 3, 2)])
    assert [(o, n, s) for o, n, s, _ in _marks(mem, "agent")] == [(ids[1], ids[2], "superseded")]
    chat = mem.add_many("chat", [{"text": plan, "speaker": "assistant", "role": "assistant", "time": T0},
                                 {"text": reversal, "speaker": "user", "role": "user", "time": T0 + DAY}])
    assert len(chat) == 2 and _marks(mem, "chat") == []


def test_a_tool_line_is_no_statement(make_memory, hash_embedder):
    """A tool call or its result in an agent session states no decision: never a candidate, never a change."""
    mem = make_memory(embedder=hash_embedder, supersession__min_similarity=-1.0)
    mem.add_many("agent", [_agent("[result] `python --version` exit 0: Python 3.11.4", "user", 1, 0),
                           _agent("We require Python 3.12 now.", "user", 2, 1),
                           _agent("[tool output] Updated README.md: python 3.10 required", "tool", 3, 2),
                           _agent("[tool output] Updated README.md: python 3.13 required now", "tool", 4, 3)])
    assert _marks(mem, "agent") == []


def test_the_assistant_narrating_its_work_reverses_nothing(make_memory, hash_embedder):
    """"Let's remove the old virtual environment" from the assistant describes what it does next; the same words
    from the user are a decision."""
    mem = make_memory(embedder=hash_embedder, supersession__min_similarity=-1.0)
    old = "Let me activate the virtual environment first and then run the tests."
    ids = mem.add_many("agent", [_agent(old, "assistant", 1, 0),
                                 _agent("Let's remove the old virtual environment and the pip artifacts.", "assistant", 2, 1)])
    assert len(ids) == 2 and _marks(mem, "agent") == []
    ids = mem.add_many("agent2", [_agent(old, "assistant", 1, 0),
                                  _agent("Let's remove the old virtual environment and the pip artifacts.", "user", 2, 1)])
    assert [(o, n) for o, n, _, _ in _marks(mem, "agent2")] == [(ids[0], ids[1])]


def test_a_team_speaks_for_its_project_a_person_for_their_life(make_memory, hash_embedder):
    """Issue 45: in a team's space another member's change of a project fact (a version, a tool) replaces it;
    a person's own life is never replaced by what someone else says of theirs (LoCoMo's friends)."""
    mem = make_memory(embedder=hash_embedder, supersession__min_similarity=-1.0)
    ids = mem.add_many("team", [
        {"text": "The worker image is built on Python 3.11.", "speaker": "lena", "time": T0},
        {"text": "I work at the bank downtown.", "speaker": "omar", "time": T0 + DAY},
        {"text": "Bumped the worker image from Python 3.11 to 3.12 this morning.", "speaker": "kofi", "time": T0 + 2 * DAY},
        {"text": "I no longer work at the bank, I quit my job.", "speaker": "kofi", "time": T0 + 3 * DAY}])
    assert [(o, n) for o, n, _, _ in _marks(mem, "team")] == [(ids[0], ids[2])]


def test_chat_pleasantries_are_no_orders(make_memory, hash_embedder):
    """"No worries, John!" twice in a chat (LoCoMo) replaces nothing: a short order ("no X", "Y, not X", "drop X")
    counts only as what a user tells an agent."""
    mem = make_memory(embedder=hash_embedder, supersession__min_similarity=-1.0)
    mem.add_many("chat", [{"text": "No worries, John! You got this, keep it up.", "speaker": "Gina", "time": T0},
                          {"text": "No worries, John! Keep it up, not just for the prize.", "speaker": "Gina",
                           "time": T0 + DAY}])
    assert _marks(mem, "chat") == []


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
