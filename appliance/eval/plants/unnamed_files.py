"""Plants of the `unnamed` split about files and folders, all real: a folder of a known size, a file
last changed on a known day, a biggest file, a link to an older release, a file anyone may change
(and one only its owner may), a folder that is its own filesystem (and one that is not), a file with several hard links, a sparse disk image, a file changed
in the last hour among old ones (and a folder of old files only), a hidden file (and a folder with
none), a file a program holds open (and the same program holding nothing).

The truth is read back from the machine after planting (sizes from st_blocks, days from st_mtime),
so a right answer is what the tools can see.
"""

from __future__ import annotations

import datetime
import os
import time
from pathlib import Path

from appliance.eval.fault import MB, SLEEP_FOREVER, Fault, process_name
from appliance.eval.sandbox import Sandbox
from appliance.eval.scoring import mentions, never_says, no_culprit
from appliance.eval.scoring_values import any_of, day_stated, number_stated, says_yes, size_near

_OLD = datetime.datetime(2024, 1, 17, 9, 40).timestamp()  # long before any run: "old" files


def disk_bytes(path: Path) -> int:
    """What a file or tree takes on disk (its blocks), as du counts it."""
    if path.is_file():
        return path.stat().st_blocks * 512
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _age(path: Path, when: float = _OLD) -> None:
    os.utime(path, (when, when))


# -- how big is a folder -------------------------------------------------------------------------

def plant_folder_size(sandbox: Sandbox) -> Fault:
    folder = sandbox.path("home/lena/Pictures/holiday-2023")
    for i, size in enumerate((5, 3, 7, 2, 4, 6, 1, 3, 2, 4)):  # 37 MiB in ten photos, two albums
        sandbox.fill(f"home/lena/Pictures/holiday-2023/{'beach' if i % 2 else 'town'}/IMG_{4410 + i}.jpg", size * MB)
    size = disk_bytes(folder)
    return Fault(sandbox, {"path": str(folder), "size_bytes": size}, [size_near("folder's size", size)],
                 slots={"folder": str(folder)})


# -- when was a file last changed ----------------------------------------------------------------

def plant_file_mtime(sandbox: Sandbox) -> Fault:
    path = sandbox.write("srv/wiki/pages/onboarding.md", "# Onboarding\n\n1. Get a laptop.\n2. Ask for access.\n")
    when = datetime.datetime(2025, 3, 9, 14, 27)
    _age(path, when.timestamp())
    return Fault(sandbox, {"path": str(path), "modified": when.isoformat()},
                 [day_stated("day it was last changed", when.date())], slots={"file": str(path)})


# -- the biggest file in a folder ----------------------------------------------------------------

def plant_largest_file(sandbox: Sandbox) -> Fault:
    folder = sandbox.path("var/backups/nightly")
    for day, size in zip(range(1, 9), (2, 3, 2, 4, 3, 2, 3, 4)):
        sandbox.fill(f"var/backups/nightly/files-2024-11-0{day}.tar.gz", size * MB)
    biggest = sandbox.fill("var/backups/nightly/db-2024-11-06.sql.gz", 11 * MB)
    return Fault(sandbox, {"path": str(biggest), "size_bytes": disk_bytes(biggest)},
                 [mentions("biggest file", [biggest.name, "db-2024-11-06"])], slots={"folder": str(folder)})


# -- where does a link point -----------------------------------------------------------------------

def plant_symlink_target(sandbox: Sandbox) -> Fault:
    for release in ("v2.13.0", "v2.14.1", "v2.15.0"):
        sandbox.write(f"srv/storefront/releases/{release}/VERSION", release + "\n")
    link = sandbox.path("srv/storefront/current")
    link.symlink_to(sandbox.path("srv/storefront/releases/v2.14.1"))
    return Fault(sandbox, {"path": str(link), "target": str(os.readlink(link)), "release": "v2.14.1"},
                 [mentions("release the link points to", ["v2.14.1", "2.14.1"])], slots={"link": str(link)})


# -- may other users change a file -----------------------------------------------------------------

_OPEN_TO_ALL = ("anyone can", "everyone can", "any user can", "all users can", "other users can", "world-writable",
                "world writable", "writable by everyone", "writable by anyone", "writable by all", "rw-rw-rw", "0666",
                "666")


