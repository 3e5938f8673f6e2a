"""The shape of what the model may say: one JSON schema per step, built from the tool registry.

Why per-tool schemas: a loose `{"action": str, "action_input": object}` lets a small model call a
tool without its required argument or invent one (seen with Qwen 1.5B). Here the grammar is an
`anyOf` with one object per tool whose `action` is a `const` and whose `action_input` is that tool's
own argument schema, so a call with a missing, mistyped or extra argument cannot be generated at
all. `thought` comes first (the model reasons before it commits) and is bounded, so a step always
ends within `max_tokens`.

The schemas stay inside the JSON-schema subset that llama.cpp's schema-to-grammar converter handles
(objects with fixed properties, const, enum, integer bounds, maxLength, arrays with maxItems).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from appliance.agent.claim import Choices, Narrowing, claim_schema
from appliance.agent.settings import EngineSettings
from appliance.tools.base import ToolSpec
from appliance.tools.schema import validate

FINISH = "finish"
ASK_USER = "ask_user"
RESERVED_ACTIONS = (FINISH, ASK_USER)

def _string(max_chars: int) -> dict:
    return {"type": "string", "maxLength": max_chars}


def _object(properties: Mapping[str, dict], required: Iterable[str]) -> dict:
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(required),
        "additionalProperties": False,
    }


def finish_input_schema(settings: EngineSettings, choices: Choices | None = None) -> dict:
    """The claim (agent/claim.py) over the facts shown so far; without choices (a schema shown in
    tests and decoder comparisons), over a few placeholder ids."""
    choices = choices or Choices(("F1", "F2", "F3"), ())
    return claim_schema(choices, answer_max=settings.answer_max_chars, value_max=settings.result_max_chars)


def ask_input_schema(settings: EngineSettings) -> dict:
    return _object({"question": _string(settings.question_max_chars)}, ["question"])


SMALL_RANGE = 64


def _bounded_integer(schema: dict) -> dict:
    """An integer with a small range becomes an enum of its values, because llama-cpp-python's
    schema converter ignores minimum/maximum; wider ranges are left to the registry's check."""
    low, high = schema.get("minimum"), schema.get("maximum")
    if schema.get("type") == "integer" and "enum" not in schema and low is not None and high is not None:
        if 0 <= high - low < SMALL_RANGE:
            return dict(schema, enum=list(range(int(low), int(high) + 1)))
    return schema


def _tool_parameters(spec: ToolSpec) -> dict:
    """The tool's own argument schema, without the prose (descriptions go in the prompt, not the
    grammar: they add nothing to what can be generated)."""

    def strip(schema: Any) -> Any:
        if isinstance(schema, dict):
            out = {k: strip(v) for k, v in schema.items() if k not in ("description", "default", "title")}
            return _bounded_integer(out)
        if isinstance(schema, list):
            return [strip(v) for v in schema]
        return schema

    params = strip(spec.parameters) or {}
    params.setdefault("type", "object")
    params.setdefault("properties", {})
    params.setdefault("required", [])
    params["additionalProperties"] = False
    return params


def _step_object(settings: EngineSettings, action: str, action_input: dict) -> dict:
    return _object(
        {"thought": _string(settings.thought_max_chars), "action": {"const": action}, "action_input": action_input},
        ["thought", "action", "action_input"],
    )


def action_input_schemas(
    specs: Iterable[ToolSpec], settings: EngineSettings, *, tools: bool = True, ask: bool = True,
    finish: bool = True, exclude: Iterable[str] = (), choices: Choices | None = None,
) -> dict[str, dict]:
    """action name -> schema of its action_input, in prompt order (tools, then finish, ask_user)."""
    schemas: dict[str, dict] = {}
    excluded = set(exclude)
    if tools:
        for spec in specs:
            if spec.name not in excluded:
                schemas[spec.name] = _tool_parameters(spec)
    if finish or not schemas:
        schemas[FINISH] = finish_input_schema(settings, choices)
    if ask:
        schemas[ASK_USER] = ask_input_schema(settings)
    return schemas


def step_schema(
    specs: Iterable[ToolSpec], settings: EngineSettings, *, tools: bool = True, ask: bool = True,
    finish: bool = True, exclude: Iterable[str] = (), choices: Choices | None = None,
) -> dict:
    """The JSON schema of one step. tools=False leaves only `finish` (the last step, or a forced
    answer); ask=False removes `ask_user` (nobody can answer); finish=False leaves `finish` out
    (no tool has been called yet); `exclude` leaves out tools (the one just repeated). `finish`
    stays whenever nothing else would be left."""
    options = [
        _step_object(settings, name, schema)
        for name, schema in action_input_schemas(specs, settings, tools=tools, ask=ask, finish=finish,
                                                 exclude=exclude, choices=choices).items()
    ]
    return options[0] if len(options) == 1 else {"anyOf": options}


def reflection_schema(settings: EngineSettings) -> dict:
    return _object(
        {"continue": {"type": "boolean"}, "reason": _string(160), "next_plan": _string(200)},
        ["continue", "reason", "next_plan"],
    )


