"""Fake model APIs for running the Codex CLI and Gemini CLI binaries offline in tests.

* :func:`fake_responses_api`: OpenAI's Responses API as Codex uses it (``POST /v1/responses``, server-sent
  events ``response.created``, ``response.output_item.added``, ``response.output_text.delta``,
  ``response.output_item.done``, ``response.completed``);
* :func:`fake_gemini_api`: the Gemini API (``POST /v1beta/models/MODEL:generateContent`` and
  ``:streamGenerateContent?alt=sse``, ``:countTokens``).

Both answer a prompt the first time with a text and one shell tool call (``python3 --version``), then, once
the tool's result is in the request, with a final text; they record every request. This is how the fixtures
under ``tests/data/agents/`` were recorded (tests/data/agents/README.md). :func:`agent_binary` finds an
installed binary (``HELA_TEST_CODEX`` / ``HELA_TEST_GEMINI``, else ``.agents/node_modules/.bin/NAME``).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parents[1]
FINAL_TEXT = "The project uses Python 3. The deploy target is the staging server named kestrel."


def agent_binary(name: str) -> Path | None:
    """The ``codex`` / ``gemini`` executable, or None."""
    given = os.environ.get(f"HELA_TEST_{name.upper()}")
    path = Path(given) if given else REPO / ".agents" / "node_modules" / ".bin" / name
    return path if path.exists() and os.access(path, os.X_OK) else None


@dataclass
class Fake:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)

    def text(self) -> str:
        """Everything the model was sent, as one string (to look for a context that reached it)."""
        return json.dumps([r["body"] for r in self.requests])


@contextlib.contextmanager
def _serve(handle) -> Iterator[Fake]:
    fake = Fake("")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:   # model lists and the like: an empty answer
            self._send(200, "application/json", b'{"object": "list", "data": [], "models": []}')

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            fake.requests.append({"path": self.path, "body": body})
            ctype, payload = handle(self.path, body)
            self._send(200, ctype, payload)

        def _send(self, code: int, ctype: str, payload: bytes) -> None:
            self.send_response(code)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


def _responses(path: str, body: dict) -> tuple[str, bytes]:
    items = body.get("input") or []
    answered = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)
    tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    shell = next((t for t in ("exec_command", "shell_command", "shell") if t in tools), None)
    n = len(items)
    out: list[dict] = []
    if shell and not answered:
        args = {"exec_command": {"cmd": "python3 --version"}, "shell_command": {"command": "python3 --version"},
                "shell": {"command": ["bash", "-lc", "python3 --version"]}}[shell]
        text = {"type": "output_text", "text": "Let me check the Python version.", "annotations": []}
        out.append({"type": "message", "id": f"msg_{n}a", "role": "assistant", "status": "completed",
                    "content": [text]})
        out.append({"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": shell,
                    "arguments": json.dumps(args), "status": "completed"})
    else:
        out.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}]})
    events = [{"type": "response.created", "response": {"id": f"resp_{n}", "status": "in_progress", "output": []}}]
    for i, item in enumerate(out):
        events.append({"type": "response.output_item.added", "output_index": i,
                       "item": dict(item, status="in_progress")})
        if item["type"] == "message":
            events.append({"type": "response.output_text.delta", "item_id": item["id"], "output_index": i,
                           "content_index": 0, "delta": item["content"][0]["text"]})
        events.append({"type": "response.output_item.done", "output_index": i, "item": item})
    usage = {"input_tokens": 10, "output_tokens": 10, "total_tokens": 20, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens_details": {"reasoning_tokens": 0}}
    events.append({"type": "response.completed", "response": {"id": f"resp_{n}", "status": "completed", "output": out,
                                                              "usage": usage}})
    return "text/event-stream", b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _gemini(path: str, body: dict) -> tuple[str, bytes]:
    if ":countTokens" in path:
        return "application/json", b'{"totalTokens": 10}'
    contents = body.get("contents") or []
    gen = body.get("generationConfig") or {}
    tools = [d.get("name") for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]
    answered = any("functionResponse" in p for c in contents for p in c.get("parts") or [])
    if gen.get("responseMimeType") == "application/json" or gen.get("responseJsonSchema") or gen.get("responseSchema"):
        parts = [{"text": json.dumps({"reasoning": "answered", "next_speaker": "user", "complexity_reasoning": "simple",
                                      "complexity_score": 1, "model_choice": "flash"})}]
    elif "run_shell_command" in tools and not answered:
        parts = [{"text": "Let me check the Python version."},
                 {"functionCall": {"name": "run_shell_command", "args": {"command": "python3 --version",
                                                                         "description": "Show the Python version"}}}]
    else:
        parts = [{"text": FINAL_TEXT}]
    data = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20}}
    if "streamGenerateContent" in path:
        return "text/event-stream", f"data: {json.dumps(data)}\n\n".encode()
    return "application/json", json.dumps(data).encode()


@contextlib.contextmanager
def fake_responses_api() -> Iterator[Fake]:
    """The fake Responses API; ``url + "/v1"`` is a Codex model provider's ``base_url``."""
    with _serve(_responses) as fake:
        yield fake


@contextlib.contextmanager
def fake_gemini_api() -> Iterator[Fake]:
    """The fake Gemini API; ``url`` is ``GOOGLE_GEMINI_BASE_URL``."""
    with _serve(_gemini) as fake:
        yield fake
