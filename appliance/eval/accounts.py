"""Real user accounts a plant makes with useradd and removes with userdel, each marked with a tag.

Why a tag: an account lives in /etc/passwd, /etc/shadow and /etc/group, which belong to the machine.
Its comment field (GECOS) carries `appliance-eval-<evaluator pid>-<random>`, so tear-down removes
exactly the accounts a sandbox made, and `sweep_dead()` (run by `sandbox.sweep_stale` when an
evaluation starts) those of an evaluator that was killed before it could (its pid is no longer
running). The accounts own no home folder outside the sandbox (`--no-create-home`, a home inside
the sandbox's tree) and cannot log in (`/usr/sbin/nologin`).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import subprocess
import time
from typing import Sequence

import psutil

from appliance.eval.etc_files import TAG_PREFIX, new_tag
from appliance.eval.reaper import SandboxError, pid_alive

_TAG = re.compile(rf"^{re.escape(TAG_PREFIX)}(\d+)-[0-9a-f]+$")
_NOLOGIN = "/usr/sbin/nologin"
_TRIES = 20  # useradd refuses while another program holds /etc/passwd's lock; it is held briefly


def _run(argv: Sequence[str]) -> subprocess.CompletedProcess:
    """Run useradd / userdel, again while /etc/passwd is locked by someone else (exit status 10 or
    the 'cannot lock' message)."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    for _ in range(_TRIES):
        if done.returncode == 0 or "lock" not in (done.stderr or "").lower():
            break
        time.sleep(0.25)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    return done


def add(name: str, home: str, *, groups: Sequence[str] = ()) -> str:
    """Make the account `name` (home `home`, not created; secondary `groups`); return its tag."""
    tag = new_tag()
    argv = ["useradd", "--no-create-home", "--home-dir", home, "--shell", _NOLOGIN, "--comment", tag]
    if groups:
        argv += ["--groups", ",".join(groups)]
    done = _run([*argv, name])
    if done.returncode != 0:
        raise SandboxError(f"useradd {name} failed: {done.stderr.strip() or done.returncode}")
    return tag


def _end_processes(uid: int, timeout: float = 10.0) -> None:
    """Kill the account's processes and wait until none is left, zombies too: a uid freed while a
    dead process of it still waits to be reaped would make the next account made (which gets the
    same uid) look as if it ran that process."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [p for p in psutil.process_iter(["uids"]) if p.info["uids"] and uid in p.info["uids"][:2]]
        if not left:
            return
        for proc in left:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        time.sleep(0.05)


def remove(name: str, tag: str) -> None:
    """Remove the account `name` if, and only if, it still carries `tag`, after its processes."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return
    if entry.pw_gecos != tag:
        raise SandboxError(f"the account {name} is not the one this evaluation made; left as it is")
    _end_processes(entry.pw_uid)
    done = _run(["userdel", "--force", name])  # --force: a process that would not die does not keep it
    if done.returncode != 0:
        raise SandboxError(f"userdel {name} failed: {done.stderr.strip() or done.returncode}")


def tagged() -> list[tuple[str, str, int]]:
    """(name, tag, evaluator pid) of every account an evaluation made."""
    found = []
    for entry in pwd.getpwall():
        match = _TAG.match(entry.pw_gecos or "")
        if match:
            found.append((entry.pw_name, entry.pw_gecos, int(match.group(1))))
    return found


def sweep_dead() -> list[str]:
    """Remove the accounts of evaluators that no longer run; return their names."""
    removed = []
    for name, tag, owner in tagged():
        if owner != os.getpid() and not pid_alive(owner):
            remove(name, tag)
            removed.append(name)
    return removed
