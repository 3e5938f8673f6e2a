"""The resource analyzers against real faults planted on this machine (processes, tmpfs mounts,
memory control groups), and their no-fault verdicts on the machine as it is.

The machine is shared, so quiet-machine tests check that each verdict agrees with an independent
reading of the same thing instead of expecting every family to be ok.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from appliance.analyzers import CRITICAL, OK, WARNING, Readings, for_question, run_all
from appliance.analyzers.families import RESOURCES
from appliance.analyzers.oom import Kill, _severity
from appliance.eval.sandbox import Sandbox, short_token
from support.analyzers import window_for
from support.resource_faults import (MIB, SAY_DONE, SLEEP_FOREVER, WAIT_FOR_GO, MemoryGroup, ext4_image, fill, go_and_wait,
                             need, remount, swapfile, tmpfs)

PROBLEM = (WARNING, CRITICAL)
# One thread hashing a big buffer (hashlib releases the GIL): one core kept busy, the hog the family
# names. The scheduler shares the CPU between sessions (autogroups) first, so on a machine other
# sessions keep busy a burner in its own session would get only its share; as root it raises its
# session's weight for the second the test lasts, so it is the hog a person would see, above the
# threshold, whatever else runs. One thread, not one per core: a boosted burner on every core would
# starve the check itself, which runs at the weight a person's terminal has.
BURN = ("import hashlib, threading\nblob = bytes(8 << 20)\n"
        "try:\n    open('/proc/self/autogroup', 'w').write('-15')\nexcept OSError:\n    pass\n"
        "def burn():\n    while True:\n        hashlib.sha256(blob).digest()\n"
        "threading.Thread(target=burn, daemon=True).start()\n")


def check(family: str, readings: Readings | None = None, **kwargs) -> list:
    readings = readings or Readings(**{**window_for(family), **kwargs})
    found = run_all(readings, families=[family], timeout=10.0)
    assert found and all(f.family == family for f in found)
    return found


def problems(found: list) -> list:
    return [f for f in found if f.severity in PROBLEM]


@pytest.fixture
def sandbox():
    with Sandbox(max_seconds=120) as box:
        yield box


# -- cpu ---------------------------------------------------------------------------------------


def hog_findings(pid: int, tries: int = 4) -> list:
    """The cpu problems naming `pid`, sampled again (up to `tries` times) while there are none: on a
    host another job keeps busy, one 0.6 s window can fall where the burner was starved."""
    for _ in range(tries):
        hogs = [f for f in problems(check("cpu", sample_seconds=0.6)) if f.pid == pid]
        if hogs:
            return hogs
    return []


def test_cpu_hog_is_named(sandbox):
    name = f"burner-{short_token()}"
    pid, _ = sandbox.spawn(name, "ready()\n" + BURN + SLEEP_FOREVER)
    time.sleep(0.2)
    hogs = hog_findings(pid)
    assert hogs and hogs[0].culprit == name and hogs[0].pid == pid, hogs
    assert hogs[0].values["percent_of_one_core"] >= 75 and hogs[0].verdict.startswith("CPU hog")
    assert "% of one core" in hogs[0].verdict and "load" in hogs[0].verdict


def test_cpu_never_blames_the_appliance_itself():
    """A burner that is the appliance's own child (self_pids is this test) is never the culprit."""
    child = subprocess.Popen([sys.executable, "-c", BURN + "import time\ntime.sleep(30)\n"], start_new_session=True)
    try:
        time.sleep(0.3)
        found = check("cpu", sample_seconds=0.6, self_pids=frozenset({os.getpid()}))
        assert all(f.pid != child.pid for f in found), found
        assert all(f.values.get("busiest_pid") != child.pid for f in found)
    finally:
        child.kill()
        child.wait()


def test_cpu_quiet_verdict_agrees_with_the_machine():
    found = check("cpu")
    load1 = os.getloadavg()[0]
    for finding in found:
        assert abs(finding.values["load1"] - load1) < 1.0
        assert f"on {psutil.cpu_count()} core" in finding.verdict
        if finding.severity == OK:
            assert finding.verdict.startswith("no CPU hog: the busiest process")
            assert finding.values["busiest_percent_of_one_core"] < 75
        elif finding.verdict.startswith("CPU hog"):  # another session's real hog: it must be real
            assert finding.pid not in Readings().own()
            assert psutil.Process(finding.pid).cpu_percent(interval=0.5) >= 40


