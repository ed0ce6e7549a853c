"""Real coding agents, run offline against fake model APIs: what hela's hook and MCP tests (and the agent
benchmarks) drive. Standard library only.

The fakes, each on 127.0.0.1 (a free port), record every request they receive (:class:`FakeAPI`):

* :func:`fake_messages_api`: Anthropic's Messages API as Claude Code uses it (``POST /v1/messages``,
  server-sent events when the request streams, ``/v1/messages/count_tokens``);
* :func:`fake_responses_api`: OpenAI's Responses API as Codex CLI uses it (``POST /v1/responses``, events
  ``response.created`` ... ``response.completed``);
* :func:`fake_gemini_api`: the Gemini API as Gemini CLI uses it (``:generateContent``,
  ``:streamGenerateContent?alt=sse``, ``:countTokens``; its JSON-mode side requests get a fixed answer).

The model is scripted: ``reply`` is a text, or a function of the request's JSON body returning a text, a
:class:`Shell` (the agent's own shell tool runs a command) or a :class:`ToolUse` (any tool by its name in
that agent). :func:`steps` makes such a function from a list: the reply after the n-th tool result of the
current prompt. The default for Codex and Gemini is ``steps(Shell("python3 --version", ...), FINAL_TEXT)``.

:func:`claude_session`, :func:`codex_session` and :func:`gemini_session` run one headless session of the
real binary (``claude -p``, ``codex exec``, ``gemini -p``) with ``HOME`` in a given folder, against a fake
started for that session, and return the finished process and the fake with the requests it received.
:func:`agent_binary` finds a binary (``HELA_TEST_CLAUDE`` / ``HELA_TEST_CODEX`` / ``HELA_TEST_GEMINI``, else
``node_modules/.bin/NAME`` of a folder npm installed into; the repository's ``make agents`` uses ``.agents/``).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator, Union

__all__ = ["FINAL_TEXT", "FakeAPI", "Shell", "ToolUse", "agent_binary", "claude_env", "claude_session",
           "codex_env", "codex_session", "fake_gemini_api", "fake_messages_api", "fake_responses_api",
           "gemini_env", "gemini_session", "run_claude", "steps", "tool_rounds"]

#: the default script's final answer (after its shell call)
FINAL_TEXT = "The project uses Python 3. The deploy target is the staging server named kestrel."
DUMMY_KEY = "sk-ant-test-dummy-key-not-a-secret"
#: the environment variables of the agents and of hela that a session does not inherit from the caller
_OWN_ENV = ("ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_", "HELA_")


@dataclass(frozen=True)
class ToolUse:
    """A reply that calls the tool ``name`` (the agent's own name for it) with ``input``."""

    name: str
    input: dict[str, Any]
    id: str = ""


@dataclass(frozen=True)
class Shell:
    """A reply that runs ``command`` with the agent's shell tool (Claude Code ``Bash``, Codex
    ``exec_command`` / ``shell_command`` / ``shell``, Gemini CLI ``run_shell_command``), after ``text``."""

    command: str
    text: str = ""


Reply = Union[str, ToolUse, Shell]
ReplyFn = Callable[[dict[str, Any]], Reply]


@dataclass
class FakeAPI:
    """A running (or finished) fake: ``url``, and ``requests`` as received (``method``, ``path``, ``body``:
    the parsed JSON, or the text when it is not JSON)."""

    url: str
    kind: str
    requests: list[dict[str, Any]] = field(default_factory=list)

    def messages(self) -> list[Any]:
        """The bodies of the model requests (not token counts, model lists, ...), in order."""
        return [r["body"] for r in self.requests if _is_model_call(self.kind, r["path"])]

    def texts(self) -> list[str]:
        """Each model request as one string (system prompt, messages, tools), for ``in`` checks."""
        return [json.dumps(b, ensure_ascii=False) for b in self.messages()]

    def text(self) -> str:
        """Every request's body as one string."""
        return json.dumps([r["body"] for r in self.requests], ensure_ascii=False)


def _is_model_call(kind: str, path: str) -> bool:
    path = path.split("?")[0]
    if kind == "claude":
        return path == "/v1/messages"
    if kind == "codex":
        return path.endswith("/responses")
    return ":generateContent" in path or ":streamGenerateContent" in path


# ------------------------------------------------------------------------------------------ scripting
def tool_rounds(kind: str, body: dict[str, Any]) -> int:
    """How many tool results the request carries after the user's last prompt (``kind``: claude, codex or
    gemini): 0 for the first request of a turn, 1 after one tool call, ..."""
    n = 0
    if kind == "claude":
        for msg in reversed(body.get("messages") or []):
            if not isinstance(msg, dict) or msg.get("role") != "user":
                continue
            content = msg.get("content")
            if not (isinstance(content, list)
                    and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)):
                break
            n += 1
    elif kind == "codex":
        for item in reversed(body.get("input") or []):
            if not isinstance(item, dict):
                continue
            if item.get("type") == "function_call_output":
                n += 1
            elif item.get("type") == "message" and item.get("role") == "user":
                break
    else:
        for content in reversed(body.get("contents") or []):
            if not isinstance(content, dict):
                continue
            if any(isinstance(p, dict) and "functionResponse" in p for p in content.get("parts") or []):
                n += 1
            elif content.get("role") == "user":
                break
    return n


