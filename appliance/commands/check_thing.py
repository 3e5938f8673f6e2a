"""`appliance check THING`: the profile of one named thing (a path, a pid, a user, a process or a
program) and its flags, in plain words, without a model; exit 0/1/2 by the worst flag.

Which profile: an existing path or anything written as one (/, ~, ./) is a path; digits are a pid;
a local user's name that is no program is a user; a name some process has is a process; anything
else a program. A thing that is none of these is one line and exit 2, as a wrong argument is.

It must answer within a second (scripts/bench_check_profile.py times each kind): the secret
scanner's rules start loading on their own thread before the tools are imported (`engine.warm`),
so their load runs beside the imports and the readings instead of after them.
"""

from __future__ import annotations

import os
import pwd
import shutil
import time
from typing import Any

import psutil

from appliance.errors import UsageError, terminal_json
from appliance.tools.base import OK, Registry
from appliance.tools.content_kind import SAFE_PATH
from appliance.tools.flags import SEVERITIES, Flag
from appliance.tools.redaction import engine

_SUBJECTS = ("headline", "flags", "path", "program", "pid", "user", "name")
_HIDDEN = ("size_bytes", "windows_line_endings", "held_open_by_total")  # said better by another line
_NAMES_FALL_BACK = ("inspect_process", "inspect_user")  # a name whose tool is not built: ask the program tool


def profile_tool(thing: str) -> tuple[str, str]:
    """(the profile tool, the argument value) for what `thing` names."""
    if thing.startswith(("/", "~", "./", "../")) or os.path.lexists(thing):
        return "inspect_path", os.path.abspath(os.path.expanduser(thing))
    if thing.isdigit():
        return "inspect_process", thing
    if shutil.which(thing, path=SAFE_PATH) is None and _is_user(thing):
        return "inspect_user", thing
    if any(p.info.get("name") == thing for p in psutil.process_iter(["name"])):
        return "inspect_process", thing
    return "inspect_program", thing


def _is_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def call_profile(registry: Registry, tool: str, value: str) -> dict:
    """Call the profile tool by name with its first argument (whatever the tool calls it)."""
    spec = registry.get(tool)
    if spec is None:
        raise UsageError(f"this build has no {tool} tool, so it cannot profile {value!r}")
    names = list(spec.parameters.get("properties", {}))
    wanted = spec.parameters["properties"][names[0]].get("type") if names else "string"
    arg: Any = int(value) if wanted == "integer" and value.isdigit() else value
    return registry.call(tool, {names[0]: arg} if names else {})


def worst(flags: list[dict]) -> str:
    return max((f.get("severity", "ok") for f in flags), key=SEVERITIES.index, default="ok")


def _words(key: str) -> str:
    return key.replace("_", " ").capitalize()


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return "; ".join(f"{k.replace('_', ' ')}: {_value(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "; ".join(_value(v) for v in value)
    return str(value)


def lines_of(data: dict) -> list[str]:
    """The profile as a person reads it: the headline, one line per fact, nested facts indented."""
    out = [str(data.get("headline", ""))]
    for key, value in data.items():
        if key in _SUBJECTS or key in _HIDDEN:
            continue
        if isinstance(value, dict) and value:
            out.append(f"{_words(key)}:")
            out += [f"    {k.replace('_', ' ')}: {_value(v)}" for k, v in value.items()]
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            out.append(f"{_words(key)}:")
            out += [f"    {_value(item)}" for item in value]
        else:
            out.append(f"{_words(key)}: {_value(value)}")
    return out


def _asked(thing: str) -> str:
    text = thing.strip()
    if not text or "\x00" in text:
        raise UsageError("give a path, a pid or a name to check")
    return text


def show_thing(thing: str, as_json: bool, allow_path: list[str]) -> int:
    """`appliance check THING`: the scanner's rules loading while the tools import, then `show`."""
    started = time.monotonic()
    _asked(thing)
    engine.warm()
    try:
        from appliance.tools.registry import default_registry  # only a THING needs the tools

        return show(default_registry(extra_roots=allow_path), thing, as_json, started)
    finally:
        engine.settle()


def show(registry: Registry, thing: str, as_json: bool, started: float | None = None) -> int:
    """Print the profile of `thing` and return the exit status (by its worst flag)."""
    text = _asked(thing)
    started = time.monotonic() if started is None else started
    tool, value = profile_tool(text)
    if tool in _NAMES_FALL_BACK and registry.get(tool) is None and not text.isdigit():
        tool = "inspect_program"
    outcome = call_profile(registry, tool, value)
    data = outcome.get("data") or {}
    if outcome["status"] != OK:
        raise UsageError(str(outcome.get("error") or f"{text}: nothing to show"))
    if tool == "inspect_program" and not data.get("installed") and not data.get("processes_total"):
        searched = next((f["says"] for f in data.get("flags", []) if f.get("kind") == "not_installed"), data.get("headline"))
        raise UsageError(f"nothing is named {text}: it is no path, no process, no user, and {searched}")
    flags = [Flag.from_dict(f).as_dict() for f in data.get("flags", [])]
    level = worst(flags)
    status = SEVERITIES.index(level)
    if as_json:
        print(terminal_json({"thing": text, "profile": tool, "worst": level, "exit_status": status,
                             "seconds": round(time.monotonic() - started, 2), "flags": flags, "data": data}, indent=2))
        return status
    for line in lines_of(data):
        print(line)
    print(("Flags:" if flags else "Flags: none"))
    for flag in flags:
        print(f"    {flag['severity']}: {flag['says']}")
    return status
