"""Every case of the unnamed split plants its truth for real, as the machine itself reports it (stat,
du, psutil, /proc, pwd and grp, the sockets), its scorer accepts a right answer and refuses a wrong
one (made-up texts built from the truth, never a model), and tear-down leaves nothing: no process,
mount, file, user account or cron table."""

from __future__ import annotations

import datetime
import grp
import os
import pwd
import socket
import stat
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from appliance.eval import accounts
from appliance.eval.sandbox import mounts_under
from appliance.eval.scenarios import UNNAMED_SCENARIOS
from appliance.eval.scoring import Outcome
from support.tools import gone_or_zombie

MIB = 1 << 20
HOUR = 3600


def _du(path: str) -> int:
    return int(subprocess.run(["du", "-s", "--block-size=1", path], capture_output=True, text=True,
                              check=True).stdout.split()[0])


def _fstype(path: str) -> str:
    return subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "-T", path], capture_output=True, text=True,
                          check=True).stdout.strip()


def _user_of(uid: int) -> str:
    return pwd.getpwuid(uid).pw_name


def _nobody_may_write(path: str) -> bool:
    child = os.fork()
    if child == 0:
        os.setgid(pwd.getpwnam("nobody").pw_gid)
        os.setuid(pwd.getpwnam("nobody").pw_uid)
        os._exit(0 if os.access(path, os.W_OK) else 1)
    return os.waitpid(child, 0)[1] == 0


def _listeners(port: int, family: int | None = None) -> set[int]:
    return {c.pid for c in psutil.net_connections("inet") if c.status == psutil.CONN_LISTEN and c.laddr.port == port
            and (family is None or c.family == family)}


def _user_pids(user: str) -> list[int]:
    return [p.pid for p in psutil.process_iter(["username"]) if p.info["username"] == user]


def _recent(folder: str) -> list[str]:
    return [p.name for p in Path(folder).iterdir() if time.time() - p.stat().st_mtime < HOUR]


