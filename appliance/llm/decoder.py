"""Grammar-constrained decoding on llama.cpp's low-level API, and llama-cpp-python's own path.

Why a decoder of our own: llama-cpp-python runs the grammar over the whole vocabulary for every
token (~18 ms a token on Qwen's 151,936-token vocabulary), which halves the speed of every step of
the agent. `FastDecoder` does what llama.cpp's own tools do and a little more:

1. Sample first, check only the chosen token against the grammar; run the grammar over the whole
   vocabulary only when that token is rejected (rare: the model mostly wants what the grammar allows).
2. Draft what the grammar forces. After each token the grammar is probed with the single-character
   tokens of the vocabulary; while exactly one character is allowed it is forced (JSON keys,
   punctuation, the rest of an enum value once it is unambiguous). The forced text is tokenized and
   evaluated together with the sampled token in one batch. Every drafted token is then checked
   against the model's own choice at its position (an argmax and a one-token grammar check, well
   under a millisecond); the first mismatch drops the rest of the draft. Under greedy decoding the
   output is therefore exactly what the built-in path produces, while a batch of k forced tokens
   costs about one token's decode time.
3. Stop as soon as the grammar allows nothing but end-of-generation, without asking the model.

`BuiltinDecoder` is llama-cpp-python's `Llama.generate` with a `LlamaGrammar`: the reference for
correctness tests and benchmarks, available to the engine behind `decoder="builtin"`.

Both decoders work on a `Session`: the `Llama`'s KV cache and token bookkeeping (`input_ids`,
`n_tokens`) are kept consistent, so the two can be used on the same context one after another.
"""

from __future__ import annotations

import codecs
import ctypes
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from appliance.errors import ModelError
from appliance.llm.base import OnProgress, ShouldStop
from appliance.llm.grammar import CompiledGrammar

_TOKEN_DATA = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
_NEG_INF = float("-inf")


@dataclass(frozen=True)
class SamplingSettings:
    """How tokens are chosen. temperature 0 means greedy (the default for actions)."""

    temperature: float = 0.0
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    repeat_penalty: float = 1.0
    repeat_last_n: int = 64
    seed: int = 0

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0 and self.repeat_penalty == 1.0


@dataclass
class DecodeResult:
    """What one decode produced: the completion tokens (not end-of-generation), why it ended,
    and how many of the tokens were grammar-forced drafts accepted without a decode of their own."""

    tokens: list[int] = field(default_factory=list)
    finish_reason: str = "stop"
    forced_tokens: int = 0
    full_masks: int = 0


OnToken = Callable[[int], None]


@dataclass(frozen=True)
class Prefill:
    """What a prefill did: tokens kept from the cache, tokens evaluated, whether a stop cut it short."""

    reused: int
    evaluated: int
    stopped: bool = False


class ChunkPacer:
    """Chunk sizes for prompt evaluation that take about `target` seconds each.

    Why measured, not fixed: the same 64 tokens take 0.02 s on SmolLM2 and over a second on Qwen
    1.5B when the cores are busy; a fixed size is either too coarse for a prompt cancel within a
    second or needlessly slow (every decode reads all the weights once, so small batches pay that
    again and again). 0.4 s a chunk leaves room for a stop within a second.
    """

    def __init__(self, n_batch: int, *, target: float = 0.4, first: int = 64, smallest: int = 16) -> None:
        self.largest = max(1, int(n_batch))
        self.smallest = min(smallest, self.largest)
        self.size = min(first, self.largest)
        self.target = target
        self.tokens = 0
        self.seconds = 0.0

    def observe(self, n_tokens: int, seconds: float) -> None:
        self.tokens += n_tokens
        self.seconds += max(seconds, 1e-6)
        rate = n_tokens / max(seconds, 1e-6)
        self.size = max(self.smallest, min(self.largest, int(rate * self.target)))

    def seconds_for(self, n_tokens: int) -> float:
        return n_tokens * self.seconds / self.tokens if self.tokens else 0.0


