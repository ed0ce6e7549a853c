"""Helpers several test modules share (test modules never import each other: tests/test_layers.py checks):
a scripted chat model and small configs for consolidation, a space with a hand-made hub, the MCP stdio
client helpers, and a tiny LoCoMo-shaped dataset written here (original text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters

from hela_cli.config import Config
from tests.cases import write_conversation
from tests.reliability import PY, REPO, hela_env

#: the LongMemEval-shaped mini file of the bench tests
MINI = Path(__file__).resolve().parent / "data" / "longmemeval_mini.json"


# ------------------------------------------------------------------------------------------ consolidation
def small_config(**changes):
    # consecutive-turn links of 0.1 (below delta_hub even for a turn between two): hubs come from use only;
    # links decaying as in the paper (they count in Eq.2), no keyword links
    cfg = Config().replace(**{"consolidation.max_tokens": 200, "consolidation.max_neighbours": 2,
                              "consolidation.auto": False, "ingest.initial_weight": 0.1,
                              "ingest.fixed_links": False, "ingest.keyword_links": 0,
                              "consolidation.delta_hub": 0.5, **changes})
    cfg.retrieval.k, cfg.retrieval.m = 3, 0
    return cfg


class ScriptedChat:
    """A ChatModel returning scripted replies (str, or callable(messages, schema) -> str) in order."""

    model_id, n_ctx = "scripted", 4096

    def __init__(self, *replies, answer="an answer"):
        self.replies = list(replies)
        self.answer = answer
        self.calls = []

    def count_tokens(self, text):
        return len(text.split())

    def generate(self, messages, *, max_tokens=256, temperature=0.0, json_schema=None, stop=None):
        self.calls.append(json_schema)
        if json_schema is None:
            return self.answer
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return reply(messages, json_schema) if callable(reply) else reply


def good_reply(messages, schema):
    """A valid distillation citing the first cluster id the schema allows."""
    ids = schema["properties"]["facts"]["items"]["properties"]["evidence"]["items"]["enum"]
    return json.dumps({"traits": [{"subject": "Caroline", "text": "Caroline loves her calm greyhound Tofu.",
                                   "confidence": 1.7, "evidence": ids[:1]}],
                       "facts": [{"subject": "Caroline", "text": "Caroline adopted the greyhound Tofu.",
                                  "date": "", "evidence": ids[:1]}],
                       "knowledge": []})

def batch_clusters(prompt: str) -> list[dict[str, Any]]:
    """A capable model's clusters for the judge's batch prompt: per ``Cluster hub=N:``, a fact from the
    hub's own line, citing the hub."""
    import re

    clusters = []
    for hub in re.findall(r"^Cluster hub=(\d+):", prompt, re.M):
        line = re.search(rf"^\[{hub}\] \([^)]*\) [^:]+: (.+)$", prompt, re.M).group(1)
        clusters.append({"hub": int(hub), "reasoning": "The hub's memory states it.", "traits": [], "knowledge": [],
                         "facts": [{"subject": "", "text": line, "date": "", "evidence": [int(hub)]}]})
    return clusters


def hub_space(make_memory, tmp_path, chat, **changes):
    """A space of TURNS with a hand-made hub: node 0 strongly linked to nodes 4 and 6."""
    mem = make_memory(small_config(**changes), chat=chat)
    mem.ingest([write_conversation(tmp_path / "c.jsonl")], space="t")
    sp = mem.store.require_space("t")
    ids = [n["id"] for n in mem.store.iter_nodes(sp.id)]
    with mem.store.transaction():
        mem.store.set_edges(sp, {(ids[0], ids[4]): 0.4, (ids[0], ids[6]): 0.3, (ids[4], ids[6]): 0.2},
                            mem.config.hebbian.decay)
    return mem, ids


# ------------------------------------------------------------------------------------------ MCP stdio client
MCP_TURNS = [
    {"speaker": "Alice", "text": "I adopted a grey cat called Miso from the shelter", "time": "2024-05-01T10:00:00Z",
     "id": "m1"},
    {"speaker": "Bob", "text": "Nice! I am training for the Berlin marathon in September", "time": "2024-05-01T10:01:00Z",
     "id": "m2"},
    {"speaker": "Alice", "text": "Miso sleeps on my keyboard every morning", "time": "2024-05-01T10:02:00Z", "id": "m3"},
]


# `hela mcp` under an audit hook that records any network use (the SDK brings HTTP transports along; the
# stdio server must never open a socket)
NET_TRAP = """import sys
LOG = sys.argv[1]
EVENTS = ("socket.connect", "socket.bind", "socket.getaddrinfo", "socket.gethostbyname", "socket.sendto")
def hook(event, args):
    if event in EVENTS:
        with open(LOG, "a") as f:
            f.write(f"{event} {args!r}\\n")
sys.addaudithook(hook)
sys.argv = ["hela", *sys.argv[2:]]
from hela_cli.cli import main
main()
"""


