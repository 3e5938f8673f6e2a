"""A fixed allow-list of read-only commands, for what the other tools do not cover.

The list is data, validated in code: the command is split without a shell, must match one
allowed form token by token (placeholders such as UNIT and N have their own patterns), and runs
from an absolute path in a system directory (see runner.py). Anything else is refused with the
list of what is allowed, so the model can pick a valid form on its next step.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Annotated

from appliance.tools import units
from appliance.tools.base import DENIED, ERROR, OK, fail, result, tool
from appliance.tools.context import ToolContext
from appliance.tools.kernel_tables import not_loaded
from appliance.tools.redact import redact
from appliance.tools.runner import TRUSTED_DIRS, Ran, find_program, run_capped
from appliance.tools.schema import Doc, MaxLen

OUTPUT_CAP_BYTES = 256 * 1024
OUTPUT_SHOWN = 6000

# Matched whole (fullmatch: `$` would let a trailing newline through) and only on ASCII text (`\d`
# would take other scripts' digits, which the programs then refuse).
PLACEHOLDERS = {
    "UNIT": re.compile(r"[A-Za-z0-9][A-Za-z0-9@._:\-]{0,127}"),
    "N": re.compile(r"(?:[1-9][0-9]?|[1-4][0-9][0-9]|500)"),  # 1-500
}


def _fits(placeholder: str, token: str) -> bool:
    return token.isascii() and not token.startswith("-") and PLACEHOLDERS[placeholder].fullmatch(token) is not None

ALLOWED: tuple[str, ...] = (
    "uname -a", "uptime", "nproc", "lscpu", "lsblk", "lsblk -f", "df -h", "df -i", "free -m", "free -h",
    "findmnt", "ip -br addr", "ip -br link", "ip route", "ip -s link", "ss -tulpn", "ss -s", "ss -tnp",
    "systemctl --failed", "systemctl status UNIT", "systemctl is-active UNIT", "systemctl is-enabled UNIT",
    "systemctl list-units --type=service --state=running", "systemctl list-timers",
    "journalctl -p err -n N", "journalctl -p warning -n N", "journalctl -u UNIT -n N", "journalctl -k -n N",
    "journalctl -b -1 -p err -n N", "dmesg --level=err,warn", "who", "last -n N", "timedatectl", "hostnamectl",
    "python3 --version", "git --version", "docker --version", "podman --version", "node --version",
    "openssl version", "nginx -v", "apache2 -v", "httpd -v", "psql --version", "postgres --version",
    "mysql --version", "java -version", "gcc --version", "curl --version", "systemctl --version",
    "kubectl version --client",
    # Firewall rules and timers: listings only (iptables -S prints rules, it never adds one; it runs
    # only when its kernel tables exist, since listing could load a module: kernel_tables.py).
    "nft list ruleset", "iptables -S", "ip6tables -S", "systemctl list-timers --all",
)
# Options added to every run of these programs so they never wait for a pager.
_ALWAYS = {"systemctl": ["--no-pager"], "journalctl": ["--no-pager"]}
_TAIL_FIRST = {"journalctl", "dmesg", "last"}  # for these the newest lines are at the end


def _forms() -> list[list[str]]:
    return [form.split() for form in ALLOWED]


def match_allowed(command: str) -> list[str] | str:
    """The argv (program name first, not yet resolved) when `command` is an allowed form, else why not."""
    try:
        tokens = shlex.split(command)
    except ValueError as exc:
        return f"cannot parse the command ({exc})"
    if not tokens:
        return "empty command"
    program = tokens[0]
    if os.path.isabs(program):
        if os.path.dirname(program) not in TRUSTED_DIRS:
            return f"{program} is not in a system directory"
        tokens = [os.path.basename(program)] + tokens[1:]
    for form in _forms():
        if len(form) != len(tokens):
            continue
        if all(
            _fits(want, got) if want in PLACEHOLDERS else want == got
            for want, got in zip(form, tokens)
        ):
            return tokens
    return "not an allowed command"


def run_allowed(command: str, timeout: float) -> Ran | None:
    """One allowed command run as run_readonly runs it (for the tools that read through one);
    None when its program is not installed. Raises ValueError for a form not on the list."""
    argv = match_allowed(command)
    if isinstance(argv, str):
        raise ValueError(f"{command!r}: {argv}")
    path = find_program(argv[0])
    if path is None:
        return None
    return run_capped([path, *_ALWAYS.get(argv[0], []), *argv[1:]], timeout=timeout, cap=OUTPUT_CAP_BYTES)


@tool(reads="command", ttl=10.0, timeout=20.0, example={"command": "uname -a"},
      first_for=("failed_services", "kernel_errors", "clock"))
def run_readonly(
    ctx: ToolContext,
    command: Annotated[str, MaxLen(200), Doc("one allowed command, e.g. 'uname -a'")],
) -> dict:
    """Run one command from a fixed read-only allow-list (uname -a, lsblk, ip -br addr, ss -tulpn, systemctl --failed,
    systemctl status UNIT, journalctl -p err -n N, df -h, free -m, ...). Use only when no other tool gives the answer."""
    argv = match_allowed(command)
    if isinstance(argv, str):
        return fail(f"{argv}: {command!r}. Allowed: " + " | ".join(ALLOWED), DENIED)
    path = find_program(argv[0])
    if path is None:
        return fail(f"{argv[0]} is not installed on this machine", ERROR)
    unloaded = not_loaded(argv[0], path)
    if unloaded is not None:  # listing would change the kernel (load a module): said, not run
        return result(OK, {"command": " ".join(argv), "not_run": unloaded})
    full = [path, *_ALWAYS.get(argv[0], []), *argv[1:]]
    ran = run_capped(full, timeout=ctx.command_timeout, cap=OUTPUT_CAP_BYTES)
    text = redact(ran.output)  # before cutting, so no secret is shown half-way
    shown = text if len(text) <= OUTPUT_SHOWN else (
        "…" + text[-OUTPUT_SHOWN:] if argv[0] in _TAIL_FIRST else text[:OUTPUT_SHOWN] + "…"
    )
    data = {
        "command": " ".join(full),
        "exit_code": ran.exit_code,
        "seconds": round(ran.seconds, 2),
        "output": shown,
    }
    if len(text) > OUTPUT_SHOWN or ran.truncated:
        data["truncated"] = f"output was {units.size(len(text.encode()))}{'+' if ran.truncated else ''}; showing {'the end' if argv[0] in _TAIL_FIRST else 'the start'}"
    if ran.timed_out:
        return result(ERROR, data, f"{argv[0]} did not finish within {ctx.command_timeout:.0f} s and was stopped")
    if ran.exit_code != 0 and not text.strip():
        return result(ERROR, data, f"{argv[0]} exited with code {ran.exit_code} and printed nothing")
    return result(OK, data)
