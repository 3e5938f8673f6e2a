"""The step grammar, checked with llama.cpp's own grammar engine.

For every tool (the real registry and a few fakes with every argument kind) a valid call is
accepted, and calls with a missing, mistyped or extra argument, an unknown action or trailing text
cannot be generated: each candidate string is tokenized with a real vocabulary and fed token by token
through `llama_sampler_init_grammar`, the sampler llama.cpp uses during generation; a string is
"generable" only if every token passes and end-of-generation is allowed at its end.
"""

from __future__ import annotations

import ctypes
import json
import math
from typing import Annotated, Literal

import pytest

from appliance.agent.actions import (
    action_input_schemas,
    parse_step,
    reflection_schema,
    step_schema,
)
from appliance.agent.settings import EngineSettings
from appliance.tools.base import Registry, ToolSpec, ok
from appliance.tools.schema import MaxLen, Range, schema_from_signature, validate

llama_cpp = pytest.importorskip("llama_cpp")
from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf  # noqa: E402

SETTINGS = EngineSettings()


def _fake_registry() -> Registry:
    def no_args():
        return ok(1)

    def kinds(kind: Literal["tcp", "udp"], port: Annotated[int, Range(1, 65535)], n: Annotated[int, Range(1, 10)] = 3,
              name: Annotated[str, MaxLen(20)] = "", verbose: bool = False):
        return ok(1)

    return Registry([
        ToolSpec("no_args", "x", schema_from_signature(no_args), no_args, {}),
        ToolSpec("kinds", "x", schema_from_signature(kinds), kinds, {"kind": "tcp", "port": 22}),
    ])


def _real_registry() -> Registry:
    from appliance.tools.context import ToolContext
    from appliance.tools.paths import PathPolicy
    from appliance.tools.registry import build_registry

    return build_registry(ToolContext(policy=PathPolicy.default()))


def _specs() -> list[ToolSpec]:
    return list(_fake_registry().specs) + list(_real_registry().specs)


SPECS = _specs()
FULL = step_schema(SPECS, SETTINGS)  # the real union of every tool, finish and ask_user


class GrammarChecker:
    """Feeds text through llama.cpp's grammar sampler with SmolLM2's vocabulary."""

    def __init__(self, model_path: str) -> None:
        self.llm = llama_cpp.Llama(model_path, vocab_only=True, verbose=False)
        self.vocab = llama_cpp.llama_model_get_vocab(self.llm.model)
        self.eos = llama_cpp.llama_vocab_eos(self.vocab)
        self._gbnf: dict[str, str] = {}

    def gbnf(self, schema: dict) -> str:
        key = json.dumps(schema, sort_keys=True)
        if key not in self._gbnf:
            self._gbnf[key] = json_schema_to_gbnf(json.dumps(schema))
        return self._gbnf[key]

    def generable(self, schema: dict, text: str) -> bool:
        sampler = llama_cpp.llama_sampler_init_grammar(self.vocab, self.gbnf(schema).encode(), b"root")
        try:
            for token in self.llm.tokenize(text.encode(), add_bos=False, special=False):
                if not self._allowed(sampler, token):
                    return False
                llama_cpp.llama_sampler_accept(sampler, token)
            return self._allowed(sampler, self.eos)
        finally:
            llama_cpp.llama_sampler_free(sampler)

    @staticmethod
    def _allowed(sampler, token: int) -> bool:
        data = (llama_cpp.llama_token_data * 1)()
        data[0].id, data[0].logit, data[0].p = token, 0.0, 0.0
        array = llama_cpp.llama_token_data_array(data=data, size=1, selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(array))
        return not math.isinf(data[0].logit)


@pytest.fixture(scope="module")
def checker(smollm2_path) -> GrammarChecker:
    return GrammarChecker(str(smollm2_path))