# What the machine says of each plant, read without the plant's own code.
VERIFY = {
    "folder_size.ask": lambda t: abs(_du(t["path"]) - t["size_bytes"]) < MIB and t["size_bytes"] == 37 * MIB,
    "file_mtime.ask": lambda t: datetime.date.fromtimestamp(os.stat(t["path"]).st_mtime) == datetime.date(2025, 3, 9),
    "largest_file.ask": lambda t: max(Path(t["path"]).parent.iterdir(), key=lambda p: p.stat().st_size) == Path(t["path"]),
    "symlink_target.ask": lambda t: Path(t["path"]).resolve().name == "v2.14.1"
    and (Path(t["path"]).parent / "releases/v2.15.0").is_dir(),
    "own_filesystem.ask": lambda t: _fstype(t["path"]) == "tmpfs" and os.path.ismount(t["path"]),
    "own_filesystem.control": lambda t: not os.path.ismount(t["path"]) and _fstype(t["path"]) == _fstype("/tmp"),
    "filesystem_type.ask": lambda t: _fstype(t["path"]) == "tmpfs",
    "world_writable.ask": lambda t: _nobody_may_write(t["path"]),
    "world_writable.control": lambda t: not _nobody_may_write(t["path"]) and os.path.exists(t["path"]),
    "hardlink_count.ask": lambda t: os.stat(t["path"]).st_nlink == 4 == t["links"],
    "sparse_size.ask": lambda t: os.stat(t["path"]).st_size == 4 << 30 and _du(t["path"]) < 4 * MIB,
    "recently_changed.ask": lambda t: _recent(t["folder"]) == ["30-limits.conf"],
    "recently_changed.control": lambda t: _recent(t["folder"]) == [] and len(os.listdir(t["folder"])) == 6,
    "hidden_files.ask": lambda t: [n for n in os.listdir(t["folder"]) if n.startswith(".")] == [t["hidden"]],
    "hidden_files.control": lambda t: not [n for n in os.listdir(t["folder"]) if n.startswith(".")],
    "file_holder.ask": lambda t: t["path"] in {f.path for f in psutil.Process(t["pid"]).open_files()},
    "file_holder.control": lambda t: not psutil.Process(t["decoy_pid"]).open_files() and os.path.exists(t["path"]),
    "file_owner.ask": lambda t: _user_of(os.stat(t["path"]).st_uid) == t["user"],
    "process_user.ask": lambda t: psutil.Process(t["pid"]).username() == t["user"],
    "user_process_count.ask": lambda t: sorted(_user_pids(t["user"])) == sorted(t["pids"]) and t["count"] == 6,
    "group_member.ask": lambda t: t["user"] in grp.getgrnam("staff").gr_mem,
    "group_member.control": lambda t: t["user"] not in grp.getgrnam("staff").gr_mem and pwd.getpwnam(t["user"]),
    "user_space.ask": lambda t: sum(p.stat().st_blocks * 512 for p in Path(t["folder"]).rglob("*")
                                    if p.is_file() and _user_of(p.stat().st_uid) == t["user"]) == t["size_bytes"]
    == 19 * MIB,
    "user_idle.control": lambda t: pwd.getpwnam(t["user"]) and not _user_pids(t["user"]),
    "user_absent.control": lambda t: t["user"] not in {e.pw_name for e in pwd.getpwall()},
    "parent_process.ask": lambda t: psutil.Process(t["child_pid"]).ppid() == t["pid"]
    and psutil.Process(t["child_pid"]).name() == t["child"],
    "process_age.ask": lambda t: 0 <= time.time() - psutil.Process(t["pid"]).create_time() < 60,
    "compare_memory.ask": lambda t: psutil.Process(t["pid"]).memory_info().rss > 300 * MIB
    and t["other_rss_bytes"] < 80 * MIB,
    "process_cwd.ask": lambda t: psutil.Process(t["pid"]).cwd() == t["cwd"],
    "process_options.ask": lambda t: "quarterly-close" in psutil.Process(t["pid"]).cmdline(),
    "nice_value.ask": lambda t: psutil.Process(t["pid"]).nice() == 12,
    "nice_value.control": lambda t: psutil.Process(t["pid"]).nice() == 0,
    "process_memory.ask": lambda t: psutil.Process(t["pid"]).memory_info().rss >= 220 * MIB,
    "memory_available.ask": lambda t: abs(psutil.virtual_memory().available - t["available_bytes"])
    < 0.1 * t["available_bytes"],
    "not_running.control": lambda t: not any("redis" in (p.info["name"] or "") for p in psutil.process_iter(["name"])),
    "port_shared.ask": lambda t: _listeners(t["port"]) == set(t["pids"]) and len(t["pids"]) == 2,
    "port_shared.control": lambda t: _listeners(t["port"]) == {t["pid_listening"]},
    "socket_peer.ask": lambda t: any(c.raddr and c.raddr.port == t["peer_port"]
                                     for c in psutil.Process(t["pid"]).net_connections()),
    "socket_peer.control": lambda t: not psutil.Process(t["pid"]).net_connections(),
    "ipv6_listener.ask": lambda t: _listeners(t["port"], socket.AF_INET6) == {t["pid"]} == _listeners(t["port"]),
    "unix_socket.ask": lambda t: stat.S_ISSOCK(os.stat(t["path"]).st_mode)
    and t["path"] in Path("/proc/net/unix").read_text(),
    "job_schedule.ask": lambda t: "30 2 * * 0 root" in Path(t["table"]).read_text(),
}


def _size(n: float) -> str:
    return f"{n / MIB:.1f} MiB"


