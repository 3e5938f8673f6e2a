"""Error bursts in logs (the newest files under /var/log, and the systemd journal), each named by
its file, its count and its cause line; and the same reading for a log file or folder a person
names (`analyze_log_path`).

Levels are read as `read_log` reads them (appliance.tools.logs.level_of): a level the line states
wins ("INFO backup done, 0 errors" is no error), counts of none are no errors.
A burst is the newest run of error lines in the scanned tail, errors at most GAP_LINES lines apart;
its cause is the burst's first error line (what went wrong first; the lines after it are most
often its consequences). Text in logs is untrusted data: it is counted and quoted, never obeyed.
Thresholds: docs/analyzers.md.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from pathlib import Path
from typing import Any

from appliance.analyzers.base import OK, UNKNOWN, WARNING, Finding
from appliance.analyzers.common import plural, quote, run_program
from appliance.analyzers.readings import Readings
from appliance.tools.logs import NotText, error_key, level_of, tail_lines
from appliance.tools.paths import PathDenied

BURST_ERRORS = 5  # error lines in one burst for a warning
GAP_LINES = 50  # error lines further apart than this belong to different bursts
SCAN_LINES = 4000  # the newest lines of each file that are judged
TAIL_BYTES = 512 * 1024
NEWEST_FILES = 8  # files per folder, newest first
RECENT_FILE_SECONDS = 24 * 3600  # /var/log files modified longer ago are not "now"
MAX_DEPTH = 2
JOURNAL_SINCE = "-1h"
_SKIP_SUFFIXES = (".gz", ".xz", ".bz2", ".zst", ".lz4", ".old")
_SKIP_NAMES = {"wtmp", "btmp", "lastlog", "faillog", "journal", "private"}


def judge_lines(lines: list[str]) -> dict:
    """Counts, the newest burst, its cause line and the most repeated error, over the newest lines."""
    lines = lines[-SCAN_LINES:]
    errors, warnings = [], 0
    for index, line in enumerate(lines):
        level = level_of(line)
        if level == "error":
            errors.append(index)
        elif level == "warning":
            warnings += 1
    burst = errors[-1:]
    for index in reversed(errors[:-1]):
        if burst[0] - index > GAP_LINES:
            break
        burst.insert(0, index)
    keys = {i: error_key(lines[i]) for i in errors}
    repeated = Counter(keys.values())
    out: dict[str, Any] = {"lines_scanned": len(lines), "errors": len(errors), "warnings": warnings, "burst": len(burst)}
    if burst:
        out["cause"] = quote(lines[burst[0]])
        out["cause_lines_from_end"] = len(lines) - burst[0]
        out["last_error"] = quote(lines[burst[-1]])
        key, count = repeated.most_common(1)[0]
        if count > 1:
            example = next(lines[i] for i in errors if keys[i] == key)
            out["most_repeated"] = {"count": count, "example": quote(example)}
    return out


def _finding(where: str, judged: dict, path: str | None, *, named: bool = False) -> Finding:
    """named: the person named this log, so any error line in it is the finding (on a machine-wide
    scan only a burst is: old single errors in /var/log are noise there)."""
    scanned = f"{judged['lines_scanned']} lines scanned"
    if not judged["errors"]:
        return Finding("log_errors", OK, f"{where}: no error lines ({scanned}, {plural(judged['warnings'], 'warning')})",
                       judged, path=path)
    repeated = judged.get("most_repeated")
    tail = f"; most repeated ({repeated['count']}×): «{repeated['example']}»" if repeated else ""
    if judged["burst"] >= BURST_ERRORS or named:
        return Finding("log_errors", WARNING,
                       f"{where}: {_errors_phrase(judged)} ({judged['errors']} in {scanned}); "
                       f"it starts with: «{judged['cause']}»{tail}", judged, culprit=path or where, path=path)
    return Finding("log_errors", OK,
                   f"{where}: {plural(judged['errors'], 'error line')}, no burst ({scanned}); "
                   f"the first of the newest: «{judged['cause']}»", judged, path=path)


def _errors_phrase(judged: dict) -> str:
    burst = judged["burst"]
    return f"a burst of {burst} error lines" if burst >= BURST_ERRORS else f"{plural(burst, 'error line')} in the newest run"


def _read_file(readings: Readings, path: str, *, named: bool = False) -> Finding:
    try:
        lines, source = tail_lines(readings.policy, path, TAIL_BYTES)
    except (PathDenied, OSError, NotText) as exc:
        return Finding("log_errors", UNKNOWN, f"cannot read {path}: {quote(str(exc), 200)}", {}, path=path)
    judged = judge_lines(lines)
    judged["modified"] = source.get("modified")
    return _finding(source["path"], judged, source["path"], named=named)


def newest_logs(readings: Readings, folder: str, *, since: float | None = None) -> list[str]:
    """The NEWEST_FILES most recently modified text logs under `folder` (depth MAX_DEPTH), skipping
    compressed, rotated-binary and secret files; only those modified after `since` if given."""
    root = readings.policy.resolve(folder, "read")
    found: list[tuple[float, str]] = []
    pending = [(str(root), 0)]
    while pending:
        directory, depth = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            full = os.path.join(directory, entry.name)
            if entry.name in _SKIP_NAMES or entry.name.endswith(_SKIP_SUFFIXES) or readings.policy.is_secret(Path(full)):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode) and depth < MAX_DEPTH:
                pending.append((full, depth + 1))
            elif stat.S_ISREG(st.st_mode) and st.st_size > 0 and (since is None or st.st_mtime >= since):
                found.append((st.st_mtime, full))
    return [path for _mtime, path in sorted(found, reverse=True)[:NEWEST_FILES]]


def analyze_log_path(path: str, readings: Readings) -> list[Finding]:
    """The error summary of a log file, or of a folder's newest logs (newest first), with cause
    lines; an `unknown` finding when the path cannot be read. Problems first."""
    try:
        real = readings.policy.resolve(path, "read")
    except PathDenied as exc:
        return [Finding("log_errors", UNKNOWN, quote(str(exc), 240), {}, path=path)]
    if not real.is_dir():
        return [_read_file(readings, str(real), named=True)]
    files = newest_logs(readings, str(real))
    if not files:
        return [Finding("log_errors", OK, f"{real}: no log files in it", {"files": 0}, path=str(real))]
    found = [_read_file(readings, f, named=True) for f in files]
    with_errors = [f for f in found if f.values.get("errors")]
    if with_errors:
        return sorted(with_errors, key=lambda f: f.severity != WARNING)
    read = [os.path.basename(f.path or "") for f in found if f.severity == OK]
    unread = [os.path.basename(f.path or "") for f in found if f.severity != OK]
    return [Finding("log_errors", OK, f"{real}: no error lines in its {plural(len(read), 'newest log')} "
                    f"({', '.join(read) or 'none'})" + (f"; not text logs: {', '.join(unread)}" if unread else ""),
                    {"files": len(read), "unreadable": len(unread)}, path=str(real))]


def _journal() -> Finding | None:
    """err-or-worse journal entries of the last hour; None when there is no journal to read."""
    ran = run_program("journalctl", "--no-pager", "--quiet", "-o", "short-iso", "-p", "err",
                      f"--since={JOURNAL_SINCE}", "-n", "2000", timeout=3.0, cap=2 * 1024 * 1024)
    if ran is None or ran.timed_out:
        return None
    lines = [line for line in ran.output.splitlines()
             if line.strip() and not line.startswith("-- ") and "No journal files were found" not in line]
    if not lines:
        return None
    judged = {"lines_scanned": len(lines), "errors": len(lines), "warnings": 0, "burst": len(lines),
              "cause": quote(lines[0]), "last_error": quote(lines[-1])}
    if len(lines) >= BURST_ERRORS:
        return Finding("log_errors", WARNING, f"the journal has {len(lines)} error entries in the last hour; "
                       f"the first: «{judged['cause']}»", judged, culprit="journal")
    return Finding("log_errors", OK, f"the journal has {plural(len(lines), 'error entry', 'error entries')} "
                   f"in the last hour, no burst; the first: «{judged['cause']}»", judged)


def log_errors(readings: Readings) -> list[Finding]:
    try:
        files = newest_logs(readings, "/var/log", since=readings.now - RECENT_FILE_SECONDS)
    except (PathDenied, OSError):
        files = []
    found = [_read_file(readings, f) for f in files]
    journal = _journal()
    problems = [f for f in found + ([journal] if journal else []) if f.severity == WARNING]
    if problems:
        return problems
    noted = [f.verdict for f in found if f.values.get("errors")] + ([journal.verdict] if journal else [])
    names = ", ".join(os.path.basename(f) for f in files) or "none"
    return [Finding("log_errors", OK,
                    f"no error bursts in the {plural(len(files), 'log')} under /var/log modified in the last 24 h "
                    f"({names}); journal: {'read' if journal else 'no entries in the last hour'}"
                    + ("; " + "; ".join(noted[:3]) if noted else ""),
                    {"files": len(files), "journal": bool(journal)})]