def _settings(sandbox: Sandbox, mode: int) -> Path:
    os.chmod(sandbox.root, 0o755)  # the sandbox itself is private (mkdtemp); its tree is what is asked
    path = sandbox.write("srv/app/config/settings.ini", "[server]\nport = 8080\nworkers = 4\n")
    for folder in ("srv", "srv/app", "srv/app/config"):
        os.chmod(sandbox.path(folder), 0o755)
    os.chmod(path, mode)
    return path


def plant_world_writable(sandbox: Sandbox) -> Fault:
    path = _settings(sandbox, 0o666)
    return Fault(sandbox, {"path": str(path), "mode": "0666"}, [says_yes("anyone may write it", _OPEN_TO_ALL)],
                 slots={"file": str(path)})


def control_world_writable(sandbox: Sandbox) -> Fault:
    path = _settings(sandbox, 0o644)
    fine = ("only root", "only the owner", "only its owner", "only by root", "only by its owner", "only by the owner",
            "cannot write", "can't write", "cannot change", "can't change", "not writable", "read-only for", "0644",
            "rw-r--r--")
    return Fault(sandbox, {"path": str(path), "mode": "0644", "fault": None}, [no_culprit(fine=fine)],
                 slots={"file": str(path)})


# -- how many hard links ---------------------------------------------------------------------------

def plant_hardlink_count(sandbox: Sandbox) -> Fault:
    path = sandbox.fill("srv/media/library/intro-2024.mp4", 2 * MB)
    for other in ("srv/media/playlists/welcome/intro.mp4", "srv/media/kiosk/loop-01.mp4", "home/lena/Videos/intro.mp4"):
        sandbox.path(other).parent.mkdir(parents=True, exist_ok=True)
        os.link(path, sandbox.path(other))
    links = path.stat().st_nlink
    return Fault(sandbox, {"path": str(path), "links": links},
                 [any_of(number_stated("number of hard links", links),
                         mentions("other names", [f"{links - 1} other", "three other"]))],
                 slots={"file": str(path)})


# -- what a sparse file really takes ---------------------------------------------------------------

def plant_sparse_size(sandbox: Sandbox) -> Fault:
    path = sandbox.path("var/lib/vms/builder/disk0.img")
    path.parent.mkdir(parents=True)
    with open(path, "wb") as image:
        image.truncate(4 << 30)  # 4 GiB apparent
        for offset in (0, 1 << 30, 3 << 30):  # 3 MiB of real data in three places
            image.seek(offset)
            image.write(os.urandom(MB))
    used = disk_bytes(path)
    return Fault(sandbox, {"path": str(path), "apparent_bytes": 4 << 30, "disk_bytes": used},
                 [size_near("space it really takes", used, within=0.3)], slots={"file": str(path)})


# -- what changed in the last hour -------------------------------------------------------------------

def _conf_d(sandbox: Sandbox, *, touched: bool) -> tuple[Path, Path]:
    folder = sandbox.path("srv/gateway/conf.d")
    names = ("00-base.conf", "10-upstreams.conf", "20-tls.conf", "30-limits.conf", "40-cache.conf", "50-logging.conf")
    for name in names:
        _age(sandbox.write(f"srv/gateway/conf.d/{name}", f"# {name}\ninclude defaults;\n"))
    changed = folder / "30-limits.conf"
    if touched:
        changed.write_text("# 30-limits.conf\nrate_limit 2000r/s;\n")
        stamp = time.time() - 17 * 60  # seventeen minutes ago
        os.utime(changed, (stamp, stamp))
    _age(folder)
    return folder, changed


def plant_recently_changed(sandbox: Sandbox) -> Fault:
    folder, changed = _conf_d(sandbox, touched=True)
    return Fault(sandbox, {"path": str(changed), "folder": str(folder)},
                 [mentions("file changed in the last hour", [changed.name, "30-limits"])], slots={"folder": str(folder)})


def control_recently_changed(sandbox: Sandbox) -> Fault:
    folder, _ = _conf_d(sandbox, touched=False)
    fine = ("not been modified", "not been changed", "hasn't been", "haven't been", "was last changed in 2024",
            "were last changed in 2024", "all date from", "january 2024", "2024-01-17")
    return Fault(sandbox, {"folder": str(folder), "fault": None}, [no_culprit(fine=fine)], slots={"folder": str(folder)})


