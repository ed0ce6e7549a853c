"""The MCP client's model as hela's chat model: MCP sampling (``sampling/createMessage``).

Inside ``hela mcp`` with ``models.chat: client``, ``ask`` and the consolidation that follows it generate
with the model of the client that called the tool (Claude Desktop, an IDE, an agent), through the SDK
session's ``create_message``. It is never chosen by default, not even when no local chat model is present:
the client's model may be a hosted one, and nothing leaves the machine unless the configuration says so.
A client that did not declare sampling gets a tool error saying so.

Threads: the server runs each tool call in a worker thread (``anyio.to_thread.run_sync``), and
``create_message`` is a coroutine of the server's event loop. :class:`SamplingChat` calls it with
``anyio.from_thread.run``, which hands the coroutine to that loop and blocks the worker thread until the
client's reply arrives; the loop keeps serving the protocol meanwhile (the reply is an incoming message).
Called from a thread anyio did not start (or from the loop itself) it raises a :class:`ModelError`.

Prompts A.1 / A.2 travel as they are: the system message as ``systemPrompt``, the other messages as
sampling messages. Sampling has no ``response_format``: for distillation the JSON schema is appended to
the system prompt and the consolidation's own validation and retry do the rest. Token counts use the
conservative estimate of :func:`hela_cli.endpoints.estimate_tokens` (the client's tokenizer is unknown).
"""

from __future__ import annotations

import json
import warnings
from typing import Any, Callable

from hela_cli.endpoints import estimate_tokens
from hela_cli.errors import HelaError, ModelError

# the SDK marks sampling deprecated for the 2026-07-28 protocol revision (SEP-2577); the clients of today
# negotiate an earlier one, where it is the way to lend a model: no warning per call on the server's stderr
warnings.filterwarnings("ignore", message="The sampling capability is deprecated")

NO_SAMPLING = ("models.chat is 'client', but this MCP client does not support sampling (it declared no "
               "'sampling' capability); configure a chat model for hela (models.chat) or use a client "
               "that lends its model")


def client_samples(capabilities: Any) -> bool:
    """Whether a client's declared capabilities include sampling."""
    return capabilities is not None and getattr(capabilities, "sampling", None) is not None


class SamplingChat:
    """A :class:`hela_cli.models.ChatModel` answering through the MCP client's model.

    ``session`` is a zero-argument callable returning the current server session (the one of the latest
    tool call), so one instance serves a whole connection."""

    def __init__(self, session: Callable[[], Any], n_ctx: int = 8192):
        self._session = session
        self.model_id = "client"
        self.n_ctx = n_ctx
        self.last_model: str | None = None  # the model the client says it used

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def generate(self, messages: list[dict[str, str]], *, max_tokens: int = 256, temperature: float = 0.0,
                 json_schema: dict[str, Any] | None = None, stop: list[str] | None = None,
                 on_text: Callable[[str], None] | None = None) -> str:
        import anyio.from_thread
        from mcp.types import SamplingMessage, TextContent

        session = self._session()
        if session is None:
            raise ModelError("models.chat is 'client': no MCP client session (the client's model exists only "
                             "inside `hela mcp`)")
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        if json_schema is not None:
            system += ("\n\nReply with one JSON object and nothing else, matching this JSON schema:\n"
                       + json.dumps(json_schema, separators=(",", ":")))
        turns = [SamplingMessage(role="assistant" if m["role"] == "assistant" else "user",
                                 content=TextContent(type="text", text=m["content"]))
                 for m in messages if m["role"] != "system"]

        async def ask() -> Any:
            return await session.create_message(turns, max_tokens=max_tokens, system_prompt=system or None,
                                                temperature=temperature, stop_sequences=stop or None,
                                                metadata={"purpose": "hela " + ("distillation" if json_schema
                                                                                else "answer")})

        try:
            result = anyio.from_thread.run(ask)
        except HelaError:
            raise
        except RuntimeError as e:
            if "thread" in str(e).lower() or "event loop" in str(e).lower():
                raise ModelError(f"MCP sampling must be called from a tool call's worker thread ({e})") from None
            raise ModelError(f"MCP client sampling failed: {' '.join(str(e).split())}") from None
        except Exception as e:  # noqa: BLE001 - the client refused, timed out or broke off: one line
            msg = " ".join(str(getattr(e, "message", "") or e).split()) or e.__class__.__name__
            raise ModelError(f"MCP client sampling failed: {msg}") from None
        content = getattr(result, "content", None)
        text = getattr(content, "text", None)
        if not isinstance(text, str):
            kind = getattr(content, "type", type(content).__name__)
            raise ModelError(f"MCP client sampling returned {kind} content, not text")
        self.last_model = getattr(result, "model", None)
        if stop:  # a client may ignore stop sequences: cut at the first one
            cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
            text = text[:cut] if cut >= 0 else text
        if on_text is not None and text:
            on_text(text)
        return text.strip()