def steps(kind: str, *replies: Reply) -> ReplyFn:
    """A reply function: ``replies[n]`` after the n-th tool result of the current prompt (the last one once
    they run out). ``steps("codex", Shell("ls"), "Done.")`` runs ``ls``, then answers "Done."."""
    if not replies:
        raise ValueError("steps() needs at least one reply")
    return lambda body: replies[min(tool_rounds(kind, body), len(replies) - 1)]


def _default(kind: str) -> ReplyFn:
    return steps(kind, Shell("python3 --version", "Let me check the Python version."), FINAL_TEXT)


def _reply(reply: str | ReplyFn | None, kind: str, body: dict[str, Any]) -> Reply:
    if reply is None:
        reply = _default(kind)
    return reply(body) if callable(reply) else reply


# ------------------------------------------------------------------------------------------ the server
@contextlib.contextmanager
def _serve(kind: str, handle: Callable[[str, Any, int], tuple[int, str, bytes]]) -> Iterator[FakeAPI]:
    """An HTTP server on 127.0.0.1 recording each request; ``handle(path, body, n)`` (n: the request's
    index) returns the status, content type and body of the answer."""
    api = FakeAPI("", kind)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _record(self, method: str) -> tuple[Any, int]:
            n = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(n) if n else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            with lock:
                api.requests.append({"method": method, "path": self.path, "body": body})
                return body, len(api.requests) - 1

        def _send(self, status: int, ctype: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_POST(self) -> None:  # noqa: N802
            body, n = self._record("POST")
            try:
                self._send(*handle(self.path, body, n))
            except Exception as e:  # a broken script: the agent sees a 500, the test the message
                self._send(500, "application/json", json.dumps({"error": {"message": repr(e)}}).encode())

        def do_GET(self) -> None:  # noqa: N802  (model lists and the like)
            self._record("GET")
            if kind == "claude":
                self._send(404, "application/json",
                           b'{"type":"error","error":{"type":"not_found_error","message":"fake"}}')
            else:
                self._send(200, "application/json", b'{"object": "list", "data": [], "models": []}')

        do_HEAD = do_GET

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()


def _sse_events(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode("utf-8")


# ------------------------------------------------------------------------------------------ Claude Code
def _claude_blocks(reply: Reply, n: int) -> tuple[list[dict[str, Any]], str]:
    """(the content blocks, the stop reason)."""
    if isinstance(reply, str):
        return [{"type": "text", "text": reply}], "end_turn"
    if isinstance(reply, Shell):
        blocks = [{"type": "text", "text": reply.text}] if reply.text else []
        tool = ToolUse("Bash", {"command": reply.command, "description": "Run a command"})
    else:
        blocks, tool = [], reply
    blocks.append({"type": "tool_use", "id": tool.id or f"toolu_fake_{n:04d}", "name": tool.name,
                   "input": tool.input})
    return blocks, "tool_use"


def _claude_sse(blocks: list[dict[str, Any]], stop: str, model: str, usage: tuple[int, int] = (12, 5)) -> bytes:
    events = [("message_start", {"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": usage[0], "output_tokens": 1}}})]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}),
                   ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
                   ("content_block_stop", {"type": "content_block_stop", "index": i})]
    events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": usage[1]}}),
               ("message_stop", {"type": "message_stop"})]
    return _sse_events(events)


