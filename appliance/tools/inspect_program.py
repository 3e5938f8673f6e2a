"""The `inspect_program` tool: whether a program is installed and running (what `which`,
`dpkg -S`, `pgrep`, `systemctl status` and `ss -ltnp` say together), with what was searched.

Why: "is X installed?" and "is X running?" are answered wrongly by a model that sees neither; a no
must come with the search that came back empty, so the answer can cite where it looked.
"""

from __future__ import annotations

import os
import re
import shutil
from typing import Annotated

import psutil

from appliance.tools.base import INVALID, fail, ok, tool
from appliance.tools.commands import run_allowed
from appliance.tools.content_kind import SAFE_PATH
from appliance.tools.context import ToolContext
from appliance.tools.flags import Flag, flag_dicts
from appliance.tools.packages import aliases, owner
from appliance.tools.procs import command_line, label, own_tree
from appliance.tools.schema import Doc, MaxLen

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+@-]{0,63}$")
UNIT_DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
             "/lib/systemd/system")
SHOWN = 8


def running(name: str, paths: list[str], own: set[int]) -> tuple[list[dict], int]:
    """Processes whose name, program or first argument is the program; (rows, how many were looked at)."""
    rows, seen = [], 0
    for proc in psutil.process_iter(["pid", "name", "exe", "username", "cmdline"]):
        seen += 1
        info = proc.info
        argv0 = os.path.basename((info.get("cmdline") or [""])[0] or "")
        if info.get("name") == name or argv0 == name or (info.get("exe") or "") in paths \
                or os.path.basename(info.get("exe") or "") == name:
            rows.append(label({"pid": info["pid"], "user": info.get("username"), "command": command_line(info)},
                              info["pid"], own))
    return rows, seen


def listening(pids: set[int]) -> list[str]:
    try:
        conns = psutil.net_connections("inet")
    except (psutil.AccessDenied, OSError):
        return []
    ports = {f"{c.laddr.port}/{'tcp' if c.type == 1 else 'udp'} on {c.laddr.ip}" for c in conns
             if c.pid in pids and c.laddr and (c.status == psutil.CONN_LISTEN or c.type == 2)}
    return sorted(ports)[:20]


def unit(names: list[str]) -> dict:
    """A systemd unit file of one of `names`, where it is, whether it is enabled and, where systemd
    runs, its state (`systemctl is-active`, an allow-listed command)."""
    systemd = os.path.isdir("/run/systemd/system")
    for name in names:
        unit_name = name if name.endswith((".service", ".socket", ".timer")) else f"{name}.service"
        path = next((os.path.join(d, unit_name) for d in UNIT_DIRS if os.path.lexists(os.path.join(d, unit_name))), "")
        if not path:
            continue
        wants = [w for w in os.listdir("/etc/systemd/system") if w.endswith((".wants", ".requires"))] \
            if os.path.isdir("/etc/systemd/system") else []
        enabled = any(os.path.lexists(os.path.join("/etc/systemd/system", w, unit_name)) for w in wants)
        out = {"unit": unit_name, "unit_file": path, "enabled": enabled}
        if systemd:
            ran = run_allowed(f"systemctl is-active {unit_name}", timeout=5.0)
            out["state"] = ran.output.strip() if ran is not None else "unknown (systemctl not found)"
        else:
            out["state"] = "unknown: systemd is not running on this machine"
        return out
    return {"searched": f"no unit file {' or '.join(n + '.service' for n in names)} in {', '.join(UNIT_DIRS)}",
            **({} if systemd else {"note": "systemd is not running on this machine"})}


@tool(reads="process", ttl=5.0, timeout=10.0, example={"program": "nginx"})
def inspect_program(
    ctx: ToolContext,
    program: Annotated[str, MaxLen(64), Doc("program name, e.g. nginx")],
) -> dict:
    """Whether a program is installed and running: where PATH finds it, its package and version (dpkg), its processes,
    its systemd unit and state, the ports it listens on; a no says where it looked."""
    name = program.strip()
    if not NAME_RE.match(name):
        return fail(f"{program!r} is not a program name (letters, digits, . _ + - @; no path)", INVALID)
    found = shutil.which(name, path=SAFE_PATH) or ""
    paths = aliases(found) if found else []
    package = owner(paths) if found else owner(name=name)
    procs, seen = running(name, paths, own_tree(ctx.self_pids))
    others = [p for p in procs if not p.get("self")]
    service = unit([name] + ([package.package] if package.package and package.package != name else []))
    data: dict = {"program": name, "installed": bool(found or package.package)}
    data["found_at"] = found or f"not found in {SAFE_PATH.replace(':', ', ')}"
    if found and os.path.realpath(found) != found:
        data["real_path"] = os.path.realpath(found)
    data["package"] = f"{package.package} {package.version}".strip() if package.package else f"none ({package.searched})"
    data["processes_total"] = len(others)
    data["processes"] = procs[:SHOWN] if procs else f"none of the {seen} processes runs {name}"
    ports = listening({p["pid"] for p in others})
    if others:
        data["listening_on"] = ports or "no port"
    data["systemd"] = service
    flags: list[Flag] = []
    if not data["installed"]:
        flags.append(Flag("not_installed", "warning", f"{name} is not installed: not on the system PATH, and "
                                                      f"{package.searched}"))
        data["headline"] = f"{name} is not installed (not on the system PATH, no package has it)" + \
            (f", though {len(others)} process(es) of that name run" if others else "")
    else:
        where = found or "a package file outside PATH"
        data["headline"] = (f"{name} is installed at {where}" + (f" (package {data['package']})" if package.package else "") +
                            (f"; {len(others)} process(es) run it" if others else "; no process runs it now") +
                            (f", listening on {', '.join(ports[:3])}" if ports else ""))
    if service.get("state") == "failed":
        flags.append(Flag("unit_failed", "warning", f"the unit {service['unit']} has failed"))
    data["flags"] = flag_dicts(flags)
    return ok(data)
