"""What the first step looks at in a place a question names: the verdicts on its filesystem and
on what it is (a log, a configuration file, an application's folder), and the tool calls that
look at it.

Why apart from the evidence: a place is judged by what it is, and that knowledge (logs, configs,
folders of logs, storage questions) is its own concept; the evidence gathering only asks it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

from appliance.analyzers import Finding, Readings
from appliance.analyzers.app_folder import app_folder_findings
from appliance.analyzers.config_file import FAMILY as CONFIG
from appliance.analyzers.config_file import config_findings, is_config_path
from appliance.analyzers.dependencies import log_findings
from appliance.analyzers.folder_sizes import FAMILY as FOLDER
from appliance.analyzers.folder_sizes import folder_finding
from appliance.analyzers.named_path import COUNTS, GROWTH, HOLDERS, LOOKUP
from appliance.analyzers.storage import place_findings
from appliance.tools.logs import LOG_FOLDER, LOG_NAME, is_log_path

LOGS = "log_errors"
STORAGE_FAMILIES = frozenset({"filesystem_full", "inodes", "deleted_open", "readonly_fs", "disk_io", FOLDER})


@dataclass(frozen=True)
class Look:
    """One place the question names, looked at with one tool before the first step."""

    path: str
    tool: str
    arguments: dict
    result: dict  # the tool's {status, data, error}


def is_storage_question(topics: Sequence[str]) -> bool:
    """The question is about a place's storage (space, inodes, writability, I/O), so a named
    folder is measured, not read as an application's folder."""
    return any(t in STORAGE_FAMILIES for t in topics)


def place_verdicts(path: str, readings: Readings, *, storage: bool = False) -> list[Finding]:
    """The verdicts on one place a question names: its filesystem's (space, inodes, read-only),
    and by what it is, a log's error summary (with what its errors point at), a configuration
    file's settings, or for a folder in a question not about storage (`storage` False), its
    logs' and configuration's. Nothing for a path that does not exist."""
    expanded = os.path.expanduser(path)
    if not os.path.exists(expanded):
        return []
    found = place_findings(path, readings)
    if is_log_path(path):
        found += log_findings(expanded, readings)
    elif os.path.isfile(expanded) and is_config_path(expanded):
        found += config_findings(expanded, readings)
    elif os.path.isdir(expanded) and not storage:
        found += [f for f in app_folder_findings(expanded, readings) if f not in found]
    return found


def folder_verdicts(looks: Sequence[Look]) -> list[Finding]:
    """The verdict on each named folder a look measured: does one entry take most of its space?"""
    measured = [look.result.get("data") or {} for look in looks
                if look.tool == "dir_sizes" and look.result.get("status") == "ok"]
    return [f for f in (folder_finding(data) for data in measured) if f is not None]


# The verdicts a named path gets only when the words ask for them (analyzers.named_path): who holds
# it, its lookup (missing, a dangling link, closed to a reader), how many entries, whether it grows.
PATH_ASK_FAMILIES = frozenset({HOLDERS, LOOKUP, COUNTS, GROWTH})


def place_topics(topics: tuple[str, ...], places: Sequence[Finding], named: Sequence[str] = ()) -> tuple[str, ...]:
    """The question's families with those of what it names: a configuration file it names is what
    the question is about (first); a named folder's ranking comes just before the space families
    (a space question about a folder asks which entry fills it), else after them; the logs of an
    application's folder come after the question's own families.
    named: the places the question names, resolved (a configuration file judged inside a named
    folder is not a named one)."""
    families = {f.family for f in places}
    # what the words asked of a named path (who holds it, its lookup, its growth …) comes first:
    # "what keeps /mnt/x busy?" is no space question, "is /x ballooning?" no memory question
    path_asked = tuple(dict.fromkeys(f.family for f in places if f.family in PATH_ASK_FAMILIES))
    topics = path_asked + tuple(t for t in topics if t not in path_asked)
    if any(f.family == CONFIG and f.path in named for f in places):
        topics = (CONFIG,) + tuple(t for t in topics if t != CONFIG)
    if FOLDER in families and FOLDER not in topics:
        at = topics.index("filesystem_full") if "filesystem_full" in topics else len(topics)
        topics = topics[:at] + (FOLDER,) + topics[at:]
    if LOGS in families and LOGS not in topics:
        topics = topics + (LOGS,)
    return topics


def plan_look(path: str, listing: dict | None, inner_logs: Sequence[str] = (), *,
              storage: bool = False) -> list[tuple[str, dict]]:
    """The tool calls that look at `path`: a log → read_log; another file → read_file; a folder
    of logs → read_log of its newest logs; an application's folder (logs below it, `inner_logs`)
    → read_log of those; another folder, and any folder in a question about storage (`storage`)
    → dir_sizes (its largest entries).
    listing: list_dir's data for a folder (None for a file or a missing path)."""
    if listing is not None and storage:
        return [("dir_sizes", {"path": path, "depth": 1, "top": 8})]
    if listing is None:
        if is_log_path(path):
            return [("read_log", {"path": path, "lines": 12})]
        return [("read_file", {"path": path, "max_bytes": 1200})]
    files = [e for e in listing.get("entries", []) if e.get("type") == "file" and not e.get("off_limits")]
    logs = [e for e in files if LOG_NAME.search(e["name"])] or (files if LOG_FOLDER.search(path) else [])
    if logs:
        newest = sorted(logs, key=lambda e: e.get("modified") or "", reverse=True)[:2]
        base = listing.get("path") or path
        return [("read_log", {"path": os.path.join(base, e["name"]), "lines": 12}) for e in newest]
    if inner_logs:
        return [("read_log", {"path": log, "lines": 12}) for log in inner_logs]
    return [("dir_sizes", {"path": path, "depth": 1, "top": 8})]
