"""The families about one named thing (issue 52) plant their fault and their control for real, as the
machine itself reports them (the attribute through the ioctl and `lsattr`, execve's refusals, the
certificate as `cryptography` reads it back, /proc's state, CPU lists and open-file modes, the
package database, the interfaces); every phrasing fills from what the plant made; tear-down leaves
no process, no mount and no file, an immutable one included; and after a `kill -9` of the evaluator
a stopped fault exits and the next sweep removes an immutable file's tree."""

from __future__ import annotations

import datetime
import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from appliance.eval import file_flags
from appliance.eval.families_profiles import SEALED_FAMILIES, TUNED_FAMILIES
from appliance.eval.sandbox import Sandbox, mounts_under, sweep_stale
from appliance.eval.scenarios import by_name
from support.tools import gone_or_zombie

FAMILIES = {f.name: f for f in (*TUNED_FAMILIES, *SEALED_FAMILIES)}


def _run(path: str) -> subprocess.CompletedProcess:
    return subprocess.run([path], capture_output=True, text=True, timeout=20)


def _cpu_seconds(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def _fd_modes(pid: int) -> dict[str, int]:
    """The regular files a process holds open and the access mode of each (O_RDONLY, O_WRONLY, O_RDWR)."""
    modes = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
        if target.startswith("/") and Path(target).is_file():
            flags = next(line for line in Path(f"/proc/{pid}/fdinfo/{fd}").read_text().splitlines()
                         if line.startswith("flags:"))
            modes[target] = int(flags.split()[1], 8)
    return modes


# -- one check per family: (fault, control) -------------------------------------------------------

def immutable(fault, control):
    path = Path(fault.truth["path"])
    assert file_flags.flags(path) & file_flags.IMMUTABLE
    assert "i" in subprocess.run(["lsattr", str(path)], capture_output=True, text=True, check=True).stdout.split()[0]
    with pytest.raises(PermissionError) as refused:  # root too: EPERM, not EACCES
        path.write_text("workers = 8\n")
    assert refused.value.errno == errno.EPERM and os.geteuid() == 0
    with pytest.raises(PermissionError):
        path.unlink()
    fine = Path(control.truth["path"])
    assert not file_flags.flags(fine) & file_flags.IMMUTABLE
    fine.write_text(fine.read_text() + "# edited\n")


def not_executable(fault, control):
    path = fault.truth["path"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644 and os.geteuid() == 0
    with pytest.raises(PermissionError):  # no execute bit for anyone: root's execve is refused too
        _run(path)
    done = _run(control.truth["path"])
    assert done.returncode == 0 and "would keep the last 7 backups" in done.stdout


def certificate(fault, control):
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    for planted, expired in ((fault, True), (control, False)):
        cert = x509.load_pem_x509_certificate(Path(planted.truth["path"]).read_bytes())
        assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "shop.example.com"
        assert cert.not_valid_after_utc.isoformat() == planted.truth["not_after"]
        if expired:
            assert now - datetime.timedelta(days=4) < cert.not_valid_after_utc < now
        else:
            assert cert.not_valid_before_utc < now and cert.not_valid_after_utc > now + datetime.timedelta(days=360)
    assert not list(Path(fault.truth["path"]).parent.glob("*.key"))  # a certificate, and no private key beside it


def script_format(fault, control):
    assert Path(fault.truth["path"]).read_bytes().startswith(b"#!/bin/bash\r\n")
    with pytest.raises(FileNotFoundError):  # the kernel looks for "/bin/bash\r"
        _run(fault.truth["path"])
    said = subprocess.run(["bash", "-c", fault.truth["path"]], capture_output=True, text=True, timeout=20).stderr
    assert "required file not found" in said or "bad interpreter" in said  # bash 5.2, and the older bash
    assert b"\r" not in Path(control.truth["path"]).read_bytes()
    assert "deploying the site from build" in _run(control.truth["path"]).stdout


def stopped_process(fault, control):
    stopped = psutil.Process(fault.truth["pid"])
    assert stopped.status() == psutil.STATUS_STOPPED and stopped.name() == fault.truth["name"]
    before = _cpu_seconds(stopped.pid)
    time.sleep(0.6)
    assert _cpu_seconds(stopped.pid) == before
    assert psutil.Process(control.truth["pid"]).status() in (psutil.STATUS_SLEEPING, psutil.STATUS_RUNNING)


def cpu_pinned(fault, control):
    machine = set(os.sched_getaffinity(0))
    assert len(machine) >= 2
    job = psutil.Process(fault.truth["pid"])
    assert job.num_threads() >= 3  # the main thread, the evaluator watch and the workers
    for thread in job.threads():  # every thread of the job, not only its first
        assert os.sched_getaffinity(thread.id) == set(fault.truth["allowed_cpus"]) == {min(machine)}
    before = _cpu_seconds(job.pid)
    time.sleep(1.0)
    assert _cpu_seconds(job.pid) - before >= 0.2, "the pinned job does not work"
    assert os.sched_getaffinity(control.truth["pid"]) == machine == set(control.truth["allowed_cpus"])


def stale_pidfile(fault, control):
    stale = int(Path(fault.truth["pidfile"]).read_text())
    assert stale == fault.truth["pid"] and gone_or_zombie(stale)
    live = int(Path(control.truth["pidfile"]).read_text())
    assert live == control.truth["pid"] and psutil.Process(live).name() == control.truth["name"]


def writing_to(fault, control):
    modes = _fd_modes(fault.truth["pid"])
    assert modes[fault.truth["path"]] & os.O_ACCMODE == os.O_WRONLY and modes[fault.truth["path"]] & os.O_APPEND
    assert all(modes[p] & os.O_ACCMODE == os.O_RDONLY for p in fault.truth["reading"])
    size = os.path.getsize(fault.truth["path"])
    time.sleep(1.2)
    assert os.path.getsize(fault.truth["path"]) > size, "it does not write"
    held = _fd_modes(control.truth["pid"])
    assert sorted(held) == sorted(control.truth["reading"])
    assert all(mode & os.O_ACCMODE == os.O_RDONLY for mode in held.values())


def installed(fault, control):
    assert shutil.which(fault.truth["program"]) is None
    assert subprocess.run(["sh", "-c", f"command -v {fault.truth['program']}"], capture_output=True).returncode != 0
    assert shutil.which(control.truth["program"]) == control.truth["path"]
    if shutil.which("dpkg-query"):
        owner = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Version}", control.truth["package"]],
                               capture_output=True, text=True, check=True).stdout
        assert owner == f"{control.truth['package']} {control.truth['version']}"


