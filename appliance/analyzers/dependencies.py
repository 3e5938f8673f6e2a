"""Is the service a log says it cannot reach running? A refused local connection in a log the
person names, checked against the machine's listening sockets.

Why: "connect to 127.0.0.1:5432 … Connection refused" means nothing listens there; a person
would look at the listeners next, and so does this: the verdict names the port and says that
nothing listens on it (or who does, when the refusal is old news). Only local addresses are
checked: a remote host's listeners cannot be seen from here.
"""

from __future__ import annotations

import re
from typing import Iterable

from appliance.analyzers.base import Finding
from appliance.analyzers.log_errors import analyze_log_path
from appliance.analyzers.network import port_finding
from appliance.analyzers.readings import Readings

_LOCAL = r"(?:127\.\d+\.\d+\.\d+|localhost|\[?::1\]?|0\.0\.0\.0)"
_REFUSED_AT = re.compile(rf"\b{_LOCAL}:(\d{{1,5}})\b[^\n]*\b(?:refused|ECONNREFUSED)\b"
                         rf"|\b(?:refused|ECONNREFUSED)\b[^\n]*\b{_LOCAL}:(\d{{1,5}})\b", re.I)
MAX_PORTS = 3


def refused_ports(texts: Iterable[str]) -> list[int]:
    """The local ports that lines of `texts` say a connection to was refused, in order."""
    ports: list[int] = []
    for text in texts:
        for match in _REFUSED_AT.finditer(text):
            port = int(match.group(1) or match.group(2))
            if 0 < port < 65536 and port not in ports:
                ports.append(port)
    return ports[:MAX_PORTS]


def log_findings(path: str, readings: Readings) -> list[Finding]:
    """The named log's (or log folder's) error summary, and for each local port its errors say a
    connection was refused at, whether anything listens there."""
    found = analyze_log_path(path, readings)
    texts = [f.verdict for f in found] + [str(v) for f in found for v in f.values.values()]
    return found + [port_finding(port, readings) for port in refused_ports(texts)]


__all__ = ["log_findings", "refused_ports"]