def _valid_value(schema: dict):
    if "enum" in schema:
        return schema["enum"][-1]
    kind = schema.get("type")
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1.5))
    if kind == "boolean":
        return True
    return "x" * min(3, schema.get("maxLength", 3))


def _wrong_value(schema: dict):
    kind = schema.get("type")
    if "enum" in schema:
        return "definitely_not_allowed" if kind == "string" else 999999
    return {"integer": "five", "number": "1.5", "boolean": "yes", "string": 5}.get(kind, None)


def _full_call(spec_schema: dict) -> dict:
    return {name: _valid_value(prop) for name, prop in spec_schema.get("properties", {}).items()}


def _step(action: str, action_input: dict) -> str:
    return json.dumps({"thought": "Checking.", "action": action, "action_input": action_input})


def _bad_calls(name: str, schema: dict):
    props, required = schema.get("properties", {}), schema.get("required", [])
    base = _full_call(schema)
    for key in required:
        yield f"missing {key}", {k: v for k, v in base.items() if k != key}
    for key, prop in props.items():
        wrong = _wrong_value(prop)
        if wrong is not None:
            yield f"mistyped {key}", dict(base, **{key: wrong})
    yield "extra argument", dict(base, bogus_arg=1)


def test_every_schema_compiles_with_llama_cpp():
    for schema in (FULL, step_schema(SPECS, SETTINGS, tools=False, ask=False), reflection_schema(SETTINGS)):
        assert LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False) is not None
    names = [o["properties"]["action"]["const"] for o in FULL["anyOf"]]
    assert names == [s.name for s in SPECS] + ["finish", "ask_user"]
    for option in FULL["anyOf"]:
        assert list(option["properties"]) == ["thought", "action", "action_input"]
        assert option["required"] == ["thought", "action", "action_input"]
        assert option["additionalProperties"] is False
        assert option["properties"]["thought"]["maxLength"] == SETTINGS.thought_max_chars


@pytest.mark.model
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_valid_calls_are_generable_and_bad_ones_are_not(checker, spec):
    schema = action_input_schemas([spec], SETTINGS)[spec.name]
    for good in ({**spec.example}, _full_call(schema)):
        text = _step(spec.name, good)
        assert validate(good, spec.parameters) is None, good
        assert checker.generable(FULL, text), f"valid call refused by the grammar: {text}"
        assert parse_step(text).action == spec.name
    for label, bad in _bad_calls(spec.name, schema):
        text = _step(spec.name, bad)
        assert not checker.generable(FULL, text), f"{label} was generable: {text}"
        assert validate(bad, spec.parameters) is not None, f"{label} passed validation: {bad}"


@pytest.mark.model
def test_envelope_faults_are_not_generable(checker):
    spec = SPECS[0]
    good = _step(spec.name, dict(spec.example))
    assert checker.generable(FULL, good)
    assert not checker.generable(FULL, _step("rm_rf", {}))  # unknown action
    assert not checker.generable(FULL, good + " and more")  # trailing text
    assert not checker.generable(FULL, json.dumps({"action": spec.name, "thought": "t", "action_input": {}}))
    assert not checker.generable(FULL, json.dumps({"thought": "t" * (SETTINGS.thought_max_chars + 1),
                                                   "action": spec.name, "action_input": dict(spec.example)}))
    assert not checker.generable(FULL, json.dumps({"thought": "t", "action": spec.name}))  # no action_input


@pytest.mark.model
def test_small_integer_ranges_are_enforced_by_the_grammar(checker):
    kinds = _fake_registry().get("kinds")
    assert checker.generable(FULL, _step("kinds", {"kind": "udp", "port": 53, "n": 10}))
    assert not checker.generable(FULL, _step("kinds", {"kind": "udp", "port": 53, "n": 11}))
    assert not checker.generable(FULL, _step("kinds", {"kind": "udp", "port": 53, "n": 0}))
    assert validate({"kind": "udp", "port": 70000}, kinds.parameters) is not None  # wide ranges: validation