# -- memory, oom, swap -------------------------------------------------------------------------


def test_memory_group_at_its_limit_names_its_process(sandbox):
    group = MemoryGroup(100 * MIB)
    name = f"hoarder-{short_token()}"
    code = ("ready()\n" + WAIT_FOR_GO + "data = bytearray(91 << 20)\n"
            "for i in range(0, len(data), 4096):\n    data[i] = 1\n" + SAY_DONE + SLEEP_FOREVER)
    try:
        pid, _ = sandbox.spawn(name, code)
        group.add(pid)
        assert go_and_wait(sandbox.root, pid=pid), "the hoarder was killed before it held its memory"
        found = problems(check("memory"))
        assert found and found[0].culprit == name and found[0].pid == pid, found
        assert found[0].values["percent_of_limit"] >= 90 and "of its memory limit" in found[0].verdict
    finally:
        sandbox.close()
        group.remove()


def test_memory_quiet_verdict_names_the_top_consumer():
    readings = Readings(**window_for("memory"))
    machine = check("memory", readings)[0]
    vm = psutil.virtual_memory()
    assert abs(machine.values["available_percent"] - 100.0 * vm.available / vm.total) < 5
    own = readings.own()
    biggest = max((p for p in readings.sample().procs if p["pid"] not in own and p.get("memory_info")),
                  key=lambda p: p["memory_info"].rss)
    assert machine.values["top_pid"] == biggest["pid"] and f"(pid {biggest['pid']})" in machine.verdict
    if machine.severity == OK:
        assert machine.verdict.startswith("no memory pressure") and machine.culprit is None


def test_a_process_holding_far_more_memory_than_any_other_stands_out(sandbox):
    """600 MB resident with no memory pressure is no fault, but where no other process holds a
    third of it, the ok verdict carries it as its standout; 20 MB never stands out."""
    code = ("data = bytearray(SIZE << 20)\nfor i in range(0, len(data), 4096):\n    data[i] = 1\n"
            "ready()\n" + SLEEP_FOREVER)
    try:
        big, _ = sandbox.spawn(f"hoarder-{short_token()}", code.replace("SIZE", "600"))
        small, _ = sandbox.spawn(f"keeper-{short_token()}", code.replace("SIZE", "20"))
        machine = check("memory")[0]
        if machine.severity == OK:
            assert machine.standout is not None and machine.standout.pid == big, machine
            assert "× the next" in machine.verdict or "no other" in machine.verdict
        assert machine.standout is None or machine.standout.pid != small
    finally:
        sandbox.close()


def test_oom_kill_is_named_with_when(sandbox):
    group = MemoryGroup(32 * MIB)
    name = f"oomvictim-{short_token()}"
    try:
        pid, _ = sandbox.spawn(name, "ready()\n" + WAIT_FOR_GO + "data = bytearray(200 << 20)\n" + SAY_DONE + SLEEP_FOREVER)
        group.add(pid)
        assert not go_and_wait(sandbox.root, pid=pid), "the victim survived a 200 MB allocation in 32 MB"
        found = check("oom")
        assert found[0].severity == WARNING and found[0].culprit == name and found[0].pid == pid, found
        assert "control group" in found[0].verdict and "ago" in found[0].verdict
        assert found[0].values["oom_kills_since_boot"] >= 1
    finally:
        sandbox.close()
        group.remove()


def test_oom_grading_machine_wide_versus_a_group_limit():
    def kill(by_cgroup: bool) -> Kill:
        return Kill(1, "x", 0.0, by_cgroup, "")

    assert [_severity(kill(False), age) for age in (600, 7200, 2 * 86400)] == [CRITICAL, WARNING, OK]
    assert [_severity(kill(True), age) for age in (600, 7200)] == [WARNING, OK]
    assert _severity(kill(False), None) == WARNING


def test_oom_quiet_verdict_matches_the_kernel_counter():
    found = check("oom")
    with open("/proc/vmstat") as handle:
        counted = next(int(line.split()[1]) for line in handle if line.startswith("oom_kill "))
    assert found[0].values["oom_kills_since_boot"] in (counted, counted - 1)  # a kill between two reads
    if counted == 0:
        assert found[0].severity == OK and "no OOM kill since boot" in found[0].verdict