# -- hidden files ----------------------------------------------------------------------------------

def _downloads(sandbox: Sandbox, *, hidden: bool) -> Path:
    folder = sandbox.path("home/lena/Downloads")
    for name in ("invoice-0423.pdf", "setup-notes.txt", "photos.zip"):
        sandbox.fill(f"home/lena/Downloads/{name}", 256 << 10)
    if hidden:
        sandbox.fill("home/lena/Downloads/.syncstash-7f3e.bin", 6 * MB)
    return folder


def plant_hidden_files(sandbox: Sandbox) -> Fault:
    folder = _downloads(sandbox, hidden=True)
    return Fault(sandbox, {"folder": str(folder), "hidden": ".syncstash-7f3e.bin"},
                 [mentions("hidden file", ["syncstash"])], slots={"folder": str(folder)})


def control_hidden_files(sandbox: Sandbox) -> Fault:
    folder = _downloads(sandbox, hidden=False)
    return Fault(sandbox, {"folder": str(folder), "fault": None}, [no_culprit(fine=("no hidden",))],
                 slots={"folder": str(folder)})


# -- which program has a file open ------------------------------------------------------------------

def _journal(sandbox: Sandbox, *, held: bool) -> tuple[int, str, Path]:
    path = sandbox.fill("var/lib/ledger/journal.db", 512 << 10)
    name = process_name("ledgerd")
    code = (f"handle = open({str(path)!r}, 'r+b')\n" if held else "") + "ready()" + SLEEP_FOREVER
    pid, _ = sandbox.spawn(name, code, args=["--data", str(path.parent)])
    return pid, name, path


def plant_file_holder(sandbox: Sandbox) -> Fault:
    pid, name, path = _journal(sandbox, held=True)
    return Fault(sandbox, {"pid": pid, "name": name, "path": str(path)},
                 [mentions("program holding the file", [name, "ledgerd"], pid=pid)], slots={"file": str(path)},
                 names=(name,))


def control_file_holder(sandbox: Sandbox) -> Fault:
    pid, name, path = _journal(sandbox, held=False)
    return Fault(sandbox, {"fault": None, "decoy": name, "decoy_pid": pid, "path": str(path)},
                 [no_culprit(decoys=[name, "ledgerd"], fine=("safe to move", "no program", "not open"))],
                 slots={"file": str(path)}, names=(name,))



# -- a folder that is a filesystem of its own --------------------------------------------------------

_OWN = ("tmpfs", "own filesystem", "separate filesystem", "own separate", "own disk", "separate disk", "own mount",
        "separate mount", "separately mounted", "mount point")
_NOT_OWN = ("not a separate", "not its own", "not on its own", "part of the root", "part of the main",
            "not a mount point", "not mounted separately")


def plant_own_filesystem(sandbox: Sandbox) -> Fault:
    mount = sandbox.mount_tmpfs("srv/scratch", size="32m")
    sandbox.fill("srv/scratch/render-cache.bin", 2 * MB)
    return Fault(sandbox, {"path": str(mount), "filesystem": "tmpfs", "mount": str(mount)},
                 [never_says("says it is not a filesystem of its own", _NOT_OWN), says_yes("its own filesystem", _OWN)],
                 slots={"folder": str(mount)})


def control_own_filesystem(sandbox: Sandbox) -> Fault:
    folder = sandbox.path("srv/archive")
    sandbox.fill("srv/archive/2023-q4.tar", 2 * MB)
    return Fault(sandbox, {"path": str(folder), "fault": None}, [no_culprit(fine=_NOT_OWN + ("same filesystem", "root filesystem"))],
                 slots={"folder": str(folder)})


def plant_filesystem_type(sandbox: Sandbox) -> Fault:
    mount = sandbox.mount_tmpfs("var/cache/thumbnails", size="48m")
    for i in range(6):
        sandbox.fill(f"var/cache/thumbnails/t{i:03d}.webp", 128 << 10)
    return Fault(sandbox, {"path": str(mount), "filesystem": "tmpfs"}, [mentions("filesystem type", ["tmpfs"])],
                 slots={"folder": str(mount)})
