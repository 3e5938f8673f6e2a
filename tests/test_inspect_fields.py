"""The fields and flags of issue 52's profiles that no other test plants: each on a real thing the test
makes (a FIFO, a bound socket, devices, set times, a sparse file, encodings, an attribute, a read-only
mount, a traced process, an environment, a listening program, a failed unit, an account, a CPU quota).

Mounts and the failed unit are made in a private mount namespace (`unshare -m`), so nothing of them
is seen outside it: the real command runs inside and its JSON is read here."""

from __future__ import annotations

import contextlib
import ctypes
import datetime as dt
import json
import os
import secrets
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

from support.store import checkout_env
from support.tools import kill, registry_for

REGISTRY = registry_for("/tmp", default=True, self_pids=frozenset())


def inspect(tool: str, **args) -> dict:
    out = REGISTRY.call(tool, args)
    assert out["status"] == "ok", out
    return out["data"]


def kinds(data: dict) -> dict[str, dict]:
    return {f["kind"]: f for f in data["flags"]}


def in_namespace(script: str, *argv: str) -> dict:
    """Run shell `script` in a private mount namespace, then `appliance check ARGV --json` there."""
    launch = f"{sys.executable} -m appliance.cli check " + " ".join(f"'{a}'" for a in argv) + " --json"
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-ec", f"{script}\n{launch}"],
                          capture_output=True, text=True, env=checkout_env(), timeout=60)
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout)


# ---- inspect_path ------------------------------------------------------------------------------

