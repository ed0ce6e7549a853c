"""Answer latency of the default chat model in-process vs through a local OpenAI-compatible server
(performance, not a test).

    python benchmarks/speed/endpoint_latency.py                 # 5 sample questions x 3 rounds
    python benchmarks/speed/endpoint_latency.py --rounds 5 --json endpoint.json

The prompts are the ones ``hela ask`` sends (prompt A.2 with the retrieved memories) for the questions of
``sample_data/questions.json`` over ``sample_data/conversation.json`` (ingested into a temporary database
with the default embedder). Each prompt is answered by

* **in-process**: :class:`hela_cli.models.LlamaChat` (what ``models.chat: smollm2`` loads), and
* **server**: :class:`hela_cli.models.endpoints.OpenAIChat` against ``python -m llama_cpp.server`` started here
  on 127.0.0.1 with the same GGUF and the same settings (context 4096, batch 512, flash attention, the
  same thread count), ``models.request_extra: {"repeat_penalty": 1.0}`` so both decode alike,

alternating the two per prompt (so a busy machine slows both alike). Reported per route: the median
latency of an answer (prompt processing + generation, end to end at the caller), generated tokens per
second over the whole run (generated tokens counted with the model's tokenizer / summed latency), the CPU
seconds spent (this process for in-process; the server process, from /proc, for the server), and whether
the answers were identical.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cpu_of(pid: int) -> float:
    """user + system CPU seconds of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="Times each question is answered by each route.")
    ap.add_argument("--json", type=Path, help="Write the results here.")
    args = ap.parse_args()

    from hela_cli.config import Config
    from hela_cli.models.endpoints import OpenAIChat
    from hela_cli.memory import Memory
    from hela_cli.models import DEFAULT_MODELS, LlamaChat
    from hela_cli.models.llama import _n_threads
    from hela_cli.paths import model_dir
    from hela_cli.answering.prompts import ANSWER_STOP, answer_messages

    mdir = model_dir("")
    chat_path = mdir / DEFAULT_MODELS["smollm2"].filename
    tmp = Path(tempfile.mkdtemp(prefix="hela-endpoint-bench-"))
    cfg = Config()
    cfg.db = str(tmp / "b.db")
    questions = [q["question"] for q in json.loads((REPO / "sample_data/questions.json").read_text())]
    with Memory(cfg) as mem:
        mem.ingest([REPO / "sample_data/conversation.json"])
        prompts = []
        for q in questions:
            res = mem.retrieve(q, "demo", learn=False)
            prompts.append(answer_messages(q, res.memories, res.semantic))

    threads = _n_threads(0)
    port = free_port()
    key = "bench-key"
    (tmp / "server.json").write_text(json.dumps({"host": "127.0.0.1", "port": port, "api_key": key, "models": [
        {"model": str(chat_path), "model_alias": "smollm2", "n_ctx": 4096, "n_batch": 512, "flash_attn": True,
         "n_threads": threads, "n_threads_batch": threads, "verbose": False}]}))
    log = open(tmp / "server.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--config_file", str(tmp / "server.json")],
                              stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"})
    os.environ["HELA_API_KEY"] = key
    try:
        local = LlamaChat(chat_path, n_ctx=4096)
        served = OpenAIChat(f"openai:smollm2@http://127.0.0.1:{port}/v1", request_extra={"repeat_penalty": 1.0})
        deadline = time.monotonic() + 180
        while True:
            try:
                served.generate([{"role": "user", "content": "hi"}], max_tokens=1)  # also warms the server
                break
            except Exception:  # noqa: BLE001 - not up yet
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit(f"server did not start: {(tmp / 'server.log').read_text()[-1000:]}")
                time.sleep(0.5)
        local.generate([{"role": "user", "content": "hi"}], max_tokens=1)  # warm as well
        routes = {"in-process": local, "server": served}
        lat = {r: [] for r in routes}
        toks = {r: 0 for r in routes}
        answers = {r: [] for r in routes}
        cpu = {r: 0.0 for r in routes}
        prompt_tokens = [sum(local.count_tokens(m["content"]) + 4 for m in p) for p in prompts]
        for _ in range(args.rounds):
            for p in prompts:
                for name, model in routes.items():
                    c0 = time.process_time() if name == "in-process" else _cpu_of(server.pid)
                    t0 = time.perf_counter()
                    a = model.generate(p, max_tokens=64, temperature=0.0, stop=ANSWER_STOP)
                    lat[name].append(time.perf_counter() - t0)
                    cpu[name] += (time.process_time() if name == "in-process" else _cpu_of(server.pid)) - c0
                    toks[name] += local.count_tokens(a)
                    answers[name].append(a)
        out = {"questions": len(prompts), "rounds": args.rounds, "threads": threads,
               "prompt_tokens_median": statistics.median(prompt_tokens),
               "identical_answers": answers["in-process"] == answers["server"], "routes": {
                   r: {"median_latency_s": round(statistics.median(lat[r]), 3),
                       "generated_tokens": toks[r],
                       "tokens_per_s": round(toks[r] / sum(lat[r]), 1),
                       "cpu_s": round(cpu[r], 2)} for r in routes}}
        print(json.dumps(out, indent=1))
        if args.json:
            args.json.write_text(json.dumps(out, indent=1) + "\n")
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


if __name__ == "__main__":
    main()
