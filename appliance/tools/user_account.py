"""One account as the system knows it (what `getent passwd`, `id`, `passwd -S`, `who` and `crontab -l`'s
presence show): ids and groups, home and shell, whether it can log in, its sessions and crontab.

The shadow file is read for one fact only: whether the account's password field is locked (starts
with `!` or `*`), empty, or set, and whether the account has expired. The field itself is never kept
or returned; the file stays refused to every other reading.
"""

from __future__ import annotations

import os
import pwd
import time
from dataclasses import dataclass

import psutil

from appliance.tools.proc_status import group_name, user_name

SHADOW = "/etc/shadow"
CRONTAB_DIRS = ("/var/spool/cron/crontabs", "/var/spool/cron")  # Debian's, then Red Hat's
REFUSING_SHELLS = ("nologin", "false")


@dataclass(frozen=True)
class Password:
    """locked, empty, set, or unknown (no shadow entry); and whether the account has expired."""

    state: str
    expired: bool = False


def password(name: str) -> Password:
    """The password field's state, judged line by line; the field is dropped at once."""
    try:
        with open(SHADOW, encoding="utf-8", errors="replace") as shadow:
            for line in shadow:
                parts = line.rstrip("\n").split(":")
                if parts[0] != name or len(parts) < 2:
                    continue
                state = "locked" if parts[1][:1] in ("!", "*") else "empty" if parts[1] == "" else "set"
                expires = parts[7] if len(parts) > 7 else ""
                expired = expires.isdigit() and int(expires) * 86400 <= time.time()
                return Password(state, expired)
    except OSError:
        return Password("unknown (the shadow file cannot be read)")
    return Password("unknown (no entry in the shadow file)")


@dataclass(frozen=True)
class Account:
    """An account from the passwd database, with what its home and shell are on disk."""

    name: str
    uid: int
    gid: int
    home: str
    shell: str
    gecos: str

    def groups(self) -> list[str]:
        """The primary group first, then the supplementary ones (`id -Gn`)."""
        try:
            gids = os.getgrouplist(self.name, self.gid)
        except OSError:
            gids = [self.gid]
        names = [group_name(self.gid)]
        return names + sorted({group_name(g) for g in gids if g != self.gid})

    def shell_refuses(self) -> bool:
        return os.path.basename(self.shell) in REFUSING_SHELLS

    def shell_exists(self) -> bool:
        return bool(self.shell) and os.access(self.shell, os.X_OK)


def account(who: str) -> Account | None:
    """The account named `who`, or with uid `who` (None when the passwd database has neither)."""
    try:
        entry = pwd.getpwuid(int(who)) if who.isdigit() else pwd.getpwnam(who)
    except (KeyError, OverflowError):
        return None
    return Account(entry.pw_name, entry.pw_uid, entry.pw_gid, entry.pw_dir, entry.pw_shell, entry.pw_gecos)


def home_facts(acct: Account) -> dict:
    """Whether the home exists, is a folder, and who owns it (the account itself, as it should)."""
    try:
        st = os.stat(acct.home)
    except OSError:
        return {"path": acct.home, "exists": False}
    owner = user_name(st.st_uid)
    return {"path": acct.home, "exists": True, "is_folder": os.path.isdir(acct.home), "owner": owner,
            "owned_by_the_account": st.st_uid == acct.uid, "mode": oct(st.st_mode & 0o7777)}


def sessions(name: str) -> list[dict]:
    """Its sessions logged in now (utmp, as `who` shows)."""
    rows = []
    for user in psutil.users():
        if user.name == name:
            rows.append({"terminal": user.terminal or "?", "from": user.host or "local",
                         "since": time.strftime("%Y-%m-%d %H:%M", time.localtime(user.started))})
    return rows


def crontab(name: str) -> str | None:
    """The path of its crontab when one exists (presence only: the table is not read)."""
    for folder in CRONTAB_DIRS:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return None


def login(acct: Account, secret: Password) -> str:
    """Whether the account can log in, in a sentence, with the reason."""
    if not acct.shell_exists() and not acct.shell_refuses():
        return f"no: its shell {acct.shell or '(none)'} does not exist or cannot be run"
    if acct.shell_refuses():
        return f"no: its shell {acct.shell} refuses logins"
    if secret.expired:
        return "no: the account has expired"
    if secret.state == "locked":
        return f"not with a password (locked); a key-based login (ssh) still starts {acct.shell}"
    if secret.state == "empty":
        return f"yes, without any password (the password field is empty), with {acct.shell}"
    return f"yes, with {acct.shell}"


__all__ = ["Account", "Password", "account", "crontab", "home_facts", "login", "password", "sessions"]
