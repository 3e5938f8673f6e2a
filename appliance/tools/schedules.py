"""Scheduled jobs: cron tables (the system's and every user's) and systemd timers.

Cron lines are parsed, not run: schedule, user and command (redacted through `shown_command`).
Timers come from `systemctl list-timers --all` (on the read-only allow-list) when systemd runs, and
from their unit files when it does not. The readers take the root they read under, so a test can
give them a tree of its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import psutil

from appliance.tools.base import ok, tool
from appliance.tools.commands import run_allowed
from appliance.tools.context import ToolContext
from appliance.tools.shown import shown_command

FILE_LIMIT = 128 * 1024
MAX_FILES = 200
JOBS_SHOWN = 60
PERIODIC = ("hourly", "daily", "weekly", "monthly")
USER_TABLES = ("var/spool/cron/crontabs", "var/spool/cron")  # Debian, then Red Hat
TIMER_DIRS = ("etc/systemd/system", "usr/lib/systemd/system", "lib/systemd/system")
CRON_DAEMONS = frozenset({"cron", "crond", "cronie", "anacron", "busybox-crond", "fcron", "dcron"})
_KEYWORDS = {"@reboot", "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}


@dataclass(frozen=True)
class CronJob:
    """One cron line: the table it is in, its schedule, the user it runs as, and its command
    (raw: shown only through `shown`)."""

    table: str
    schedule: str
    user: str
    command: str

    def shown(self) -> dict:
        return {"table": self.table, "schedule": self.schedule, "user": self.user,
                "command": shown_command(self.command)}


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(FILE_LIMIT)
    except OSError:
        return None


def parse_table(text: str, table: str, owner: str | None) -> list[CronJob]:
    """The jobs of one crontab; `owner` is the user of a user's table (system tables name the user
    in their sixth field)."""
    jobs = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        words = line.split()
        first = words[0]
        if "=" in first and not first.startswith(("@", "*")) and not first[0].isdigit():
            continue  # an environment setting (MAILTO=..., PATH=...)
        width = 1 if first in _KEYWORDS else 5
        if len(words) <= width + (0 if owner else 1):
            continue
        user = owner or words[width]
        rest = words[width + (0 if owner else 1):]
        jobs.append(CronJob(table, " ".join(words[:width]), user, " ".join(rest)))
    return jobs


def cron_jobs(root: Path = Path("/")) -> tuple[list[CronJob], list[str], list[str]]:
    """(jobs, tables read, problems) over /etc/crontab, /etc/cron.d and the users' tables."""
    jobs: list[CronJob] = []
    tables: list[str] = []
    problems: list[str] = []
    system = [root / "etc/crontab"]
    cron_d = root / "etc/cron.d"
    if cron_d.is_dir():
        system += sorted(p for p in cron_d.iterdir() if not p.name.startswith(".") and p.is_file())[:MAX_FILES]
    for path in system:
        text = _read(path)
        if text is not None:
            tables.append("/" + str(path.relative_to(root)))
            jobs += parse_table(text, tables[-1], None)
    for relative in USER_TABLES:
        folder = root / relative
        try:
            entries = sorted(os.listdir(folder))[:MAX_FILES]
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"/{relative} cannot be listed ({exc.strerror})")
            continue
        for user in entries:
            path = folder / user
            if not path.is_file():
                continue
            text = _read(path)
            if text is None:
                problems.append(f"/{relative}/{user} cannot be read")
                continue
            tables.append(f"/{relative}/{user}")
            jobs += parse_table(text, tables[-1], user)
    return jobs, tables, problems


def periodic_scripts(root: Path = Path("/")) -> dict[str, list[str]]:
    """The scripts in /etc/cron.hourly, daily, weekly and monthly (run by run-parts or anacron)."""
    found = {}
    for period in PERIODIC:
        try:
            names = sorted(n for n in os.listdir(root / f"etc/cron.{period}") if not n.startswith("."))
        except OSError:
            continue
        found[period] = names[:MAX_FILES]
    return found


def cron_daemon() -> str | None:
    """The name of a running cron daemon, or None."""
    for proc in psutil.process_iter(["name"]):
        if (proc.info.get("name") or "") in CRON_DAEMONS:
            return proc.info["name"]
    return None