@pytest.mark.model
def test_finish_and_ask_user_shapes(checker):
    finish = {"stance": "problem", "cites": ["F1", "F2"], "subject": "", "value": "99% CPU",
              "answer": "hog uses 99% CPU"}
    assert checker.generable(FULL, _step("finish", finish))
    assert checker.generable(FULL, _step("finish", dict(finish, cites=["F3"], value="")))
    assert checker.generable(FULL, _step("ask_user", {"question": "Which service?"}))
    bad = [
        dict(finish, stance="certain"),  # a stance outside the fixed set
        dict(finish, cites=[]),  # no cite
        dict(finish, cites=["F9"]),  # a fact never shown
        dict(finish, cites=["F1", "F2", "F3", "F1"]),  # more than three
        dict(finish, subject="hog"),  # a subject no fact names
        {k: v for k, v in finish.items() if k != "value"},  # every key is required
        dict(finish, answer="a" * (SETTINGS.answer_max_chars + 1)),
    ]
    for value in bad:
        assert not checker.generable(FULL, _step("finish", value)), value
    # the last step's grammar allows only finish; without a listener there is no ask_user
    finish_only = step_schema(SPECS, SETTINGS, tools=False, ask=False)
    assert checker.generable(finish_only, _step("finish", finish))
    assert not checker.generable(finish_only, _step(SPECS[0].name, dict(SPECS[0].example)))
    no_ask = step_schema(SPECS, SETTINGS, ask=False)
    assert not checker.generable(no_ask, _step("ask_user", {"question": "Which service?"}))


@pytest.mark.model
def test_reflection_shape(checker):
    schema = reflection_schema(SETTINGS)
    good = json.dumps({"continue": True, "reason": "the tool failed", "next_plan": "use disk_usage"})
    assert checker.generable(schema, good)
    assert not checker.generable(schema, json.dumps({"continue": "yes", "reason": "r", "next_plan": "p"}))
    assert not checker.generable(schema, json.dumps({"continue": True, "reason": "r"}))


def _maximal(schema: dict):
    """The longest valid value of a schema: every property, every item, every string full."""
    if "anyOf" in schema:
        return max((_maximal(o) for o in schema["anyOf"]), key=lambda v: len(json.dumps(v)))
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return max(schema["enum"], key=lambda v: len(json.dumps(v)))
    kind = schema.get("type")
    if kind == "string":
        return "x" * schema["maxLength"]
    if kind == "integer":
        return max((schema["minimum"], schema["maximum"]), key=lambda v: len(str(v)))
    if kind == "number":
        return schema.get("minimum", 0) + 0.1234567890123  # as long as a float gets in practice
    if kind == "boolean":
        return False
    if kind == "array":
        return [_maximal(schema["items"])] * schema["maxItems"]
    if kind == "object":
        return {key: _maximal(sub) for key, sub in schema["properties"].items()}
    raise AssertionError(f"unexpected schema {schema}")


def test_every_reply_fits_its_token_budget_so_no_reply_is_cut_inside_a_string():
    """The engine's max_tokens for a reply is the longest valid reply (each token is at least one
    character); a 320-token cap cut long finishes in the middle of a string (eval control_disk)."""
    from appliance.agent.actions import every_schema, longest_output, reply_budget
    from appliance.tools.registry import default_registry

    for name, schema in every_schema(default_registry().specs, SETTINGS).items():
        value = _maximal(schema)
        assert validate(value, schema) is None or "anyOf" in schema, name
        exact = len(json.dumps(value, ensure_ascii=False))  # ", " and ": ", the grammar's one layout
        assert exact <= longest_output(schema) <= exact + 2 * 40, (name, exact, longest_output(schema))
        assert reply_budget(schema, 320) == longest_output(schema)
    assert reply_budget({"type": "string"}, 320) == 320  # unbounded: the setting