@contextlib.contextmanager
def fake_messages_api(reply: str | ReplyFn = "Done.",
                      usage: Callable[[dict[str, Any], Reply], tuple[int, int]] | None = None) -> Iterator[FakeAPI]:
    """A fake Anthropic Messages API answering every model request with ``reply``; ``usage(body, reply)``
    gives the ``(input, output)`` token counts each answer reports (default: a fixed 12 and 5)."""

    def handle(path: str, body: Any, n: int) -> tuple[int, str, bytes]:
        path = path.split("?")[0]
        if path.endswith("/count_tokens"):
            return 200, "application/json", b'{"input_tokens": 100}'
        if path != "/v1/messages" or not isinstance(body, dict):
            return 404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"fake"}}'
        answer = _reply(reply, "claude", body)
        counts = usage(body, answer) if usage is not None else (12, 5)
        blocks, stop = _claude_blocks(answer, n)
        model = str(body.get("model") or "claude-fake")
        if body.get("stream"):
            return 200, "text/event-stream", _claude_sse(blocks, stop, model, counts)
        msg = {"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": blocks,
               "stop_reason": stop, "stop_sequence": None,
               "usage": {"input_tokens": counts[0], "output_tokens": counts[1]}}
        return 200, "application/json", json.dumps(msg).encode("utf-8")

    with _serve("claude", handle) as api:
        yield api


