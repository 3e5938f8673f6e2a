"""What bounds one process: its resource limits (/proc/PID/limits, what `prlimit --pid` shows), how
close its open descriptors are to theirs, and how likely the OOM killer is to pick it (oom_score,
oom_score_adj).
"""

from __future__ import annotations

from dataclasses import dataclass

from appliance.tools import units

# The limits a person asks about, by their line in /proc/PID/limits, and the key they are shown under.
SHOWN = {"Max open files": "open_files", "Max processes": "processes", "Max core file size": "core_file_size"}
NEAR = 0.8  # open descriptors at or above this share of the soft limit are "near the limit"


@dataclass(frozen=True)
class Limit:
    """One limit: soft and hard (None = unlimited) and its unit."""

    soft: int | None
    hard: int | None
    unit: str

    def text(self) -> str:
        def one(value: int | None) -> str:
            if value is None:
                return "unlimited"
            return (units.size(value) or "0 B") if self.unit == "bytes" else f"{value:,}"
        return f"{one(self.soft)} (hard {one(self.hard)})" if self.soft != self.hard else one(self.soft)


def _number(word: str) -> int | None:
    return None if word == "unlimited" else int(word)


def limits(pid: int) -> dict[str, Limit]:
    """The limits of /proc/PID/limits that SHOWN names, by their key (OSError when gone)."""
    found: dict[str, Limit] = {}
    with open(f"/proc/{pid}/limits", encoding="ascii", errors="replace") as handle:
        for line in handle:
            for title, key in SHOWN.items():
                if line.startswith(title):
                    words = line[len(title):].split()
                    try:
                        found[key] = Limit(_number(words[0]), _number(words[1]), words[2] if len(words) > 2 else "")
                    except (ValueError, IndexError):
                        continue
    return found


def _int_file(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class Oom:
    """oom_score (0-2000: the higher, the likelier to be killed first) and oom_score_adj (-1000 = never)."""

    score: int | None
    adjust: int | None


def oom(pid: int) -> Oom:
    return Oom(_int_file(f"/proc/{pid}/oom_score"), _int_file(f"/proc/{pid}/oom_score_adj"))


def fd_share(open_fds: int, limit: Limit | None) -> float | None:
    """Open descriptors as a share of the soft limit (None when unlimited or unknown)."""
    if limit is None or not limit.soft:
        return None
    return open_fds / limit.soft
