"""`appliance check`: every analyzer over one reading of this machine, without a model; with a
THING (a path, pid or name), that thing's profile instead (commands/check_thing.py).

The analyzers are imported only for the plain check (a THING needs the tools alone): importing
them all costs a third of a second that `check THING`, asked to answer within one, cannot spare.

Prints one line per finding, worst first (ok lines last, dimmed on a terminal), or a JSON object
with `--json`; exits 0 when all is well, 1 on a warning, 2 on a critical finding, so cron jobs and
monitoring can use it as it is. A wrong argument is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import sys
import time

from appliance.commands import check_thing
from appliance.commands.common import add_common_options
from appliance.errors import UsageError, terminal_json

TIMEOUT = 1.8  # seconds for all analyzers together: the check must answer within 2 s
_DIM, _RESET = "\x1b[2m", "\x1b[0m"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check", help="run every analyzer (no model) and print the findings, worst first",
        description="Check this machine for the common faults (CPU, memory, disks, ...) without a model. "
                    "Exit status: 0 ok, 1 warning, 2 critical.")
    add_common_options(parser)
    parser.add_argument("thing", nargs="?", default="", metavar="THING",
                        help="check only this: a path, a pid, a user, a process or program name (its profile and flags)")
    parser.add_argument("--json", action="store_true", help="print a JSON object (findings, worst, exit_status)")
    parser.add_argument("--allow-path", action="append", default=[], metavar="DIR",
                        help="with THING: also allow reading under DIR (repeatable)")
    parser.add_argument("--family", action="append", default=[], metavar="NAME",
                        help="check only this family (repeatable; a name that is none lists them all)")
    parser.set_defaults(handler=cmd_check)


def _families(asked: list[str]) -> list[str] | None:
    from appliance.analyzers import ANALYZERS

    known = [a.family for a in ANALYZERS]
    unknown = [name for name in asked if name not in known]
    if unknown:
        raise UsageError(f"unknown family {unknown[0]!r}; the families are: {', '.join(known)}")
    return list(dict.fromkeys(asked)) or None


def cmd_check(args: argparse.Namespace) -> int:
    if args.thing:
        return check_thing.show_thing(args.thing, args.json, args.allow_path)
    return _check_all(args)


def _check_all(args: argparse.Namespace) -> int:
    from appliance.analyzers import OK, UNKNOWN, Readings, by_severity, exit_status, run_all, worst

    families = _families(args.family)
    started = time.monotonic()
    findings = by_severity(run_all(Readings(), families=families, timeout=TIMEOUT))
    seconds = round(time.monotonic() - started, 2)
    status = exit_status(findings)
    if args.json:
        print(terminal_json({"worst": worst(findings), "exit_status": status, "seconds": seconds,
                          "findings": [f.as_dict() for f in findings]}, indent=2))
        return status
    dim = sys.stdout.isatty()
    for finding in findings:
        quiet = dim and finding.severity in (OK, UNKNOWN)
        print(f"{_DIM}{finding.line()}{_RESET}" if quiet else finding.line())
    counts = {s: sum(f.severity == s for f in findings) for s in ("critical", "warning", "unknown", "ok")}
    shown = [f"{n} {s}{'s' if s == 'warning' and n > 1 else ''}" for s, n in counts.items() if n]
    print("verdict: " + (", ".join(shown) or "no findings") + f" ({seconds:g} s)")
    return status
