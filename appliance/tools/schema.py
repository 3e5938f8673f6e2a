"""Argument schemas from function signatures, and the validator that checks calls against them.

A tool's parameters are plain typed arguments; bounds ride along in `Annotated[...]` markers. The
same JSON schema feeds the grammar (so the model cannot produce a bad call), the prompt (so the model
knows the arguments) and `validate` (so a call that reaches a tool by another route is checked too).
"""

from __future__ import annotations

import inspect
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, Literal, Union, get_args, get_origin


@dataclass(frozen=True)
class Range:
    """Inclusive numeric bounds for an int or float argument."""

    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class MaxLen:
    """The longest string an argument may be."""

    length: int


@dataclass(frozen=True)
class Doc:
    """A one-line description of an argument, shown to the model."""

    text: str


_SCALARS = {int: "integer", float: "number", str: "string", bool: "boolean"}


def _type_schema(annotation: Any) -> dict:
    extras: list[Any] = []
    if get_origin(annotation) is typing.Annotated:
        annotation, *extras = get_args(annotation)
    origin = get_origin(annotation)
    if origin is Literal:
        values = list(get_args(annotation))
        schema: dict = {"type": _SCALARS[type(values[0])], "enum": values}
    elif origin in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) != 1:
            raise TypeError(f"unsupported union {annotation!r}")
        schema = _type_schema(members[0])
    elif annotation in _SCALARS:
        schema = {"type": _SCALARS[annotation]}
    else:
        raise TypeError(f"unsupported argument type {annotation!r}")
    for extra in extras:
        if isinstance(extra, Range):
            if extra.minimum is not None:
                schema["minimum"] = extra.minimum
            if extra.maximum is not None:
                schema["maximum"] = extra.maximum
        elif isinstance(extra, MaxLen):
            schema["maxLength"] = extra.length
        elif isinstance(extra, Doc):
            schema["description"] = extra.text
    return schema


def schema_from_signature(func: Callable[..., Any], skip: tuple[str, ...] = ()) -> dict:
    """The JSON schema of a function's keyword arguments: required = those without defaults.

    Arguments named in `skip` (injected context such as the path policy) are left out.
    """
    hints = typing.get_type_hints(func, include_extras=True)
    properties: dict[str, dict] = {}
    required: list[str] = []
    for name, param in inspect.signature(func).parameters.items():
        if name in skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        prop = _type_schema(hints[name])
        if param.default is inspect.Parameter.empty:
            required.append(name)
        elif param.default is not None:
            prop["default"] = param.default
        properties[name] = prop
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _type_ok(value: Any, expected: str) -> bool:
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected == "string":
        return isinstance(value, str)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "object":
        return isinstance(value, dict)
    if expected == "array":
        return isinstance(value, list)
    return True


def validate(value: Any, schema: dict, where: str = "action_input") -> str | None:
    """Check `value` against the subset of JSON schema the tools use.

    Returns None when valid, else one sentence naming the first problem (it becomes an observation
    the model reads, so it says what to do).
    """
    expected = schema.get("type")
    if expected and not _type_ok(value, expected):
        return f"{where} must be of type {expected}, got {type(value).__name__}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} must be one of {schema['enum']}, got {value!r}"
    if "const" in schema and value != schema["const"]:
        return f"{where} must be {schema['const']!r}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where} must be >= {schema['minimum']}, got {value}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where} must be <= {schema['maximum']}, got {value}"
    if isinstance(value, str) and "maxLength" in schema and len(value) > schema["maxLength"]:
        return f"{where} must be at most {schema['maxLength']} characters"
    if isinstance(value, dict) and expected == "object":
        properties = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                return f"{where} is missing the required argument {key!r}"
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(properties))
            if extra:
                allowed = ", ".join(properties) or "none"
                return f"{where} has unknown argument {extra[0]!r} (allowed: {allowed})"
        for key, sub in properties.items():
            if key in value:
                problem = validate(value[key], sub, f"{where}.{key}")
                if problem:
                    return problem
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            problem = validate(item, schema["items"], f"{where}[{index}]")
            if problem:
                return problem
    return None
