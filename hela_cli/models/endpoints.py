"""OpenAI-compatible model servers behind the model protocols of :mod:`hela_cli.models`.

``models.chat`` / ``models.embedder`` accept ``openai:MODEL@BASE_URL``, e.g.
``openai:llama3.2@http://127.0.0.1:11434/v1`` (Ollama), ``openai:qwen@http://127.0.0.1:8080/v1``
(llama.cpp's ``llama-server``, LM Studio, vLLM, ``python -m llama_cpp.server``) or
``openai:gpt-4o-mini@https://api.openai.com/v1``.

* **What leaves the machine.** A loopback endpoint (127.0.0.0/8, ::1, ``localhost``) is used as given. Any
  other host receives memories and questions, so it must be named in ``models.allow_remote`` (a
  comma-separated list of hosts, in the config file or ``HELA_MODELS_ALLOW_REMOTE``); otherwise the
  endpoint is refused before anything is sent (exit 2). Loopback requests ignore proxy settings of the
  environment (a proxy would take them off the machine).
* **The key** is read from ``HELA_API_KEY``, else ``OPENAI_API_KEY``, when each request is sent (an
  ``httpx`` auth hook): no hela object, config, database row, log line or error message holds it; error
  messages are also scrubbed of it in case a server echoes it.
* **Chat**: ``/chat/completions`` (temperature, seed 0, stop sequences; ``stream: true`` (SSE) when a
  caller wants the text as it comes). Distillation asks for JSON with ``response_format``: the OpenAI
  ``json_schema`` form first, then llama-cpp-python's ``json_object`` + ``schema`` dialect, then nothing
  (the consolidation's own validation and retry): the first form the server accepts is remembered.
* **Embeddings**: ``/embeddings``, L2-normalised here. The model id the database binds to is
  ``openai:MODEL`` (the name and the dimension, not the URL: the same model served elsewhere matches), so
  ``hela reembed`` moves a file to a served embedder and back like any GGUF.
* **Token counts** (the context budget of consolidation, ``context_tokens`` of ``hela ask``): the
  server's own tokenizer where it has one (llama-cpp-python ``/extras/tokenize/count``, llama.cpp
  ``/tokenize``), else a deliberately high estimate of one token per 3 UTF-8 bytes
  (:func:`estimate_tokens`; English BPE vocabularies average ~4 bytes a token), so a prompt cut to fit
  the window fits. Without a tokenizer, the window check is left to the server (it answers 4xx).
* **Faults** name the endpoint, never the key: a refused connection, a timeout (``models.timeout``), an
  HTTP error status, a reply that is not JSON. Configuration faults (a malformed ref, a host not allowed,
  401/403/404: key, model or URL wrong) exit 2 (:class:`~hela_cli.errors.InputError`); the others are
  :class:`~hela_cli.errors.ModelError` (exit 3).
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence
from urllib.parse import urlsplit

import numpy as np

from hela_cli.errors import HelaError, InputError, ModelError

PREFIX = "openai:"
KEY_VARS = ("HELA_API_KEY", "OPENAI_API_KEY")
BYTES_PER_TOKEN_ESTIMATE = 3  # conservative: English BPE ~4 bytes/token, so this over-counts


def is_endpoint(ref: str) -> bool:
    return isinstance(ref, str) and ref.startswith(PREFIX)


@dataclass(frozen=True)
class Endpoint:
    model: str
    base_url: str  # without a trailing slash, e.g. http://127.0.0.1:11434/v1

    @property
    def ref(self) -> str:
        return f"{PREFIX}{self.model}@{self.base_url}"

    @property
    def host(self) -> str:
        return (urlsplit(self.base_url).hostname or "").lower()

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def root(self) -> str:
        """The server root (``/v1`` dropped): where llama.cpp / llama-cpp-python put their tokenizers."""
        url = self.base_url
        return url[:-3] if url.endswith("/v1") else url


def parse_ref(ref: str) -> Endpoint:
    """``openai:MODEL@BASE_URL`` -> :class:`Endpoint` (exit 2 with the expected shape otherwise)."""
    body = ref[len(PREFIX):] if is_endpoint(ref) else ref
    model, sep, url = body.rpartition("@")
    if not sep or not model or not url:
        raise InputError(f"'{ref}': an endpoint is openai:MODEL@BASE_URL, e.g. "
                         f"openai:llama3.2@http://127.0.0.1:11434/v1")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"'{ref}': the base URL must be http(s)://HOST[:PORT]/PATH, got '{url}'")
    if parts.username or parts.password:
        raise InputError(f"'{ref}': no credentials in the URL; the key comes from HELA_API_KEY or OPENAI_API_KEY")
    return Endpoint(model, url.rstrip("/"))


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(allow_remote: str) -> set[str]:
    return {h.strip().lower() for h in (allow_remote or "").split(",") if h.strip()}


def check_allowed(ep: Endpoint, allow_remote: str) -> None:
    """Refuse a non-loopback endpoint unless its host is named in ``models.allow_remote``."""
    if ep.loopback or ep.host in allowed_hosts(allow_remote):
        return
    raise InputError(f"{ep.ref}: '{ep.host}' is not this machine; memories and questions would be sent there. "
                     f"Name it in the config to allow it (models.allow_remote: {ep.host})")


def _key() -> str | None:
    for var in KEY_VARS:
        value = os.environ.get(var)
        if value:
            return value
    return None


def scrub(message: str) -> str:
    """One line, without the key (a server may echo a rejected one)."""
    line = " ".join(str(message).split())
    key = _key()
    if key:
        line = line.replace(key, "***")
    return line[:300]


def estimate_tokens(text: str) -> int:
    """A high estimate of a text's tokens when the server has no tokenizer: one per 3 UTF-8 bytes."""
    return math.ceil(len(text.encode("utf-8", "replace")) / BYTES_PER_TOKEN_ESTIMATE)


