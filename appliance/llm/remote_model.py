"""A `ChatModel` served by an OpenAI-compatible chat completions server over the LAN.

The engine cannot tell it from the in-process model: the same messages go in, one JSON object under
the step's schema comes out, streamed piece by piece to `on_text`, with token counts. What differs
is where the constraint is enforced — the server does it, from the schema as `response_format`
(`json_schema`) or from the same GBNF grammar the in-process decoder uses (`grammar`, llama.cpp
servers, which then also keep the prompt's KV cache between steps with `cache_prompt`).

First contact (`GET /v1/models`) happens on the first generate, inside the run, so a server that
is down, a wrong URL, a refused key or a model it does not serve ends that run as `error` with
its one-line reason, recorded like any other run. A server that ignores the schema is an error too:
an object that does not parse would otherwise look like the model's own mistake.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from typing import Any, Iterator, Mapping, Sequence

from appliance.llm.base import Generation, GenerationStats, Message, ModelInfo, OnProgress, OnText, ShouldStop
from appliance.llm.http_client import HttpClient, RemoteError
from appliance.llm.remotes import RemoteEntry, read_api_key

# `owned_by` in the server's model list: what llama.cpp-family servers call themselves.
LLAMA_CPP_OWNERS = {"llamacpp": "llama.cpp's llama-server", "me": "llama-cpp-python's server"}


class RemoteChatModel:
    """One remote catalog entry, bound to an HTTP client for its server."""

    def __init__(self, entry: RemoteEntry, client: HttpClient) -> None:
        self.entry = entry
        self.client = client
        self.info = ModelInfo(name=entry.name, path=entry.url + (f"#{entry.model}" if entry.model else ""),
                              context_length=entry.context_length)
        self.model_id = entry.model
        self.structured = entry.structured
        self.server_kind = ""
        self._contacted = False
        self._chars_per_token = 3.0  # until the server's usage says better (JSON and logs: ~3-4)
        self._lock = threading.Lock()

    @property
    def context_length(self) -> int:
        return self.entry.context_length

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """An estimate from the characters, calibrated by the server's own prompt counts (the
        server's tokenizer is not here; the engine needs this only to compact in time)."""
        chars = sum(len(m.content) for m in messages)
        return int(chars / self._chars_per_token) + 8 * len(messages)

    # --- first contact --------------------------------------------------------------------------

    def connect(self) -> None:
        """Ask the server which models it serves; check ours is one; settle `auto`."""
        listing = self.client.get_json("/models")
        served = listing.get("data") if isinstance(listing, dict) else None
        if isinstance(served, list):
            served = [m for m in served if isinstance(m, dict)]
        if not isinstance(served, list):
            raise RemoteError(f"the model server at {self.client.endpoint.label} sent no model list from "
                              f"{self.client.endpoint.base_path}/models; is this an OpenAI-compatible server?")
        ids = [str(m.get("id")) for m in served if isinstance(m, dict) and m.get("id")]
        if not ids:
            raise RemoteError(f"the model server at {self.client.endpoint.label} serves no model")
        if self.model_id and self.model_id not in ids:
            raise RemoteError(f"the model server at {self.client.endpoint.label} does not serve model "
                              f"{self.model_id!r} (it serves: {', '.join(ids[:8])})")
        self.model_id = self.model_id or ids[0]
        owner = next((str(m.get("owned_by", "")) for m in served if m.get("id") == self.model_id), "")
        self.server_kind = LLAMA_CPP_OWNERS.get(owner, owner or "an OpenAI-compatible server")
        if self.structured == "auto":
            self.structured = "grammar" if owner in LLAMA_CPP_OWNERS else "json_schema"
        self._contacted = True

    # --- generation -------------------------------------------------------------------------------

    def request_body(self, messages: Sequence[Message], schema: dict, max_tokens: int,
                     temperature: float) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
            "seed": 0,
            "stream": True,
            "stream_options": {"include_usage": True},
            "cache_prompt": True,  # llama.cpp servers: keep the transcript's KV cache between steps
        }
        if schema and self.structured == "grammar":
            from appliance.llm.grammar import compile_schema

            body["grammar"] = compile_schema(schema).gbnf
        elif schema:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "reply", "strict": True, "schema": schema}}
        return body

    def generate(
        self,
        messages: Sequence[Message],
        schema: dict,
        *,
        max_tokens: int,
        temperature: float = 0.0,
        on_text: OnText | None = None,
        should_stop: ShouldStop | None = None,
        on_progress: OnProgress | None = None,
    ) -> Generation:
        """on_progress is not called: a server evaluates the prompt on its side and says nothing
        until its first token (streaming shows the reply as it comes)."""
        with self._lock:
            if not self._contacted:
                self.connect()
            body = self.request_body(messages, schema, max_tokens, temperature)
            reply = _Reply(time.perf_counter())
            chunks = self.client.stream("/chat/completions", body)
            try:
                for chunk in chunks:
                    reply.take(chunk, on_text, self.client.endpoint.label)
                    if should_stop is not None and should_stop():
                        reply.finish_reason = "cancelled"
                        break
            finally:
                chunks.close()  # a cancel closes the connection: the server stops generating
        if reply.finish_reason is None:
            raise RemoteError(f"the model server at {self.client.endpoint.label} closed the connection in "
                              "the middle of its reply (did it stop or crash?)")
        if reply.finish_reason == "stop" and schema:
            self._check_object(reply.text())
        self._calibrate(messages, reply.usage)
        return Generation(text=reply.text(), finish_reason=reply.finish_reason, stats=reply.stats())

    def _check_object(self, text: str) -> None:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise RemoteError(f"the model server at {self.client.endpoint.label} ignored the JSON schema "
                              f"({self.structured}): its reply is not one JSON object ({text[:60]!r}); "
                              "try: appliance models add-remote … --structured json_schema|grammar")

    def _calibrate(self, messages: Sequence[Message], usage: dict) -> None:
        prompt = usage.get("prompt_tokens")
        chars = sum(len(m.content) for m in messages)
        if isinstance(prompt, int) and prompt > 0 and chars > 0:
            self._chars_per_token = max(1.5, min(6.0, 0.9 * chars / prompt))  # err towards more tokens


