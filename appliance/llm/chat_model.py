"""The real `ChatModel`: a GGUF model run in-process by llama.cpp.

Each `generate` renders the whole conversation with the model's chat template, turns it into
tokens, keeps every token the KV cache already holds (the transcript of the run grows at the end
only, so each step evaluates just its new suffix), and decodes one JSON object under the grammar of
the step's schema. The context is never reset between steps.

The transcript is kept as tokens, not only as text: the tokens the model generated are reused as
they are, even where tokenizing the same text afresh would split it differently. That is what
keeps prompt evaluation per step down to the new observation and the chat-template glue.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from appliance.errors import ModelError
from appliance.llm.base import Generation, GenerationStats, Message, ModelInfo, OnProgress, OnText, ShouldStop
from appliance.llm.chat_template import ChatTemplate
from appliance.llm.decoder import make_decoder
from appliance.llm.grammar import compile_schema
from appliance.llm.prefix_state import PrefixReport, ensure_prefix
from appliance.llm.prompt_cache import PromptCache, context_key, model_fingerprint
from appliance.llm.sampling import SamplingSettings
from appliance.llm.session import Session
from appliance.llm.text_stream import TextStream

ThreadPolicy = Callable[[], "tuple[int, int]"]


class Transcript:
    """The text and tokens the context was built from, as aligned segments.

    A new prompt whose text starts with some leading segments reuses their tokens as they are;
    only the rest is tokenized.
    """

    def __init__(self) -> None:
        self.segments: list[tuple[str, list[int]]] = []

    def tokens_for(self, text: str, tokenize: Callable[[str, bool], list[int]]) -> list[int]:
        tokens: list[int] = []
        offset = 0
        for segment_text, segment_tokens in self.segments:
            if not segment_text or not text.startswith(segment_text, offset):
                break
            tokens.extend(segment_tokens)
            offset += len(segment_text)
        rest = text[offset:]
        if rest:
            tokens.extend(tokenize(rest, offset == 0))
        return tokens

    def reset_to(self, text: str, tokens: list[int], base: tuple[str, list[int]] | None = None) -> None:
        """The transcript is `text`; with `base` (the system prompt) as its own first segment when
        `text` starts with it, so the next prompt reuses exactly the tokens the context holds."""
        if base is not None and base[0] and text.startswith(base[0]) and tokens[: len(base[1])] == base[1]:
            rest = (text[len(base[0]):], list(tokens[len(base[1]):]))
            self.segments = [(base[0], list(base[1]))] + ([rest] if rest[0] else [])
        else:
            self.segments = [(text, list(tokens))]

    def append(self, text: str, tokens: list[int]) -> None:
        if tokens:
            self.segments.append((text, list(tokens)))


@dataclass(frozen=True)
class ReadAhead:
    """What a read-ahead did: the prefix's tokens, how many the context held already, how many
    were evaluated, whether a stop cut it short, and its seconds."""

    tokens: int
    reused: int
    evaluated: int
    stopped: bool
    seconds: float


class LlamaChatModel:
    """A `ChatModel` over a loaded `llama_cpp.Llama`.

    decoder: 'fast' (appliance.llm.fast_decoder.FastDecoder, the default) or 'builtin'
    (llama-cpp-python's own grammar sampling, kept for comparison).
    thread_policy: called before each generate; returns (n_threads, n_threads_batch).
    sampling: top-k/top-p/min-p/repeat-penalty/seed; the temperature comes from each call.
    draft: let the fast decoder evaluate grammar-forced tokens in batches (see fast_decoder.FastDecoder).
    lookup: and also drafts copied from the context (llm/lookup.py), where the grammar forces nothing.
    prompt_cache: where the KV state of the system prompt is kept between processes (None: nowhere).
    runtime: the llama.cpp settings the context was made with, recorded with each run.
    load_seconds: how long loading the model took (charged to the first run that uses it).
    """

    def __init__(
        self,
        llama,
        info: ModelInfo,
        *,
        decoder: str = "fast",
        thread_policy: ThreadPolicy | None = None,
        sampling: SamplingSettings | None = None,
        draft: bool = True,
        lookup: bool = True,
        prompt_cache: PromptCache | None = None,
        runtime: dict | None = None,
        load_seconds: float = 0.0,
    ) -> None:
        self.llama = llama
        self.info = info
        self.thread_policy = thread_policy
        self.sampling = sampling or SamplingSettings()
        self.template = ChatTemplate.from_llama(llama)
        self._session = Session(llama)
        self._decoder = make_decoder(decoder, self._session, draft=draft, lookup=lookup)
        self.decoder_name = decoder
        self._transcript = Transcript()
        self._lock = threading.Lock()
        self._add_bos = self._wants_bos()
        self.prompt_cache = prompt_cache
        self.runtime = dict(runtime or {})
        self._load_seconds = float(load_seconds)
        self._base: tuple[str, list[int]] | None = None  # the system prompt's text and tokens
        self._base_for: tuple[Message, ...] | None = None  # ... rendered from these messages
        self._context_key: dict | None = None
        self.last_prefix: PrefixReport | None = None
        self._waiting_progress: OnProgress | None = None  # a run waiting while a warm-up evaluates

    def take_load_seconds(self) -> float:
        """The model's load time, once: the first run is charged with it, later runs are not."""
        seconds, self._load_seconds = self._load_seconds, 0.0
        return seconds

    def runtime_report(self) -> dict:
        """The settings and the system prompt's last arrival, for the run record."""
        report = dict(self.runtime, decoder=self.decoder_name, n_ctx=self.context_length)
        if self.last_prefix is not None:
            report["system_prompt"] = self.last_prefix.as_dict()
        return report

    @property
    def context_length(self) -> int:
        return int(self.llama.n_ctx())

    # --- prompt ------------------------------------------------------------------------------
    def render(self, messages: Sequence[Message]) -> str:
        return self.template.render(messages, add_generation_prompt=True)

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return len(self._tokenize(self.render(messages), True))

    def _wants_bos(self) -> bool:
        import llama_cpp

        vocab = llama_cpp.llama_model_get_vocab(self.llama.model)
        return bool(llama_cpp.llama_vocab_get_add_bos(vocab))

    def _tokenize(self, text: str, at_start: bool) -> list[int]:
        add_bos = at_start and self._add_bos and not (
            self.template.bos_token and text.startswith(self.template.bos_token)
        )
        return self.llama.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)

    # --- threads -----------------------------------------------------------------------------
    def begin_run(self) -> None:
        """A new question starts: the thread policy reads the load afresh for its first call
        (the KV cache is kept, so the next question still reuses the system prompt)."""
        self.last_prefix = None
        expire = getattr(self.thread_policy, "expire", None)
        if expire is not None:
            expire()

    def _apply_threads(self) -> tuple[int, int]:
        """Apply the thread policy (if any) and return the threads the context really uses."""
        import llama_cpp

        ctx = self.llama.ctx
        if self.thread_policy is not None:
            n_threads, n_threads_batch = self.thread_policy()
            llama_cpp.llama_set_n_threads(ctx, max(1, int(n_threads)), max(1, int(n_threads_batch)))
        return int(llama_cpp.llama_n_threads(ctx)), int(llama_cpp.llama_n_threads_batch(ctx))

    # --- generation --------------------------------------------------------------------------
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
        started = time.perf_counter()
        if not self._acquire(should_stop, on_progress):
            return _stopped(started)
        try:  # one context, one decode at a time
            return self._generate(messages, schema, max_tokens, temperature, on_text, should_stop, on_progress)
        finally:
            self._lock.release()

    def _acquire(self, should_stop: ShouldStop | None, on_progress: OnProgress | None) -> bool:
        """Take the context, polling `should_stop` while a warm-up holds it (whose progress the
        waiting run is shown meanwhile). False when stopped first."""
        try:
            while not self._lock.acquire(timeout=0.05):
                if on_progress is not None:  # a waiting warm-up shows nobody anything
                    self._waiting_progress = on_progress
                if should_stop is not None and should_stop():
                    return False
            return True
        finally:
            if on_progress is not None and self._waiting_progress is on_progress:
                self._waiting_progress = None

    # --- the system prompt -------------------------------------------------------------------
    def warm(self, messages: Sequence[Message], *, should_stop: ShouldStop | None = None,
             on_progress: OnProgress | None = None) -> PrefixReport | None:
        """Put the leading system message(s) of `messages` into the context now: from the prompt
        cache when it has them, else evaluated (and saved). None when there is no system message or
        the chat template does not render it as a prefix of the conversation, or when `should_stop`
        came true while another call held the context."""
        if not self._acquire(should_stop, None):
            return None
        try:
            return self._ensure_base(messages, should_stop, on_progress)
        finally:
            self._lock.release()

    def _ensure_base(self, messages, should_stop, on_progress) -> PrefixReport | None:
        n = 0
        while n < len(messages) and messages[n].role == "system":
            n += 1
        if n == 0:
            return None
        system = tuple(messages[:n])
        if self._base is None or self._base_for != system:  # rendered and tokenized once per system prompt
            text = self.template.render(list(system), add_generation_prompt=False)
            if not self.render(list(system) + [Message("user", "?")]).startswith(text):
                return None  # a template that renders the system message differently in context
            self._base, self._base_for = (text, self._tokenize(text, True)), system
        text, tokens = self._base
        if self.prompt_cache is not None and self._context_key is None:
            self._context_key = context_key(self.llama, model_fingerprint(self.info.path, self.info.sha256))

        def progress(done: int, total: int, left: float) -> None:
            for listener in (on_progress, self._waiting_progress):
                if listener is not None:
                    listener(done, total, left)

        if self._session.common_prefix(tokens) < len(tokens):
            self._apply_threads()  # only when there is work: each call samples the load afresh
        report = ensure_prefix(self._session, self.prompt_cache, self._context_key, text, tokens,
                               should_stop=should_stop, on_progress=progress)
        if report.status != "present" or self.last_prefix is None:
            self.last_prefix = report  # the run's record says how its first call found the prompt
        return report

    def read_ahead(self, messages: Sequence[Message], *, upto: str, should_stop: ShouldStop | None = None,
                   outdated: ShouldStop | None = None) -> ReadAhead | None:
        """Evaluate the rendered `messages` up to the last `upto` in them, so that a prompt which
        begins the same way reuses those cells (`Session.prefill` keeps the longest common
        prefix). Nothing of the transcript changes. `outdated` stops it between chunks only. None
        when the context is busy (a run or a warm-up has it: this never waits) or `upto` is not in
        the text."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            started = time.perf_counter()
            base = self._ensure_base(messages, should_stop, None)
            if base is not None and base.status == "stopped":
                return ReadAhead(base.tokens, 0, base.evaluated, True, time.perf_counter() - started)
            text = self.render(messages)
            cut = text.rfind(upto)
            if cut <= 0:
                return None
            tokens = self._transcript.tokens_for(text[:cut], self._tokenize)
            if self._session.common_prefix(tokens) == len(tokens):
                # Read ahead already (the draft changed, not its evidence): no load sample, no decode.
                return ReadAhead(len(tokens), len(tokens), 0, False, time.perf_counter() - started)
            self._apply_threads()
            done = self._session.prefill(tokens, should_stop=should_stop, between_chunks=outdated)
            return ReadAhead(len(tokens), done.reused, done.evaluated, done.stopped, time.perf_counter() - started)
        finally:
            self._lock.release()

    def _generate(self, messages, schema, max_tokens, temperature, on_text, should_stop, on_progress) -> Generation:
        grammar = compile_schema(schema) if schema else None
        started = time.perf_counter()
        base = self._ensure_base(messages, should_stop, on_progress)
        base_evaluated = base.evaluated if base is not None else 0
        if base is not None and base.status == "stopped":
            return _stopped(started, evaluated=base_evaluated)
        threads, threads_batch = self._apply_threads()
        prompt_text = self.render(messages)
        prompt_tokens = self._transcript.tokens_for(prompt_text, self._tokenize)
        room = self.context_length - len(prompt_tokens)
        if room <= 1:
            raise ModelError(
                f"the conversation needs {len(prompt_tokens)} tokens but the model's context holds "
                f"{self.context_length}"
            )
        done = self._session.prefill(prompt_tokens, should_stop=should_stop, on_progress=on_progress)
        reused, evaluated = done.reused, done.evaluated + base_evaluated
        reused -= base_evaluated  # the system prompt evaluated just now was not reused
        prompt_done = time.perf_counter()
        if done.stopped:
            return _stopped(started, evaluated=evaluated, reused=reused)
        self._transcript.reset_to(prompt_text, prompt_tokens, self._base)
        settings = SamplingSettings(
            temperature=temperature,
            top_k=self.sampling.top_k,
            top_p=self.sampling.top_p,
            min_p=self.sampling.min_p,
            repeat_penalty=self.sampling.repeat_penalty,
            repeat_last_n=self.sampling.repeat_last_n,
            seed=self.sampling.seed,
        )
        stream = TextStream(self._session, on_text)
        result = self._decoder.decode(
            grammar,
            settings,
            max_tokens=min(max_tokens, room - 1),
            on_token=stream.push,
            should_stop=should_stop,
        )
        text = stream.text()
        finished = time.perf_counter()
        self._transcript.append(text, result.tokens)
        stats = GenerationStats(
            prompt_tokens_evaluated=evaluated,
            prompt_tokens_reused=reused,
            completion_tokens=len(result.tokens),
            forced_tokens=result.forced_tokens,
            copied_tokens=result.copied_tokens,
            generation_ms=(finished - prompt_done) * 1000.0,
            prompt_ms=(prompt_done - started) * 1000.0,
            threads=threads,
            threads_batch=threads_batch,
        )
        return Generation(text=text, finish_reason=result.finish_reason, stats=stats)

    def reset(self, keep_tokens: int = 0) -> None:
        """Forget the transcript and all but the first `keep_tokens` of the KV cache (benchmarks
        and tests compare decoders from the same cache state; a run never needs it)."""
        self._transcript = Transcript()
        self._session.trim(keep_tokens)

    def close(self) -> None:
        """Free the decoder's native buffers (the Llama itself belongs to the caller)."""
        self._session.close()


def _stopped(started: float, *, evaluated: int = 0, reused: int = 0) -> Generation:
    """A call that cancel or the deadline ended before any token was generated."""
    stats = GenerationStats(prompt_tokens_evaluated=evaluated, prompt_tokens_reused=max(reused, 0),
                            prompt_ms=(time.perf_counter() - started) * 1000.0)
    return Generation(text="", finish_reason="cancelled", stats=stats)