def test_swapping_process_is_named(tmp_path, sandbox):
    """A process that needs 64 MB in a group limited to 24 MB keeps swapping while it touches its pages."""
    group = MemoryGroup(24 * MIB)
    name = f"thrasher-{short_token()}"
    code = ("ready()\n" + WAIT_FOR_GO + "data = bytearray(64 << 20)\n"
            "for i in range(0, len(data), 4096):\n    data[i] = 1\n" + SAY_DONE +
            "while True:\n    for i in range(0, len(data), 4096):\n        data[i] = (data[i] + 1) % 256\n")
    try:
        with swapfile(tmp_path, 96 * MIB):
            pid, _ = sandbox.spawn(name, code)
            group.add(pid)
            assert go_and_wait(sandbox.root, pid=pid), "the thrasher was killed instead of swapping"
            found = problems(check("swap", sample_seconds=0.6))
            sandbox.close()
        assert found and found[0].culprit == name and found[0].pid == pid, found
        assert found[0].values["swap_in_bytes_per_second"] >= 1 << 20 and "swapping in" in found[0].verdict
    finally:
        sandbox.close()
        group.remove()


def test_swap_quiet_verdict():
    finding = check("swap")[0]
    swap = psutil.swap_memory()
    assert finding.values["swap_total_bytes"] == swap.total
    if not swap.total:
        assert finding.severity == OK and "no swap configured" in finding.verdict
    else:
        assert "swapping in" in finding.verdict and "interval_seconds" in finding.values


# -- filesystems -------------------------------------------------------------------------------


def test_full_tmpfs_is_critical_and_named(tmp_path):
    with tmpfs(tmp_path / "full", "size=8m") as mount:
        fill(mount / "blob")
        found = problems(check("filesystem_full"))
        mine = [f for f in found if f.path == str(mount)]
        assert mine and mine[0].severity == CRITICAL and mine[0].culprit == str(mount), found
        assert mine[0].values["used_percent"] == 100.0 and "0 B free" in mine[0].verdict


def test_a_named_place_on_a_full_tmpfs_is_said_with_its_numbers_in_the_clause_that_names_it(tmp_path):
    from appliance.analyzers.storage import place_findings

    with tmpfs(tmp_path / "full", "size=8m") as mount:
        (mount / "sub").mkdir()
        fill(mount / "sub" / "blob")
        at_mount, below = (place_findings(str(p), Readings())[0] for p in (mount, mount / "sub"))
        assert at_mount.severity == CRITICAL, at_mount.verdict
        assert f"{mount} (tmpfs) is 100 % used" in at_mount.verdict
        assert f"{mount} (tmpfs) is 100 % used" in below.verdict and f"{mount / 'sub'} is on it" in below.verdict


def test_half_full_tmpfs_is_not_full(tmp_path):
    with tmpfs(tmp_path / "half", "size=8m") as mount:
        fill(mount / "blob", 4 * MIB)
        assert all(f.path != str(mount) for f in problems(check("filesystem_full")))


def test_filesystem_quiet_verdict_agrees_with_statvfs():
    found = check("filesystem_full")
    for finding in found:
        mount = finding.values["mount"]
        usage = psutil.disk_usage(mount)
        assert abs(finding.values["used_percent"] - usage.percent) < 2, (mount, usage)
        if finding.severity == OK:
            assert finding.verdict.startswith("no filesystem is full: the fullest")
            assert all(row["used_percent"] <= finding.values["used_percent"] for row in finding.values["filesystems"])
        else:
            assert usage.percent >= 90


def test_exhausted_inodes_are_named(tmp_path):
    with tmpfs(tmp_path / "few", "size=8m,nr_inodes=64") as mount:
        made = 0
        with pytest.raises(OSError):
            while made < 1000:
                (mount / f"f{made}").touch()
                made += 1
        found = [f for f in problems(check("inodes")) if f.path == str(mount)]
        assert found and found[0].severity == CRITICAL and found[0].values["inodes_free"] == 0, found
        assert "No space left on device" in found[0].verdict


def test_inodes_quiet_verdict():
    found = check("inodes")
    for finding in found:
        st = os.statvfs(finding.values["mount"])
        assert abs(finding.values["inodes_used_percent"] - 100.0 * (st.f_files - st.f_ffree) / st.f_files) < 2
        assert (finding.severity == OK) == (finding.values["inodes_used_percent"] < 90)