class _Reply:
    """The pieces of one streamed completion as they arrive."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.first_piece: float | None = None
        self.parts: list[str] = []
        self.pieces = 0
        self.finish_reason: str | None = None
        self.usage: dict = {}
        self.timings: dict = {}

    def take(self, chunk: Any, on_text: OnText | None, label: str) -> None:
        """One event of the reply. JSON of another shape than the chat completions API's (choices
        that are not a list of objects, a delta that is not an object) is one line naming what
        is wrong, never an AttributeError from deep inside."""
        if not isinstance(chunk, dict):
            raise RemoteError(f"the model server at {label} sent an event that is not an object")
        choices = chunk.get("choices") or []
        if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
            raise RemoteError(f"the model server at {label} sent a reply whose choices are not a list of objects "
                              f"({_shape(chunk.get('choices'))}); is this an OpenAI-compatible server?")
        if chunk.get("error"):
            error = chunk["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            raise RemoteError(f"the model server at {label} failed mid-reply: {str(message)[:200]}")
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        if isinstance(chunk.get("timings"), dict):
            self.timings = chunk["timings"]
        for choice in choices:
            for text in _choice_texts(choice, label):
                if self.first_piece is None:
                    self.first_piece = time.perf_counter()
                self.parts.append(text)
                self.pieces += 1
                if on_text is not None:
                    on_text(text)
            if choice.get("finish_reason"):
                self.finish_reason = "length" if choice["finish_reason"] == "length" else "stop"

    def text(self) -> str:
        return "".join(self.parts)

    def stats(self) -> GenerationStats:
        """Token counts from the server's usage; where a server sends none (llama-cpp-python while
        streaming), the pieces it streamed, one token each on llama.cpp servers."""
        ended = time.perf_counter()
        first = self.first_piece or ended
        details = self.usage.get("prompt_tokens_details")
        details = details if isinstance(details, dict) else {}
        cached = _number(details.get("cached_tokens")) or _number(self.timings.get("cache_n"))
        if "prompt_n" in self.timings:  # llama-server: the tokens it evaluated, beside those it reused
            evaluated = _number(self.timings["prompt_n"])
        else:
            evaluated = max(0, _number(self.usage.get("prompt_tokens")) - cached)
        completion = (_number(self.usage.get("completion_tokens")) or _number(self.timings.get("predicted_n"))
                      or self.pieces)
        return GenerationStats(
            prompt_tokens_evaluated=evaluated,
            prompt_tokens_reused=cached,
            completion_tokens=completion,
            prompt_ms=_number(self.timings.get("prompt_ms"), float) or (first - self.started) * 1000.0,
            generation_ms=_number(self.timings.get("predicted_ms"), float) or (ended - first) * 1000.0,
        )


def _choice_texts(choice: dict, label: str) -> Iterator[str]:
    delta = choice.get("delta") or choice.get("message") or {}
    if not isinstance(delta, dict):
        raise RemoteError(f"the model server at {label} sent a choice whose delta is not an object ({_shape(delta)})")
    text = delta.get("content")
    if text is not None and not isinstance(text, str):
        raise RemoteError(f"the model server at {label} sent content that is not text ({_shape(text)})")
    if text:
        yield text


def _shape(value: Any) -> str:
    """What a JSON value is, in a few words, for a message (never the whole value)."""
    kind = {dict: "an object", list: "a list", str: "text", bool: "true or false", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)
    return f"{kind} {value!r}"[:60] if isinstance(value, (str, int, float)) else kind


def _number(value: Any, kind: type = int) -> Any:
    """A count or a time from the server's usage, 0 when it sent something else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return kind(0)
    return kind(value)


def open_remote(entry: RemoteEntry, env: Mapping[str, str]) -> RemoteChatModel:
    """The entry's model with its key read now; nothing is sent until the first question."""
    api_key = read_api_key(entry, env)
    try:
        client = HttpClient(entry.endpoint, api_key=api_key, ca_file=entry.ca_file, timeout=entry.timeout)
    except (ssl.SSLError, OSError) as exc:
        raise RemoteError(f"cannot use the CA file {entry.ca_file} of model {entry.name}: "
                          f"{getattr(exc, 'strerror', None) or exc}") from None
    return RemoteChatModel(entry, client)
