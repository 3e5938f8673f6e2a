"""Scheduled jobs that cannot run: cron jobs whose program does not exist or cannot be executed, and
users' crontabs with no cron daemon running, systemd timers whose unit failed. The ok verdict names
the jobs that run every minute (a fact, not a fault: a busy job started every minute is what
"something starts every minute and slows everything down" asks about). Thresholds:
docs/analyzers.md, `scheduled_jobs`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from appliance.analyzers.base import OK, WARNING, Analyzer, Finding
from appliance.analyzers.common import plural, quote
from appliance.analyzers.readings import Readings
from appliance.tools import schedules
from appliance.tools.shown import shown_command

_SHELL_WORDS = {"test", "[", "cd", "if", "export", "exec", "nice", "ionice", "flock", "timeout", "env", "sudo"}


def _program(command: str) -> str | None:
    """The absolute program a cron command starts, when it names one plainly."""
    for word in command.split():
        if "=" in word and not word.startswith("/"):
            continue  # VAR=value before the program
        return word if word.startswith("/") and word not in _SHELL_WORDS else None
    return None


EVERY_MINUTE_SHOWN = 3


def every_minute(schedule: str) -> bool:
    """A five-field schedule that fires every minute ("* * * * *", "*/1 * * * *")."""
    fields = schedule.split()
    return len(fields) == 5 and fields[0] in ("*", "*/1") and all(f == "*" for f in fields[1:])


def judge(root: Path = Path("/"), daemon: str | None = None, timers: Sequence[dict] = ()) -> list[Finding]:
    """The verdicts over the cron tables under `root`; `daemon` is the running cron daemon's name,
    `timers` systemd's (`schedules.timers`' rows, with their result)."""
    jobs, tables, _problems = schedules.cron_jobs(root)
    findings = []
    for timer in timers:
        if timer.get("result") == "failed":
            findings.append(Finding("scheduled_jobs", WARNING,
                                    f"the timer {quote(timer['timer'], 80)} last ran {quote(timer['last'], 40)} and "
                                    f"the unit it starts, {quote(timer['activates'], 80)}, failed",
                                    dict(timer), culprit=timer["activates"]))
    for job in jobs:
        program = _program(job.command)
        if program is None:
            continue
        real = root / program.lstrip("/")
        if not real.exists():
            why = "does not exist"
        elif not os.access(real, os.X_OK) or real.is_dir():
            why = "is not executable"
        else:
            continue
        findings.append(Finding("scheduled_jobs", WARNING,
                                f"the cron job '{job.schedule} {shown_command(job.command, 100)}' in {job.table} "
                                f"(runs as {quote(job.user, 40)}) fails every time: {quote(program, 120)} {why}",
                                {"table": job.table, "schedule": job.schedule, "user": job.user, "program": program},
                                culprit=program, path=job.table))
    users = sorted({job.table for job in jobs if job.table.startswith("/var/spool/")} |
                   {job.table for job in jobs if job.table == "/etc/crontab"})
    if users and daemon is None:
        findings.append(Finding("scheduled_jobs", WARNING,
                                f"no cron daemon is running, so the jobs in {', '.join(users)} never run",
                                {"tables": users}, culprit="cron"))
    if findings:
        return findings
    periodic = schedules.periodic_scripts(root)
    busy = [job for job in jobs if every_minute(job.schedule)]
    minute = ("; every minute: " + ", ".join(f"'{shown_command(j.command, 100)}' ({j.table}, as {quote(j.user, 40)})"
                                             for j in busy[:EVERY_MINUTE_SHOWN])
              + (f" and {len(busy) - EVERY_MINUTE_SHOWN} more" if len(busy) > EVERY_MINUTE_SHOWN else "")) if busy else ""
    return [Finding("scheduled_jobs", OK,
                    f"{plural(len(jobs), 'cron job')} in {plural(len(tables), 'table')}, every program found; "
                    f"periodic scripts: {sum(len(v) for v in periodic.values())}; cron daemon: "
                    f"{daemon or 'none running'}{minute}",
                    {"jobs": len(jobs), "tables": tables, "daemon": daemon,
                     "every_minute": [j.shown() for j in busy[:EVERY_MINUTE_SHOWN]]})]


def analyze(readings: Readings) -> list[Finding]:
    timers = schedules.timers(5.0).get("timers", []) if schedules.systemd_running() else []
    return judge(daemon=schedules.cron_daemon(), timers=timers if isinstance(timers, list) else [])


ANALYZER = Analyzer("scheduled_jobs", ("cron", "crontab", "cronjob", "cron job", "scheduled", "schedule", "timer",
                                       "timers", "nightly", "every night", "every hour", "at night", "periodic",
                                       "job didn't run", "job did not run", "every minute", "every few minutes",
                                       "once a minute"), analyze)