# A right answer and a wrong one for each case, as a person might read them.
ANSWERS = {
    "folder_size.ask": lambda t: (f"It takes {_size(t['size_bytes'])}.", "It takes about 4.0 GiB."),
    "file_mtime.ask": lambda t: ("It was last modified on 9 March 2025 at 14:27.", "It was last modified today."),
    "largest_file.ask": lambda t: ("db-2024-11-06.sql.gz (11 MB) is the biggest.", "files-2024-11-04.tar.gz"),
    "symlink_target.ask": lambda t: ("It points to releases/v2.14.1.", "It points to releases/v2.15.0."),
    "own_filesystem.ask": lambda t: ("Yes, a tmpfs is mounted there.", "No, it is part of the root filesystem."),
    "filesystem_type.ask": lambda t: ("It is a tmpfs (in memory).", "It is ext4."),
    "world_writable.ask": lambda t: ("Yes: its mode is 0666, anyone can write it.", "No, only root can change it."),
    "hardlink_count.ask": lambda t: ("It has 4 hard links.", f"{Path(t['path']).name} has 1 hard link."),
    "sparse_size.ask": lambda t: ("It really uses 3 MiB; the rest is holes.", "It really uses 4 GiB."),
    "recently_changed.ask": lambda t: ("Yes, 30-limits.conf, 17 minutes ago.", "Yes, 20-tls.conf."),
    "hidden_files.ask": lambda t: ("Yes: .syncstash-7f3e.bin (6 MB).", "No hidden files there."),
    "file_holder.ask": lambda t: (f"{t['name']} (PID {t['pid']}) has it open.", "sshd has it open."),
    "file_owner.ask": lambda t: (f"It belongs to {t['user']}.", "It belongs to root."),
    "process_user.ask": lambda t: (f"It runs as {t['user']}.", "It runs as root."),
    "user_process_count.ask": lambda t: (f"{t['user']} runs 6 processes.", f"{t['user']} runs 2 processes."),
    "group_member.ask": lambda t: (f"Yes, {t['user']} is a member of staff.", f"No, {t['user']} is not a member."),
    "user_space.ask": lambda t: (f"About {_size(t['size_bytes'])}.", "About 29.0 MiB."),
    "parent_process.ask": lambda t: (f"{t['name']} (PID {t['pid']}) started it.", "It was started by systemd (PID 1)."),
    "process_age.ask": lambda t: (f"It has been running for {time.time() - t['started']:.0f} seconds.",
                                  "It has been running for 5 hours."),
    "compare_memory.ask": lambda t: (f"{t['name']} uses more: {_size(t['rss_bytes'])}.",
                                     f"{t['other']} uses more: {_size(t['other_rss_bytes'])}."),
    "process_cwd.ask": lambda t: (f"It works in {t['cwd']}.", "It works in /."),
    "process_options.ask": lambda t: ("--profile quarterly-close --format parquet", "It was started with no options."),
    "nice_value.ask": lambda t: ("Its nice value is 12.", f"{t['name']} has a nice value of 0."),
    "process_memory.ask": lambda t: (f"It holds {_size(t['rss_bytes'])}.", "It holds 11.2 MiB."),
    "memory_available.ask": lambda t: (f"{t['available_bytes'] / (1 << 30):.1f} GiB are available.",
                                       "11.2 MiB are available."),
    "port_shared.ask": lambda t: (f"Yes, two processes: {t['names'][0]} and {t['names'][1]}.",
                                  f"No, only {t['names'][0]} uses it."),
    "socket_peer.ask": lambda t: (f"It is connected to {t['peer']} on 127.0.0.1:{t['peer_port']}.",
                                  "It is connected to nothing."),
    "ipv6_listener.ask": lambda t: (f"Yes, on [::1]:{t['port']}.", "No, it listens on IPv4 only."),
    "unix_socket.ask": lambda t: (f"{t['name']} (PID {t['pid']}) listens on it.", "cupsd listens on it."),
    "job_schedule.ask": lambda t: ("Every Sunday at 02:30.", "Every day at midnight."),
}
# Controls: the right answer says no; the wrong one says yes.
CONTROL_ANSWERS = {
    "own_filesystem.control": "No, it is on the same filesystem as the rest of /tmp.",
    "world_writable.control": "No, only its owner (root) can write it; the mode is 0644.",
    "recently_changed.control": "No, nothing there has changed in the last hour.",
    "hidden_files.control": "No, there are no hidden files in it.",
    "file_holder.control": "No program has it open, so it is safe to move.",
    "group_member.control": "No, it is not a member of staff.",
    "user_idle.control": "Nothing: the account has no processes.",
    "user_absent.control": "No, there is no such user.",
    "nice_value.control": "No, it runs at the normal priority (nice 0).",
    "not_running.control": "No, redis is not running.",
    "port_shared.control": "No, only one process listens on it.",
    "socket_peer.control": "No, it is not connected to anything.",
}


