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
import math
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


def compile_schema(schema: dict, *, canonical_whitespace: bool = True) -> CompiledGrammar:
    """The grammar of `schema`, from the cache when it was compiled before.

    canonical_whitespace: the object must be laid out as `json.dumps` does (one blank after `:`
    and `,`, none elsewhere) — the layout of the prompt's examples. The converter's default
    allows an optional blank after every token, which leaves nothing forced: with one layout,
    keys and punctuation are fully determined and the fast decoder drafts them.

    Raises ModelError with one line when the converter cannot express the schema.
    """
    key = schema_key(schema) + ("" if canonical_whitespace else "|loose")
    with _lock:
        cached = _cache.get(key)
    if cached is not None:
        return cached
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    ranges: list[str] = []
    try:
        # Property order is the schema's own order (the converter keeps insertion order).
        placeholders = _with_range_placeholders(schema, ranges)
        gbnf = json_schema_to_gbnf(json.dumps(placeholders))
    except Exception as exc:  # the converter raises bare Exceptions/ValueErrors
        raise ModelError(f"cannot turn the JSON schema into a grammar: {exc}") from exc
    gbnf = _with_range_rules(gbnf, ranges)
    # JSON forbids raw control characters in strings (json.loads rejects them); the converter's
    # char rule allows them. llama.cpp's own converter excludes them the same way.
    gbnf = gbnf.replace('char ::= [^"\\\\] |', 'char ::= [^"\\\\\\x7F\\x00-\\x1F] |')
    if canonical_whitespace:
        gbnf = _canonical_whitespace(gbnf)
    compiled = CompiledGrammar(key=key, gbnf=_without_trailing_space(gbnf))
    with _lock:
        _cache[key] = compiled
    return compiled


def _canonical_whitespace(gbnf: str) -> str:
    """One blank after ':' and ',', no optional blanks anywhere else."""
    gbnf = gbnf.replace('":" space', '":" " "').replace('"," space', '"," " "')
    gbnf = re.sub(r"(?<=[ (|])space(?=[ )|]|$)", "", gbnf, flags=re.MULTILINE)
    return "\n".join(line.rstrip() for line in gbnf.split("\n"))


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


# --- integer bounds ----------------------------------------------------------------------------
# llama-cpp-python's converter ignores minimum/maximum, so a bounded integer (a pid, a port) could
# be generated out of range and fail validation after the model spent tokens on it. Bounded
# integers are swapped for placeholder constants before conversion and the placeholders replaced
# by exact digit-range rules afterwards.

_PLACEHOLDER = "__int_range_{}__"


def _with_range_placeholders(node, ranges: list[str]):
    if isinstance(node, list):
        return [_with_range_placeholders(item, ranges) for item in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind in ("integer", "number") and "enum" not in node and "const" not in node:
        if kind == "integer":
            expr = integer_range_gbnf(node.get("minimum"), node.get("maximum"))
        else:
            expr = number_range_gbnf(node.get("minimum"), node.get("maximum"))
        if expr is not None:
            ranges.append(expr)
            return {"const": _PLACEHOLDER.format(len(ranges) - 1)}
    return {key: _with_range_placeholders(value, ranges) for key, value in node.items()}


def _with_range_rules(gbnf: str, ranges: list[str]) -> str:
    for index, expr in enumerate(ranges):
        literal = '"\\"' + _PLACEHOLDER.format(index) + '\\""'
        if literal not in gbnf:
            raise ModelError("cannot express an integer range in the grammar")
        gbnf = gbnf.replace(literal, f"int-range-{index} space")
        gbnf += f"\nint-range-{index} ::= {expr}"
    if ranges and "\nspace ::= " not in "\n" + gbnf:
        gbnf += '\nspace ::= " "?'
    return gbnf


def integer_range_gbnf(low, high) -> str | None:
    """A GBNF expression matching exactly the decimal integers in [low, high] (no leading zeros).

    None when the bounds are absent or not integers (the plain integer rule is kept)."""
    if isinstance(low, bool) or isinstance(high, bool):
        return None
    if low is not None and not float(low).is_integer() or high is not None and not float(high).is_integer():
        return None
    if low is None and high is None:
        return None
    if high is None:
        if low < 0:
            return None
        low = int(low)
        digits = len(str(low))
        tail = f'[1-9] [0-9]{{{digits},15}}'
        return f"({_nonneg(low, 10 ** digits - 1)} | {tail})"
    if low is None:
        return None
    low, high = int(low), int(high)
    if low > high:
        raise ModelError(f"integer range {low}..{high} is empty")
    parts = []
    if low < 0:
        parts.append('"-" ' + _nonneg(max(1, -high) if high < 0 else 1, -low))
    if high >= 0:
        parts.append(_nonneg(max(low, 0), high))
    return "(" + " | ".join(parts) + ")"


def number_range_gbnf(low, high) -> str | None:
    """A GBNF expression for numbers in [low, high]: the integers of the range, and when the
    range is small, also every value with one decimal (0.2 ... 5.0). A subset of the valid
    numbers, but every generable number validates. None without both bounds."""
    if low is None or high is None or isinstance(low, bool) or isinstance(high, bool):
        return None
    tenths_low, tenths_high = math.ceil(low * 10 - 1e-9), math.floor(high * 10 + 1e-9)
    if tenths_low > tenths_high:
        raise ModelError(f"number range {low}..{high} is empty")
    integers = integer_range_gbnf(math.ceil(low), math.floor(high)) if math.ceil(low) <= math.floor(high) else None
    if tenths_high - tenths_low > 200:
        return integers
    decimals = []
    for tenths in range(tenths_low, tenths_high + 1):
        sign = "-" if tenths < 0 else ""
        whole, frac = divmod(abs(tenths), 10)
        decimals.append(f'"{sign}{whole}.{frac}"')
    options = ([integers] if integers else []) + decimals
    return "(" + " | ".join(options) + ")"


def _nonneg(low: int, high: int) -> str:
    parts = []
    for digits in range(len(str(low)), len(str(high)) + 1):
        a = max(low, 10 ** (digits - 1) if digits > 1 else 0)
        b = min(high, 10**digits - 1)
        if a <= b:
            parts.append(_same_length(str(a), str(b)))
    return "(" + " | ".join(parts) + ")"


def _same_length(lo: str, hi: str) -> str:
    """Digit strings of one length from lo to hi, most significant digit first."""
    if len(lo) == 1:
        return f"[{lo}-{hi}]"
    if set(lo[1:]) == {"0"} and set(hi[1:]) == {"9"}:
        return f"[{lo[0]}-{hi[0]}]" + " [0-9]" * (len(lo) - 1)
    if lo[0] == hi[0]:
        return f'"{lo[0]}" ' + _same_length(lo[1:], hi[1:])
    rest = len(lo) - 1
    parts = [f'"{lo[0]}" ' + _same_length(lo[1:], "9" * rest)]
    if int(hi[0]) - int(lo[0]) > 1:
        parts.append(f"[{int(lo[0]) + 1}-{int(hi[0]) - 1}]" + " [0-9]" * rest)
    parts.append(f'"{hi[0]}" ' + _same_length("0" * rest, hi[1:]))
    return "(" + " | ".join(parts) + ")"
