"""Grammar-constrained decoding on llama.cpp: which decoder to use, and where each part lives.

Two decoders work on the same `Session` (session.py: the `Llama`'s KV cache and token
bookkeeping, prompt prefill in paced chunks, batched decode):

- `FastDecoder` (fast_decoder.py, the default): sample first, check only the chosen token against
  the grammar, evaluate grammar-forced text as verified drafts in one batch. It builds on
  grammar_matcher.py (the grammar as a matcher, and the probe tokens that read what it forces) and
  sampling.py (the sampling settings, the candidate array, llama.cpp's sampler chain).
- `BuiltinDecoder` (builtin_decoder.py): llama-cpp-python's `Llama.generate` with a `LlamaGrammar`,
  the reference for correctness tests and benchmarks, behind `decoder="builtin"`.

Both return a `DecodeResult` (decode_result.py); text_stream.py turns their tokens into streamed text.
"""

from __future__ import annotations

from appliance.errors import ModelError
from appliance.llm.builtin_decoder import BuiltinDecoder
from appliance.llm.fast_decoder import FastDecoder
from appliance.llm.session import Session


def make_decoder(kind: str, session: Session, *, draft: bool = True,
                 lookup: bool = True) -> FastDecoder | BuiltinDecoder:
    """'fast' (default) or 'builtin'. draft=False makes the fast decoder evaluate one token per
    decode, exactly like the builtin path (see `FastDecoder`); lookup=False keeps its grammar
    drafts and leaves out the ones copied from the context."""
    if kind == "fast":
        return FastDecoder(session, draft=draft, lookup=lookup)
    if kind == "builtin":
        return BuiltinDecoder(session)
    raise ModelError(f"unknown decoder {kind!r} (use 'fast' or 'builtin')")


