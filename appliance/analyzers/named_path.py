"""Verdicts on a path the question names, by what the question asks about it: who holds it ("target
is busy", "won't eject", "which program has it open"), how its lookup goes ("No such file or
directory", "Permission denied"), and how many entries its folders hold ("listing it takes
forever"). The engine gathers them before the first step, beside the place's other verdicts.

Why by the question's words: each of these reads a whole table (every process's links, every
component, every entry below a folder) that answers one kind of question only. A path that does
not exist always gets its lookup: the cause is the first thing a person needs.
Thresholds and why: docs/analyzers.md.
"""

from __future__ import annotations

import os
import pwd
import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from appliance.analyzers.base import OK, WARNING, Finding
from appliance.analyzers.common import candidates, quote, who
from appliance.analyzers.config_file import is_config_path
from appliance.analyzers.naming import shown_path
from appliance.analyzers.growth import SHRINKS, TRENDS, window
from appliance.analyzers.mounts import all_mounts, is_storage
from appliance.analyzers.readings import Readings
from appliance.tools import units
from appliance.tools.components import Lookup, account, blocked_for, look_up, ls_mode
from appliance.tools.growth import growers, place_series, split_free, until
from appliance.tools.holders import WAYS, holding
from appliance.tools.logs import is_log_path
from appliance.tools.walk import WalkStats, walk

HOLDERS, LOOKUP, COUNTS, GROWTH = "path_holders", "path_lookup", "file_counts", "disk_growth"
CROWDED = 10_000  # entries directly in one folder: `ls` and file managers slow down visibly
COUNT_ENTRIES, COUNT_SECONDS = 200_000, 2.0  # the bounds of the count's walk
GROWING = 64 << 10  # bytes per second, steady over the window: 5 GiB a day
# Words that ask who holds a place; the strong ones say that something is in the way (a warning
# when a process holds it), the others ask who has it (the holders are then a fact, not a fault).
# Taking a disk away, in a person's words: "pull out", "take out", "disconnect", "detach".
_TAKE_AWAY = r"unplug|pull(?:ing)? (?:\w+ ){0,2}?out|take (?:\w+ ){0,2}?out|disconnect|detach"
_HOLD = re.compile(rf"\b(busy|eject|unmount|umount|in use|{_TAKE_AWAY}|locked|still open|keeps? .{{0,20}}open|using|"
                   r"use it|ha(?:s|ve) .{0,40}\bopen|remove|delete)\b|\b(?:who|which|what)\b.{0,40}\b(?:holds?|holding)\b",
                   re.I)
# Taking a disk away, or failing to: "busy" alone is how people describe a disk's activity too
# ("the disk is busy all the time and everything stutters"), so it takes "target/device is busy".
_AWAY = re.compile(rf"\b(eject|unmount|umount|in use|{_TAKE_AWAY}|(?:target|device|resource) is busy)\b", re.I)
_IN_THE_WAY = re.compile(rf"\b(busy|eject|unmount|umount|in use|{_TAKE_AWAY}|locked|still open|keeps? .{{0,20}}open|"
                         r"can'?t (?:remove|delete)|cannot (?:remove|delete))\b", re.I)
# Permission: a denial the person reports (judged for anyone but the owners when no user is named),
# or "can USER read/open X" (judged for the user named, else for anyone but the owners).
_DENIAL = re.compile(r"permission|denied|(?:not|n't) allowed|forbidden", re.I)
# (also "what stops X from reading …", "is X able to open …"); the words shared with _USERS
_READS, _BARS, _MAY = r"(?:read|open|access)", r"(?:stop\w*|keep\w*|prevent\w*|block\w*)", r"(?:can|could|may)"
_CAN_READ = re.compile(rf"\b{_MAY}(?:n'?t|not)?\b.{{0,40}}\b{_READS}\b"
                       rf"|\b{_BARS}\b.{{0,40}}\bfrom\s+{_READS}\w*"
                       rf"|\b(?:able|allowed)\s+to\s+{_READS}\b", re.I)
_LOOKUP = re.compile(r"no such file|not found|\bexists?\b|doesn'?t exist|can'?t find|cannot find|missing|"
                     r"broken link|symlink|\blink\b|" + _DENIAL.pattern + "|" + _CAN_READ.pattern, re.I)
