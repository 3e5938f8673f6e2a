"""Plants of the `unnamed` split about user accounts, made for real with useradd and removed with
userdel (appliance/eval/accounts.py: each account is tagged, so only this evaluation's go): who owns
a file, which user a program runs as, how many processes a user has, whether a user is in a group
(and one who is not), how much of a folder a user's files take, a user who runs nothing, and a
user name nobody has.
"""

from __future__ import annotations

import os
import pwd

from appliance.eval import accounts
from appliance.eval.fault import MB, SLEEP_FOREVER, Fault, process_name
from appliance.eval.plants import checklist
from appliance.eval.reaper import SandboxError
from appliance.eval.sandbox import Sandbox, short_token
from appliance.eval.scoring import mentions, never_says, no_culprit
from appliance.eval.scoring_values import number_stated, says_yes, size_near
from appliance.eval.plants.unnamed_files import disk_bytes


def account(sandbox: Sandbox, base: str, *, groups: tuple[str, ...] = ()) -> pwd.struct_passwd:
    """A real account named `base-xxxx`, removed when the sandbox closes."""
    name = f"{base}-{short_token()}"
    tag = accounts.add(name, str(sandbox.path(f"home/{name}")), groups=groups)
    sandbox.undo.append(lambda: accounts.remove(name, tag))
    return pwd.getpwnam(name)


def _run_as(sandbox: Sandbox, user: pwd.struct_passwd, base: str, args: tuple[str, ...] = ()) -> tuple[int, str]:
    name = process_name(base)
    pid, _ = sandbox.spawn(name, checklist._as_user(user) + "ready()" + SLEEP_FOREVER, args=args)
    return pid, name


def _owned(sandbox: Sandbox, relative: str, size: int, user: pwd.struct_passwd | None) -> None:
    path = sandbox.fill(relative, size)
    if user is not None:
        os.chown(path, user.pw_uid, user.pw_gid)


# -- who owns a file --------------------------------------------------------------------------------

def plant_file_owner(sandbox: Sandbox) -> Fault:
    user = account(sandbox, "rhea")
    path = sandbox.path("srv/shared/finance/budget-2025.xlsx")
    _owned(sandbox, "srv/shared/finance/budget-2025.xlsx", 96 << 10, user)
    _owned(sandbox, "srv/shared/finance/budget-2024.xlsx", 88 << 10, None)
    return Fault(sandbox, {"path": str(path), "user": user.pw_name, "uid": user.pw_uid},
                 [mentions("file's owner", [user.pw_name, f"uid {user.pw_uid}"])], slots={"file": str(path)})


# -- which user a program runs as -------------------------------------------------------------------

def plant_process_user(sandbox: Sandbox) -> Fault:
    user = account(sandbox, "tomas")
    pid, name = _run_as(sandbox, user, "invoicer", ("--batch", "nightly"))
    return Fault(sandbox, {"pid": pid, "name": name, "user": user.pw_name},
                 [mentions("user it runs as", [user.pw_name, f"uid {user.pw_uid}"])], slots={"name": name},
                 names=(name,))


# -- how many processes a user has -------------------------------------------------------------------

_PROGRAMS = ("mailsync", "indexer", "notesd", "calsync", "chatd", "photosync")


def plant_user_process_count(sandbox: Sandbox) -> Fault:
    user = account(sandbox, "jbauer")
    started = [_run_as(sandbox, user, base) for base in _PROGRAMS]
    return Fault(sandbox, {"user": user.pw_name, "count": len(started), "pids": [pid for pid, _ in started]},
                 [number_stated("number of the user's processes", len(started))], slots={"user": user.pw_name},
                 names=tuple(name for _, name in started))


# -- is a user in a group -----------------------------------------------------------------------------

_NOT_MEMBER = ("not a member", "not in the staff", "does not belong", "doesn't belong", "isn't in", "is not in",
               "not part of")


def plant_group_member(sandbox: Sandbox) -> Fault:
    user = account(sandbox, "priya", groups=("staff",))
    return Fault(sandbox, {"user": user.pw_name, "group": "staff", "member": True},
                 [never_says("says it is not a member", _NOT_MEMBER),
                  says_yes("a member of the group", ("is a member", "is in the staff", "belongs to the staff"))],
                 slots={"user": user.pw_name})


def control_group_member(sandbox: Sandbox) -> Fault:
    user = account(sandbox, "priya")
    return Fault(sandbox, {"user": user.pw_name, "group": "staff", "member": False, "fault": None},
                 [no_culprit(fine=_NOT_MEMBER)], slots={"user": user.pw_name})


# -- how much of a folder a user's files take ------------------------------------------------------------

def plant_user_space(sandbox: Sandbox) -> Fault:
    dana = account(sandbox, "dana")
    other = pwd.getpwnam("nobody")
    layout = (("srv/share/projects/atlas/scans.tar", 9, dana), ("srv/share/projects/atlas/notes.tar", 4, None),
              ("srv/share/projects/harbor/footage.mov", 6, dana), ("srv/share/projects/harbor/cuts.mov", 3, other),
              ("srv/share/projects/misc/export.csv", 4, dana), ("srv/share/projects/misc/dump.sql", 3, None))
    for relative, size, owner in layout:
        _owned(sandbox, relative, size * MB, owner)
    folder = sandbox.path("srv/share/projects")
    mine = sum(disk_bytes(p) for p in folder.rglob("*") if p.is_file() and p.stat().st_uid == dana.pw_uid)
    return Fault(sandbox, {"user": dana.pw_name, "folder": str(folder), "size_bytes": mine},
                 [size_near("space the user's files take", mine)], slots={"user": dana.pw_name, "folder": str(folder)})


# -- a user who runs nothing, and a user nobody has ----------------------------------------------------

def control_user_idle(sandbox: Sandbox) -> Fault:
    user = account(sandbox, "oskar")
    fine = ("no processes", "not running anything", "isn't running anything", "is running nothing", "nothing")
    return Fault(sandbox, {"user": user.pw_name, "count": 0, "fault": None}, [no_culprit(fine=fine)],
                 slots={"user": user.pw_name})


def control_user_absent(sandbox: Sandbox) -> Fault:
    name = f"mwendt-{short_token()}"
    try:
        pwd.getpwnam(name)
    except KeyError:
        pass
    else:
        raise SandboxError(f"an account {name} exists here already")
    fine = ("no such user", "no account", "no user", "does not exist", "doesn't exist", "not exist", "isn't one")
    return Fault(sandbox, {"user": name, "exists": False, "fault": None}, [no_culprit(fine=fine)],
                 slots={"user": name})
