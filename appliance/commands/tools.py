"""`appliance tools ...`: list the diagnostic tools, or run one directly (no model) and print its
result as JSON. For people checking what the agent would see, and for tests and scripts."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from appliance.commands.common import add_common_options
from appliance.errors import UsageError, terminal_json
from appliance.tools.base import DENIED, ERROR, INVALID, TIMEOUT, Registry
from appliance.tools.registry import default_registry


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("tools", help="list the diagnostic tools or run one directly",
                                   description="List the read-only diagnostic tools, or run one without a model.")
    add_common_options(parser)
    actions = parser.add_subparsers(dest="tools_command", metavar="ACTION")
    parser.set_defaults(handler=_list, json=False, allow_path=[])

    p = actions.add_parser("list", help="every tool with its description and argument schema")
    add_common_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON array (name, description, parameters, ttl, timeout, reads, first_for, also_for)")
    p.add_argument("--allow-path", action="append", default=[], metavar="DIR",
                   help="also allow reading under DIR (repeatable)")
    p.set_defaults(handler=_list)

    p = actions.add_parser("run", help="run one tool and print its result as JSON",
                           description="Run one tool and print {status, data, error} as JSON. "
                                       "Exit 0 for ok/empty/partial, 1 for error/denied/timeout, 2 for bad arguments.")
    add_common_options(p)
    p.add_argument("name", metavar="NAME", help="the tool (see `appliance tools list`)")
    p.add_argument("--arg", action="append", default=[], metavar="KEY=VALUE",
                   help="one argument; VALUE is parsed as JSON unless the argument is a string (repeatable)")
    p.add_argument("--allow-path", action="append", default=[], metavar="DIR",
                   help="also allow reading under DIR (repeatable)")
    p.set_defaults(handler=_run)


def _registry(args: argparse.Namespace) -> Registry:
    for path in args.allow_path:
        if "\x00" in path or not os.path.isdir(os.path.expanduser(path)):
            raise UsageError(f"--allow-path {path!r} is not an existing directory")
    return default_registry(extra_roots=args.allow_path)


def _list(args: argparse.Namespace) -> int:
    registry = _registry(args)
    if args.json:
        rows = [{"name": s.name, "description": s.description, "parameters": s.parameters,
                 "example": dict(s.example), "ttl": s.ttl, "timeout": s.timeout, "reads": s.reads,
                 "first_for": list(s.first_for), "also_for": list(s.also_for)} for s in registry.specs]
        print(json.dumps(rows, indent=2))
        return 0
    for spec in registry.specs:
        print(spec.name)
        print(f"  {spec.description}")
        props = spec.parameters.get("properties", {})
        if props:
            required = set(spec.parameters.get("required", []))
            for name, schema in props.items():
                print(f"  --arg {name}=…  {_describe(schema, name in required)}")
        print()
    return 0


def _describe(schema: dict, required: bool) -> str:
    parts = [schema.get("type", "any")]
    if "enum" in schema:
        parts = ["|".join(str(v) for v in schema["enum"])]
    if "minimum" in schema or "maximum" in schema:
        parts.append(f"{schema.get('minimum', '')}..{schema.get('maximum', '')}")
    if "maxLength" in schema:
        parts.append(f"≤{schema['maxLength']} chars")
    parts.append("required" if required else f"default {json.dumps(schema.get('default'))}")
    text = ", ".join(parts)
    return f"({text}) {schema.get('description', '')}".rstrip()


def parse_args_list(pairs: list[str], parameters: dict) -> dict[str, Any]:
    """KEY=VALUE strings into a dict: string-typed arguments stay text, others are read as JSON."""
    props = parameters.get("properties", {})
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--arg expects KEY=VALUE, got {pair!r}")
        if props.get(key, {}).get("type") == "string":
            out[key] = value
            continue
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def _run(args: argparse.Namespace) -> int:
    registry = _registry(args)
    spec = registry.get(args.name)
    if spec is None:
        raise UsageError(f"unknown tool {args.name!r}; the tools are: {', '.join(registry.names())}")
    call_args = parse_args_list(args.arg, spec.parameters)
    refused = registry.check(args.name, call_args)
    if refused is not None:
        raise UsageError(f"{args.name}: {refused['error']}")
    outcome = registry.call(args.name, call_args)
    if outcome["status"] == INVALID:
        raise UsageError(f"{args.name}: {outcome['error']}")
    print(terminal_json(outcome, indent=2))
    sys.stdout.flush()
    return 1 if outcome["status"] in (ERROR, DENIED, TIMEOUT) else 0