def own_address(fault, control):
    assert fault.truth["addresses"] == control.truth["addresses"]
    if shutil.which("ip"):  # the same addresses as `ip` reads them, the gateway not among them
        shown = json.loads(subprocess.run(["ip", "-j", "addr", "show", "up"], capture_output=True, text=True,
                                          check=True).stdout)
        listed = {a["local"] for link in shown for a in link.get("addr_info", ())
                  if a.get("scope") == "global"}
        assert set(fault.truth["addresses"]) == listed
    assert fault.truth["gateway"] not in fault.truth["addresses"]


CHECKS = {f.__name__: f for f in (immutable, not_executable, certificate, script_format, stopped_process, cpu_pinned,
                                  stale_pidfile, writing_to, installed, own_address)}


def test_every_family_has_a_check():
    assert set(CHECKS) == set(FAMILIES)


def _leftovers(pids, names) -> list[str]:
    return [f"{p.info['name']} ({p.info['pid']})" for p in psutil.process_iter(["pid", "name"])
            if p.info["pid"] in pids or p.info["name"] in names]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_family_plants_its_fault_and_its_control_for_real_and_tears_both_down(family):
    record = FAMILIES[family]
    planted = []
    with by_name()[f"{family}.precise"].setup() as fault, by_name()[f"{family}.control"].setup() as control:
        for one in (fault, control):
            planted.append({"pids": set(one.pids), "names": set(one.names), "root": one.sandbox.root,
                            "bin": one.sandbox.bin_dir, "mounts": mounts_under(one.sandbox.root)})
        for template in (record.precise, record.vague):
            assert "{" not in template.format(**fault.slots)
        for template in (record.control_precise, record.control_vague):
            assert "{" not in template.format(**control.slots)
        CHECKS[family](fault, control)
    for one in planted:
        deadline = time.monotonic() + 3  # the reaper reaps within its 0.25 s tick
        while _leftovers(one["pids"], one["names"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _leftovers(one["pids"], one["names"]), "processes left behind"
        assert not Path(one["root"]).exists() and not Path(one["bin"]).exists(), "files left behind"
        assert all(not mounts_under(m) for m in one["mounts"])


def test_a_tree_holding_immutable_files_and_folders_is_removed_whole():
    box = Sandbox()
    locked = box.write("a/b/locked.txt", "x")
    appended = box.write("a/journal.log", "y")
    file_flags.add(locked, file_flags.IMMUTABLE)
    file_flags.add(appended, file_flags.APPEND_ONLY)
    file_flags.add(box.path("a/b"), file_flags.IMMUTABLE)  # a folder nothing can be taken out of
    shutil.rmtree(box.root, ignore_errors=True)
    assert locked.exists() and appended.exists()  # what a plain removal leaves
    box.close()
    assert not box.root.exists()


_EVALUATOR = textwrap.dedent(
    """
    import json, sys, time
    from appliance.eval.scenarios import by_name
    with by_name()["immutable.precise"].setup() as locked, by_name()["stopped_process.precise"].setup() as stopped:
        print(json.dumps({"path": locked.truth["path"], "root": str(locked.sandbox.root), "pid": stopped.truth["pid"],
                          "stopped_root": str(stopped.sandbox.root)}), flush=True)
        time.sleep(120)
    """
)


def test_after_a_kill_of_the_evaluator_a_stopped_fault_exits_and_the_sweep_removes_an_immutable_file():
    evaluator = subprocess.Popen([sys.executable, "-c", _EVALUATOR], stdout=subprocess.PIPE, text=True,
                                 cwd=Path(__file__).resolve().parents[1])
    info = json.loads(evaluator.stdout.readline())
    assert psutil.Process(info["pid"]).status() == psutil.STATUS_STOPPED
    evaluator.kill()
    evaluator.wait(timeout=20)
    deadline = time.monotonic() + 10  # the reaper wakes it; its watch sees the evaluator gone
    while not gone_or_zombie(info["pid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert gone_or_zombie(info["pid"]), "the stopped fault outlived its evaluator"
    assert Path(info["path"]).exists()  # nothing could remove it...
    removed = {str(p) for p in sweep_stale()}
    assert {info["root"], info["stopped_root"]} <= removed  # ...until the next evaluation's sweep
    assert not Path(info["root"]).exists()
