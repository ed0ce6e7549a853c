"""Real HTTP servers for the endpoint tests, on 127.0.0.1 and a free port.

* :func:`llama_server`: llama-cpp-python's own OpenAI-compatible server (``python -m llama_cpp.server``,
  the ``llama-cpp-python[server]`` extra of the ``test`` dependencies) serving the default chat model as
  ``smollm2`` and the default embedder as ``minilm``, with an API key; started once per test session,
  stopped after.
* :func:`fault_server`: a tiny ``http.server`` that answers every request with the fault its URL names
  (``/500/v1``, ``/400/v1``, ``/html/v1``, ``/slow/v1``, ``/echo401/v1``, ``/dim8/v1``), or a scripted chat
  model that answers every request with one word (``/say-YES/v1``: the supersession judge's tests).
* :func:`chat_server`: a scripted OpenAI-compatible chat model (the answer a function of the prompt, with
  ``usage``) and a keyword-hash embedder, recording the chat requests (the batched judge's and
  consolidation's tests).

Import the fixtures into a test module: ``from tests.model_server import llama_server, fault_server``.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import MODEL_DIR
from hela_cli.models import DEFAULT_MODELS

SERVER_KEY = "sk-hela-test-Zq7vX3kP9"  # the llama_server's key (tests check it never shows up)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """``http://127.0.0.1:PORT/v1`` of a running ``llama_cpp.server`` (models ``smollm2`` and ``minilm``)."""
    chat = MODEL_DIR / DEFAULT_MODELS["smollm2"].filename
    emb = MODEL_DIR / DEFAULT_MODELS["minilm"].filename
    for p in (chat, emb):
        if not p.exists():
            pytest.fail(f"{p} missing: run `make models` (hela models pull) before the tests")
    tmp = tmp_path_factory.mktemp("llama-server")
    port = free_port()
    # the same settings as the in-process models (hela_cli.models.LlamaChat / LlamaEmbedder)
    threads = os.cpu_count() or 1  # as in process (models.n_threads 0); the server's default is half
    cfg = {"host": "127.0.0.1", "port": port, "api_key": SERVER_KEY, "models": [
        {"model": str(chat), "model_alias": "smollm2", "n_ctx": 4096, "n_batch": 512, "flash_attn": True,
         "n_threads": threads, "n_threads_batch": threads,
         "verbose": False},
        {"model": str(emb), "model_alias": "minilm", "embedding": True, "n_ctx": 512, "n_batch": 512,
         "n_ubatch": 512, "n_threads": threads, "n_threads_batch": threads, "flash_attn": True, "verbose": False}]}
    (tmp / "server.json").write_text(json.dumps(cfg))
    log = open(tmp / "server.log", "w")
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--config_file", str(tmp / "server.json")],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited ({proc.returncode}): {(tmp / 'server.log').read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("llama_cpp.server did not start within 180 s")
                time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


class _FaultHandler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _reply(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.do_POST()

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        fault = self.path.strip("/").split("/")[0]
        if fault == "500":
            self._reply(500, b'{"error": {"message": "model crashed"}}')
        elif fault == "400":
            self._reply(400, b'{"error": {"message": "bad request"}}')
        elif fault == "html":
            self._reply(200, b"<html>not an API</html>", "text/html")
        elif fault == "slow":
            time.sleep(3)
            self._reply(200, b"{}")
        elif fault == "echo401":  # a server that echoes the credentials it refused
            auth = self.headers.get("Authorization", "")
            self._reply(401, json.dumps({"error": {"message": f"invalid key: {auth}"}}).encode())
        elif fault == "dim8":
            inputs = json.loads(raw or b"{}").get("input", [])
            inputs = [inputs] if isinstance(inputs, str) else inputs
            data = [{"index": i, "embedding": [1.0] + [0.5] * 7} for i in range(len(inputs))]
            self._reply(200, json.dumps({"data": data}).encode())
        elif fault.startswith("say-"):  # a scripted chat model: every chat request is answered with the word
            reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": fault[4:]},
                                  "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
            self._reply(200, json.dumps(reply).encode())
        else:
            self._reply(404, b'{"error": "unknown fault"}')


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """A client that gave up (the "slow" fault outlives hela's timeout) makes the late reply a broken pipe;
        socketserver would print its traceback on this process's stderr, into a later test's captured output."""


@pytest.fixture(scope="session")
def fault_server():
    """``http://127.0.0.1:PORT``: prefix a fault name, e.g. ``f"{fault_server}/500/v1"``."""
    httpd = _QuietServer(("127.0.0.1", 0), _FaultHandler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class ChatServer:
    """A running :func:`chat_server`: ``url`` (the API root, ``.../v1``) and the chat requests it received
    (their JSON bodies, in order)."""

    def __init__(self, url: str):
        self.url = url
        self.requests: list[dict] = []


@contextlib.contextmanager
def chat_server(reply):
    """A scripted OpenAI-compatible server on 127.0.0.1: ``POST /v1/chat/completions`` answers with
    ``reply(messages)`` (the request's messages; its text is the answer) and reports ``usage`` (one token per
    4 characters); ``POST /v1/embeddings`` embeds with the keyword-hash double (so a whole ``hela`` command can
    run offline with ``openai:`` models). Yields a :class:`ChatServer`."""
    from hela_cli.testing import HashEmbedder

    hasher = HashEmbedder()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def _send(self, status: int, obj: object) -> None:
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802
            n = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n) or b"{}")
            if self.path.endswith("/embeddings"):
                inputs = body.get("input", [])
                inputs = [inputs] if isinstance(inputs, str) else inputs
                vecs = hasher.embed(inputs)
                self._send(200, {"data": [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)]})
            elif self.path.endswith("/chat/completions"):
                with lock:
                    server.requests.append(body)
                answer = reply(body.get("messages") or [])
                prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages") or [])
                self._send(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                                              "finish_reason": "stop"}],
                                 "usage": {"prompt_tokens": prompt // 4, "completion_tokens": len(answer) // 4}})
            else:
                self._send(404, {"error": {"message": "not found"}})

    httpd = _QuietServer(("127.0.0.1", 0), Handler)
    server = ChatServer(f"http://127.0.0.1:{httpd.server_address[1]}/v1")
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()


def dead_url() -> str:
    """A base URL where nothing listens."""
    return f"http://127.0.0.1:{free_port()}/v1"


__all__ = ["llama_server", "fault_server", "chat_server", "ChatServer", "free_port", "dead_url", "SERVER_KEY", "Path"]