class Session:
    """One `Llama` context as a token sequence in its KV cache.

    Keeps `llama.input_ids` / `llama.n_tokens` in step with what the decoders evaluate, so the
    built-in `Llama.generate` prefix check sees the truth.
    """

    def __init__(self, llama, *, max_batch: int = 64) -> None:
        import llama_cpp

        self.llama = llama
        self._lib = llama_cpp
        self.ctx = llama.ctx
        self.vocab = llama_cpp.llama_model_get_vocab(llama.model)
        self.n_vocab = llama.n_vocab()
        self.max_batch = max(2, min(max_batch, llama.n_batch))
        self._batch = llama_cpp.llama_batch_init(self.max_batch, 0, 1)
        self._pieces: dict[int, bytes] = {}
        self.eog_ids = sorted(
            {t for t in (llama.token_eos(), llama_cpp.llama_vocab_eot(self.vocab)) if t is not None and t >= 0}
        )

    def close(self) -> None:
        if self._batch is not None:
            self._lib.llama_batch_free(self._batch)
            self._batch = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # --- the token sequence in the KV cache -------------------------------------------------
    @property
    def n_tokens(self) -> int:
        return self.llama.n_tokens

    def evaluated(self) -> np.ndarray:
        return self.llama.input_ids[: self.llama.n_tokens]

    def common_prefix(self, tokens: Sequence[int]) -> int:
        """How many leading tokens of `tokens` are already in the KV cache."""
        cached = self.evaluated()
        n = min(len(cached), len(tokens))
        if n == 0:
            return 0
        same = cached[:n] == np.asarray(tokens[:n], dtype=cached.dtype)
        return n if same.all() else int(np.argmin(same))

    def trim(self, n: int) -> None:
        """Forget every cached token from position n on."""
        if n < self.llama.n_tokens:
            if not self.llama._ctx.kv_cache_seq_rm(-1, n, -1):
                # A model whose memory cannot drop a tail (recurrent): start over.
                self.llama.reset()
                n = 0
            self.llama.n_tokens = n
            self.llama._requires_eval = True

    def prefill(self, tokens: Sequence[int], *, should_stop: ShouldStop | None = None,
                on_progress: OnProgress | None = None) -> "Prefill":
        """Make the cache hold `tokens` with logits for the last one, reusing the cached prefix.

        At least one token is always evaluated so that fresh logits exist (a fully cached prompt
        re-evaluates its last token). The new tokens go in chunks of about 0.4 s
        each, with `should_stop` asked between them: a long prompt (2,600 tokens are ~45 s on
        Qwen 1.5B with 2 busy cores) can then be cancelled within a second. A stop leaves the
        cache holding the chunks already done, so nothing evaluated is wasted.
        """
        if not tokens:
            raise ModelError("empty prompt")
        reused = min(self.common_prefix(tokens), len(tokens) - 1)
        self.trim(reused)
        suffix = list(tokens[reused:])
        pacer = ChunkPacer(self.llama.n_batch)
        done = 0
        while done < len(suffix):
            if should_stop is not None and should_stop():
                return Prefill(reused, done, stopped=True)
            chunk = suffix[done : done + pacer.size]
            started = time.perf_counter()
            try:
                self.llama.eval(chunk)
            except RuntimeError as exc:
                raise ModelError(f"llama.cpp could not evaluate the prompt: {exc}") from exc
            pacer.observe(len(chunk), time.perf_counter() - started)
            done += len(chunk)
            if on_progress is not None:
                on_progress(done, len(suffix), pacer.seconds_for(len(suffix) - done))
        return Prefill(reused, done)

    def decode(self, tokens: Sequence[int]) -> None:
        """Append `tokens` (at most max_batch) to the cache with logits at every position."""
        k = len(tokens)
        n_past = self.llama.n_tokens
        if n_past + k > self.llama.n_ctx():
            raise ModelError("the context is full")
        self.llama._ctx.kv_cache_seq_rm(-1, n_past, -1)
        batch = self._batch
        batch.n_tokens = k
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = n_past + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = True
        rc = self._lib.llama_decode(self.ctx, batch)
        if rc != 0:
            raise ModelError(f"llama_decode returned {rc}")
        self.llama.input_ids[n_past : n_past + k] = tokens
        self.llama.n_tokens = n_past + k
        self.llama._requires_eval = False

    def logits(self, row: int) -> np.ndarray:
        """The logits of batch row `row` of the last decode (-1: the last row), as a view."""
        pointer = self._lib.llama_get_logits_ith(self.ctx, row)
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,))

    # --- text of tokens ----------------------------------------------------------------------
    def piece(self, token: int) -> bytes:
        """The bytes a token stands for (cached; no leading-space stripping)."""
        cached = self._pieces.get(token)
        if cached is None:
            buf = ctypes.create_string_buffer(64)
            n = self._lib.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
            if n < 0:
                buf = ctypes.create_string_buffer(-n)
                n = self._lib.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
            cached = buf.raw[: max(n, 0)]
            self._pieces[token] = cached
        return cached

    def is_eog(self, token: int) -> bool:
        return bool(self._lib.llama_vocab_is_eog(self.vocab, token))

    def tokenize(self, text: str) -> list[int]:
        return self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)