def systemd_running(root: Path = Path("/")) -> bool:
    return (root / "run/systemd/system").is_dir()


def timer_units(root: Path = Path("/")) -> list[dict]:
    """Timer unit files and their schedules (OnCalendar=, OnBootSec=, ...), for a system where systemd
    does not run or cannot be asked."""
    rows = []
    for relative in TIMER_DIRS:
        try:
            names = sorted(n for n in os.listdir(root / relative) if n.endswith(".timer"))[:MAX_FILES]
        except OSError:
            continue
        for name in names:
            text = _read(root / relative / name) or ""
            when = [line.strip() for line in text.splitlines() if line.strip().startswith("On")]
            rows.append({"unit": name, "file": f"/{relative}/{name}", "schedule": "; ".join(when) or "?"})
    return rows


_COLUMNS = ("NEXT", "LEFT", "LAST", "PASSED", "UNIT", "ACTIVATES")


def parse_list_timers(text: str) -> list[dict]:
    """`systemctl list-timers --all` as rows (next, left, last, passed, timer, activates), cut at
    the header's column positions (the times themselves hold spaces)."""
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if line.split()[:1] == ["NEXT"] and "ACTIVATES" in line), None)
    if header is None:
        return []
    starts = [lines[header].find(name) for name in _COLUMNS]
    if any(s < 0 for s in starts):
        return []
    rows = []
    for line in lines[header + 1:]:
        if not line.strip() or "timers listed" in line:
            break
        cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [len(line)])]
        words = line.split()
        if len(words) >= 2 and words[-2].endswith(".timer"):  # the unit names never hold spaces: trust them
            cells[4], cells[5] = words[-2], words[-1]
        rows.append(dict(zip(("next", "left", "last", "passed", "timer", "activates"), cells)))
    return rows


def failed_units(text: str) -> set[str]:
    """The unit names `systemctl --failed` lists."""
    names = set()
    for line in text.splitlines():
        words = line.replace("●", " ").split()
        if words and "." in words[0] and not words[0].endswith("."):
            names.add(words[0])
    return names


def timers(timeout: float) -> dict:
    """The timers systemd knows, with last and next run and whether the unit they start failed, or
    why they cannot be listed."""
    if not systemd_running():
        units = timer_units()
        return {"systemd": "not running here (no /run/systemd/system): timers do not fire",
                "timer_unit_files": units[:JOBS_SHOWN] or "none"}
    ran = run_allowed("systemctl list-timers --all", timeout)
    rows = parse_list_timers(ran.output) if ran is not None and ran.exit_code == 0 else []
    if not rows:
        return {"systemd": "running, but its timers could not be listed" if ran is None or ran.exit_code != 0
                else "running, no timers", "timer_unit_files": timer_units()[:JOBS_SHOWN] or "none"}
    failed_run = run_allowed("systemctl --failed", timeout)
    failed = failed_units(failed_run.output) if failed_run is not None else set()
    for row in rows:
        row["result"] = "failed" if row["activates"] in failed else (
            "never run" if row["last"] in ("n/a", "-", "") else "not failed")
    return {"systemd": "running", "timers": [{k: shown_command(v, 80) for k, v in r.items()} for r in rows[:JOBS_SHOWN]]}


@tool(reads="system", ttl=10.0, timeout=15.0, first_for=("scheduled_jobs",))
def scheduled_jobs(ctx: ToolContext) -> dict:
    """Cron jobs (schedule, user, command) and systemd timers with their last and next run."""
    jobs, tables, problems = cron_jobs()
    daemon = cron_daemon()
    data: dict = {
        "cron_daemon": daemon or "none running: cron jobs do not run",
        "cron_tables": tables or "none",
        "cron_jobs": [job.shown() for job in jobs[:JOBS_SHOWN]] or "none",
        "periodic_scripts": periodic_scripts() or "none",
    }
    if len(jobs) > JOBS_SHOWN:
        data["cron_jobs_not_shown"] = len(jobs) - JOBS_SHOWN
    if problems:
        data["unreadable"] = problems
    data.update(timers(min(10.0, ctx.command_timeout)))
    return ok(data)
