"""llama-cpp-python's own decoding path, the reference the fast decoder is measured against.

Kept because correctness tests compare the fast decoder's greedy output with it token for token,
benchmarks need it as the baseline, and the engine can fall back to it (`decoder="builtin"`).
"""

from __future__ import annotations

from appliance.llm.base import ShouldStop
from appliance.llm.decode_result import DecodeResult, OnToken
from appliance.llm.grammar import CompiledGrammar
from appliance.llm.sampling import SamplingSettings
from appliance.llm.session import Session


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
