"""What a named log's errors point at, checked on the machine: is the service it cannot reach
running (a refused local connection against the listening sockets), and may its writer write
where it was denied (appliance.analyzers.access)?

Why: "connect to 127.0.0.1:5432 … Connection refused" means nothing listens there; a person
would look at the listeners next, and so does this: the verdict names the port and says that
nothing listens on it (or who does, when the refusal is old news). Only local addresses are
checked: a remote host's listeners cannot be seen from here.
"""

from __future__ import annotations

import re
from typing import Iterable

from appliance.analyzers.access import access_findings
from appliance.analyzers.base import Finding
from appliance.analyzers.log_errors import analyze_log_path
from appliance.analyzers.network import port_finding, ports_in
from appliance.analyzers.readings import Readings

_LOCAL = r"(?:127\.\d+\.\d+\.\d+|localhost|\[?::1\]?|0\.0\.0\.0)"
_REFUSED_AT = re.compile(rf"\b{_LOCAL}:(\d{{1,5}})\b[^\n]*\b(?:refused|ECONNREFUSED)\b"
                         rf"|\b(?:refused|ECONNREFUSED)\b[^\n]*\b{_LOCAL}:(\d{{1,5}})\b", re.I)
MAX_PORTS = 3


def refused_ports(texts: Iterable[str]) -> list[int]:
    """The local ports that lines of `texts` say a connection to was refused, in order."""
    return ports_in(_REFUSED_AT, texts, MAX_PORTS)


def log_findings(path: str, readings: Readings) -> list[Finding]:
    """The named log's (or log folder's) error summary; for each local port its errors say a
    connection was refused at, whether anything listens there; for each path they say access was
    denied to, where the write stops for the log's writer."""
    found = analyze_log_path(path, readings)
    out = found + [port_finding(port, readings) for port in refused_ports(_texts(found))]
    for log in found:
        out += [f for f in access_findings(log.path or path, error_lines(log), readings) if f not in out]
    return out


def error_lines(log: Finding) -> list[str]:
    """The log lines a log finding quotes (its cause, its last error, its most repeated one)."""
    values = log.values
    repeated = values.get("most_repeated") or {}
    return [str(v) for v in (values.get("cause"), values.get("last_error"), repeated.get("example")) if v]


def _texts(found: list[Finding]) -> list[str]:
    return [f.verdict for f in found] + [str(v) for f in found for v in f.values.values()]


__all__ = ["log_findings", "refused_ports"]
