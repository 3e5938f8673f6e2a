"""Failed systemd units, from `systemctl --failed` (run as a fixed read-only program: no shell, no
pager, the system directories only). A machine without systemd gets an `unknown` verdict that says
so: there is nothing to check, which is not the same as nothing failed."""

from __future__ import annotations

from appliance.analyzers.base import OK, UNKNOWN, WARNING, Finding
from appliance.analyzers.common import plural, quote, run_program
from appliance.analyzers.readings import Readings

_NO_SYSTEMD = ("has not been booted with systemd", "failed to connect to bus", "host is down")


def parse_failed(output: str) -> list[dict]:
    """Rows of `systemctl --failed --no-legend --plain`: unit, load, active, sub, description."""
    rows = []
    for line in output.splitlines():
        parts = line.replace("●", " ").split(None, 4)
        if len(parts) >= 4 and "." in parts[0]:
            rows.append({"unit": parts[0], "load": parts[1], "active": parts[2], "sub": parts[3],
                         "description": parts[4] if len(parts) > 4 else ""})
    return rows


def failed_services(readings: Readings) -> list[Finding]:
    ran = run_program("systemctl", "--failed", "--no-legend", "--plain", "--no-pager", timeout=3.0)
    if ran is None:
        return [Finding("failed_services", UNKNOWN, "no systemd here (systemctl is not installed): no services to check",
                        {"systemd": False})]
    text = ran.output.strip()
    if ran.timed_out:
        return [Finding("failed_services", UNKNOWN, "systemctl --failed did not answer within 3 s", {"systemd": None})]
    if ran.exit_code != 0 and any(marker in text.lower() for marker in _NO_SYSTEMD):
        return [Finding("failed_services", UNKNOWN,
                        "systemd is not running on this machine (PID 1 is another init): no services to check",
                        {"systemd": False, "systemctl": quote(text, 120)})]
    if ran.exit_code != 0:
        return [Finding("failed_services", UNKNOWN, f"systemctl --failed failed: {quote(text, 160)}", {"systemd": None})]
    rows = parse_failed(text)
    if not rows:
        return [Finding("failed_services", OK, "no failed systemd units", {"failed": 0})]
    return [Finding("failed_services", WARNING,
                    f"{row['unit']} has failed ({row['active']}/{row['sub']}"
                    + (f", {quote(row['description'], 80)}" if row["description"] else "")
                    + f"); {plural(len(rows), 'failed unit')} in all; `journalctl -u {row['unit']}` tells why",
                    {"unit": row["unit"], "active": row["active"], "sub": row["sub"], "failed": len(rows)},
                    culprit=row["unit"]) for row in rows[:10]]
