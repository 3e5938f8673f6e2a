"""Masking what identifies a machine or a person in an exported run, consistently.

Why consistent masks: someone helping from outside must still see that the path in step 2 and the
path in step 5 are the same, or that two addresses differ. So each distinct value gets its own
stable mask (`host-1`, `user-2`, `10.x.x.1`-style `ip-3`) across the whole export.

Masked: the host name (short and fully qualified), user names (the current user, accounts with a
login home, and any name seen in a home path), home paths (`/home/NAME`, `/Users/NAME`, `/root`,
$HOME), IPv4 and IPv6 addresses other than loopback and unspecified ones. Kept: numbers, the model
file's hash and the sampler settings, which are what make a run reproducible.
Host and user names are matched as whole words (not inside longer words: host `vm` leaves
`vmstat` alone), home paths and addresses anywhere.
"""

from __future__ import annotations

import getpass
import ipaddress
import os
import pwd
import re
import socket
from dataclasses import dataclass, field
from typing import Any

_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\.?\d)(?!\w)")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
_HOME = re.compile(r"(?P<base>/home|/Users|/var/home)/(?P<user>[A-Za-z0-9._-]+)")



def _word(value: str) -> str:
    """`value` as a whole word: not inside a longer name (so host `vm` leaves `vmstat` alone)."""
    return rf"(?<![A-Za-z0-9_]){re.escape(value)}(?![A-Za-z0-9_])"


KEEP_KEYS = frozenset({"model_sha256", "settings", "id", "run_id", "started_at", "ended_at", "at"})


@dataclass(frozen=True)
class Identity:
    """What to hide, gathered from the machine (or given, in tests)."""

    hostnames: tuple[str, ...]
    users: tuple[str, ...]
    homes: tuple[str, ...]

    @classmethod
    def of_this_machine(cls) -> "Identity":
        hosts = {socket.gethostname()}
        try:
            hosts.add(socket.getfqdn())
        except OSError:
            pass
        hosts |= {h.split(".")[0] for h in hosts}
        users: set[str] = set()
        homes: set[str] = set()
        try:
            users.add(getpass.getuser())
        except (KeyError, OSError):
            pass
        home = os.path.expanduser("~")
        if home and home != "/":
            homes.add(home.rstrip("/"))
        try:
            for entry in pwd.getpwall():
                is_person = entry.pw_uid >= 1000 and entry.pw_uid != 65534
                if is_person or entry.pw_name in users:
                    users.add(entry.pw_name)
                    if entry.pw_dir and entry.pw_dir not in ("/", "/nonexistent"):
                        homes.add(entry.pw_dir.rstrip("/"))
        except OSError:
            pass
        return cls(
            hostnames=tuple(sorted((h for h in hosts if h and h != "localhost"), key=len, reverse=True)),
            users=tuple(sorted((u for u in users if u), key=len, reverse=True)),
            homes=tuple(sorted(homes, key=len, reverse=True)),
        )


@dataclass
class Masker:
    """Replaces identifying values in text; the same value always gets the same mask."""

    identity: Identity
    _masks: dict[tuple[str, str], str] = field(default_factory=dict)
    _counts: dict[str, int] = field(default_factory=dict)
    _learned: set[str] = field(default_factory=set)

    def learn(self, value: Any) -> None:
        """Collect user names that appear in home paths anywhere in `value`, so that the same
        name standing alone elsewhere (even earlier in the export) is masked too."""
        if isinstance(value, str):
            for match in _HOME.finditer(value):
                self._learned.add(match.group("user"))
        elif isinstance(value, dict):
            for item in value.values():
                self.learn(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                self.learn(item)

    def _users(self) -> list[str]:
        names = set(self.identity.users) | {u for u in self._learned if not re.fullmatch(r"user-\d+", u)}
        return sorted(names, key=len, reverse=True)

    def mask_of(self, kind: str, value: str) -> str:
        key = (kind, value)
        if key not in self._masks:
            self._counts[kind] = self._counts.get(kind, 0) + 1
            self._masks[key] = f"{kind}-{self._counts[kind]}"
        return self._masks[key]

    def text(self, value: str) -> str:
        if not value:
            return value
        out = value
        for home in self.identity.homes:
            mask = "/home/" + self.mask_of("user", os.path.basename(home) or home)
            out = re.sub(re.escape(home) + r"(?![A-Za-z0-9._-])", mask, out)
        out = _HOME.sub(lambda m: f"{m.group('base')}/{self.mask_of('user', m.group('user'))}"
                        if not re.fullmatch(r"user-\d+", m.group("user")) else m.group(0), out)
        for host in self.identity.hostnames:
            out = re.sub(_word(host), lambda m: self.mask_of("host", m.group(0).lower()), out, flags=re.IGNORECASE)
        for user in self._users():
            out = re.sub(_word(user), lambda m: self.mask_of("user", m.group(0)), out)
        out = _IPV4.sub(self._ip, out)
        out = _IPV6.sub(self._ip, out)
        return out

    def _ip(self, match: re.Match) -> str:
        raw = match.group(0)
        try:
            address = ipaddress.ip_address(raw)
        except ValueError:
            return raw
        if address.is_loopback or address.is_unspecified:
            return raw
        return self.mask_of("ip", str(address))

    def value(self, value: Any) -> Any:
        """Mask every string inside `value` (dict values, list items; not dict keys)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        return value

    def row(self, row: dict[str, Any]) -> dict[str, Any]:
        """A stored run or step with its identifying values masked; ids, times, the model hash and
        the settings kept as they are."""
        return {k: (v if k in KEEP_KEYS else self.value(v)) for k, v in row.items()}
