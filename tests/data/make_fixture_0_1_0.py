"""Wrote tests/data/hela-0.1.0.db(.gz) and hela-0.1.0-retrieval.json with hela 0.1.0 (commit 428f364, schema
0005), run from a checkout of that commit: python make_fixture_0_1_0.py OUT.db OUT.json; then VACUUM, gzip -9."""
import json, sys
from pathlib import Path
from hela_cli.config import load_config
from hela_cli.memory import Memory

out = Path(sys.argv[1]); exp = Path(sys.argv[2])
out.unlink(missing_ok=True)
cfg = load_config(overrides={"db": str(out)})
cfg.consolidation.delta_hub = 0.9
cfg.consolidation.auto = False
qs = [q["question"] for q in json.load(open("sample_data/questions.json"))]
with Memory(cfg) as mem:
    mem.ingest(["sample_data/conversation.json"], space="demo")
    mem.ingest(["sample_data/chat.jsonl"], space="chat")
    for _ in range(6):
        for q in qs:
            mem.ask(q, "demo", llm=False, learn=True)
    rep = mem.consolidate("demo", max_hubs=2)
    print("consolidation", {k: v for k, v in rep.items() if k != "hubs"})
    st = mem.store
    sp = st.require_space("demo")
    if st.count_semantic(sp.id) == 0:
        with st.transaction():
            v = mem.embedder.embed(["Jonas has a dog named Tofu."])[0]
            nid = next(iter(st.iter_nodes(sp.id)))["id"]
            st.insert_semantic(sp.id, "fact", "Jonas", "Jonas has a dog named Tofu.", 0.9, None, None, [nid], v)
    expected = []
    for q in qs + ["Where did Maya travel?", "dog"]:
        r = mem.retrieve(q, "demo", learn=False)
        expected.append({"question": q, "memories": [[m["id"], m["score"], m["path"]] for m in r.memories],
                         "semantic": [s["id"] for s in r.semantic]})
    print({s["name"]: s for s in st.spaces()}, st.count_semantic(sp.id), st.applied_migrations())
json.dump(expected, open(exp, "w"), indent=1)
