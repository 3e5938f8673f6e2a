"""The `inspect_user` tool: one account whole (`getent passwd`, `id`, `passwd -S`, `who`, `ps -u`),
with its processes' CPU and memory totals and the facts an expert would point at.

Why a tool of its own: "can X log in?", "what runs as X?" and "why can't X start a session?" are
answered by the account's own entries, not by the busiest users of the machine.
"""

from __future__ import annotations

from typing import Annotated

import psutil

from appliance.tools import units
from appliance.tools.base import EMPTY, ok, result, tool
from appliance.tools.context import ToolContext
from appliance.tools.flags import Flag, flag_dicts
from appliance.tools.procs import command_line, label, own_tree, sample
from appliance.tools.schema import Doc, MaxLen
from appliance.tools.user_account import Account, Password, account, crontab, home_facts, login, password, sessions
from appliance.tools.users import per_user

SAMPLE_SECONDS = 0.3
LISTED = 10


def account_flags(acct: Account, secret: Password, home: dict) -> list[Flag]:
    """Facts about the account: a shell that is missing (it cannot log in at all), a login refused
    by its shell or a locked password (a plain fact: service accounts are made so), a missing home."""
    flags = []
    can = login(acct, secret)
    if not acct.shell_exists() and not acct.shell_refuses():
        flags.append(Flag("shell_missing", "warning", f"user {acct.name}'s shell {acct.shell or '(none)'} does not "
                                                      f"exist or cannot be run: it cannot log in"))
    elif not can.startswith("yes"):
        flags.append(Flag("cannot_log_in", "ok", f"user {acct.name} cannot log in: {can[4:]}" if can.startswith("no: ")
                          else f"user {acct.name} cannot log in with a password (it is locked); a key-based login still can"))
    if not home["exists"]:
        opens = not acct.shell_refuses() and acct.shell_exists()
        flags.append(Flag("home_missing", "warning" if opens else "ok",
                          f"user {acct.name}'s home {acct.home} does not exist"
                          + (": a login starts in / without its settings" if opens else "")))
    return flags


def _by_memory(procs: list[dict], own: set[int]) -> list[dict]:
    """Its processes (not the appliance's), the largest in memory first."""
    def rss(info: dict) -> int:
        return info["memory_info"].rss if info.get("memory_info") else 0
    return sorted((p for p in procs if p["pid"] not in own), key=rss, reverse=True)


def _row(info: dict, own: set[int]) -> dict:
    mem = info.get("memory_info")
    return label({"pid": info["pid"], "name": info.get("name") or "?", "memory_rss": units.size(mem.rss) if mem else None,
                  "command": command_line(info)}, info["pid"], own)


@tool(reads="process", ttl=3.0, timeout=10.0, example={"user": "www-data"})
def inspect_user(
    ctx: ToolContext,
    user: Annotated[str, MaxLen(64), Doc("a user name or uid")],
) -> dict:
    """One account: uid, groups, home, shell, whether it can log in, its processes with CPU and memory totals,
    sessions, crontab. Use when a question names a user."""
    wanted = user.strip()
    acct = account(wanted) if wanted else None
    if acct is None:
        what = f"no user {wanted!r} in the passwd database" if wanted else "no user given"
        return result(EMPTY, {"user": wanted, "exists": False, "headline": what}, what)
    secret = password(acct.name)
    home = home_facts(acct)
    can = login(acct, secret)
    taken = sample(SAMPLE_SECONDS)
    own = own_tree(ctx.self_pids)
    mine = [p for p in taken.procs if p.get("username") == acct.name]
    total = next(iter(per_user(mine, own, with_pss=True)), None)
    memory = psutil.virtual_memory().total
    flags = account_flags(acct, secret, home)
    data: dict = {
        "user": acct.name, "uid": acct.uid, "exists": True, "full_name": acct.gecos.split(",")[0] or None,
        "primary_group": acct.groups()[0], "groups": acct.groups(),
        "home": home, "shell": acct.shell or "(none)",
        "password_state": secret.state, "account_expired": secret.expired, "can_log_in": can,
    }
    if total:
        data["processes"] = {"count": total.processes, "threads": total.threads,
                             "cpu_percent": units.pct(100.0 * total.cores / taken.cpu_count),
                             "memory_rss": units.size(total.rss), "memory_percent": units.pct(total.rss, memory),
                             "memory_pss": units.size(total.pss) if total.pss_missing < total.processes else "unreadable",
                             "largest": [_row(p, own) for p in _by_memory(mine, own)[:LISTED]]}
    else:
        data["processes"] = "none running"
    if any(p["pid"] in own for p in mine):
        data["appliance_processes_left_out"] = sum(p["pid"] in own for p in mine)
    data["sessions"] = sessions(acct.name) or "none logged in"
    data["crontab"] = f"present ({crontab(acct.name)})" if crontab(acct.name) else "none"
    running = f"{total.processes} process(es) running" if total else "no processes running"
    gist = f"cannot log in ({can[4:]})" if can.startswith("no: ") else f"can log in {can.removeprefix('yes, ')}"
    data = {"headline": f"user {acct.name} (uid {acct.uid}) {gist}; {running}", **data,
            "flags": flag_dicts(flags)}
    return ok(data)
