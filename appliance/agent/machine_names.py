"""The words of a question that name something this machine has: a running process, a user, an
installed program or package, a systemd unit.

Why ask the machine, not the phrasing: "why won't nginx start?" and "is curl there?" name a
program in words no pattern was written for; whether a word is a program is a fact the machine
knows. Words that are also everyday English ("which", "file", "free", "top", "backup") are
left out, since a question uses them as words far more often than as names.
"""

from __future__ import annotations

import os
import pwd
import shutil
from typing import Sequence

import psutil

SEARCH_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
UNIT_DIRS = ("/etc/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system", "/run/systemd/system")
DPKG_INFO = "/var/lib/dpkg/info"
COMMON = frozenset("""
a about after again all also am an and any are as at back backup be because been before being bin
both but by can cannot check clear close column cut daemon date did do does done down du each env
even every expand false file files find fine first fold for free from games get go groups had has
have he head help her here high him his host how i id if in info install into ip is it its join just
keep kill last less like link list local lock login look low mail make man many me memory mine more
most mount my news no nobody not now of off ok on once one only open or other our out over own
paste port ports process proxy ps read ready really rev right run running same script see sent
service set she sh should show since size sleep slow so some sort split start started stat stop
such sum sync sys system tail tee test than that the their them then there these they this those
time timeout to too top touch tree true try type under units until up uptime user users very w
wait wall was watch we were what when where which while who whoami why will with write yes you
your
""".split())


def _running() -> set[str]:
    names: set[str] = set()
    for proc in psutil.process_iter(["name"]):
        name = (proc.info.get("name") or "").lower()
        if name:
            names.add(name)
    return names


def _users() -> set[str]:
    try:
        return {entry.pw_name.lower() for entry in pwd.getpwall()}
    except OSError:
        return set()


def _known(word: str, running: set[str], users: set[str]) -> bool:
    if word in running or word in users or shutil.which(word, path=SEARCH_PATH):
        return True
    if os.path.exists(os.path.join(DPKG_INFO, f"{word}.list")):
        return True
    unit = word if "." in word else f"{word}.service"
    return any(os.path.exists(os.path.join(folder, unit)) for folder in UNIT_DIRS)


def machine_names(tokens: Sequence[str], limit: int = 3) -> list[str]:
    """The question's words (its reader's tokens) that name a process, user, program, package or
    unit of this machine."""
    words = [w for w in dict.fromkeys(tokens) if w not in COMMON and len(w) >= 2]
    if not words:
        return []
    running, users = _running(), _users()
    return [w for w in words if _known(w, running, users)][:limit]
