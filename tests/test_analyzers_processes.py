"""The process analyzers against real faults: real zombies of a real parent, a real process near
its descriptor limit, a real process with over a thousand threads, a real crash-looping child of a
real supervisor; and the same faults inside the appliance's own processes, which never count."""

from __future__ import annotations

import os
import time

import psutil

from appliance.analyzers import process_counts, restarts
from appliance.analyzers.common import command, name_of
from support.analyzers import assert_verdicts, planted, problems, readings

ZOMBIE_PARENT = """
import os, pathlib, time
for _ in range(3):
    if os.fork() == 0:
        os._exit(0)
time.sleep(0.2)
pathlib.Path(READY_FILE).write_text("ready")
time.sleep(120)
"""

NEAR_FD_LIMIT = """
import os, pathlib, resource, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
held = [os.open("/dev/null", os.O_RDONLY) for _ in range(54)]
pathlib.Path(READY_FILE).write_text("ready")
time.sleep(120)
"""

MANY_THREADS = """
import pathlib, threading, time
threading.stack_size(64 * 1024)
stop = threading.Event()
for _ in range(COUNT):
    threading.Thread(target=stop.wait, daemon=True).start()
pathlib.Path(READY_FILE).write_text("ready")
time.sleep(120)
"""

# A supervisor that restarts a worker which dies after 0.1 s, as a badly configured service does.
SUPERVISOR = """
import pathlib, subprocess, time
pathlib.Path(READY_FILE).write_text("ready")
while True:
    subprocess.run(["/bin/sh", "-c", "sleep 0.1; exit 3"])
    time.sleep(0.05)
"""

# A supervisor whose worker dies after 0.8 s: in a 1 s watch it is born at most once; the instance
# that was running when the watch began dies in it.
SLOW_SUPERVISOR = """
import pathlib, subprocess, time
pathlib.Path(READY_FILE).write_text("ready")
while True:
    subprocess.run(["/bin/sh", "-c", "sleep 0.8; exit 3"])
    time.sleep(0.05)
"""

# A parent that keeps starting short jobs, each a different command line (six at a time).
SPAWNER = """
import pathlib, subprocess, threading, itertools
jobs = itertools.count()
def spawn():
    while True:
        subprocess.run(["/bin/sh", "-c", f": job {next(jobs)}; sleep 0.03"])
for _ in range(6):
    threading.Thread(target=spawn, daemon=True).start()
pathlib.Path(READY_FILE).write_text("ready")
threading.Event().wait()
"""


def test_zombies_name_the_parent_that_does_not_reap_them(tmp_path):
    with planted(ZOMBIE_PARENT, "appliance-test-zombie-parent", tmp_path) as (pid, _):
        found = process_counts.zombies(readings())
        assert_verdicts(found, "zombies")
        mine = [f for f in found if f.pid == pid]
        assert mine and mine[0].severity == "warning", found
        assert mine[0].values["zombies"] == 3
        assert mine[0].culprit == psutil.Process(pid).name()
        assert "3 zombie children" in mine[0].verdict and f"pid {pid}" in mine[0].verdict


def test_zombies_of_the_appliance_itself_never_count(tmp_path):
    with planted(ZOMBIE_PARENT, "appliance-test-zombie-parent", tmp_path) as (pid, _):
        found = process_counts.zombies(readings(own={pid}))
        assert all(f.pid != pid for f in found), found
        assert not any(pid == f.values.get("parent_pid") for f in found)


def test_a_process_near_its_open_file_limit_is_named(tmp_path):
    with planted(NEAR_FD_LIMIT, "appliance-test-fd-hog", tmp_path) as (pid, _):
        found = process_counts.open_files(readings())
        assert_verdicts(found, "open_files")
        mine = [f for f in found if f.pid == pid]
        assert mine and mine[0].severity in ("warning", "critical"), found
        assert mine[0].values["soft_limit"] == 64
        assert mine[0].values["open_files"] >= 54
        assert "limit 64" in mine[0].verdict


def test_the_same_process_inside_the_appliance_is_not_a_culprit(tmp_path):
    with planted(NEAR_FD_LIMIT, "appliance-test-fd-hog", tmp_path) as (pid, _):
        found = process_counts.open_files(readings(own={pid}))
        assert all(f.pid != pid and f.values.get("pid") != pid for f in found), found


def test_a_process_with_thousands_of_threads_is_named_and_the_appliance_never_is(tmp_path):
    with planted(MANY_THREADS, "appliance-test-threads", tmp_path, COUNT=1100) as (pid, _):
        found = process_counts.threads(readings())
        assert_verdicts(found, "threads")
        mine = [f for f in found if f.pid == pid]
        assert mine and mine[0].severity == "warning", found
        assert mine[0].values["threads"] >= 1100
        # the same process counted as the appliance's own: neither a culprit nor "the most threads"
        found = process_counts.threads(readings(own={pid}))
        assert all(f.pid != pid and f.values.get("pid") != pid for f in found), found