class TextStream:
    """Turns tokens into text pieces for `on_text`, never splitting a UTF-8 character."""

    def __init__(self, session: Session, on_text: Callable[[str], None] | None) -> None:
        self._session = session
        self._on_text = on_text
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []

    def push(self, token: int) -> None:
        text = self._decoder.decode(self._session.piece(token))
        if text:
            self._parts.append(text)
            if self._on_text is not None:
                self._on_text(text)

    def text(self) -> str:
        tail = self._decoder.decode(b"", final=True)
        if tail:
            self._parts.append(tail)
            if self._on_text is not None:
                self._on_text(tail)
            self._decoder.reset()
        return "".join(self._parts)


class Candidates:
    """A reusable full-vocabulary `llama_token_data_array` over a numpy buffer."""

    def __init__(self, lib, n_vocab: int) -> None:
        self.data = np.zeros(n_vocab, dtype=_TOKEN_DATA)
        self._ids = np.arange(n_vocab, dtype=np.intc)
        self.array = lib.llama_token_data_array(
            data=self.data.ctypes.data_as(lib.llama_token_data_p), size=n_vocab, selected=-1, sorted=False
        )

    def fill(self, logits: np.ndarray):
        """Load `logits` (samplers reorder and shrink the array, so everything is reset)."""
        self.data["id"] = self._ids
        self.data["logit"] = logits
        self.data["p"] = 0.0
        self.array.size = len(self.data)
        self.array.selected = -1
        self.array.sorted = False
        return self.data, self.array