class _Client:
    """One endpoint's HTTP plumbing: requests, the key, and every fault as one line naming the endpoint."""

    def __init__(self, ep: Endpoint, timeout: float):
        import httpx2 as httpx

        self.ep = ep
        self.timeout = timeout
        self._httpx = httpx

        def auth(request: Any) -> Any:  # the key is read per request, never kept
            key = _key()
            if key:
                request.headers["Authorization"] = f"Bearer {key}"
            return request

        # loopback: no proxy from the environment (it would take the request off the machine); redirects are
        # not followed (one to another host would send the text there)
        self._http = httpx.Client(base_url=ep.base_url + "/", timeout=timeout, auth=auth,
                                  trust_env=not ep.loopback)

    def close(self) -> None:
        self._http.close()

    def _fault(self, e: Exception) -> HelaError:
        httpx = self._httpx
        if isinstance(e, httpx.TimeoutException):
            return ModelError(f"{self.ep.ref}: no reply within {self.timeout:g} s (models.timeout)")
        if isinstance(e, httpx.ConnectError):
            return ModelError(f"{self.ep.ref}: cannot connect (is the server running?)")
        return ModelError(f"{self.ep.ref}: request failed ({e.__class__.__name__}: {scrub(str(e))})")

    def _status(self, status: int, body: str) -> HelaError:
        detail = body
        try:
            obj = json.loads(body)
            found = obj.get("error", obj.get("detail", obj)) if isinstance(obj, dict) else obj
            detail = found.get("message", found) if isinstance(found, dict) else found
        except (ValueError, AttributeError):
            pass
        msg = f"{self.ep.ref}: HTTP {status}: {scrub(str(detail)) or 'no detail'}"
        if status in (401, 403):
            err: HelaError = InputError(msg + " (check HELA_API_KEY / OPENAI_API_KEY)")
        elif status == 404:
            err = InputError(msg + " (check the model name and the base URL)")
        else:
            err = ModelError(msg)
        err.status = status  # type: ignore[attr-defined]
        return err

    def post_json(self, path: str, body: dict[str, Any], root: bool = False) -> Any:
        return self._json("POST", path, url=(self.ep.root + "/" + path) if root else path, json=body)

    def get_json(self, path: str) -> Any:
        return self._json("GET", path)

    def _json(self, method: str, path: str, url: str | None = None, **kw: Any) -> Any:
        """The JSON reply to one request; faults, HTTP errors and a reply that is not JSON as a ModelError
        naming the endpoint and ``path``."""
        try:
            r = self._http.request(method, url or path, **kw)
        except self._httpx.HTTPError as e:
            raise self._fault(e) from None
        if r.status_code >= 400:
            raise self._status(r.status_code, r.text)
        try:
            return r.json()
        except ValueError:
            kind = r.headers.get("content-type", "no content type")
            raise ModelError(f"{self.ep.ref}: the reply to {path} is not JSON (HTTP {r.status_code}, {kind})") from None

    def stream_sse(self, path: str, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The ``data:`` events of a server-sent-events reply, as JSON objects, until ``[DONE]``."""
        try:
            with self._http.stream("POST", path, json=body) as r:
                if r.status_code >= 400:
                    r.read()
                    raise self._status(r.status_code, r.text)
                kind = r.headers.get("content-type", "")
                if "event-stream" not in kind:
                    r.read()
                    try:  # a server that ignores stream: true answers with the whole reply
                        whole = r.json()
                    except ValueError:
                        raise ModelError(f"{self.ep.ref}: the reply to {path} is not JSON (HTTP {r.status_code}, "
                                         f"{kind or 'no content type'}; server-sent events were asked for)") from None
                    yield {"whole": whole}
                    return
                for line in r.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        return
                    try:
                        event = json.loads(data)
                    except ValueError:
                        raise ModelError(f"{self.ep.ref}: a streamed event of {path} is not JSON") from None
                    if isinstance(event, dict) and event.get("error"):
                        raise ModelError(f"{self.ep.ref}: {scrub(str(event['error']))}")
                    yield event
        except self._httpx.HTTPError as e:
            raise self._fault(e) from None


def _content(ep: Endpoint, reply: Any) -> str:
    try:
        return reply["choices"][0]["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ModelError(f"{ep.ref}: the reply has no choices[0].message (not an OpenAI chat reply)") from None


class _Counter:
    """Token counts from the server's tokenizer if it has one, else :func:`estimate_tokens`. Which one is
    found on first use by asking each tokenizer route to count the word "hela" (so no memory text goes to
    a route the server may not have)."""

    def __init__(self, client: _Client):
        self._client = client
        self.method: str | None = None  # "extras" | "tokenize" | "estimate", found on first use

    @property
    def exact(self) -> bool:
        return self.method in ("extras", "tokenize")

    def _ask(self, method: str, text: str) -> int:
        c, ep = self._client, self._client.ep
        try:
            if method == "extras":  # llama-cpp-python
                return int(c.post_json("extras/tokenize/count", {"input": text, "model": ep.model}, root=True)["count"])
            return len(c.post_json("tokenize", {"content": text}, root=True)["tokens"])  # llama.cpp llama-server
        except (KeyError, TypeError, ValueError):
            raise ModelError(f"{ep.ref}: the reply of its tokenizer ({method}) has no token count") from None

    def count(self, text: str) -> int:
        if self.method is None:
            for method in ("extras", "tokenize"):
                try:
                    self._ask(method, "hela")
                except HelaError as e:
                    if _unreachable(e):
                        raise
                    continue
                self.method = method
                break
            else:
                self.method = "estimate"
        if self.method == "estimate":
            return estimate_tokens(text)
        return self._ask(self.method, text)


def _unreachable(e: BaseException) -> bool:
    return isinstance(e, ModelError) and ("cannot connect" in e.message or "no reply within" in e.message)


def _extra(value: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(value, dict):
        return dict(value)
    if not value or not value.strip():
        return {}
    try:
        obj = json.loads(value)
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        raise InputError(f"models.request_extra must be a JSON object, got {value!r}")
    return obj


class OpenAIChat:
    """A chat model served over the OpenAI chat API (:class:`hela_cli.models.ChatModel`)."""

    def __init__(self, ref: str, n_ctx: int = 4096, timeout: float = 120.0, allow_remote: str = "",
                 request_extra: str | dict[str, Any] = ""):
        self.endpoint = ep = parse_ref(ref)
        check_allowed(ep, allow_remote)
        self.model_id = f"{PREFIX}{ep.model}"
        self.n_ctx = n_ctx
        self.extra = _extra(request_extra)
        self._client = _Client(ep, timeout)
        self._counter = _Counter(self._client)
        self._format: str | None = None  # response_format dialect the server accepted: json_schema | schema | none
        self.last: dict[str, Any] = {}  # the last call's tokens as the server reported them ({} when none)

    def close(self) -> None:
        self._client.close()

    def count_tokens(self, text: str) -> int:
        return self._counter.count(text)

    def _answer(self, reply: Any) -> str:
        usage = (reply.get("usage") if isinstance(reply, dict) else None) or {}
        tin, tout = (usage.get("prompt_tokens"), usage.get("completion_tokens")) if isinstance(usage, dict) else (0, 0)
        ok = isinstance(tin, int) and isinstance(tout, int) and tin > 0
        self.last = {"input_tokens": tin, "output_tokens": tout} if ok else {}
        return _content(self.endpoint, reply).strip()

    def generate(self, messages: list[dict[str, str]], *, max_tokens: int = 256, temperature: float = 0.0,
                 json_schema: dict[str, Any] | None = None, stop: list[str] | None = None,
                 on_text: Callable[[str], None] | None = None) -> str:
        body: dict[str, Any] = {"model": self.endpoint.model, "messages": messages, "max_tokens": max_tokens,
                                "temperature": temperature, "seed": 0, **self.extra}
        if stop:
            body["stop"] = stop[:4]  # OpenAI takes at most 4
        if self._counter.exact:  # the window is checked here only when the server counts exactly
            prompt_tokens = sum(self.count_tokens(m["content"]) + 4 for m in messages)
            if prompt_tokens + max_tokens > self.n_ctx:
                raise ModelError(f"{self.endpoint.ref}: prompt of ~{prompt_tokens} tokens plus {max_tokens} to "
                                 f"generate exceeds models.chat_ctx ({self.n_ctx})")
        if json_schema is not None:
            return self._generate_json(body, json_schema)
        if on_text is not None:
            return self._stream(body, on_text)
        return self._answer(self._client.post_json("chat/completions", body))

    def _generate_json(self, body: dict[str, Any], schema: dict[str, Any]) -> str:
        forms = {"json_schema": {"type": "json_schema", "json_schema": {"name": "distillation", "schema": schema}},
                 "schema": {"type": "json_object", "schema": schema}, "none": None}
        order = [self._format] if self._format else list(forms)
        for i, name in enumerate(order):
            fmt = forms[name]
            req = dict(body, response_format=fmt) if fmt is not None else body
            try:
                reply = self._client.post_json("chat/completions", req)
            except ModelError as e:
                # an HTTP error to an unknown response_format (400/422; llama-cpp-python answers 500): try the
                # next dialect; the last one's error is the one reported
                if i + 1 < len(order) and getattr(e, "status", 0) in (400, 422, 500):
                    continue
                raise
            self._format = name
            return self._answer(reply)
        raise ModelError(f"{self.endpoint.ref}: no response_format accepted")  # pragma: no cover

    def _stream(self, body: dict[str, Any], on_text: Callable[[str], None]) -> str:
        self.last = {}
        parts: list[str] = []
        for event in self._client.stream_sse("chat/completions", dict(body, stream=True)):
            if "whole" in event:
                text = _content(self.endpoint, event["whole"])
                on_text(text)
                return text.strip()
            try:
                delta = event["choices"][0].get("delta") or {}
            except (KeyError, IndexError, TypeError, AttributeError):
                continue  # e.g. a usage-only event
            piece = delta.get("content") or ""
            if piece:
                parts.append(piece)
                on_text(piece)
        return "".join(parts).strip()


class OpenAIEmbedder:
    """Sentence embeddings over the OpenAI embeddings API (:class:`hela_cli.models.Embedder`)."""

    BATCH = 64  # texts per request

    def __init__(self, ref: str, n_ctx: int = 512, timeout: float = 120.0, allow_remote: str = ""):
        self.endpoint = ep = parse_ref(ref)
        check_allowed(ep, allow_remote)
        self.model_id = f"{PREFIX}{ep.model}"
        self.n_ctx = n_ctx
        self._client = _Client(ep, timeout)
        self._counter = _Counter(self._client)
        self.dim = 0
        self.dim = int(self._embed(["hela"]).shape[1])  # the dimension the database binds to

    def close(self) -> None:
        self._client.close()

    def count_tokens(self, text: str) -> int:
        return self._counter.count(text)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [t if t.strip() else "." for t in texts]
        rows: list[list[float]] = []
        for i in range(0, len(texts), self.BATCH):
            chunk = texts[i:i + self.BATCH]
            reply = self._client.post_json("embeddings", {"model": self.endpoint.model, "input": chunk})
            try:
                data = sorted(reply["data"], key=lambda d: d.get("index", 0))
                vecs = [d["embedding"] for d in data]
            except (KeyError, TypeError, AttributeError):
                raise ModelError(f"{self.endpoint.ref}: the reply has no data[].embedding "
                                 f"(not an OpenAI embeddings reply)") from None
            if len(vecs) != len(chunk):
                raise ModelError(f"{self.endpoint.ref}: {len(vecs)} vectors for {len(chunk)} texts")
            rows.extend(vecs)
        try:
            out = np.asarray(rows, dtype=np.float32)
        except (ValueError, TypeError):
            raise ModelError(f"{self.endpoint.ref}: the vectors are not lists of numbers of one length") from None
        if out.ndim != 2 or (self.dim and out.shape[1] != self.dim):
            got = out.shape[1] if out.ndim == 2 else "?"
            raise ModelError(f"{self.endpoint.ref}: returned {got}-d vectors, {self.dim}-d before")
        norms = np.linalg.norm(out, axis=1)
        if not np.isfinite(out).all() or not norms.all():
            raise ModelError(f"{self.endpoint.ref}: the embedder returned a non-finite or zero vector")
        return out / norms[:, None]


def probe(ref: str, kind: str, allow_remote: str = "", timeout: float = 5.0) -> dict[str, Any]:
    """For ``hela models list``: does the endpoint answer (``GET /models``), and is the model listed?"""
    out: dict[str, Any] = {"ref": ref, "kind": kind, "answers": False, "model_listed": None, "error": None,
                           "remote": None}
    try:
        ep = parse_ref(ref)
        out["remote"] = not ep.loopback
        check_allowed(ep, allow_remote)
        client = _Client(ep, timeout)
        try:
            reply = client.get_json("models")
        finally:
            client.close()
        out["answers"] = True
        ids = [m.get("id") for m in reply.get("data", [])] if isinstance(reply, dict) else []
        out["model_listed"] = ep.model in ids if ids else None
    except HelaError as e:
        out["error"] = e.message
    return out


CLIENT = "client"  # models.chat: the MCP client's model (sampling), see hela_cli.models.sampling


AGENT = "agent:"   # models.chat: a coding agent's CLI, see hela_cli.models.agent


def is_local_chat(ref: str) -> bool:
    """A chat ref that :func:`hela_cli.models.resolve_model` resolves (alias, ``ollama:``, path)."""
    return not is_endpoint(ref) and ref != CLIENT and not str(ref).startswith(AGENT)


def endpoint_chat(models: Any) -> Any:
    """The chat model of a non-local ``models.chat``: an :class:`OpenAIChat`, or an error for ``client``
    outside an MCP session that lends one (``hela mcp`` sets the model itself). (``agent:``:
    :func:`hela_cli.models.agent.agent_chat`.)"""
    if models.chat == CLIENT:
        raise ModelError("models.chat is 'client': the MCP client's model through sampling, which exists only "
                         "inside `hela mcp` with a client that supports sampling; set models.chat to a model "
                         "for this command")
    return OpenAIChat(models.chat, n_ctx=models.chat_ctx, timeout=models.timeout, allow_remote=models.allow_remote,
                      request_extra=models.request_extra)


def endpoint_embedder(models: Any) -> "OpenAIEmbedder":
    return OpenAIEmbedder(models.embedder, n_ctx=models.embed_ctx, timeout=models.timeout,
                          allow_remote=models.allow_remote)


def configured_endpoints(models: Any, timeout: float = 5.0) -> list[dict[str, Any]]:
    """:func:`probe` of each ``openai:`` ref among ``models.embedder`` / ``models.chat``."""
    return [probe(ref, kind, models.allow_remote, min(timeout, models.timeout))
            for kind, ref in (("embedder", models.embedder), ("chat", models.chat)) if is_endpoint(ref)]