def test_deleted_open_file_is_named(tmp_path, sandbox):
    with tmpfs(tmp_path / "held", "size=16m") as mount:
        name = f"holder-{short_token()}"
        target = mount / "rotated.log"
        code = (f"f = open({str(target)!r}, 'wb')\nf.write(os.urandom(10 << 20))\nf.flush()\n"
                f"os.unlink({str(target)!r})\nready()\n" + SLEEP_FOREVER)
        pid, _ = sandbox.spawn(name, code)
        found = problems(check("deleted_open"))
        assert found and found[0].culprit == name and found[0].pid == pid and found[0].path == str(target), found
        assert found[0].values["bytes"] >= 10 * MIB and "deleted file" in found[0].verdict
        sandbox.close()


def test_deleted_file_of_the_appliance_itself_is_not_blamed(tmp_path):
    with tmpfs(tmp_path / "own", "size=16m") as mount:
        with open(mount / "scratch", "wb") as handle:
            handle.write(os.urandom(10 * MIB))
            os.unlink(mount / "scratch")
            found = check("deleted_open")
        assert all(f.pid != os.getpid() for f in found), found


def test_readonly_tmpfs_that_holds_files_is_a_warning(tmp_path):
    with tmpfs(tmp_path / "ro", "size=8m") as mount:
        (mount / "saved.txt").write_text("work\n")
        remount(mount, "ro")
        found = [f for f in check("readonly_fs") if f.path == str(mount)]
        assert found and found[0].severity == WARNING and found[0].culprit == str(mount), found
        assert "read-only" in found[0].verdict and "ro" in found[0].values["superblock_options"]


def test_ext4_mounted_readonly_is_a_warning(tmp_path):
    with ext4_image(tmp_path, "ro") as (mount, _device):
        found = [f for f in check("readonly_fs") if f.path == str(mount)]
    assert found and found[0].severity == WARNING and "writable disk filesystem" in found[0].verdict, found


def test_ext4_remounted_readonly_after_an_error_is_critical(tmp_path):
    """The kernel's own error path: ext4 with errors=remount-ro, and an error raised through
    /sys/fs/ext4/DEV/trigger_fs_error (kernel ≥ 5.x), as a failing disk would."""
    with ext4_image(tmp_path, "rw,errors=remount-ro") as (mount, device):
        (mount / "saved.txt").write_text("work\n")
        trigger = Path("/sys/fs/ext4") / Path(device).name / "trigger_fs_error"
        need(trigger.exists(), f"{trigger} does not exist on this kernel")
        trigger.write_text("appliance test error")
        found = [f for f in check("readonly_fs") if f.path == str(mount)]
    assert found and found[0].severity == CRITICAL and found[0].culprit == str(mount), found
    assert "after errors" in found[0].verdict and "ext4 reports" in found[0].verdict


def test_readonly_masks_and_readonly_bind_views_are_by_design(tmp_path):
    """The rule: an empty read-only tmpfs (a mask) and a read-only bind of a writable filesystem
    (a container's :ro volume) are not faults."""
    with tmpfs(tmp_path / "mask", "size=4k,ro") as mask, tmpfs(tmp_path / "data", "size=8m") as data:
        (data / "file").write_text("x")
        view = tmp_path / "view"
        view.mkdir()
        subprocess.run(["mount", "--bind", str(data), str(view)], check=True)
        try:
            remount(view, "bind,ro")
            found = check("readonly_fs")
            assert all(f.path not in (str(mask), str(data), str(view)) for f in found), found
        finally:
            subprocess.run(["umount", "-l", str(view)], capture_output=True)


# -- disk I/O ----------------------------------------------------------------------------------