class GrammarMatcher:
    """A llama.cpp grammar sampler used as a matcher: does it allow this token, which tokens
    does it allow at all, and what text does it force next."""

    def __init__(self, session: Session, grammar: CompiledGrammar, probes: "ProbeSet") -> None:
        lib = session._lib
        self._lib = lib
        self._session = session
        self._probes = probes
        self._smpl = lib.llama_sampler_init_grammar(
            session.vocab, grammar.gbnf.encode("utf-8"), grammar.root.encode("utf-8")
        )
        if not self._smpl:
            raise ModelError("llama.cpp refused the grammar compiled from the JSON schema")
        self._one = np.zeros(1, dtype=_TOKEN_DATA)
        self._one_array = self._array_for(self._one)
        self._full = Candidates(lib, session.n_vocab)
        self._probe_data = np.zeros(len(probes.ids), dtype=_TOKEN_DATA)
        self._probe_data["id"] = probes.ids
        self._probe_array = self._array_for(self._probe_data)

    def _array_for(self, data: np.ndarray):
        lib = self._lib
        return lib.llama_token_data_array(
            data=data.ctypes.data_as(lib.llama_token_data_p), size=len(data), selected=-1, sorted=False
        )

    def close(self) -> None:
        if self._smpl:
            self._lib.llama_sampler_free(self._smpl)
            self._smpl = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def reset(self) -> None:
        self._lib.llama_sampler_reset(self._smpl)

    def accept(self, token: int) -> None:
        self._lib.llama_sampler_accept(self._smpl, token)

    def allows(self, token: int) -> bool:
        self._one["id"][0] = token
        self._one["logit"][0] = 0.0
        self._one_array.size = 1
        self._one_array.selected = -1
        self._lib.llama_sampler_apply(self._smpl, ctypes.byref(self._one_array))
        return self._one["logit"][0] != _NEG_INF

    def masked(self, logits: np.ndarray) -> np.ndarray:
        """`logits` with every token the grammar rejects set to -inf (a copy)."""
        data, array = self.constrained(logits)
        # The grammar sampler only rewrites logits in place; it does not reorder the array.
        return data["logit"].copy()

    def constrained(self, logits: np.ndarray):
        """The full candidate array with the grammar applied (for a sampler chain or a mask)."""
        data, array = self._full.fill(logits)
        self._lib.llama_sampler_apply(self._smpl, ctypes.byref(array))
        return data, array

    def _allowed_probes(self, smpl) -> np.ndarray:
        self._probe_data["logit"] = 0.0
        self._probe_array.size = len(self._probe_data)
        self._probe_array.selected = -1
        self._lib.llama_sampler_apply(smpl, ctypes.byref(self._probe_array))
        return self._probe_data["id"][self._probe_data["logit"] != _NEG_INF]

    def forced(self, max_chars: int = 48) -> tuple[str, bool]:
        """(text the grammar forces next, whether the grammar is complete with nothing else allowed).

        Probes the grammar's current state with single-character tokens and end-of-generation:
        while exactly one character is allowed, that character is forced. Characters outside the
        probe set (non-ASCII) are not probed, so a forced text is a draft to verify, not a promise.
        """
        probes = self._probes
        allowed = self._allowed_probes(self._smpl)
        if len(allowed) == 1 and int(allowed[0]) in probes.eog:
            return "", True
        if len(allowed) != 1 or int(allowed[0]) in probes.eog:
            return "", False
        lib = self._lib
        clone = lib.llama_sampler_clone(self._smpl)
        try:
            chars: list[str] = []
            while len(allowed) == 1 and int(allowed[0]) not in probes.eog and len(chars) < max_chars:
                token = int(allowed[0])
                chars.append(probes.char[token])
                lib.llama_sampler_accept(clone, token)
                allowed = self._allowed_probes(clone)
            return "".join(chars), False
        finally:
            lib.llama_sampler_free(clone)


@dataclass(frozen=True)
class ProbeSet:
    """The vocabulary's single-character tokens (printable ASCII and newline/tab) and its
    end-of-generation tokens: enough to see which characters a JSON grammar allows next."""

    ids: np.ndarray
    char: dict[int, str]
    eog: frozenset[int]

    @classmethod
    def for_session(cls, session: Session) -> "ProbeSet":
        char: dict[int, str] = {}
        for code in list(range(0x20, 0x7F)) + [0x0A, 0x09]:
            c = chr(code)
            tokens = session.tokenize(c)
            if len(tokens) == 1 and session.piece(tokens[0]) == c.encode():
                char[tokens[0]] = c
        eog = frozenset(session.eog_ids)
        ids = np.array(sorted(char) + sorted(eog), dtype=np.intc)
        return cls(ids=ids, char=char, eog=eog)