class StepError(ValueError):
    """The model's output is not a usable step; the message is shown to it as an observation."""


@dataclass(frozen=True)
class Step:
    thought: str
    action: str
    action_input: Mapping[str, Any] = field(default_factory=dict)


def longest_output(schema: Mapping[str, Any]) -> int | None:
    """The most characters a compact JSON value valid under `schema` can take (None: unbounded).

    Every token is at least one character, so this also bounds the tokens of a reply. The engine
    lets a step generate that many: a finish with long strings was cut at 320 tokens in the
    middle of a string, and the same cut reply came back at every later step (greedy decoding),
    eight unparsable steps in a row (eval control_disk)."""
    if "anyOf" in schema:
        sizes = [longest_output(option) for option in schema["anyOf"]]
        bounded = [size for size in sizes if size is not None]
        return None if len(bounded) < len(sizes) else max(bounded, default=0)
    if "const" in schema:
        return len(json.dumps(schema["const"]))
    if "enum" in schema:
        return max((len(json.dumps(v)) for v in schema["enum"]), default=0)
    kind = schema.get("type")
    if kind == "string":
        return None if "maxLength" not in schema else 2 + int(schema["maxLength"])
    if kind == "integer":
        if "minimum" not in schema or "maximum" not in schema:
            return 20
        return max(len(str(int(schema["minimum"]))), len(str(int(schema["maximum"]))))
    if kind == "number":
        return 32
    if kind == "boolean":
        return 5
    if kind == "null":
        return 4
    if kind == "array":
        if "maxItems" not in schema:
            return None
        item = longest_output(schema.get("items", {}))
        return None if item is None else 2 + int(schema["maxItems"]) * (item + 2)
    if kind == "object":
        total = 2
        for key, sub in schema.get("properties", {}).items():
            size = longest_output(sub)
            if size is None:
                return None
            total += len(json.dumps(key)) + 2 + size + 2
        return total
    return None


def reply_budget(schema: Mapping[str, Any], fallback: int) -> int:
    """max_tokens for a reply under `schema`: enough for the longest valid reply, so the grammar's
    own bounds end it, never a cut in the middle of a string; `fallback` when it is unbounded."""
    longest = longest_output(schema)
    return fallback if longest is None else max(longest, 1)


def every_schema(specs: Iterable[ToolSpec], settings: EngineSettings) -> dict[str, dict]:
    """Every schema the engine can constrain a reply with, by name: the full step schema, the
    reflection schema and one single-action step schema per action. Decoder comparisons and
    grammar tests run over all of them, so a new tool is covered without touching them."""
    specs = list(specs)
    cases = {"step": step_schema(specs, settings), "reflection": reflection_schema(settings)}
    for name, input_schema in action_input_schemas(specs, settings).items():
        cases[name] = _step_object(settings, name, input_schema)
    narrowed = Choices(("F1", "F2", "F3", "F4"), ("worker-7d9f (pid 4711)", "/mnt/x"),
                       Narrowing(frozenset({"no_problem"}), frozenset({"/mnt/x"}), ("F2", "F4")))
    cases["finish-settled"] = _step_object(settings, FINISH, finish_input_schema(settings, narrowed))
    return cases


def _load_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        cut = " (the output was cut off)" if exc.pos >= len(text.rstrip()) - 1 else ""
        raise StepError(f"your output is not valid JSON{cut}: {exc.msg} at character {exc.pos}") from None
    if not isinstance(value, dict):
        raise StepError("your output must be one JSON object")
    return value


def parse_step(text: str) -> Step:
    """Read a step object. Only the envelope is checked here; the engine checks the action and its
    arguments against the registry (so an unknown tool becomes an observation, not a crash)."""
    value = _load_object(text)
    action = value.get("action")
    if not isinstance(action, str) or not action:
        raise StepError('your output needs an "action" string')
    thought = value.get("thought", "")
    action_input = value.get("action_input", {})
    if action_input is None:
        action_input = {}
    if not isinstance(action_input, dict):
        raise StepError('"action_input" must be a JSON object')
    return Step(thought=str(thought), action=action, action_input=action_input)


def check_reserved(step: Step, settings: EngineSettings, choices: Choices | None = None) -> str | None:
    """None when a finish/ask_user step's input fits its schema (a claim over the facts offered to
    this step), else the problem."""
    if step.action == FINISH:
        return validate(dict(step.action_input), finish_input_schema(settings, choices))
    if step.action == ASK_USER:
        return validate(dict(step.action_input), ask_input_schema(settings))
    return None


@dataclass(frozen=True)
class Reflection:
    should_continue: bool
    reason: str
    next_plan: str

    def as_dict(self) -> dict[str, Any]:
        return {"continue": self.should_continue, "reason": self.reason, "next_plan": self.next_plan}


def parse_reflection(text: str) -> Reflection:
    value = _load_object(text)
    return Reflection(
        should_continue=bool(value.get("continue", True)),
        reason=str(value.get("reason", "")),
        next_plan=str(value.get("next_plan", "")),
    )