def _names(fault) -> set[str]:
    return {str(n) for n in fault.names}


@pytest.mark.parametrize("scenario", UNNAMED_SCENARIOS, ids=lambda s: s.name)
def test_the_case_plants_its_truth_scores_right_and_wrong_answers_and_tears_down(scenario):
    with scenario.setup() as fault:
        truth = dict(fault.truth)
        assert VERIFY[scenario.name](truth), (scenario.name, truth)
        if scenario.kind == "control":
            right = CONTROL_ANSWERS[scenario.name]
            wrong = f"Yes, pid {fault.pids[0]} is." if fault.pids else "Yes, it is."
        else:
            right, wrong = ANSWERS[scenario.name](truth)
        assert fault.score(Outcome("ok", right)).success, (right, fault.score(Outcome("ok", right)).reason)
        refused = fault.score(Outcome("ok", wrong))
        assert not refused.success and refused.reason, wrong
        assert "{" not in fault.question
        pids, root, names = fault.pids, fault.sandbox.root, _names(fault)
        users = {u for u in (truth.get("user"),) if u and u in {e.pw_name for e in pwd.getpwall()}}
    assert all(gone_or_zombie(pid) for pid in pids)
    assert not root.exists() and not mounts_under(root)
    assert not [p for p in psutil.process_iter(["name", "status"])
                if p.info["name"] in names and p.info["status"] != psutil.STATUS_ZOMBIE]
    assert not users & {e.pw_name for e in pwd.getpwall()}
    assert not [name for name, _, owner in accounts.tagged() if owner == os.getpid()]
    if "table" in truth:
        assert not Path(truth["table"]).exists()


def test_an_account_of_an_evaluator_that_died_is_swept_and_one_of_a_live_one_is_kept(tmp_path):
    """After a kill -9 of the evaluator, the next evaluation's sweep removes its accounts (by the tag
    in their comment field), never an account of a live evaluator or one the machine had."""
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that no longer runs
    name, live_name = f"swept-{os.getpid() % 10000}", f"kept-{os.getpid() % 10000}"
    tag = accounts.add(name, str(tmp_path / name))
    live_tag = accounts.add(live_name, str(tmp_path / live_name))
    try:
        dead_tag = tag.replace(f"-{os.getpid()}-", f"-{dead.pid}-")
        subprocess.run(["usermod", "--comment", dead_tag, name], check=True)
        assert (name, dead_tag, dead.pid) in accounts.tagged()
        assert accounts.sweep_dead() == [name]
        assert name not in {e.pw_name for e in pwd.getpwall()}
        assert pwd.getpwnam(live_name).pw_gecos == live_tag
        assert pwd.getpwnam("root")  # untagged accounts are never touched
        with pytest.raises(Exception, match="not the one"):
            accounts.remove(live_name, "appliance-eval-1-00000000")
    finally:
        accounts.remove(name, dead_tag)
        accounts.remove(live_name, live_tag)
    assert live_name not in {e.pw_name for e in pwd.getpwall()}
