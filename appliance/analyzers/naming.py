"""How the resource analyzers name what they blame: a process by its redacted name and pid, a
number in the units a person reads. One place, so every verdict words things alike."""

from __future__ import annotations

from pathlib import Path

from appliance.tools import units
from appliance.tools.redact import redact


def process_name(info: dict) -> str:
    """A process's name as an observation may show it (redacted: names can be set by anyone)."""
    return redact(str(info.get("name") or "?"))


def process_label(info: dict) -> str:
    """`name (pid 123)`."""
    return f"{process_name(info)} (pid {info['pid']})"


def core_percent(cores: float) -> float:
    """A share of one CPU core in percent (1.0 core busy = 100 %)."""
    return round(100.0 * cores, 1)


def gib(n: float) -> float:
    return round(n / 1024 ** 3, 2)


def size(n: float) -> str:
    return units.size(n) or "0 B"


def shown_path(readings, path: str) -> str:
    """A path as a verdict may quote it: redacted, and not at all when it is a secret place
    (the path policy's deny-list: a deleted ~/.ssh/id_rsa is not named either)."""
    if readings.policy.is_secret(Path(path)):
        return "(a path in a private place)"
    return redact(path)