_COUNTS = re.compile(r"\b(forever|hangs?|slow|ages|many files|number of files|how many files|lots of files|"
                     r"tons of files|listing|list(?:ing)? (?:it|the folder)|\bls\b|file manager)", re.I)
_GROWS = re.compile(r"\b(" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in
                                       ("grow", "bigger", "filling", "fills up", "fill up", *TRENDS, *SHRINKS))
                     + r")\b", re.I)
_USERS = (re.compile(r"\b(?:user|as|account)\s+['\"]?([a-z_][a-z0-9_-]{0,31})\b", re.I),
          re.compile(r"\b([a-z_][a-z0-9_-]{0,31})\s+user\b", re.I),
          # the one who reads: "stopping www-data from reading", "can backup open" (an account only)
          re.compile(rf"\b(?:{_BARS}|{_MAY})(?:n'?t|'t|not)?\s+([a-z_][a-z0-9_-]{{0,31}})\s+(?:from\s+)?{_READS}",
                     re.I),
          re.compile(rf"\b(?:is|are|was)\s+([a-z_][a-z0-9_-]{{0,31}})\s+(?:allowed|able|permitted)\s+to\s+{_READS}",
                     re.I),
          # the one who is denied: "www-data gets permission denied", "denied for backup", "when deploy opens"
          re.compile(r"\b([a-z_][a-z0-9_-]{0,31})\s+(?:gets?|got|getting|hits?|sees?|receives?)\s+(?:an?\s+)?"
                     r"(?:permission|access)\s+denied", re.I),
          re.compile(r"\bdenied\s+(?:for|to)\s+(?:the\s+)?(?:user\s+)?([a-z_][a-z0-9_-]{0,31})\b", re.I),
          re.compile(rf"\b(?:when|if|as)\s+([a-z_][a-z0-9_-]{{0,31}})\s+(?:tries\s+to\s+)?{_READS}", re.I),
          # the one who fails: "www-data keeps failing on X", "backup can't get at X", "ok for www-data"
          re.compile(r"\b([a-z_][a-z0-9_-]{0,31})\s+(?:can'?t|cannot|could\s*n[o']?t|is\s+unable\s+to|fails?\s+to|"
                     r"keeps?\s+failing|failed\s+to)\b", re.I),
          re.compile(r"\b(?:ok|okay|fine|readable|accessible|usable)\s+(?:for|by)\s+([a-z_][a-z0-9_-]{0,31})\b", re.I),
          # the one in trouble, or asked about: "www-data has trouble with X", "does backup have access to X"
          re.compile(r"\b([a-z_][a-z0-9_-]{0,31})\s+(?:has|have|had|is\s+having|keeps\s+having|runs\s+into)\s+"
                     r"(?:some\s+|a\s+)?(?:trouble|problems?|issues?)\b", re.I),
          re.compile(r"\b(?:does|do|did|can|could|will|would)\s+([a-z_][a-z0-9_-]{0,31})\s+(?:still\s+)?(?:have|get)\s+"
                     r"(?:\w+\s+)?(?:access|permissions?|rights)\b", re.I),
          re.compile(r"\b(?:access|permissions?|rights)\s+(?:for|of)\s+(?:the\s+)?(?:user\s+|account\s+)?"
                     r"([a-z_][a-z0-9_-]{0,31})\b", re.I))


@dataclass(frozen=True)
class PathAsk:
    """What a question asks about a path it names, read once from its words (the engine's
    question reader keeps it with the question): its lookup, a denial, who holds it (and whether
    the place is in the way), how many entries, whether it grows, and a user it names."""

    lookup: bool = False
    denial: bool = False
    holders: bool = False
    in_the_way: bool = False
    counts: bool = False
    grows: bool = False
    user: str | None = None
    plain: bool = False  # a plain file asked nothing particular: its way is judged for others
    disk: bool = False  # the words name a disk one takes away (a stick, a drive, a card, a mount)
    away: bool = False  # the words take a disk away, or cannot ("eject", "unmount", "target is busy")


# Files said to be deleted: what holds them holds space, not the place (the deleted-files check's question).
_DELETED = re.compile(r"\bdeleted\b|\bremoved\s+files?\b", re.I)


def _asks_holders(question: str) -> bool:
    """Who holds the place: asked in words of holding, unless what is held is deleted files ("is any
    deleted file still holding space on X? which process holds it?") and nothing says X is in the way."""
    if not _HOLD.search(question):
        return False
    return not _DELETED.search(question) or bool(_IN_THE_WAY.search(question))