def test_top_writer_is_named(tmp_path, sandbox):
    name = f"syncer-{short_token()}"
    target = tmp_path / "sync.dat"
    code = (f"fd = os.open({str(target)!r}, os.O_WRONLY | os.O_CREAT)\nblock = os.urandom(256 << 10)\nready()\n"
            "end = time.time() + 20\nn = 0\nwhile time.time() < end:\n"
            "    os.pwrite(fd, block, (n % 64) * len(block)); os.fsync(fd); n += 1\n")
    pid, _ = sandbox.spawn(name, code)
    time.sleep(0.2)
    found = check("disk_io", sample_seconds=0.6)
    assert all(f.values.get("top_pid") == pid and f.values["top_io"] == name for f in found), found
    assert found[0].values["top_write_bytes_per_second"] > MIB and f"{name} (pid {pid})" in found[0].verdict
    for finding in problems(found):
        assert finding.culprit == name and finding.pid == pid
    if not problems(found):  # no disk saturated: the one writer, megabytes a second, stands far ahead
        assert found[0].standout is not None and found[0].standout.pid == pid, found


def test_disk_io_quiet_verdict_has_values():
    found = check("disk_io")
    assert found[0].values["disks"], found
    for row in found[0].values["disks"]:
        assert 0 <= row["busy_percent"] <= 100 and row["iops"] >= 0
    if found[0].severity == OK:
        assert found[0].verdict.startswith("no disk is saturated: the busiest")


# -- all families --------------------------------------------------------------------------------

# The appliance's own child doing everything wrong at once: it holds a deleted 10 MB file open
# (argv[2]), burns CPU, writes with fsync, then joins a memory group (argv[1]) and fills 90 % of it.
OWN_MISCHIEF = BURN + """
import os, sys, time
held = open(sys.argv[2], "wb")
block = os.urandom(1 << 20)
for _ in range(10):
    held.write(block)
held.flush(); os.unlink(sys.argv[2])
def sync():
    fd = os.open(sys.argv[2] + ".sync", os.O_WRONLY | os.O_CREAT)
    while True:
        os.pwrite(fd, block, 0); os.fsync(fd)
threading.Thread(target=sync, daemon=True).start()
open(os.path.join(sys.argv[1], "cgroup.procs"), "w").write(str(os.getpid()))
data = bytearray(92 << 20)
for i in range(0, len(data), 4096):
    data[i] = 1
print("ready", flush=True)
time.sleep(60)
"""


def test_the_appliance_itself_is_never_a_culprit(tmp_path):
    group = MemoryGroup(100 * MIB)
    with tmpfs(tmp_path / "own", "size=16m") as mount:
        child = subprocess.Popen([sys.executable, "-c", OWN_MISCHIEF, str(group.path), str(mount / "own.log")],
                                 stdout=subprocess.PIPE, text=True, start_new_session=True)
        try:
            assert child.stdout.readline().strip() == "ready"
            # who is blamed is the point here, not speed (that is test_every_family_gives_a_verdict_in_time)
            found = run_all(Readings(self_pids=frozenset({os.getpid()}), sample_seconds=0.6), analyzers=RESOURCES,
                            timeout=15.0)
            unowned = run_all(Readings(self_pids=frozenset(), sample_seconds=0.6), analyzers=RESOURCES, timeout=15.0)
        finally:
            child.kill()
            child.wait()
            group.remove()
    assert all(f.pid != child.pid for f in found), [f for f in found if f.pid == child.pid]
    named = {k: v for f in found for k, v in f.values.items() if k.endswith("pid")}
    assert child.pid not in named.values(), named
    # the same child, not counted as the appliance's own, is blamed: the faults were real
    blamed = {f.family for f in unowned if f.pid == child.pid}
    assert {"cpu", "memory", "deleted_open"} <= blamed, unowned



def test_every_family_gives_a_verdict_in_time():
    started = time.monotonic()
    found = run_all(Readings(), analyzers=RESOURCES, timeout=3.0)
    assert time.monotonic() - started < 2.0
    assert {f.family for f in found} == {a.family for a in RESOURCES}
    assert all(f.severity != "unknown" or "not available" in f.verdict for f in found), found
    assert all(any(ch.isdigit() for ch in f.verdict) for f in found if f.severity == OK), found


@pytest.mark.parametrize("question, family", [
    ("my laptop is slow", "cpu"), ("my laptop is slow", "disk_io"), ("I cannot save files anymore", "readonly_fs"),
    ("I cannot save files anymore", "filesystem_full"), ("no space left on device but df shows room", "inodes"),
    ("what is filling my disk?", "deleted_open"), ("why was my process killed?", "oom"),
    ("is the machine swapping?", "swap"), ("which process uses the most memory?", "memory"),
])
def test_questions_reach_their_families(question, family):
    assert family in for_question(question, RESOURCES)
