"""Logs: the end of a log file or of the systemd journal, with the errors pulled out and counted.

A log can be gigabytes; the model sees at most a few thousand characters. So the tool reads only
the tail window, counts ERROR/WARN/FAIL lines there, groups repeated errors (numbers and hex ids
masked) so one noisy line does not hide the rest, and then shows the last matching lines.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
from collections import Counter
from typing import Annotated, Literal

from appliance.tools import units
from appliance.tools.base import EMPTY, ERROR, ok, fail, result, tool
from appliance.tools.context import ToolContext
from appliance.tools.files import looks_binary
from appliance.tools.paths import PathPolicy
from appliance.tools.redact import redact, redact_blocks
from appliance.tools.runner import find_program, run_capped
from appliance.tools.schema import Doc, MaxLen, Range

TAIL_BYTES = 2 * 1024 * 1024  # how much of the end of a file is scanned
DECOMPRESSED_LIMIT = 16 * 1024 * 1024  # a compressed log is read decompressed up to this much
# A rotated, compressed log by its first bytes (so a misnamed one is read too): Python's own readers.
_OPENERS = ((b"\x1f\x8b", "gzip", lambda f: gzip.GzipFile(fileobj=f)), (b"\xfd7zXZ\x00", "xz", lzma.LZMAFile), (b"BZh", "bzip2", bz2.BZ2File))
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
LINE_LIMIT = 300
TEXT_LIMIT = 5000  # characters of log lines in one result
JOURNAL_LINES = 3000
# A log by its name (app.log, app.log.1, app.err, syslog), or anything inside a log folder.
LOG_NAME = re.compile(r"\.log(?:\.\d+)?$|\.err$|\.out$|(?:^|/)(?:syslog|messages|journal)$", re.I)
LOG_FOLDER = re.compile(r"(?:^|/)logs?(?:/|$)", re.I)

ERROR_RE = re.compile(
    r"(?i)(?<![\w\-])(?:error|errors|err|fail|failed|failure|fatal|critical|crit|panic|emerg|alert|segfault|"
    r"oom|out of memory|killed process|traceback|exception|denied|refused|timed out|unreachable)(?![\w\-])"
)
WARN_RE = re.compile(r"(?i)(?<![\w\-])(?:warn|warning|warnings|deprecated|retrying|degraded)(?![\w\-])")
_MASK_RE = re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-fA-F]{8,}\b|\d+")
_STAMP_RE = re.compile(r"^(?:\S+\s+){0,2}\d{1,2}:\d{2}:\d{2}\S*\s+|^\d{4}-\d{2}-\d{2}[T ][\d:.,+\-Z]+\s+")
_UNIT_RE = re.compile(r"^[A-Za-z0-9@._:\-]{1,128}$")


# A level the line states itself ("INFO", "[error]", "level=warn", "<3>"): it wins over words in
# the message, so "INFO backup finished, 0 errors" is not an error line.
_STATED_LEVEL_RE = re.compile(
    # an upper-case level word (a lower-case "error" in the message is not a stated level) ...
    r"(?:^|[\s\[(<|])(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|CRIT|CRITICAL|FATAL|ALERT|EMERG|PANIC)"
    r"(?=[\s\]):>|,]|$)"
    # ... or a level field in any case
    r"|(?i:(?:level|severity|lvl)=\"?(trace|debug|info|notice|warn|warning|error|err|crit|critical|fatal|alert|"
    r"emerg|panic)\b)"
)
_STATED = {"trace": "", "debug": "", "info": "", "notice": "", "warn": "warning", "warning": "warning"}
# "0 errors", "no failures", "errors=0", "without errors": a count of none is not an error.
_NONE_RE = re.compile(
    r"(?i)\b(?:0|no|zero|without)\s+(?:errors?|failures?|warnings?|faults?)\b"
    r"|\b(?:errors?|failures?|failed|warnings?)\s*[=:]\s*0\b"
)


def is_log_path(path: str) -> bool:
    """A path a person would call a log: named like one, or inside a log folder."""
    return bool(LOG_NAME.search(path) or LOG_FOLDER.search(path))


def _stated_level(line: str) -> str | None:
    """The level the line itself states near its start (after a time stamp), if any: '' for
    trace/debug/info/notice, 'warning', 'error'. Upper-case words, or `level=`-style fields."""
    head = _STAMP_RE.sub("", line, count=1)[:48]
    match = _STATED_LEVEL_RE.search(head)
    if match is None:
        return None
    return _STATED.get((match.group(1) or match.group(2)).lower(), "error")


def level_of(line: str) -> str | None:
    """'error', 'warning' or None. A level the line states (INFO, ERROR, level=warn) decides; a
    line without one is judged by its words, with counts of none ("0 errors") taken out."""
    stated = _stated_level(line)
    if stated is not None:
        return stated or None
    words = _NONE_RE.sub(" ", line)
    if ERROR_RE.search(words):
        return "error"
    if WARN_RE.search(words):
        return "warning"
    return None


def error_key(line: str) -> str:
    """The line without its time stamp, numbers and hex ids: repeats of one error share it."""
    return _MASK_RE.sub("#", _STAMP_RE.sub("", line))[:160]


CONTEXT_LINES = 3  # lines before a line that are redacted with it: a value may begin on them


class _Shown:
    """Each line as it is shown: redacted with the lines just before it, so a secret that begins on
    an earlier line (an open quote, `password: |`) is still masked, and with the line after it, so
    the first half of a token split across two lines is too. Cached: a line is redacted once."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.cache: dict[int, str] = {}

    def __getitem__(self, index: int) -> str:
        if index not in self.cache:
            start = max(0, index - CONTEXT_LINES)
            window = self.lines[start:index + 2]
            shown = redact("\n".join(window)).split("\n")
            if len(shown) == len(window):
                self.cache[index] = shown[index - start]
            else:  # a pass joined lines: judge the line with the ones before it only
                self.cache[index] = redact("\n".join(self.lines[start:index + 1])).rpartition("\n")[2]
        return self.cache[index]


