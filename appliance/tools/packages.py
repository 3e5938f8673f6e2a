"""Which package owns a file, and its version, from the dpkg database read as files (what
`dpkg -S PATH` and `dpkg-query -W PKG` say): /var/lib/dpkg/info/*.list and /var/lib/dpkg/status.

Why files, not commands: nothing runs, the read is bounded, and an empty search can be cited
("no package lists it among the N file lists") when a person asks whether something is installed.
"""

from __future__ import annotations

import glob
import os
import time
from dataclasses import dataclass

DPKG_INFO = "/var/lib/dpkg/info"
DPKG_STATUS = "/var/lib/dpkg/status"
RPM_DB = ("/var/lib/rpm", "/usr/lib/sysimage/rpm")
SEARCH_SECONDS = 3.0
_MERGED = (("/bin/", "/usr/bin/"), ("/sbin/", "/usr/sbin/"), ("/lib/", "/usr/lib/"), ("/lib64/", "/usr/lib64/"))


@dataclass(frozen=True)
class Search:
    """The outcome of one search of the package database: the owner and its version (or ""), and
    what was searched, in words, so an empty result can be cited."""

    package: str
    version: str
    searched: str


def aliases(path: str) -> list[str]:
    """A path and its other names on a merged-/usr system (/bin/x is /usr/bin/x)."""
    names = [path, os.path.realpath(path)]
    for short, full in _MERGED:
        for name in list(names):
            if name.startswith(short):
                names.append(full + name[len(short):])
            elif name.startswith(full):
                names.append(short + name[len(full):])
    return list(dict.fromkeys(names))


def _lists() -> list[str]:
    return sorted(glob.glob(os.path.join(DPKG_INFO, "*.list")))


def owner(paths: list[str] = (), name: str = "") -> Search:  # type: ignore[assignment]
    """The package whose file list has one of `paths`, or, with `name`, a file .../bin/NAME or .../sbin/NAME."""
    lists = _lists()
    if not lists:
        rpm = next((p for p in RPM_DB if os.path.isdir(p)), "")
        why = f"no dpkg database here; an rpm database is at {rpm} but is not read" if rpm else "no dpkg or rpm database here"
        return Search("", "", why)
    wanted = [b"\n" + p.encode() + b"\n" for p in paths]
    tails = [f"/bin/{name}\n".encode(), f"/sbin/{name}\n".encode()] if name else []
    stop = time.monotonic() + SEARCH_SECONDS
    for count, listing in enumerate(lists, 1):
        if time.monotonic() > stop:
            return Search("", "", f"stopped after {count} of the {len(lists)} dpkg file lists ({SEARCH_SECONDS:g} s)")
        try:
            with open(listing, "rb") as handle:
                data = b"\n" + handle.read()
        except OSError:
            continue
        if any(w in data for w in wanted) or any(t in data for t in tails):
            package = os.path.basename(listing)[: -len(".list")].split(":", 1)[0]
            return Search(package, version(package), f"the {len(lists)} dpkg file lists in {DPKG_INFO}")
    what = " or ".join(paths) if paths else f"a program named {name}"
    return Search("", "", f"none of the {len(lists)} dpkg file lists in {DPKG_INFO} has {what}")


def version(package: str) -> str:
    """The installed version of `package` from dpkg's status file; "" when it is not installed."""
    try:
        with open(DPKG_STATUS, "rb") as handle:
            data = b"\n" + handle.read()
    except OSError:
        return ""
    at = data.find(f"\nPackage: {package}\n".encode())
    if at < 0:
        return ""
    stanza = data[at + 1: data.find(b"\n\n", at + 1) if data.find(b"\n\n", at + 1) > 0 else len(data)]
    fields = dict(line.split(": ", 1) for line in stanza.decode("utf-8", "replace").splitlines() if ": " in line)
    if "installed" not in fields.get("Status", "").split():
        return ""
    return fields.get("Version", "")