def claude_env(home: Path, api: FakeAPI, **extra: str) -> dict[str, str]:
    """The environment of an offline Claude Code session: the fake API, a dummy key, ``HOME`` = ``home``,
    no non-essential traffic (no update check, no usage reporting); ``extra`` on top."""
    env = _base_env(home)
    env.update({
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": DUMMY_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    })
    env.update(extra)
    return env


def run_claude(binary: Path, prompt: str, cwd: Path, env: dict[str, str], timeout: float = 120,
               *args: str) -> subprocess.CompletedProcess:
    """``claude -p PROMPT`` in ``cwd``; the completed process (stdout, stderr, returncode)."""
    return subprocess.run([str(binary), "-p", prompt, *args], cwd=str(cwd), env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def claude_session(binary: Path, home: Path, project: Path, prompt: str, reply: str | ReplyFn = "Done.", *,
                   env: dict[str, str] | None = None, args: tuple[str, ...] = (),
                   timeout: float = 300) -> tuple[subprocess.CompletedProcess, FakeAPI]:
    """One ``claude -p PROMPT [ARGS]`` session in ``project`` with ``HOME`` = ``home``, against a fake Messages
    API answering with ``reply``; ``env`` (e.g. hela's ``HELA_*``) added to the session's environment."""
    with fake_messages_api(reply) as api:
        res = run_claude(binary, prompt, project, claude_env(home, api, **(env or {})), timeout, *args)
    return res, api


# ------------------------------------------------------------------------------------------ Codex CLI
def _codex_items(reply: Reply, body: dict[str, Any], n: int) -> list[dict[str, Any]]:
    def message(text: str, suffix: str) -> dict[str, Any]:
        return {"type": "message", "id": f"msg_{n}{suffix}", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}

    if isinstance(reply, str):
        return [message(reply, "")]
    out = [message(reply.text, "a")] if isinstance(reply, Shell) and reply.text else []
    if isinstance(reply, Shell):
        tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
        name = next((t for t in ("exec_command", "shell_command", "shell") if t in tools), None)
        if name is None:
            raise ValueError(f"the request offers no shell tool (tools: {tools})")
        args = {"exec_command": {"cmd": reply.command}, "shell_command": {"command": reply.command},
                "shell": {"command": ["bash", "-lc", reply.command]}}[name]
        tool = ToolUse(name, args)
    else:
        tool = reply
    out.append({"type": "function_call", "id": f"fc_{n}", "call_id": tool.id or f"call_{n}", "name": tool.name,
                "arguments": json.dumps(tool.input), "status": "completed"})
    return out


def _codex_sse(items: list[dict[str, Any]], n: int) -> bytes:
    events = [("response.created", {"type": "response.created",
                                    "response": {"id": f"resp_{n}", "status": "in_progress", "output": []}})]
    for i, item in enumerate(items):
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                      "item": dict(item, status="in_progress")}))
        if item["type"] == "message":
            events.append(("response.output_text.delta", {
                "type": "response.output_text.delta", "item_id": item["id"], "output_index": i, "content_index": 0,
                "delta": item["content"][0]["text"]}))
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": i,
                                                     "item": item}))
    usage = {"input_tokens": 10, "output_tokens": 10, "total_tokens": 20, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens_details": {"reasoning_tokens": 0}}
    events.append(("response.completed", {"type": "response.completed", "response": {
        "id": f"resp_{n}", "status": "completed", "output": items, "usage": usage}}))
    return _sse_events(events)


@contextlib.contextmanager
def fake_responses_api(reply: str | ReplyFn | None = None) -> Iterator[FakeAPI]:
    """A fake Responses API; ``url + "/v1"`` is a Codex model provider's ``base_url``. ``reply`` None: the
    default script (a text and ``python3 --version``, then :data:`FINAL_TEXT`)."""

    def handle(path: str, body: Any, n: int) -> tuple[int, str, bytes]:
        if not _is_model_call("codex", path) or not isinstance(body, dict):
            return 404, "application/json", b'{"error": {"message": "fake: not found"}}'
        return 200, "text/event-stream", _codex_sse(_codex_items(_reply(reply, "codex", body), body, n), n)

    with _serve("codex", handle) as api:
        yield api


def codex_env(home: Path, api: FakeAPI, project: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment of an offline Codex session, and its ``$CODEX_HOME/config.toml`` (``home/.codex``):
    a model provider ``fake`` at ``api`` (Responses API, key from ``FAKE_API_KEY``), hooks on, ``project``
    trusted (Codex reads a project's ``.codex/`` only in a trusted project); ``extra`` on top."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    lines = ['model = "gpt-5-codex"', 'model_provider = "fake"', "", "[model_providers.fake]", 'name = "fake"',
             f'base_url = "{api.url}/v1"', 'wire_api = "responses"', 'env_key = "FAKE_API_KEY"', "",
             "[features]", "hooks = true", ""]
    if project is not None:
        lines += [f"[projects.{json.dumps(str(project.resolve()))}]", 'trust_level = "trusted"', ""]
    lines += _codex_plugin_tables(codex_home / "config.toml")
    (codex_home / "config.toml").write_text("\n".join(lines), encoding="utf-8")
    env = _base_env(home)
    env.update({"CODEX_HOME": str(codex_home), "FAKE_API_KEY": "fake-key-not-a-secret"})
    env.update(extra)
    return env


def _codex_plugin_tables(config: Path) -> list[str]:
    """The ``[marketplaces.*]`` / ``[plugins.*]`` tables ``codex plugin`` wrote to an existing config: kept."""
    try:
        text = config.read_text(encoding="utf-8")
    except OSError:
        return []
    keep, out = False, []
    for line in text.splitlines():
        if line.startswith("["):
            keep = line.startswith(("[marketplaces.", "[plugins."))
        if keep:
            out.append(line)
    return out + ([""] if out else [])


def codex_session(binary: Path, home: Path, project: Path, prompt: str, reply: str | ReplyFn | None = None, *,
                  env: dict[str, str] | None = None, resume: bool = False, args: tuple[str, ...] = (),
                  timeout: float = 300) -> tuple[subprocess.CompletedProcess, FakeAPI]:
    """One ``codex exec PROMPT`` (``resume``: ``codex exec resume --last PROMPT``) in ``project`` with ``HOME`` =
    ``home``, against a fake Responses API answering with ``reply``. Hooks that are not managed run without
    persisted trust (``--dangerously-bypass-hook-trust``); ``env`` is added to the session's environment."""
    with fake_responses_api(reply) as api:
        cmd = [str(binary), "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", *args]
        cmd += ["resume", "--last", prompt] if resume else [prompt]
        res = subprocess.run(cmd, cwd=str(project), env=codex_env(home, api, project, **(env or {})),
                             capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return res, api


# ------------------------------------------------------------------------------------------ Gemini CLI
def _gemini_parts(reply: Reply) -> list[dict[str, Any]]:
    if isinstance(reply, str):
        return [{"text": reply}]
    if isinstance(reply, Shell):
        parts = [{"text": reply.text}] if reply.text else []
        return parts + [{"functionCall": {"name": "run_shell_command",
                                          "args": {"command": reply.command, "description": "Run a command"}}}]
    return [{"functionCall": {"name": reply.name, "args": reply.input}}]


#: Gemini CLI's JSON-mode side requests (who speaks next, which model): one answer that fits them all
_GEMINI_JSON = {"reasoning": "answered", "next_speaker": "user", "complexity_reasoning": "simple",
                "complexity_score": 1, "model_choice": "flash"}


@contextlib.contextmanager
def fake_gemini_api(reply: str | ReplyFn | None = None) -> Iterator[FakeAPI]:
    """A fake Gemini API; ``url`` is ``GOOGLE_GEMINI_BASE_URL``. ``reply`` None: the default script."""

    def handle(path: str, body: Any, n: int) -> tuple[int, str, bytes]:
        if ":countTokens" in path:
            return 200, "application/json", b'{"totalTokens": 10}'
        if not _is_model_call("gemini", path) or not isinstance(body, dict):
            return 404, "application/json", b'{"error": {"code": 404, "message": "fake: not found"}}'
        gen = body.get("generationConfig") or {}
        if gen.get("responseMimeType") == "application/json" or gen.get("responseJsonSchema") or gen.get("responseSchema"):
            parts = [{"text": json.dumps(_GEMINI_JSON)}]
        else:
            parts = _gemini_parts(_reply(reply, "gemini", body))
        data = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20}}
        if "streamGenerateContent" in path:
            return 200, "text/event-stream", f"data: {json.dumps(data)}\n\n".encode()
        return 200, "application/json", json.dumps(data).encode()

    with _serve("gemini", handle) as api:
        yield api


def gemini_env(home: Path, api: FakeAPI, **extra: str) -> dict[str, str]:
    """The environment of an offline Gemini CLI session, and its user settings (``home/.gemini/settings.json``:
    API-key auth, no usage statistics, no update check): the fake at ``GOOGLE_GEMINI_BASE_URL``, a dummy
    ``GEMINI_API_KEY``, the workspace trusted; ``extra`` on top."""
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}},
                                    "privacy": {"usageStatisticsEnabled": False},
                                    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False}}, indent=2),
                        encoding="utf-8")
    env = _base_env(home)
    env.update({"GEMINI_API_KEY": "fake-key-not-a-secret", "GOOGLE_GEMINI_BASE_URL": api.url,
                "GEMINI_CLI_TRUST_WORKSPACE": "true"})
    env.update(extra)
    return env


