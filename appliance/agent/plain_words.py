"""A reading's line as a person reads it: `mount=/ size="252.0 GiB" free="77.7 GiB" used_percent=23.4`
becomes "/ is 23.4 % full: 77.7 GiB free of 252.0 GiB".

Why its own step: the model reads the compact `key=value` lines the tools render (short, and the
claim checks find their numbers there); the person reads the same fact under "Evidence", where a
key name is noise. Every key the tools write is said through one table (`SAY`, by exact key, then
`SUFFIXES`, by ending), so a new tool key is one new row; a key in neither is said as its words,
never as `key=value`.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Callable

from appliance.tools.units import size

Pair = tuple[str, str]  # (key, value as written, unquoted); key "" is free text between pairs

_KEY = re.compile(r"([A-Za-z0-9][\w.@:+-]*)=")
_PROCESS = re.compile(r'\bpid=(\d+) name=("[^"]*"|\S+)')
_WORD = re.compile(r"[A-Za-z][\w-]*")
_VERDICT = re.compile(r"^\[(ok|unknown|warning|critical)\] [\w-]+: ")

EMPTY_PART = "(none)"  # how a reading shows a part that holds nothing (observe renders it)


def tokens(line: str) -> list[Pair]:
    """The line's pairs and the free text between them, in order. A quoted value is read whole (a
    command line's own `A=1` is part of its value), a `[a, b]` list too."""
    out: list[Pair] = []
    at, text = 0, ""
    while at < len(line):
        match = _KEY.match(line, at) if at == 0 or line[at - 1] == " " else None
        if match is None:
            text += line[at]
            at += 1
            continue
        value, at = _value(line, match.end())
        key, text = match.group(1), text.strip()
        if _WORD.fullmatch(text) and (not out or out[-1][0]):  # a key of two words: `owner root="read"`
            key, text = f"{text} {key}", ""
        if text:
            out.append(("", text))
        text = ""
        out.append((key, value))
    if text.strip():
        out.append(("", text.strip()))
    return out


def _value(line: str, at: int) -> tuple[str, int]:
    if line.startswith('"', at):
        end = at + 1
        while end < len(line) and line[end] != '"':
            end += 2 if line[end] == "\\" else 1
        try:
            return str(json.loads(line[at:end + 1])), end + 1
        except ValueError:
            return line[at + 1:end], end + 1
    if line.startswith("[", at) and "]" in line[at:]:
        end = line.index("]", at)
        return line[at:end + 1], end + 1
    end = line.find(" ", at)
    end = len(line) if end < 0 else end
    return line[at:end], end


# -- how each key is said ------------------------------------------------------------------------

Saying = Callable[[str], str]


def _with(template: str) -> Saying:
    return lambda value: template.format(v=value)


def _yes_no(yes: str, no: str) -> Saying:
    return lambda value: yes if value == "yes" else no if value == "no" else value


def _bytes(value: str) -> str:
    return size(int(value)) or value if value.isdigit() else value


def _drop(value: str) -> str:
    return ""


def _count(template: str, words: str) -> Saying:
    """An amount said with its noun ("12 files"); a value that is no number keeps the key's words."""
    return lambda value: template.format(v=value) if re.fullmatch(r"[\d.,]+", value) else f"{words} {value}"


SUBJECTS: dict[str, str] = {
    "mount": "{v}", "mountpoint": "{v}", "mount_point": "{v}", "path": "{v}", "name": "{v}", "unit": "{v}",
    "program": "{v}", "target": "{v}", "interface": "interface {v}", "disk": "disk {v}", "user": "user {v}",
    "table": "cron table {v}", "pattern": "processes named {v}",
}
"""Keys that name what a line is about, when the line starts with one: said first, the rest after a colon."""
PLACES = ("mount", "mountpoint", "mount_point", "path")