def path_ask(question: str) -> PathAsk:
    """The words' reading of what a question asks about a path it names. A path named beside an
    account of this machine ("the app runs as www-data and fails on X") asks whether that account
    gets through to it, whatever words the trouble is put in."""
    user = named_user(question)
    return PathAsk(lookup=bool(_LOOKUP.search(question)) or user is not None,
                   denial=bool(_DENIAL.search(question) or _CAN_READ.search(question)) or user is not None,
                   holders=_asks_holders(question), in_the_way=bool(_IN_THE_WAY.search(question)),
                   counts=bool(_COUNTS.search(question)), grows=bool(_GROWS.search(question)), user=user,
                   disk=bool(_DISK.search(question)), away=bool(_AWAY.search(question)))


def path_findings(path: str, question: "PathAsk | str", readings: Readings, *, storage: bool = False) -> list[Finding]:
    """The verdicts the question asks for on one named path (absolute or ~). A plain file (no log,
    no configuration: no other verdict judges it) named in a question not about space (`storage`)
    whose words ask nothing particular of it ("is X ok?", "the app has trouble with X") gets its
    lookup, its general health, so the answer rests on that rather than on the machine's."""
    ask = question if isinstance(question, PathAsk) else path_ask(question)
    written = os.path.normpath(os.path.expanduser(path))
    if readings.policy.is_secret(Path(written)):
        return []
    found: list[Finding] = []
    exists = os.path.lexists(written) and os.path.exists(written)
    plain = exists and not storage and os.path.isfile(written) and not is_log_path(written) \
        and not is_config_path(written)
    if plain and ask == PathAsk():  # who may reach it is part of its health; an owner's own home closed
        ask = PathAsk(lookup=True, denial=True, plain=True)  # to others is how homes are kept, no fault
    if not exists or ask.lookup:
        found.append(lookup_finding(written, ask, readings))
    if exists and ask.holders:
        found.append(holders_finding(written, ask, readings))
    if exists and os.path.isdir(written) and ask.counts:
        found.append(counts_finding(written, readings))
    if exists and ask.grows:
        found.append(growth_finding(written, readings))
    return found


def named_user(question: str) -> str | None:
    """A user of this machine the question names ("as www-data", "user backup", "the deploy user")."""
    for pattern in _USERS:
        for match in pattern.finditer(question):
            if account(match.group(1)) is not None:
                return match.group(1)
    return None


def lookup_finding(path: str, ask: PathAsk, readings: Readings) -> Finding:
    """The path component by component: missing (why), blocked for a user, or fine."""
    found = look_up(path)
    shown = shown_path(readings, path)
    links = [s for s in found.steps if s.kind == "link"]
    values: dict = {"path": shown, "exists": found.exists,
                    "links": [f"{shown_path(readings, s.path)} -> {shown_path(readings, s.target)}" for s in links]}
    if not found.exists:
        return _missing(found, shown, values, readings)
    if ask.denial:
        blocked = _blocked(found, ask.user)
        if blocked is not None and ask.plain and _owners_home(blocked[0]):
            blocked = None
        if blocked is not None:
            step, refused, user = blocked
            place = shown_path(readings, step.path)
            values.update(place=place, mode=ls_mode(step.st) if step.st else None, user=user, refused=refused)
            if ask.plain:  # no reader named, no denial reported: a folder kept private is a fact, not a fault
                return Finding(LOOKUP, OK, f"{shown} exists{via_links(values)}; {user} may not {refused} {place} "
                               f"({values['mode']})", values, path=path)
            return Finding(LOOKUP, WARNING, f"permission denied on the way to {shown}: {user} may not {refused} "
                           f"{place} ({values['mode']})", values, culprit=place, path=step.path)
    via = via_links(values)
    if not ask.denial:
        return Finding(LOOKUP, OK, f"{shown} exists{via}: every folder on the way can be passed", values, path=path)
    reader = ask.user or "a user other than the owner"  # who _blocked judged
    read = "" if os.path.isdir(path) else " and may read it"
    return Finding(LOOKUP, OK, f"{shown} exists{via}: {reader} can pass every folder on the way{read}", values,
                   path=path)