def summarise(lines: list[str], *, want: int, pattern: str, level: str) -> dict:
    """Counts, repeated errors and the last `want` lines that match `pattern` and `level`.

    `pattern` is matched against the lines as shown (redacted), never the raw text, so it cannot
    confirm a guessed secret: a raw line that contains the text is kept only if its redacted form
    still does."""
    needles = [part.strip() for part in pattern.lower().split("|") if part.strip()]  # "a|b": either
    shown = _Shown(lines)
    counts: Counter[str] = Counter()
    repeated: Counter = Counter()
    example: dict[str, int] = {}
    selected: list[int] = []
    for index, line in enumerate(lines):
        kind = level_of(line)
        if kind:
            counts[kind] += 1
        if kind == "error":
            key = error_key(line)
            repeated[key] += 1
            example[key] = index
        if level == "error" and kind != "error" or level == "warning" and kind is None:
            continue
        if needles:
            lowered = line.lower()
            if not any(needle in lowered for needle in needles):
                continue
            redacted = shown[index].lower()
            if not any(needle in redacted for needle in needles):
                continue
        selected.append(index)
    out: list[str] = []
    budget = TEXT_LIMIT
    for index in reversed(selected[-want:]):
        clipped = units.clip(shown[index], LINE_LIMIT)  # redacted before clipping: no half secrets
        if budget - len(clipped) < 0:
            break
        budget -= len(clipped)
        out.append(clipped)
    out.reverse()
    return {
        "lines_scanned": len(lines),
        "counts": {"error": counts["error"], "warning": counts["warning"]},
        "top_errors": [
            {"count": n, "example": units.clip(shown[example[key]], LINE_LIMIT)} for key, n in repeated.most_common(5)
        ],
        "matching_lines": len(selected),
        "lines": out,
        **({"lines_omitted": len(selected) - len(out)} if len(selected) > len(out) else {}),
    }


