"""What a tool is, what it returns, and the registry that runs tools safely.

Every tool returns `{"status", "data", "error"}`. The registry is the only way the engine (or
`appliance tools run`) calls a tool: it rejects unknown tools and invalid arguments, turns
exceptions and timeouts into results, and never raises, so a failing tool is an observation for
the model and never a crash of the loop.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal, Mapping

from appliance.tools.schema import schema_from_signature, validate

ToolResult = dict  # {"status": str, "data": Any, "error": str | None}

OK = "ok"
EMPTY = "empty"  # the tool worked and found nothing (a valid, informative result)
PARTIAL = "partial"  # the tool stopped at a bound; data holds what was seen and what was skipped
ERROR = "error"
DENIED = "denied"  # the path policy or the command allow-list refused the request
INVALID = "invalid"  # unknown tool or arguments that do not fit its schema
TIMEOUT = "timeout"

# What a tool reads (`ToolSpec.reads`): the engine and the prompt ask this declaration, never a
# tool's name, so a tool can be renamed, added or faked in a test without touching them.
Reads = Literal["system", "process", "memory", "filesystems", "disks", "tree", "network", "sensors",
                "log", "file", "folder", "command", ""]
PLACES: frozenset[str] = frozenset({"log", "file", "folder", "tree"})  # tools that look at a path one names


def result(status: str, data: Any = None, error: str | None = None) -> ToolResult:
    return {"status": status, "data": data, "error": error}


def ok(data: Any) -> ToolResult:
    return result(OK, data, None)


def fail(error: str, status: str = ERROR, data: Any = None) -> ToolResult:
    return result(status, data, error)


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the engine sees it.

    description: what it returns, when to use it, and when not (shown to the model verbatim).
    parameters: JSON schema of action_input (from the function's signature).
    example: a valid action_input, used in the prompt's tool list.
    ttl: seconds a result stays fresh within one run (0: never reuse; None: valid for the whole run).
    timeout: seconds after which the registry gives up waiting and returns a timeout result.
    reads: what it reads (`Reads`): "log" (a log's tail), "file", "folder" (a listing), "tree"
        (sizes under a folder), "process", "sensors", ...; "" for a tool that declares nothing.
    first_for / also_for: the analyzer families (`appliance.analyzers`) whose questions this tool
        is the first / a later tool to dig into; the question message names it for them.
    """

    name: str
    description: str
    parameters: dict
    func: Callable[..., ToolResult]
    example: Mapping[str, Any] = field(default_factory=dict)
    ttl: float | None = 0.0
    timeout: float = 20.0
    reads: Reads = ""
    first_for: tuple[str, ...] = ()
    also_for: tuple[str, ...] = ()


def reading(specs: Iterable[ToolSpec], kind: str) -> ToolSpec | None:
    """The first tool that reads `kind`, or None."""
    return next((spec for spec in specs if spec.reads == kind), None)


class Registry:
    """The enabled tools, by name, in a stable order (the order of the prompt and the grammar)."""

    def __init__(self, specs: Iterable[ToolSpec]) -> None:
        self._specs: dict[str, ToolSpec] = {}
        for spec in specs:
            if spec.name in self._specs:
                raise ValueError(f"duplicate tool {spec.name}")
            self._specs[spec.name] = spec

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(self._specs.values())

    def names(self) -> list[str]:
        return list(self._specs)

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def only(self, names: Iterable[str]) -> "Registry":
        wanted = set(names)
        return Registry(spec for spec in self.specs if spec.name in wanted)

    def check(self, name: str, args: Any) -> ToolResult | None:
        """None when the call may run, else the `invalid` result that explains why not."""
        spec = self._specs.get(name)
        if spec is None:
            return fail(f"unknown tool {name!r}; the tools are: {', '.join(self._specs)}", INVALID)
        problem = validate(args if args is not None else {}, spec.parameters)
        if problem:
            return fail(problem, INVALID)
        return None

    def call(self, name: str, args: Mapping[str, Any] | None = None) -> ToolResult:
        """Run one tool with a deadline. Never raises."""
        args = dict(args or {})
        refused = self.check(name, args)
        if refused is not None:
            return refused
        spec = self._specs[name]
        outcome: list[ToolResult] = []

        def target() -> None:
            try:
                value = spec.func(**args)
                if not (isinstance(value, dict) and "status" in value):
                    value = ok(value)
                outcome.append(value)
            except Exception as exc:  # a tool bug is an observation, not a crash
                outcome.append(fail(f"{type(exc).__name__}: {exc}"))

        worker = threading.Thread(target=target, name=f"tool-{name}", daemon=True)
        started = time.monotonic()
        worker.start()
        worker.join(spec.timeout)
        if not outcome:
            waited = time.monotonic() - started
            return fail(f"{name} did not finish within {waited:.0f} s", TIMEOUT)
        return outcome[0]


@dataclass(frozen=True)
class ToolMeta:
    """What `@tool` records on a function; `bind` turns it into a ToolSpec."""

    name: str
    ttl: float | None
    timeout: float
    example: Mapping[str, Any]
    reads: Reads
    first_for: tuple[str, ...]
    also_for: tuple[str, ...]


def tool(*, reads: Reads, ttl: float | None = 0.0, timeout: float = 20.0, example: Mapping[str, Any] | None = None,
         first_for: tuple[str, ...] = (), also_for: tuple[str, ...] = (),
         name: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a function as a tool. Its docstring's first paragraph is the model's description;
    its signature (minus injected context such as `ctx`) is the argument schema; `reads` says what
    it reads (every real tool declares it), `first_for`/`also_for` the check families it serves."""

    def mark(func: Callable[..., Any]) -> Callable[..., Any]:
        func.__tool__ = ToolMeta(name or func.__name__, ttl, timeout, dict(example or {}), reads,  # type: ignore[attr-defined]
                                 tuple(first_for), tuple(also_for))
        return func

    return mark


def description_of(func: Callable[..., Any]) -> str:
    """The first paragraph of a docstring, on one line."""
    doc = inspect.getdoc(func) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


def bind(func: Callable[..., Any], wrap: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None,
         **injected: Any) -> ToolSpec:
    """The ToolSpec of a `@tool` function with `injected` keyword arguments bound (left out of the
    schema). `wrap` decorates the bound callable (the registry uses it to redact and catch denials)."""
    meta: ToolMeta = func.__tool__  # type: ignore[attr-defined]
    bound = functools.partial(func, **injected) if injected else func
    return ToolSpec(
        name=meta.name,
        description=description_of(func),
        parameters=schema_from_signature(func, skip=tuple(injected)),
        func=wrap(bound) if wrap else bound,
        example=meta.example,
        ttl=meta.ttl,
        timeout=meta.timeout,
        reads=meta.reads,
        first_for=meta.first_for,
        also_for=meta.also_for,
    )