def mcp_params(tmp: Path, db: Path, *extra: str, **env: str) -> StdioServerParameters:
    return StdioServerParameters(command=PY, args=["-c", NET_TRAP, str(tmp / "network.log"), "mcp", "--db", str(db),
                                                   *extra],
                                 env=hela_env(tmp, None, HELA_MODELS_N_THREADS="2", **env), cwd=str(REPO))


async def call_tool(s: ClientSession, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    res = await s.call_tool(name, args)
    if res.is_error:
        assert len(res.content) == 1
        text = res.content[0].text
        assert "\n" not in text and "Traceback" not in text
        return True, text
    assert res.structured_content == json.loads(res.content[0].text)
    return False, res.structured_content


# ------------------------------------------------------------------------------------------ tiny LoCoMo
SESSIONS_A = [
    ("10:00 am on 3 March, 2023", [
        ("Priya", "I finally adopted a grey kitten from the shelter, her name is Pebble."),
        ("Tomas", "Pebble is a lovely name! I spent the weekend fixing the roof of my boathouse."),
        ("Priya", "I also signed up for a pottery class on Thursday evenings."),
        ("Tomas", "Pottery sounds calming. I am training for the Lisbon half marathon in May."),
    ]),
    ("4:30 pm on 20 March, 2023", [
        ("Priya", "Pebble knocked my first pottery bowl off the shelf and it shattered."),
        ("Tomas", "Oh no! My knee started hurting after a long run along the river."),
        ("Priya", "My sister Anjali is visiting from Toronto next week."),
        ("Tomas", "I booked a physiotherapist for my knee on Friday."),
    ]),
    ("9:15 am on 2 May, 2023", [
        ("Tomas", "I finished the Lisbon half marathon in one hour and fifty minutes!"),
        ("Priya", "Congratulations! Anjali and I glazed six mugs together at the studio."),
        ("Tomas", "Next I want to row across the lake in the restored boathouse canoe."),
        ("Priya", "Pebble now sleeps on the warm kiln lid every afternoon."),
    ]),
]

SESSIONS_B = [
    ("7:00 pm on 1 June, 2022", [
        ("Mei", "I started volunteering at the community garden on Saturdays."),
        ("Oskar", "I am learning the cello, my teacher is very patient."),
        ("Mei", "We planted tomatoes, basil and a row of sunflowers."),
    ]),
    ("8:00 pm on 15 July, 2022", [
        ("Oskar", "I played my first cello recital at the library in 2022."),
        ("Mei", "The sunflowers grew taller than me, the kids loved them."),
        ("Oskar", "My neighbour lent me his bicycle to get to rehearsals."),
    ]),
]


def tiny_locomo_sample(sid, speakers, sessions, qa):
    conv = {"speaker_a": speakers[0], "speaker_b": speakers[1]}
    for n, (date, turns) in enumerate(sessions, start=1):
        conv[f"session_{n}_date_time"] = date
        conv[f"session_{n}"] = [{"speaker": s, "dia_id": f"D{n}:{i}", "text": t}
                                for i, (s, t) in enumerate(turns, start=1)]
    return {"sample_id": sid, "conversation": conv, "qa": qa}


QA_A = [
    {"question": "What is the name of Priya's kitten?", "answer": "Pebble", "evidence": ["D1:1"], "category": 4},
    {"question": "When did Tomas run the Lisbon half marathon?", "answer": "May 2023", "evidence": ["D3:1"],
     "category": 2},
    {"question": "What hobbies does Priya have?", "answer": "pottery, adopting pets",
     "evidence": ["D1:3; D2:1", "D3:2"], "category": 1},
    {"question": "Why did Tomas see a physiotherapist?", "answer": "knee pain after running",
     "evidence": ["D2:2", "D2:4"], "category": 4},
    {"question": "Would Tomas enjoy outdoor sports?", "answer": "Yes; he runs and rows", "evidence": ["D1:4"],
     "category": 3},
    {"question": "What did Priya's kitten break at the aquarium?", "adversarial_answer": "a pottery bowl",
     "evidence": ["D2:1"], "category": 5},
    {"question": "Who visited Priya from Toronto?", "answer": "Anjali, her sister", "evidence": ["D2:3"],
     "category": 4},
]
QA_B = [
    {"question": "In which year did Oskar play his first cello recital?", "answer": 2022, "evidence": ["D2:1"],
     "category": 2},
    {"question": "What did Mei plant in the community garden?", "answer": "tomatoes, basil, sunflowers",
     "evidence": ["D1:3"], "category": 1},
    {"question": "How does Oskar get to rehearsals?", "answer": "a borrowed bicycle", "evidence": ["D2:3"],
     "category": 4},
]
