"""inspect_process on what bounds real processes the tests start: one pinned to one CPU, one with a
nice value, a batch class and an idle I/O class, one near its open-file limit, one in a memory
group that has killed a process, one running a deleted program and one an upgraded one, a zombie,
and a name that several processes share."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import psutil

from support.plants import child, zombie_children
from support.tools import check_invariants, kill, registry_for

REGISTRY = registry_for("/tmp", default=True, self_pids=frozenset())


def inspect(target: str | int) -> dict:
    outcome = REGISTRY.call("inspect_process", {"target": str(target)})
    check_invariants("inspect_process", outcome)
    assert outcome["status"] == "ok", outcome
    return outcome


def kinds(outcome: dict) -> dict[str, dict]:
    return {f["kind"]: f for f in outcome["data"]["flags"]}


def test_cpus_allowed_against_the_machines_and_nice_scheduling_and_io_classes(tmp_path):
    cpus = sorted(os.sched_getaffinity(0))
    assert len(os.sched_getaffinity(1) | set(cpus)) >= 2, "this test needs a machine of two CPUs or more"
    with child("ready()", tmp_path) as proc:
        os.sched_setaffinity(proc.pid, {cpus[-1]})
        os.setpriority(os.PRIO_PROCESS, proc.pid, 7)
        os.sched_setscheduler(proc.pid, os.SCHED_BATCH, os.sched_param(0))
        psutil.Process(proc.pid).ionice(psutil.IOPRIO_CLASS_IDLE)
        outcome = inspect(proc.pid)
        found = outcome["data"]["profiles"][0]
        assert found["cpus_allowed"] == str(cpus[-1])
        assert found["machine_cpus"].endswith(f"({os.cpu_count()} online)")
        assert found["nice"] == 7 and found["scheduling_class"].startswith("batch")
        assert found["io_priority"] == "idle"
        assert f"may run on 1 of the machine's {os.cpu_count()} CPUs" in kinds(outcome)["cpus_restricted"]["says"]
    with child("ready()", tmp_path) as plain:
        outcome = inspect(plain.pid)
        found = outcome["data"]["profiles"][0]
        assert "cpus_restricted" not in kinds(outcome) and found["nice"] == 0
        assert found["scheduling_class"].startswith("normal") and found["io_priority"].startswith("best-effort")


NEAR_LIMIT = """
import resource
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 4096))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
held = [open("/dev/null") for _ in range(56)]
ready()
"""


def test_open_files_near_their_limit_are_flagged_with_the_limits(tmp_path):
    with child(NEAR_LIMIT, tmp_path) as proc:
        outcome = inspect(proc.pid)
        found = outcome["data"]["profiles"][0]
        count = len(os.listdir(f"/proc/{proc.pid}/fd"))
        assert found["open_files"]["count"] == count and found["open_files"]["of_limit"].startswith(f"{count} of 64")
        assert found["limits"]["open_files"] == "64 (hard 4,096)" and found["limits"]["core_file_size"] == "0 B"
        assert kinds(outcome)["open_files_near_limit"]["severity"] == "warning"
    with child("ready()", tmp_path) as plain:
        assert "open_files_near_limit" not in kinds(inspect(plain.pid))


def _memory_group(name: str) -> tuple[Path, str, str]:
    """A memory control group of the hierarchy this machine uses: (folder, limit file, procs file)."""
    v1 = Path("/sys/fs/cgroup/memory")
    if (v1 / "memory.limit_in_bytes").exists():
        return v1 / name, "memory.limit_in_bytes", "cgroup.procs"
    root = Path("/sys/fs/cgroup")
    return root / name, "memory.max", "cgroup.procs"


def test_a_memory_group_that_killed_a_process_is_flagged_on_its_other_members(tmp_path):
    group, limit, procs = _memory_group(f"appliance-test-{os.getpid()}")
    group.mkdir()
    try:
        (group / limit).write_text(str(48 << 20))
        hog = subprocess.Popen(["python3", "-c", "import time; time.sleep(0.5); b = bytearray(400 << 20); b[::4096]"
                                                 " = b'x' * len(b[::4096])"], stderr=subprocess.DEVNULL)
        (group / procs).write_text(str(hog.pid))
        assert hog.wait(timeout=30) == -9  # the kernel's OOM killer, inside the group
        with child("ready()", tmp_path) as proc:
            (group / procs).write_text(str(proc.pid))
            outcome = inspect(proc.pid)
            cgroup = outcome["data"]["profiles"][0]["cgroup"]
            assert cgroup["path"].endswith(group.name) and cgroup["memory_limit"] == "48.0 MiB"
            assert cgroup["memory_events"]["oom_kill"] >= 1
            assert "OOM kill" in kinds(outcome)["cgroup_oom_kills"]["says"]
    finally:
        for pid in (group / procs).read_text().split():
            kill(int(pid))
        time.sleep(0.2)
        group.rmdir()


def test_a_program_deleted_or_replaced_since_start_is_flagged_and_one_still_there_is_not(tmp_path):
    copy = tmp_path / "appl-sleeper"
    shutil.copy("/bin/sleep", copy)
    first = subprocess.Popen([str(copy), "300"])
    try:
        time.sleep(0.2)
        copy.unlink()
        outcome = inspect(first.pid)
        found = outcome["data"]["profiles"][0]
        assert found["program"] == str(copy) and found["program_file"] == "deleted since it started"
        assert kinds(outcome)["program_deleted"]["severity"] == "warning"
        shutil.copy("/bin/sleep", tmp_path / "new")
        os.replace(tmp_path / "new", copy)  # the name now holds another file, as an upgrade leaves it
        outcome = inspect(first.pid)
        assert outcome["data"]["profiles"][0]["program_file"] == "deleted since it started (another file has its name now)"
        assert "replaced by another file" in kinds(outcome)["program_deleted"]["says"]
    finally:
        first.kill()
        first.wait()
    second = subprocess.Popen([str(copy), "300"])
    try:
        time.sleep(0.2)
        outcome = inspect(second.pid)
        assert outcome["data"]["profiles"][0]["program_file"] == "as it was when the process started"
        assert "program_deleted" not in kinds(outcome)
    finally:
        second.kill()
        second.wait()


ZOMBIE_PARENT = """
if os.fork() == 0:
    os._exit(0)
