"""A path's own metadata in words: its type, what its mode allows each kind of user (and root),
the special bits, its times as dates and ages, and for a folder its entries (count, size, newest
and oldest). What `stat`, `ls -ld` and a bounded `ls -lt` show, read with lstat/stat and scandir."""

from __future__ import annotations

import os
import stat
import time

from appliance.tools import units
from appliance.tools.components import group_name, user_name
from appliance.tools.paths import secret_child

MAX_ENTRIES = 5000  # entries of a folder looked at, at most
FOLDER_SECONDS = 1.0
_FILE_WORDS = (("read", 4), ("write", 2), ("execute", 1))
_DIR_WORDS = (("list", 4), ("create and delete entries", 2), ("enter", 1))


def type_word(mode: int) -> str:
    for test, word in ((stat.S_ISREG, "file"), (stat.S_ISDIR, "folder"), (stat.S_ISLNK, "link"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISFIFO, "FIFO (named pipe)")):
        if test(mode):
            return word
    return "special file"


def _allowed(bits: int, folder: bool) -> str:
    words = [w for w, m in (_DIR_WORDS if folder else _FILE_WORDS) if bits & m]
    return ", ".join(words) or "nothing"


def permissions(st: os.stat_result) -> dict:
    """The mode as `ls` and `stat -c %a` show it, what it allows owner, group, others and root, and
    the special bits in words. Root ignores read and write bits, and for a file needs one x bit."""
    mode, folder = st.st_mode, stat.S_ISDIR(st.st_mode)
    owner, group = user_name(st.st_uid), group_name(st.st_gid)
    root = "everything" if folder else ("read, write, execute" if mode & 0o111 else "read, write (not execute: no x bit is set)")
    out: dict = {"mode": stat.filemode(mode), "octal": f"{stat.S_IMODE(mode):04o}",
                 "allows": {f"owner {owner}": _allowed(mode >> 6 & 7, folder), f"group {group}": _allowed(mode >> 3 & 7, folder),
                            "others": _allowed(mode & 7, folder), "root": root}}
    special = []
    if mode & stat.S_ISUID:
        special.append(f"setuid (runs as its owner {owner})")
    if mode & stat.S_ISGID:
        special.append("setgid (new entries take the folder's group)" if folder else f"setgid (runs with group {group})")
    if mode & stat.S_ISVTX:
        special.append("sticky (only an entry's owner may delete or rename it)" if folder else "sticky")
    if special:
        out["special_bits"] = special
    return out


def times(st: os.stat_result, now: float) -> dict:
    return {f"{label}": f"{units.when(value)} ({units.ago(value, now)})"
            for label, value in (("modified", st.st_mtime), ("changed", st.st_ctime), ("accessed", st.st_atime))}


def sizes(st: os.stat_result) -> dict:
    allocated = st.st_blocks * 512
    out: dict = {"size": units.size(st.st_size), "size_bytes": st.st_size, "allocated_on_disk": units.size(allocated)}
    if stat.S_ISREG(st.st_mode) and st.st_size > allocated + 4096:
        out["sparse"] = f"yes: {units.size(st.st_size - allocated)} of it are holes that take no space"
    return out


def folder_summary(real: str) -> dict:
    """Entries directly in a folder: how many, the size of its files, the newest and oldest entry.
    Bounded (MAX_ENTRIES, FOLDER_SECONDS); a secret entry is counted, never sized or named."""
    count = files = total = secret = 0
    newest: tuple[float, str] | None = None
    oldest: tuple[float, str] | None = None
    stop = time.monotonic() + FOLDER_SECONDS
    cut = False
    with os.scandir(real) as listing:
        for entry in listing:
            if count >= MAX_ENTRIES or time.monotonic() > stop:
                cut = True
                break
            count += 1
            if secret_child(real, entry.name):
                secret += 1
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                files += 1
                total += st.st_size
            if newest is None or st.st_mtime > newest[0]:
                newest = (st.st_mtime, entry.name)
            if oldest is None or st.st_mtime < oldest[0]:
                oldest = (st.st_mtime, entry.name)
    out: dict = {"entries": count, "files": files, "size_of_files_directly_in_it": units.size(total)}
    if newest and oldest:
        out["newest_entry"] = f"{newest[1]} (modified {units.when(newest[0])})"
        out["oldest_entry"] = f"{oldest[1]} (modified {units.when(oldest[0])})"
    if secret:
        out["off_limits"] = f"{secret} entries hold secrets and are not inspected"
    if cut:
        out["note"] = f"stopped after {count} entries; the counts are of those"
    return out