def test_each_kind_of_file_is_named_by_its_type(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    bound = socket.socket(socket.AF_UNIX)
    bound.bind(str(tmp_path / "sock"))
    block = next(f"/dev/{name}" for name in sorted(os.listdir("/sys/block")) if os.path.exists(f"/dev/{name}"))
    try:
        assert inspect("inspect_path", path=str(fifo))["type"] == "FIFO (named pipe)"
        assert inspect("inspect_path", path=str(tmp_path / "sock"))["type"] == "socket"
    finally:
        bound.close()
    assert inspect("inspect_path", path="/dev/null")["type"] == "character device"
    assert stat.S_ISBLK(os.stat(block).st_mode) and inspect("inspect_path", path=block)["type"] == "block device"
    assert inspect("inspect_path", path=str(tmp_path))["type"] == "folder"


def test_times_are_dates_and_ages_and_blocks_show_a_hole(tmp_path):
    path = tmp_path / "old.log"
    path.write_text("x" * 5000)
    now = time.time()
    os.utime(path, (now - 3 * 86400, now - 10 * 86400))
    data = inspect("inspect_path", path=str(path))
    day = lambda seconds: dt.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d")  # noqa: E731
    assert data["accessed"].startswith(day(now - 3 * 86400)) and "(3 d " in data["accessed"]
    assert data["modified"].startswith(day(now - 10 * 86400)) and "(10 d " in data["modified"]
    assert data["changed"].startswith(day(now)) and data["changed"].endswith("ago)")  # utime changes ctime
    assert data["allocated_on_disk"] in ("8.0 KiB", "12.0 KiB") and "sparse" not in data
    hole = tmp_path / "hole.img"
    with open(hole, "wb") as handle:
        handle.truncate(8 << 20)
    assert inspect("inspect_path", path=str(hole))["allocated_on_disk"] == "0 B"


def test_text_names_its_encoding_and_line_endings(tmp_path):
    texts = {"ascii.txt": (b"plain\n", "ASCII", "LF (Unix)"), "utf8.txt": ("café naïve\n".encode(), "UTF-8", "LF (Unix)"),
             "dos.txt": (b"one\r\ntwo\r\n", "ASCII", "CRLF (Windows)"),
             "latin.txt": ("le café est très chaud ce matin\n".encode("latin-1"), "8-bit, not UTF-8 (perhaps Latin-1)",
                           "LF (Unix)")}
    for name, (body, encoding, endings) in texts.items():
        (tmp_path / name).write_bytes(body)
        content = inspect("inspect_path", path=str(tmp_path / name))["content"]
        assert (content["kind"], content["encoding"], content["line_endings"]) == ("text", encoding, endings), name
    (tmp_path / "wide.txt").write_bytes("\ufeffhi\n".encode("utf-16-le"))
    assert inspect("inspect_path", path=str(tmp_path / "wide.txt"))["content"]["encoding"].startswith("UTF-16")
    (tmp_path / "empty").write_bytes(b"")
    assert inspect("inspect_path", path=str(tmp_path / "empty"))["content"]["kind"] == "empty"


def test_the_no_dump_attribute_is_read_with_the_ioctl(tmp_path):
    path = tmp_path / "cache.bin"
    path.write_text("x")
    subprocess.run(["chattr", "+d", str(path)], check=True)
    data = inspect("inspect_path", path=str(path))
    assert "no dump" in data["attributes"] and data["lsattr"][6] == "d"
    assert subprocess.run(["lsattr", str(path)], capture_output=True, text=True).stdout.split()[0] == data["lsattr"]


def test_a_read_only_mount_without_devices_is_named_with_its_options(tmp_path):
    point = tmp_path / "ro"
    point.mkdir()
    out = in_namespace(f"mount -t tmpfs -o nodev,size=1m tmpfs {point}\necho hi > {point}/f\n"
                       f"mount -o remount,ro,nodev {point}", str(point / "f"))
    system = out["data"]["filesystem"]
    assert system["mount_point"] == str(point) and {"ro", "nodev"} <= set(system["options"].split(","))
    assert "ro (read-only)" in system["restrictions"]
    assert "nodev (device files do not work)" in system["restrictions"]
    assert not any(str(point) in line for line in Path("/proc/self/mountinfo").read_text().splitlines())


# ---- inspect_process ---------------------------------------------------------------------------

PTRACE_ATTACH, PTRACE_DETACH = 16, 17


def test_a_process_stopped_by_a_tracer_is_flagged_with_the_tracer():
    child = subprocess.Popen(["sleep", "60"])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    try:
        assert libc.ptrace(PTRACE_ATTACH, child.pid, None, None) == 0, os.strerror(ctypes.get_errno())
        os.waitpid(child.pid, os.WUNTRACED)  # the attach stop
        data = inspect("inspect_process", target=str(child.pid))
        first = data["profiles"][0]
        assert first["state"].startswith("t: stopped by a tracer")
        assert f"(pid {os.getpid()})" in kinds(data)["traced"]["says"]
        libc.ptrace(PTRACE_DETACH, child.pid, None, None)
        deadline = time.monotonic() + 5
        while "traced" in kinds(inspect("inspect_process", target=str(child.pid))) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "traced" not in kinds(inspect("inspect_process", target=str(child.pid)))
    finally:
        kill(child.pid)


def test_environment_names_past_the_listed_ones_are_counted_never_their_values():
    env = {f"APPLIANCE_FIELD_{i:03d}": f"value-{i}-{secrets.token_hex(4)}" for i in range(150)}
    child = subprocess.Popen(["sleep", "60"], env=env)
    try:
        time.sleep(0.2)
        first = inspect("inspect_process", target=str(child.pid))["profiles"][0]
        assert first["environment_variables_total"] == 150
        assert 0 < len(first["environment_variable_names"]) < 150
        assert set(first["environment_variable_names"]) <= set(env)
        assert not any(value in json.dumps(first) for value in env.values())
    finally:
        kill(child.pid)


@contextlib.contextmanager
def cpu_group(quota_us: int, period_us: int) -> Iterator[Path]:
    """A CPU group with that quota, on cgroup v2 (cpu.max) or v1 (cpu.cfs_quota_us), removed after."""
    v2 = Path("/sys/fs/cgroup/cgroup.controllers").exists()
    root = Path("/sys/fs/cgroup") if v2 else Path("/sys/fs/cgroup/cpu")
    if v2 and "cpu" not in (root / "cgroup.subtree_control").read_text().split():
        (root / "cgroup.subtree_control").write_text("+cpu")
    group = root / f"appliance-test-{secrets.token_hex(3)}"
    group.mkdir()
    try:
        if v2:
            (group / "cpu.max").write_text(f"{quota_us} {period_us}")
        else:
            (group / "cpu.cfs_period_us").write_text(str(period_us))
            (group / "cpu.cfs_quota_us").write_text(str(quota_us))
        yield group
    finally:
        for pid in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                (root / "cgroup.procs").write_text(pid)
        group.rmdir()


def test_a_cpu_quota_of_its_group_is_shown():
    with cpu_group(50000, 100000) as group:
        child = subprocess.Popen(["sleep", "60"])
        try:
            (group / "cgroup.procs").write_text(str(child.pid))
            cgroup = inspect("inspect_process", target=str(child.pid))["profiles"][0]["cgroup"]
            assert cgroup["cpu_quota"] == "0.50 CPU"  # read from the cpu group, whichever hierarchy it is in
            if cgroup["hierarchy"] == "cgroup v2":  # v1 names the memory hierarchy's group
                assert cgroup["path"].endswith(group.name)
        finally:
            kill(child.pid)


# ---- inspect_program ---------------------------------------------------------------------------

def test_a_program_lists_the_ports_its_processes_listen_on():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    port = server.getsockname()[1]
    server.close()
    code = f"import socket, time; s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); time.sleep(60)"
    child = subprocess.Popen(["/usr/bin/python3", "-c", code])  # the system's, named python3
    try:
        deadline = time.monotonic() + 5
        data = inspect("inspect_program", program="python3")
        while f"{port}/tcp on 127.0.0.1" not in data.get("listening_on", []) and time.monotonic() < deadline:
            time.sleep(0.2)
            data = inspect("inspect_program", program="python3")
        assert f"{port}/tcp on 127.0.0.1" in data["listening_on"]
        assert child.pid in {p["pid"] for p in data["processes"]}
    finally:
        kill(child.pid)


def test_a_missing_unit_says_where_it_was_searched_and_a_failed_unit_is_flagged(tmp_path):
    data = inspect("inspect_program", program="tar")
    assert data["systemd"]["searched"].startswith("no unit file tar.service in /etc/systemd/system")
    # systemd does not run in this container: inside a private namespace, a real unit file under an
    # overlay of /etc, systemd's run folder, and systemctl answering as systemd does for a failed unit.
    layers, answer = tmp_path / "layers", tmp_path / "systemctl"
    answer.write_text("#!/bin/sh\necho failed\nexit 3\n")
    answer.chmod(0o755)
    setup = (f"mkdir -p {layers}/u {layers}/w\n"
             f"mount -t overlay overlay -o lowerdir=/etc,upperdir={layers}/u,workdir={layers}/w /etc\n"
             "mkdir -p /etc/systemd/system\nprintf '[Service]\\nExecStart=/usr/bin/tar\\n' > /etc/systemd/system/tar.service\n"
             "mount -t tmpfs tmpfs /run\nmkdir -p /run/systemd/system\n"
             f"mount --bind {answer} $(command -v systemctl)")
    out = in_namespace(setup, "tar")
    service = out["data"]["systemd"]
    assert service["unit_file"] == "/etc/systemd/system/tar.service" and service["state"] == "failed"
    assert [f["says"] for f in out["flags"] if f["kind"] == "unit_failed"] == ["the unit tar.service has failed"]
    assert not Path("/etc/systemd/system/tar.service").exists()


# ---- inspect_user ------------------------------------------------------------------------------

@contextlib.contextmanager
def account(*options: str) -> Iterator[str]:
    name = f"apf{secrets.token_hex(4)}"
    subprocess.run(["useradd", *options, name], check=True, capture_output=True)
    try:
        yield name
    finally:
        subprocess.run(["userdel", "-r", name], capture_output=True)
        subprocess.run(["groupdel", name], capture_output=True)


def test_an_accounts_full_name_expiry_and_its_processes_share_of_memory():
    with account("-M", "-c", "Field Tester,Room 4", "-e", "2020-01-02") as name:
        entry = subprocess.run(["getent", "passwd", name], capture_output=True, text=True, check=True).stdout
        uid = int(entry.split(":")[2])
        child = subprocess.Popen(["/usr/bin/python3", "-c", "b = b'x' * (40 << 20); import time; time.sleep(60)"],
                                 user=uid, group=uid)  # the system's python: the account may not enter /root
        try:
            time.sleep(1.0)
            data = inspect("inspect_user", user=name)
            assert data["uid"] == uid and data["full_name"] == "Field Tester"
            assert data["account_expired"] is True
            procs = data["processes"]
            assert procs["count"] == 1 and float(procs["memory_percent"]) > 0
            assert procs["largest"][0]["pid"] == child.pid
        finally:
            kill(child.pid)
    root = inspect("inspect_user", user="root")
    assert root["full_name"] == "root" and root["account_expired"] is False