ready()
"""


def test_a_zombie_is_flagged_with_its_parent_and_the_parent_counts_it(tmp_path):
    with child(ZOMBIE_PARENT, tmp_path) as parent:
        zombie = zombie_children(parent.pid)[0]
        outcome = inspect(zombie)
        found = outcome["data"]["profiles"][0]
        assert found["state"].startswith("Z: zombie")
        assert f"its parent pid {parent.pid}" in kinds(outcome)["zombie"]["says"]
        assert inspect(parent.pid)["data"]["profiles"][0]["children"] == 1


def test_a_name_matches_every_process_of_that_name_the_first_few_profiled_the_rest_listed(tmp_path):
    copy = tmp_path / "appl-many"
    shutil.copy("/bin/sleep", copy)
    procs = [subprocess.Popen([str(copy), "300"]) for _ in range(5)]
    try:
        time.sleep(0.3)
        started = time.monotonic()
        outcome = inspect("appl-many")
        elapsed = time.monotonic() - started
        data = outcome["data"]
        assert data["processes_matched"] == 5 and data["headline"].startswith("5 processes match appl-many")
        assert [p["pid"] for p in data["profiles"]] == sorted(p.pid for p in procs)[:3]
        assert [p["pid"] for p in data["others"]] == sorted(p.pid for p in procs)[3:]
        assert elapsed < 10 and len(json.dumps(outcome)) < 16000
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    assert REGISTRY.call("inspect_process", {"target": "appl-many"})["status"] == "empty"