class SamplerChain:
    """llama.cpp's penalties / top-k / top-p / min-p / temperature / dist chain, without grammar."""

    def __init__(self, session: Session, settings: SamplingSettings) -> None:
        lib = session._lib
        self._lib = lib
        params = lib.llama_sampler_chain_default_params()
        self._chain = lib.llama_sampler_chain_init(params)
        add = lambda s: lib.llama_sampler_chain_add(self._chain, s)  # noqa: E731
        if settings.repeat_penalty != 1.0:
            add(lib.llama_sampler_init_penalties(settings.repeat_last_n, settings.repeat_penalty, 0.0, 0.0))
        if settings.temperature <= 0.0:
            add(lib.llama_sampler_init_greedy())
        else:
            add(lib.llama_sampler_init_top_k(settings.top_k))
            add(lib.llama_sampler_init_top_p(settings.top_p, 1))
            add(lib.llama_sampler_init_min_p(settings.min_p, 1))
            add(lib.llama_sampler_init_temp(settings.temperature))
            add(lib.llama_sampler_init_dist(settings.seed & 0xFFFFFFFF))

    def pick(self, data: np.ndarray, array) -> int:
        self._lib.llama_sampler_apply(self._chain, ctypes.byref(array))
        selected = int(array.selected)
        if selected < 0:
            raise ModelError("the sampler chose no token")
        return int(data["id"][selected])

    def accept(self, token: int) -> None:
        self._lib.llama_sampler_accept(self._chain, token)

    def close(self) -> None:
        if self._chain:
            self._lib.llama_sampler_free(self._chain)
            self._chain = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class FastDecoder:
    """Sample-first grammar checking plus batched, verified grammar-forced drafts.

    draft=False evaluates one token per decode, the schedule of llama-cpp-python's own loop. That
    matters for exact comparisons: llama.cpp's CPU kernels give logits that differ (by up to ~1 on
    SmolLM2 and ~0.6 on Qwen 0.5B) depending on whether a token was evaluated alone or in a batch,
    so only the same schedule guarantees bit-identical greedy output. With drafts on, every token is
    still the model's own greedy/sampled choice, computed from batched logits.
    """

    name = "fast"

    def __init__(self, session: Session, *, draft: bool = True) -> None:
        self.session = session
        self.draft = draft
        self._probes = ProbeSet.for_session(session)
        self._matchers: dict[str, GrammarMatcher] = {}
        self._free = Candidates(session._lib, session.n_vocab)  # for unconstrained sampling

    def matcher(self, grammar: CompiledGrammar) -> GrammarMatcher:
        matcher = self._matchers.get(grammar.key)
        if matcher is None:
            matcher = GrammarMatcher(self.session, grammar, self._probes)
            self._matchers[grammar.key] = matcher
        else:
            matcher.reset()
        return matcher

    def decode(
        self,
        grammar: CompiledGrammar | None,
        settings: SamplingSettings,
        *,
        max_tokens: int,
        on_token: OnToken | None = None,
        should_stop: ShouldStop | None = None,
    ) -> DecodeResult:
        """Generate after a `Session.prefill` (logits of the last prompt token are current)."""
        session = self.session
        matcher = self.matcher(grammar) if grammar is not None else None
        chain = None if settings.greedy else SamplerChain(session, settings)
        result = DecodeResult()
        rows: list[int] = [-1]
        draft: list[int] = []
        try:
            while True:
                chosen = None
                for j, row in enumerate(rows):
                    if should_stop is not None and should_stop():
                        result.finish_reason = "cancelled"
                        self._drop_unused(len(draft) - j)
                        return result
                    if len(result.tokens) >= max_tokens:
                        result.finish_reason = "length"
                        self._drop_unused(len(draft) - j)
                        return result
                    token = self._choose(session.logits(row), matcher, chain, result)
                    if j < len(draft) and token == draft[j]:
                        self._take(token, matcher, chain, result, on_token)
                        result.forced_tokens += 1
                        continue
                    self._drop_unused(len(draft) - j)
                    chosen = token
                    break
                if chosen is None or session.is_eog(chosen):
                    result.finish_reason = "stop"
                    return result
                self._take(chosen, matcher, chain, result, on_token)
                draft = []
                if matcher is not None:
                    text, complete = matcher.forced()
                    if complete:
                        result.finish_reason = "stop"
                        return result
                    if text and self.draft:
                        draft = self._draft_tokens(text, max_tokens - len(result.tokens))
                if len(result.tokens) >= max_tokens:
                    result.finish_reason = "length"
                    return result
                session.decode([chosen] + draft)
                rows = list(range(len(draft) + 1))
        finally:
            if chain is not None:
                chain.close()

    def _draft_tokens(self, text: str, budget: int) -> list[int]:
        tokens = self.session.tokenize(text)
        if b"".join(self.session.piece(t) for t in tokens) != text.encode("utf-8"):
            return []  # a tokenizer that adds a leading space: no safe draft
        return tokens[: max(0, min(budget, self.session.max_batch - 1))]

    def _drop_unused(self, n_unused: int) -> None:
        if n_unused > 0:
            self.session.trim(self.session.n_tokens - n_unused)

    def _take(self, token, matcher, chain, result, on_token) -> None:
        if matcher is not None:
            matcher.accept(token)
        if chain is not None:
            chain.accept(token)
        result.tokens.append(token)
        if on_token is not None:
            on_token(token)

    def _choose(self, logits: np.ndarray, matcher, chain, result: DecodeResult) -> int:
        if chain is None:
            token = int(np.argmax(logits))
            if matcher is None or matcher.allows(token):
                return token
            result.full_masks += 1
            masked = matcher.masked(logits)
            token = int(np.argmax(masked))
            if masked[token] == _NEG_INF:
                raise ModelError("the grammar allows no token here (the schema cannot be completed)")
            return token
        token = chain.pick(*self._free.fill(logits))
        if matcher is None or matcher.allows(token):
            return token
        result.full_masks += 1
        data, array = matcher.constrained(logits)
        if not np.isfinite(data["logit"]).any():
            raise ModelError("the grammar allows no token here (the schema cannot be completed)")
        return chain.pick(data, array)