def test_a_process_far_ahead_in_threads_stands_out_though_it_is_no_fault(tmp_path):
    """300 threads cross no leak threshold (1000) yet lead the ranking by far: the ok verdict
    carries the process as its standout and says how far ahead it is; counted as the appliance's
    own, it never stands out."""
    with planted(MANY_THREADS, "appliance-test-threads", tmp_path, COUNT=300) as (pid, _):
        found = process_counts.threads(readings())
        assert len(found) == 1 and found[0].severity == "ok", found
        lead = found[0].standout
        assert lead is not None and lead.pid == pid and lead.amount >= 300 and lead.amount >= 3 * lead.next_amount
        assert f"(pid {pid}), " in found[0].verdict and ("× the next" in found[0].verdict or "no other" in found[0].verdict)
        mine = process_counts.threads(readings(own={pid}))
        assert all(f.standout is None or f.standout.pid != pid for f in mine), mine


def test_a_quiet_machine_has_normal_thread_and_descriptor_verdicts(tmp_path):
    with planted(MANY_THREADS, "appliance-test-threads", tmp_path, COUNT=40) as (pid, _):
        for analyzer, family in ((process_counts.threads, "threads"), (process_counts.open_files, "open_files"),
                                 (process_counts.zombies, "zombies")):
            found = analyzer(readings())
            assert_verdicts(found, family)
            assert all(f.pid != pid for f in problems(found)), found  # 40 threads is no fault
            assert all(f.standout is None or f.standout.pid != pid for f in found), found  # nor far ahead
        verdict = process_counts.threads(readings(own={os.getpid()}))
        assert any(f.severity == "ok" and "thread counts are normal" in f.verdict for f in verdict), verdict


def test_a_crash_looping_worker_and_its_supervisor_are_named(tmp_path):
    with planted(SUPERVISOR, "appliance-test-supervisor", tmp_path) as (pid, _):
        found = restarts.restarts(readings(sample_seconds=1.2))
        assert_verdicts(found, "restarts")
        mine = [f for f in found if f.values.get("parent_pid") == pid]
        assert mine and mine[0].severity == "warning", found
        assert mine[0].values["starts"] >= 2 and mine[0].values["exited"] >= 1
        assert "is restarting" in mine[0].verdict and f"pid {pid}" in mine[0].verdict
        assert "exit 3" in mine[0].values["command"]


def test_a_worker_that_lives_about_as_long_as_the_watch_is_seen_restarting(tmp_path):
    """Born at most once in the watch: the instance that died in it is the other half of the restart."""
    with planted(SLOW_SUPERVISOR, "appliance-test-slow-supervisor", tmp_path) as (pid, _):
        time.sleep(1.0)  # the worker started at once; watch a later one die and start again
        found = restarts.restarts(readings(sample_seconds=1.0, watch_seconds=1.0))
        mine = [f for f in found if f.values.get("parent_pid") == pid]
        assert mine and mine[0].severity == "warning", found
        assert mine[0].values["exited"] >= 1 and mine[0].values["started_while_watched"] >= 1
        assert "sleep 0.8; exit 3" in mine[0].values["command"]


def test_restarts_inside_the_appliance_never_count(tmp_path):
    with planted(SUPERVISOR, "appliance-test-supervisor", tmp_path) as (pid, _):
        found = restarts.restarts(readings(own={pid}, sample_seconds=1.0))
        assert not any(f.values.get("parent_pid") == pid or f.pid == pid for f in found), found
        assert not any("exit 3" in str(f.values.get("command", "")) for f in found), found


def test_a_parent_spawning_short_lived_children_is_named(tmp_path):
    with planted(SPAWNER, "appliance-test-spawner", tmp_path) as (pid, _):
        for _ in range(3):  # on a loaded machine one window's birth rate may fall short; retry
            found = restarts.restarts(readings(sample_seconds=1.0))
            mine = [f for f in found if f.pid == pid]
            if mine:
                break
        assert mine and mine[0].severity == "warning", found
        assert "spawns short-lived children" in mine[0].verdict
        assert mine[0].values["per_second"] >= restarts.SPAWN_RATE_WARNING


def test_systemd_restart_counts_are_read_from_systemctl_show():
    shown = "Id=nginx.service\nNRestarts=4\nSubState=auto-restart\n\nId=ssh.service\nNRestarts=0\nSubState=running\n"
    assert restarts.parse_show(shown) == [
        {"unit": "nginx.service", "restarts": 4, "state": "auto-restart"},
        {"unit": "ssh.service", "restarts": 0, "state": "running"},
    ]


def test_a_command_line_is_quoted_on_one_line_with_secrets_redacted():
    info = {"pid": 1, "name": "python", "cmdline": ["python", "-c", "import os\nrun()", "--password", "hunter2secret"]}
    shown = command(info)
    assert "\n" not in shown and shown.startswith("python -c import os run()")
    assert "hunter2secret" not in shown
    assert name_of({"name": None}) == "?"
