"""The reading that profiles one thing a question mentions: a path, a pid, a port or a name.

Why by shape, not by words: a mention is exact (the question's reader pulls out paths, pids,
ports and names); what it is decides which tool knows all about it. The profile tools come first
where the registry has them, the older narrower ones otherwise. The tool's first required
argument takes the mention, so a tool can be renamed or replaced without touching this table.
"""

from __future__ import annotations

import os
import re
from typing import Iterable, Sequence

from appliance.tools.base import ToolSpec

# By the mention's shape, the tools that profile it, best first.
PROFILE_TOOLS: dict[str, tuple[str, ...]] = {
    "path": ("inspect_path", "path_lookup"),
    "pid": ("inspect_process", "process_details"),
    "port": ("network_connections",),
    "process": ("inspect_process", "process_tree"),
    "program": ("inspect_program", "process_tree"),
}
_PORT_ARGS = {"network_connections": {"port": None}}


def shape_of(mention: str) -> str:
    """path, pid or port (digits: a pid unless the question said port — the caller says), or name."""
    if mention.startswith(("/", "~", "./")):
        return "path"
    return "pid" if mention.isdigit() else "name"


def _first_required(spec: ToolSpec) -> str | None:
    params = spec.parameters or {}
    required = params.get("required") or list(params.get("properties", {}))[:1]
    return required[0] if required else None


def call_with(spec: ToolSpec, mention: str) -> tuple[str, dict] | None:
    """The call of `spec` about `mention`, its first argument filled (an integer where it is one)."""
    if spec.name in _PORT_ARGS:
        return (spec.name, {"port": int(mention)}) if mention.isdigit() else None
    name = _first_required(spec)
    if name is None:
        return None
    kind = (spec.parameters.get("properties", {}).get(name) or {}).get("type")
    if kind == "integer":
        if not mention.isdigit():
            return None
        return spec.name, {name: int(mention)}
    return spec.name, {name: os.path.expanduser(mention) if mention.startswith("~") else mention}


def running(name: str) -> bool:
    """Some process has this name now (its comm or its program's file name)."""
    import psutil

    wanted = name.lower()
    for proc in psutil.process_iter(["name", "exe"]):
        info = proc.info
        if (info.get("name") or "").lower() == wanted or os.path.basename(info.get("exe") or "").lower() == wanted:
            return True
    return False


def mention_call(mention: str, specs: Sequence[ToolSpec], called: Iterable[str] = (), *,
                 port: bool = False) -> tuple[str, dict] | None:
    """The first profile call for `mention` that the registry has and the run has not made."""
    shape = "port" if port and mention.isdigit() else shape_of(mention)
    if shape == "name":
        shape = "process" if running(mention) else "program"
    by_name = {spec.name: spec for spec in specs}
    done = set(called)
    for tool in PROFILE_TOOLS[shape]:
        spec = by_name.get(tool)
        if spec is None or tool in done:
            continue
        call = call_with(spec, mention)
        if call is not None:
            return call
    return None


_WORDLIKE = re.compile(r"^[A-Za-z][\w.+-]{1,40}$")


def profile_calls(paths: Sequence[str], pids: Sequence[int], ports: Sequence[int], names: Sequence[str],
                  specs: Sequence[ToolSpec], limit: int = 4) -> list[tuple[str, str, dict]]:
    """(mention, tool, arguments) for each thing a question mentions, before the first step."""
    calls: list[tuple[str, str, dict]] = []
    wanted = [(p, False) for p in paths] + [(str(p), False) for p in pids] + [(str(p), True) for p in ports] \
        + [(n, False) for n in names if _WORDLIKE.match(n)]
    for mention, is_port in wanted:
        found = [mention_call(mention, specs, port=is_port)]
        if shape_of(mention) == "name" and running(mention):  # a running program: its processes too
            found.insert(0, _first(PROFILE_TOOLS["program"], mention, specs))
        for call in found:
            if call is not None and (mention, *call) not in calls:
                calls.append((mention, *call))
        if len(calls) >= limit:
            break
    return calls[:limit]


def _first(tools: Sequence[str], mention: str, specs: Sequence[ToolSpec]) -> tuple[str, dict] | None:
    by_name = {spec.name: spec for spec in specs}
    for tool in tools:
        if tool in by_name:
            call = call_with(by_name[tool], mention)
            if call is not None:
                return call
    return None