SAY: dict[str, Saying] = {
    # what a line is about and what it is
    "type": lambda v: {"dir": "folder", "folder": "folder", "file": "file", "symlink": "symbolic link",
                       "MISSING": "missing"}.get(v, f"type {v}"),
    "kind": _with("{v}"),
    "says": _with("{v}"),
    "note": _with("({v})"),
    "units": _drop,  # the model's reminder of what a column means; the person's line has its units
    "self": _drop,  # the name already says "(appliance itself)"
    "size_bytes": _drop,  # beside `size`, which says the same in units
    "severity": _drop,  # said by the sentence (`says`) it goes with
    "headline": _with("{v}"),
    "swap": lambda v: v if " " in v else f"swap {v}",
    "nsswitch_hosts": _with("host names looked up in: {v}"),
    "is_mount_point": _yes_no("a mount point", "not a mount point"),
    # how full, how busy
    "used_percent": _with("{v} % used"),
    "busy_percent": _with("{v} % busy"),
    "cpu_percent": _with("{v} % CPU"),
    "machine_cpu_percent": _with("machine {v} % busy"),
    "memory_percent": _with("{v} % of memory"),
    "percent_of_total": _with("{v} % of the total"),
    "inodes_used_percent": _with("{v} % of inodes used"),
    "cpu_iowait_percent": _with("CPU waiting on disks {v} %"),
    "tcp_retransmit_percent": _with("{v} % of TCP segments sent again"),
    "cores_busy": _with("{v} cores busy"),
    "avg10_percent": _with("{v} % over 10 s"),
    "avg60_percent": _with("{v} % over 60 s"),
    "some_avg10": _with("some tasks waiting {v} % over 10 s"),
    "some_avg60": _with("some tasks waiting {v} % over 60 s"),
    "full_avg10": _with("all tasks waiting {v} % over 10 s"),
    "full_avg60": _with("all tasks waiting {v} % over 60 s"),
    "1min": _with("load {v} (1 min)"),
    "5min": _with("{v} (5 min)"),
    "15min": _with("{v} (15 min)"),
    "per_core_1min": _with("{v} per core"),
    "1m": _with("load {v} (1 min)"),
    "5m": _with("{v} (5 min)"),
    "15m": _with("{v} (15 min)"),
    "cpus": _count("{v} cores", "cores"),
    "used_pct": _with("{v} % used"),
    "swap_used_pct": _with("swap {v} % used"),
    "free_gb": _with("{v} GiB free"),
    "available_mb": _with("{v} MiB available"),
    "total_mb": _with("{v} MiB in all"),
    # sizes and amounts
    "size": _with("size {v}"),
    "used": _with("{v} used"),
    "free": _with("{v} free"),
    "available": _with("{v} available"),
    "total": _with("{v} in all"),
    "memory": _with("memory {v}"),
    "memory_rss": _with("resident memory {v}"),
    "memory_pss": _with("proportional memory {v}"),
    "files": _count("{v} files", "files"),
    "dirs": _count("{v} folders", "folders"),
    "processes": _count("{v} processes", "processes"),
    "threads": _count("{v} threads", "threads"),
    "count": _with("{v} matched"),
    "mtu": _with("MTU {v}"),
    "ops_per_second": _with("{v} operations/s"),
    "speed_mbps": _with("speed {v} Mbit/s"),
    "frequency_mhz": _with("{v} MHz"),
    "max_frequency_mhz": _with("at most {v} MHz"),
    # yes or no
    "read_only": _yes_no("read-only", "writable"),
    "up": _yes_no("up", "down"),
    "exists": _yes_no("exists", "does not exist"),
    "installed": _yes_no("installed", "not installed"),
    "steady": _yes_no("steady", "not steady"),
    "partial": _yes_no("partial: a bound was reached", ""),
    "windows_line_endings": _yes_no("Windows line endings", ""),
    "truncated": _yes_no("cut short", ""),
    # times
    "sample_seconds": _with("sampled over {v} s"),
    "elapsed_seconds": _with("took {v} s"),
    "seconds": _with("over {v} s"),
    "exit_code": _with("exit code {v}"),
    "started": _with("started {v}"),
    "nr_throttled": _count("throttled {v} times", "throttled"),
}

SUFFIXES: tuple[tuple[str, Saying], ...] = (
    ("_percent", lambda v: f"{v} %"),
    ("_seconds", lambda v: f"{v} s"),
    ("_ms", lambda v: f"{v} ms"),
    ("_bytes", _bytes),
    ("_mhz", lambda v: f"{v} MHz"),
    ("_mbps", lambda v: f"{v} Mbit/s"),
    ("_per_second", lambda v: f"{v}/s"),
    ("_pct", lambda v: f"{v} %"),
    ("_gb", lambda v: f"{v} GiB"),
    ("_mb", lambda v: f"{v} MiB"),
)
"""A key no row names: its words, and the unit its ending gives the value."""