def gemini_session(binary: Path, home: Path, project: Path, prompt: str, reply: str | ReplyFn | None = None, *,
                   env: dict[str, str] | None = None, resume: bool = False, args: tuple[str, ...] = ("--yolo",),
                   timeout: float = 300) -> tuple[subprocess.CompletedProcess, FakeAPI]:
    """One ``gemini -p PROMPT --yolo`` (``resume``: ``--resume latest``) in ``project`` with ``HOME`` = ``home``,
    against a fake Gemini API answering with ``reply``; ``env`` is added to the session's environment."""
    with fake_gemini_api(reply) as api:
        cmd = [str(binary), *(["--resume", "latest"] if resume else []), "-p", prompt, *args]
        res = subprocess.run(cmd, cwd=str(project), env=gemini_env(home, api, **(env or {})),
                             capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return res, api


# ------------------------------------------------------------------------------------------ shared
def _base_env(home: Path) -> dict[str, str]:
    """The caller's environment without the agents' and hela's own variables, ``HOME`` = ``home``, and
    127.0.0.1 never through a proxy."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(_OWN_ENV)}
    env.update({"HOME": str(home), "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    return env


def agent_binary(name: str, agents_dir: Path) -> tuple[Path | None, str]:
    """``(path, "")`` of the ``claude`` / ``codex`` / ``gemini`` executable, or ``(None, why not)``.
    ``HELA_TEST_<NAME>`` overrides ``agents_dir/node_modules/.bin/NAME``."""
    given = os.environ.get(f"HELA_TEST_{name.upper()}")
    path = Path(given) if given else agents_dir / "node_modules" / ".bin" / name
    if path.exists() and os.access(path, os.X_OK):
        return path, ""
    return None, f"{path} missing: run `make agents` (npm install of the pinned {name})"