def via_links(values: dict) -> str:
    return f" through {'; '.join(values['links'])}" if values["links"] else ""


def _owners_home(step) -> bool:
    """The folder is its owner's home directory (kept closed to others by design)."""
    try:
        home = pwd.getpwuid(step.st.st_uid).pw_dir if step.st is not None else ""
    except KeyError:
        return False
    return bool(home) and os.path.realpath(home) == os.path.realpath(step.path)


def _missing(found: Lookup, shown: str, values: dict, readings: Readings) -> Finding:
    dangling = next((s for s in found.steps if s.kind == "link" and s.path == (found.steps[-1].via or "")), None)
    culprit = dangling.path if dangling else os.path.dirname(found.steps[-1].path)
    values.update(problem=quote(found.problem), reached=shown_path(readings, found.stopped_at))
    return Finding(LOOKUP, WARNING, f"{shown} does not exist: {values['problem']}", values,
                   culprit=shown_path(readings, culprit), path=culprit)


def _blocked(found: Lookup, user: str | None):
    """(step, refused, user) for the user the question names, else for anyone but the owners."""
    who_is = account(user) if user else None
    uid, gids = who_is if who_is else (65534, frozenset({65534}))
    blocked = blocked_for(found, uid, gids)
    if blocked is None:
        return None
    return (*blocked, user or "a user other than the owner")


# Where a person's own disks are mounted (a stick, a card, a disk mounted by hand): "my usb stick
# won't eject, it says it is in use" names no path, and these are the mounts it can mean.
_DESKTOP_MOUNTS = ("/media/", "/run/media/")  # where desktops mount sticks
_PERSONAL_MOUNTS = (*_DESKTOP_MOUNTS, "/mnt/")
_DISK = re.compile(r"\b(?:usb|stick|thumb ?drive|flash ?drive|pen ?drive|drive|disk|disc|sd ?card|card|device|"
                   r"partition|volume|mount(?:ed)?|external|backup disk|cd|dvd)s?\b", re.I)
_REMOVABLE_TYPES = frozenset({"vfat", "exfat", "ntfs", "ntfs3", "fuseblk", "iso9660", "udf", "hfsplus"})
MOUNTS_IN_THE_WAY = 3


def mounts_in_the_way(ask: PathAsk, readings: Readings) -> list[str]:
    """The mounts a question about taking a disk away means when it names none: those under
    /media, /mnt or /run/media, and any other of a removable disk's filesystem type (not /boot's),
    at most MOUNTS_IN_THE_WAY; none unless the words say something is in the way (eject, busy …)."""
    if not (ask.holders and ask.in_the_way and ask.disk and ask.away):  # "is the cpu busy?" takes no disk away
        return []
    found = [m for m in all_mounts(readings) if is_storage(m) and not m.mountpoint.startswith("/boot")
             and (m.mountpoint.startswith(_PERSONAL_MOUNTS) or m.fstype in _REMOVABLE_TYPES)]
    # a removable disk's type first, then where desktops mount sticks, then disks mounted by hand
    found.sort(key=lambda m: (m.fstype not in _REMOVABLE_TYPES, not m.mountpoint.startswith(_DESKTOP_MOUNTS)))
    return list(dict.fromkeys(m.mountpoint for m in found))[:MOUNTS_IN_THE_WAY]


def holders_finding(path: str, ask: PathAsk, readings: Readings) -> Finding:
    """Which processes (not the appliance's own) hold the path, and how: a warning for a mount point
    or a question that says the place is in the way, else the holders as a fact."""
    real = os.path.realpath(path)
    shown = shown_path(readings, real)
    table = {p["pid"]: p for p in candidates(readings)}
    held = [h for h in holding(real, deadline=2.0).holders if h.pid in table]
    mount = os.path.ismount(real)
    values: dict = {"path": shown, "mount_point": mount, "holders": len(held),
                    "held_by": [f"{who(table[h.pid])} as {', '.join(w for w in WAYS if w in h.ways)}" for h in held[:5]]}
    if not held:
        return Finding(HOLDERS, OK, f"nothing holds {shown}: no process has a file open, its working directory or a "
                       f"mapped file there" + ("; it can be unmounted" if mount else ""), values, path=real)
    first = table[held[0].pid]
    consequence = "unmounting it fails with 'target is busy' until they let go" if mount else "they keep it in use"
    severity = WARNING if mount or ask.in_the_way else OK
    return Finding(HOLDERS, severity, f"{shown} is held by {'; '.join(values['held_by'][:3])}"
                   + (f" and {len(held) - 3} more" if len(held) > 3 else "") + f": {consequence}",
                   values, culprit=who(first) if severity != OK else None, pid=held[0].pid, path=real)


