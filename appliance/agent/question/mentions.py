"""What a question names exactly — paths, ports, pids, names, hosts — as written.

Why patterns here and nowhere else: these are shapes, not phrasings ("/srv/x", "port 8080",
"pid 4711", a quoted word, a unit's suffix); a label cannot copy them and the tools need them
exact. Which of the other words name something on this machine is the machine's to say
(agent/machine_names.py), not a word list's.
"""

from __future__ import annotations

import re

from appliance.analyzers.host_pins import host_names

PATH = re.compile(r"(?<![\w.~])((?:/|~/)[\w.@+\-]+(?:/[\w.@+\-]+)*/?)")
PORT = re.compile(r"\bports?\s+(?:number\s+|no\.?\s*|#\s*)?(\d{1,5})\b"
                  r"|\b(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\]|[\w-]+\.[\w.-]+)\s*:\s*(\d{1,5})\b", re.I)
PID = re.compile(r"\b(?:pid|process(?:\s+id)?|process\s+number)\s*#?\s*(\d{1,7})\b", re.I)
# a quoted word, a systemd unit, a network interface, "user NAME"
NAME = re.compile(r"[\"'`‘“]([\w.@+-]{2,40})[\"'`’”]"
                  r"|\b([a-z][\w.+-]*\.(?:service|timer|socket|mount|target))\b"
                  r"|\b((?:eth|wlan|enp|ens|wlp|eno|br|docker|veth|tun|wg)\d[\w]*)\b"
                  r"|\b(?:user|account)\s+([a-z_][\w.-]{1,31})\b", re.I)
TOKEN = re.compile(r"(?<![\w./~-])([a-z][a-z0-9_+-]*(?:\.[a-z0-9_+-]+)?)(?![\w/])")
MAX_PORTS = 3


def paths_in(text: str) -> list[str]:
    """Absolute (or ~) paths, in order, without trailing punctuation."""
    paths = []
    for raw in PATH.findall(text):
        path = raw.rstrip(".,;:?!)")
        if path not in paths and path != "/":
            paths.append(path)
    return paths


def ports_in(text: str) -> list[int]:
    """The ports named ("port 8080", "localhost:5432"), in order, at most MAX_PORTS."""
    found: list[int] = []
    for match in PORT.finditer(text):
        port = int(match.group(1) or match.group(2))
        if 0 < port < 65536 and port not in found:
            found.append(port)
    return found[:MAX_PORTS]


def pids_in(text: str) -> list[int]:
    return list(dict.fromkeys(int(m) for m in PID.findall(text)))


def names_in(text: str) -> list[str]:
    """Names written as names: quoted, a unit, an interface, "user NAME"."""
    names: list[str] = []
    for match in NAME.finditer(text):
        name = next(g for g in match.groups() if g)
        if not name.isdigit() and name not in names:
            names.append(name)
    return names


def tokens_in(text: str) -> tuple[str, ...]:
    """The question's plain words outside its paths, lower case, once each: the machine says which
    of them name one of its processes, users, programs or units."""
    return tuple(dict.fromkeys(TOKEN.findall(PATH.sub(" ", text.lower()))))


def hosts_in(text: str) -> tuple[str, ...]:
    return tuple(host_names(text))


def udp_in(text: str) -> bool:
    """The protocol named: UDP, else TCP."""
    return "udp" in tokens_in(text)