def tail_lines(policy: PathPolicy, path: str, tail_bytes: int = TAIL_BYTES) -> tuple[list[str], dict]:
    """The lines of the last `tail_bytes` of a log (of a gzip, xz or bzip2 one, decompressed, of its first
    DECOMPRESSED_LIMIT), through the path policy, private key blocks redacted; and where they came from.
    Raises NotText for a binary file and what the policy raises (PathDenied, FileNotFoundError, IsADirectoryError)."""
    fd, real, st = policy.open_file(path)
    compression = ""
    with os.fdopen(fd, "rb") as handle:
        head = handle.read(6)
        handle.seek(0)
        opener = next(((name, make) for magic, name, make in _OPENERS if head.startswith(magic)), None)
        if head.startswith(_ZSTD_MAGIC):
            raise NotText(f"{path} is zstd-compressed, and no zstd reader is installed (run_readonly cannot decompress it either)")
        if opener is not None:
            compression, make = opener
            try:
                raw = make(handle).read(DECOMPRESSED_LIMIT + 1)
            except (OSError, EOFError, lzma.LZMAError) as exc:
                raise NotText(f"{path} is {compression}-compressed but cannot be decompressed ({exc})") from None
            window = raw[-tail_bytes:]
            cut = len(raw) > tail_bytes
        else:
            start = max(0, st.st_size - tail_bytes)
            if start:
                handle.seek(start)
            window = handle.read(tail_bytes)
            cut = start > 0
    if looks_binary(window[:8192]):
        raise NotText(f"{path} is a binary file; for the systemd journal use path 'journal'")
    text = window.decode("utf-8", errors="replace")
    if cut:
        text = text.partition("\n")[2]  # the first line of the window is probably cut in half
    lines = redact_blocks(text).splitlines()  # a key block whose BEGIN fell before the window is still masked
    source = {"path": str(real), "size": units.size(st.st_size), "modified": units.when(st.st_mtime)}
    if compression:
        source["compression"] = f"{compression}, read decompressed" + (
            f" (its first {units.size(DECOMPRESSED_LIMIT)} only)" if len(raw) > DECOMPRESSED_LIMIT else "")
    if cut:
        source["scanned"] = f"last {units.size(tail_bytes)} only" + (" of what was decompressed" if compression else "")
    return lines, source


class NotText(Exception):
    """The file is binary, not a text log."""


def _journal(ctx: ToolContext, unit: str, level: str) -> tuple[list[str], dict] | dict:
    program = find_program("journalctl")
    if program is None:
        return result(EMPTY, None, "this machine has no systemd journal (journalctl not found); read files under /var/log instead")
    argv = [program, "--no-pager", "--quiet", "-o", "short-iso", "-n", str(JOURNAL_LINES)]
    if unit:
        if not _UNIT_RE.match(unit) or unit.startswith("-"):
            return fail(f"{unit!r} is not a valid unit name", ERROR)
        argv += ["-u", unit]
    if level in ("error", "warning"):
        argv += ["-p", "err" if level == "error" else "warning"]
    ran = run_capped(argv, timeout=ctx.command_timeout, cap=4 * 1024 * 1024)
    if ran.timed_out:
        return fail(f"journalctl did not finish within {ctx.command_timeout:.0f} s", ERROR)
    lines = [line for line in redact_blocks(ran.output).splitlines()
             if line.strip() and not line.startswith("-- ") and line != "No journal files were found."]
    if ran.exit_code not in (0, None) and not lines:
        return fail(f"journalctl failed: {units.clip(ran.output.strip(), 200)}", ERROR)
    return lines, {"source": "systemd journal" + (f", unit {unit}" if unit else "")}


@tool(reads="log", ttl=10.0, timeout=20.0, example={"path": "/var/log/syslog", "lines": 30, "level": "error"},
      first_for=("oom", "log_errors"), also_for=("failed_services",))
def read_log(
    ctx: ToolContext,
    path: Annotated[str, MaxLen(512), Doc("log file path, 'journal', or 'journal:UNIT' (e.g. journal:nginx.service)")] = "journal",
    lines: Annotated[int, Range(1, 200), Doc("how many lines to show")] = 40,
    pattern: Annotated[str, MaxLen(100), Doc("only lines containing this text (case-insensitive; a|b = either)")] = "",
    level: Annotated[Literal["any", "warning", "error"], Doc("only lines at this level or worse")] = "any",
) -> dict:
    """The end of a log file or the systemd journal, with counts of ERROR/WARN/FAIL lines and the most repeated errors.
    Use for "why did X fail/crash" (level error shows only the error lines). Not for config files (use read_file)."""
    spec = path.strip()
    if spec == "journal" or spec.startswith("journal:"):
        got = _journal(ctx, spec.partition(":")[2].strip(), level)
        if isinstance(got, dict):
            return got
        all_lines, source = got
    else:
        try:
            all_lines, source = tail_lines(ctx.policy, spec)
        except NotText as exc:
            return fail(str(exc), ERROR)
    data = {**source, **summarise(all_lines, want=lines, pattern=pattern, level=level)}
    if not all_lines:
        empty = "the journal has no matching entries (journald may not be running or keeping logs here)" \
            if "source" in source else "the log is empty"
        return result(EMPTY, data, empty)
    if not data["lines"]:
        what = " and ".join(filter(None, [f"containing {pattern!r}" if pattern else "", f"at level {level}" if level != "any" else ""]))
        return result(EMPTY, data, f"no lines {what} in the scanned part of the log")
    return ok(data)