def counts_finding(path: str, readings: Readings) -> Finding:
    """The folder below `path` with the most entries directly in it (a bounded walk)."""
    direct: Counter[tuple[str, ...]] = Counter()
    stats = WalkStats()
    try:
        fd, real = readings.policy.open_dir(path, "list")
    except Exception as exc:  # PathDenied, OSError: the verdict says it could not count
        return Finding(COUNTS, OK, f"cannot count the files under {shown_path(readings, path)}: {exc}", {"path": path})
    for found in walk(real, fd, stats, COUNT_ENTRIES, time.monotonic() + COUNT_SECONDS):
        if found.named_depth >= len(found.parts):
            direct[found.parts[:-1]] += 1
    folder, count = direct.most_common(1)[0] if direct else ((), 0)
    place = shown_path(readings, str(real.joinpath(*folder)))
    bound = " (the count stopped at its bound: at least this many)" if stats.stopped else ""
    values = {"path": shown_path(readings, str(real)), "folder": place, "entries": count, "files": stats.files,
              "dirs": stats.dirs, "complete": stats.stopped is None}
    if count >= CROWDED:
        return Finding(COUNTS, WARNING, f"{place} holds {count:,} entries directly{bound}: listing it (ls, a file "
                       f"manager, a shell's * ) reads and sorts them all (a warning from {CROWDED:,})",
                       values, culprit=place, path=str(real.joinpath(*folder)))
    return Finding(COUNTS, OK, f"no crowded folder under {values['path']}: the most entries in one folder is {count:,} "
                   f"({place}); {stats.files:,} files in all{bound} (a warning from {CROWDED:,})", values)


def growth_finding(path: str, readings: Readings) -> Finding:
    """The files at or below `path` that grew steadily over the check's growth window, with the
    writer (a process holding the file open) and its filesystem's time to full at that rate."""
    real = os.path.realpath(path)
    shown = shown_path(readings, real)
    try:
        taken, spanned = place_series(real, readings.policy, window(readings))
    except Exception as exc:  # PathDenied, OSError: the verdict says it could not watch
        return Finding(GROWTH, OK, f"cannot watch {shown}: {quote(str(exc))}", {"path": shown})
    sizes, start_free, end_free = split_free(taken)
    grown = growers(sizes, spanned)
    steady = [g for g in grown if g.steady and g.rate >= GROWING]
    values: dict = {"path": shown, "window_seconds": round(spanned, 2), "free_bytes": end_free,
                    "files_grown": len(grown)}
    if not steady:
        fastest = (f"; the fastest, {shown_path(readings, os.path.join(real, str(grown[0].key)))}, grew "
                   f"{units.rate(grown[0].rate)}") if grown else ""
        return Finding(GROWTH, OK, f"nothing under {shown} grows fast: {len(grown)} file(s) grew in {spanned:.1f} s"
                       f"{fastest} (a warning from {units.rate(GROWING)} in nearly every interval)", values, path=real)
    first = steady[0]
    file = os.path.join(real, str(first.key)) if first.key else real
    loss = max(0.0, (start_free - end_free) / spanned)
    table = {p["pid"]: p for p in candidates(readings)}
    writer = next((h for h in holding(file, deadline=0.5).holders if h.pid in table and "open file" in h.ways), None)
    values.update(file=shown_path(readings, file), bytes_per_second=round(first.rate),
                  writer=who(table[writer.pid]) if writer else None, seconds_to_full=round(end_free / loss) if loss else None)
    by = f", written by {values['writer']}" if writer else ""
    full = f"; its filesystem has {units.size(end_free)} free: full in {until(end_free, loss)} at this rate" if loss else ""
    return Finding(GROWTH, WARNING, f"growing: {values['file']} grew from {units.size(first.first)} to "
                   f"{units.size(first.last)} in {spanned:.1f} s ({units.rate(first.rate)}){by}{full}",
                   values, culprit=values["file"], pid=writer.pid if writer else None, path=file)