_WORDS = {"cpu": "CPU", "io": "I/O", "tcp": "TCP", "udp": "UDP", "oom": "OOM", "dns": "DNS", "ipv4": "IPv4",
          "ipv6": "IPv6", "rss": "resident", "pss": "proportional", "fqdn": "full host name",
          "nsswitch": "name service", "D": "uninterruptible"}


def key_words(key: str) -> str:
    """A key as words: `oom_kills_since_boot` -> "OOM kills since boot"; a number glued to a
    word is split (`1min` -> "1 min")."""
    words = re.sub(r"(?<=\d)(?=[a-z])", " ", key).replace("_", " ").split()
    return " ".join(_WORDS.get(w, w) for w in words)


def _plain_value(value: str) -> str:
    if value == "None":
        return "unknown"
    if value == "[]":
        return "none"
    if value.startswith("[") and value.endswith("]"):
        return value[1:-1]
    return {"True": "yes", "False": "no"}.get(value, value)


def say(key: str, value: str) -> str:
    """One pair in words ("" when it says nothing a person needs, or the machine has no value)."""
    if value == "-":
        return ""
    value = _plain_value(value)
    if key in SAY:
        return SAY[key](value)
    words = key_words(key)
    for suffix, saying in SUFFIXES:
        if key.endswith(suffix):
            return f"{key_words(key[:-len(suffix)])} {saying(value)}".strip()
    if value in ("yes", "no"):
        return words if value == "yes" else f"no {words}" if " " not in words else f"{words}: no"
    return f"{words}: {value}" if len(value.split()) >= 4 else f"{words} {value}"  # a sentence after a colon


# -- a line --------------------------------------------------------------------------------------

FILL = ("size", "free", "used_percent")  # a place's fill, said in one sentence (`filled`)
_NAMED = re.compile(r"\S.* \(pid \d+\)")


def filled(place: str, values: dict[str, str]) -> str:
    return f"{place} is {values['used_percent']} % full: {values['free']} free of {values['size']}"


def plain_reading(line: str) -> str:
    """A reading's line in words: each pair said through the table, a process as "NAME (pid N)",
    the subject first with the rest after a colon; a verdict line loses its severity and family
    label; free text (a log's line, a headline's words) stays as written."""
    line = line.strip()
    if line.startswith("headline:"):
        line = line[len("headline:"):].strip()
    line = _tool_hints().sub("", _VERDICT.sub("", line))
    line = _PROCESS.sub(lambda m: f"{m.group(2).strip(chr(34))} (pid {m.group(1)})", line)
    part, _, rest = line.partition(": ")
    if rest == EMPTY_PART and part and all(c.isalnum() or c in "._-" for c in part):  # a part holding nothing
        return f"{key_words(part)}: none"
    parts = tokens(line)
    if not any(key for key, _ in parts):
        return line
    values = {key: value for key, value in parts if key}
    if values.get("says") and "severity" in values:  # a flag: its sentence says it all
        return values["says"]
    first, written = parts[0]
    subject = first if first in SUBJECTS else ""
    fill = subject in PLACES and all(k in values for k in FILL)
    said: list[str] = []
    for key, value in parts:
        if not key:
            said.append(value)
        elif key == subject and not said:
            said.append(filled(value, values) + "," if fill else SUBJECTS[key].format(v=value))
        elif not (fill and key in (*FILL, "used")):
            said.append(say(key, value))
    said = [s for s in said if s]
    if (subject and not fill or (not first and _NAMED.fullmatch(written))) and len(said) > 1:
        return f"{said[0]}: " + _joined(said[1:])
    return _joined(said)


@functools.cache
def _tool_hints() -> re.Pattern[str]:
    """A tool's own hint to the model that names another tool ("(list_dir shows what is there)",
    "; use dir_sizes"): the person has no use for a tool's name."""
    from appliance.tools.registry import TOOL_FUNCTIONS

    names = "|".join(sorted((f.__tool__.name for f in TOOL_FUNCTIONS), key=len, reverse=True))  # type: ignore[attr-defined]
    return re.compile(rf"\s*\([^()]*\b(?:{names})\b[^()]*\)|;?\s*\buse (?:{names})\b")


def _joined(parts: list[str]) -> str:
    """Phrases joined by commas, but one that ends in a colon or comma runs on into the next."""
    out = ""
    for part in parts:
        out += part if not out else (" " if out.endswith((":", ",")) else ", ") + part
    return out