class BuiltinDecoder:
    """llama-cpp-python's `Llama.generate` with its grammar sampling over the whole vocabulary."""

    name = "builtin"

    def __init__(self, session: Session) -> None:
        self.session = session
        self._grammars: dict[str, object] = {}
        # Benchmarks only: keep generating past end-of-generation, so an unconstrained baseline
        # produces as many tokens as the constrained runs it is compared with.
        self.ignore_eog = False

    def decode(
        self,
        grammar: CompiledGrammar | None,
        settings: SamplingSettings,
        *,
        max_tokens: int,
        on_token: OnToken | None = None,
        should_stop: ShouldStop | None = None,
    ) -> DecodeResult:
        session = self.session
        llama_grammar = None
        if grammar is not None:
            llama_grammar = self._grammars.get(grammar.key)
            if llama_grammar is None:
                llama_grammar = grammar.llama_grammar()
                self._grammars[grammar.key] = llama_grammar
        prompt = [int(t) for t in session.evaluated()]
        result = DecodeResult()
        if max_tokens <= 0:
            result.finish_reason = "length"
            return result
        if settings.temperature > 0:
            session.llama.set_seed(settings.seed)
        generator = session.llama.generate(
            prompt,
            top_k=settings.top_k,
            top_p=settings.top_p,
            min_p=settings.min_p,
            temp=max(settings.temperature, 0.0),
            repeat_penalty=settings.repeat_penalty,
            grammar=llama_grammar,
        )
        try:
            for token in generator:
                if session.is_eog(token) and not self.ignore_eog:
                    result.finish_reason = "stop"
                    return result
                result.tokens.append(token)
                if on_token is not None:
                    on_token(token)
                if len(result.tokens) >= max_tokens:
                    result.finish_reason = "length"
                    return result
                if should_stop is not None and should_stop():
                    result.finish_reason = "cancelled"
                    return result
            return result
        finally:
            generator.close()


def make_decoder(kind: str, session: Session, *, draft: bool = True):
    """'fast' (default) or 'builtin'. draft=False makes the fast decoder evaluate one token per
    decode, exactly like the builtin path (see `FastDecoder`)."""
    if kind == "fast":
        return FastDecoder(session, draft=draft)
    if kind == "builtin":
        return BuiltinDecoder(session)
    raise ModelError(f"unknown decoder {kind!r} (use 'fast' or 'builtin')")


