"""JSON schema -> GBNF grammar, compiled once per schema.

The engine asks for the same few schemas at every step, and converting a schema (with its nested
`maxLength` repetitions) costs milliseconds, so compiled grammars are cached by the schema's
canonical JSON. Both decoders (llama-cpp-python's built-in path and the fast decoder) use the same
compiled grammar, which is what makes their greedy outputs comparable token for token.

One change to what llama-cpp-python's converter emits: the root rule ends in `space` (an optional
blank after the closing brace). Dropped here, the grammar accepts only end-of-generation once the
object is closed, so the decoder can stop at `}` without asking the model for a trailing blank.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass

from appliance.errors import ModelError


@dataclass(frozen=True)
class CompiledGrammar:
    """A GBNF grammar for one JSON schema; `key` is the schema's canonical JSON."""

    key: str
    gbnf: str
    root: str = "root"

    def llama_grammar(self):
        """The `llama_cpp.LlamaGrammar` for llama-cpp-python's own sampling path."""
        from llama_cpp import LlamaGrammar

        return LlamaGrammar.from_string(self.gbnf, verbose=False)


_cache: dict[str, CompiledGrammar] = {}
_lock = threading.Lock()


def schema_key(schema: dict) -> str:
    """Canonical JSON of a schema (key order does not matter for the cache)."""
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


def compile_schema(schema: dict) -> CompiledGrammar:
    """The grammar of `schema`, from the cache when it was compiled before.

    Raises ModelError with one line when the converter cannot express the schema.
    """
    key = schema_key(schema)
    with _lock:
        cached = _cache.get(key)
    if cached is not None:
        return cached
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    try:
        # Property order is the schema's own order (the converter keeps insertion order).
        gbnf = json_schema_to_gbnf(json.dumps(schema))
    except Exception as exc:  # the converter raises bare Exceptions/ValueErrors
        raise ModelError(f"cannot turn the JSON schema into a grammar: {exc}") from exc
    compiled = CompiledGrammar(key=key, gbnf=_without_trailing_space(gbnf))
    with _lock:
        _cache[key] = compiled
    return compiled


def _without_trailing_space(gbnf: str) -> str:
    """Drop the optional blank the converter allows after the root value.

    The root is either one object rule ending in `space` or (for `anyOf`) alternatives naming
    rules that only the root uses; those are trimmed the same way. Anything else is left alone
    (the decoders then simply see an optional trailing blank).
    """
    names: list[str] = []
    rules: dict[str, str] = {}
    for line in gbnf.split("\n"):
        if " ::= " in line:
            name, body = line.split(" ::= ", 1)
            names.append(name)
            rules[name] = body

    def used_elsewhere(name: str, owner: str) -> bool:
        pattern = re.compile(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])")
        return any(pattern.search(body) for other, body in rules.items() if other != owner)

    def trim(name: str, depth: int = 0) -> None:
        body = rules[name]
        if body.endswith(" space"):
            rules[name] = body[: -len(" space")]
            return
        alternatives = [part.strip() for part in body.split(" | ")]
        if depth == 0 and all(alt in rules for alt in alternatives):
            for alt in alternatives:
                if not used_elsewhere(alt, name):
                    trim(alt, depth + 1)

    if "root" in rules:
        trim("root")
    return "\n".join(f"{name} ::= {rules[name]}" for name in names)
