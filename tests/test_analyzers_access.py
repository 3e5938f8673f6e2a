"""Why a write was denied, judged from real files, modes and a real process running as nobody:
the check a person makes with `ls -ld` and `ps -o user` after a "Permission denied" log line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest


from appliance.analyzers.access import access_findings, allowed, blocking_place, denied_paths
from appliance.analyzers.dependencies import log_findings
from appliance.analyzers.readings import Readings
from appliance.tools.paths import PathPolicy

NOBODY = 65534
WRITER = """
import os, sys, time
log, target = sys.argv[1], sys.argv[2]
os.setgid(65534); os.setuid(65534)
out = open(log, 'a')
try:
    open(target, 'w').close()
    out.write('2026-12-01 10:00:00 INFO gen: wrote ' + target + '\\n')
except OSError as exc:
    out.write('2026-12-01 10:00:00 ERROR gen: cannot write report: ' + str(exc) + '\\n')
out.flush()
print('ready', os.getpid(), flush=True)
time.sleep(120)
"""

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a process is started as nobody: needs root")


@pytest.fixture
def place():
    """A folder under /tmp that nobody may pass through (pytest's own tmp_path is root's 0700)."""
    base = Path(tempfile.mkdtemp(prefix="appliance-access-", dir="/tmp"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def writer(place):
    """Start the writer as nobody against `target` (its pid returned); kill it after the test."""
    started: list[subprocess.Popen] = []

    def start(log: Path, target: Path) -> int:
        log.touch()
        os.chown(log, NOBODY, NOBODY)
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(log), str(target)], stdout=subprocess.PIPE, text=True)
        started.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().split() == ["ready", str(proc.pid)]
        return proc.pid

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def readings(place: Path) -> Readings:
    """The test's own process is not the appliance here: its child, the writer, may be judged."""
    return Readings(self_pids=frozenset(), policy=PathPolicy.default([place]))


def test_the_denied_path_is_the_last_path_of_each_denied_line():
    lines = ["ERROR gen: cannot write report: [Errno 13] Permission denied: '/srv/reports/a.csv'",
             "INFO wrote /srv/reports/b.csv",
             "open /etc/app.conf for /var/lib/app/state: EACCES",
             "ERROR gen: cannot write report: [Errno 13] Permission denied: '/srv/reports/a.csv'"]
    assert denied_paths(lines) == ["/srv/reports/a.csv", "/var/lib/app/state"]


def test_a_writer_running_as_nobody_denied_by_a_root_folder_is_named_with_the_folder_mode(place, writer):
    out = place / "srv" / "reports"
    out.mkdir(parents=True)
    log = place / "gen.log"
    pid = writer(log, out / "daily-000.csv")
    found = log_findings(str(log), readings(place))
    denied = [f for f in found if f.family == "permissions"]
    assert len(denied) == 1, [f.verdict for f in found]
    verdict = denied[0]
    assert verdict.severity == "warning" and verdict.culprit == str(out) and verdict.pid == pid
    assert verdict.values["user"] == "nobody" and verdict.values["refused"] == "create files in"
    assert "running as nobody" in verdict.verdict and "drwxr-xr-x root:root" in verdict.verdict
    assert "only root may create files in it" in verdict.verdict and "Permission denied" in verdict.verdict

    os.chown(out, NOBODY, NOBODY)  # the fix a person would make: the verdict follows the machine
    fixed = [f for f in log_findings(str(log), readings(place)) if f.family == "permissions"]
    assert [f.severity for f in fixed] == ["ok"] and "no longer holds" in fixed[0].verdict


def test_a_folder_on_the_way_that_cannot_be_passed_is_where_the_write_stops(place, writer):
    locked = place / "locked"
    (locked / "inner").mkdir(parents=True)
    locked.chmod(0o700)
    log = place / "gen.log"
    writer(log, locked / "inner" / "out.csv")
    verdict = next(f for f in log_findings(str(log), readings(place)) if f.family == "permissions")
    assert verdict.culprit == str(locked) and verdict.values["refused"] == "pass through"
    assert "drwx------ root:root" in verdict.verdict


def test_an_existing_file_that_is_not_writable_is_the_place(place, writer):
    report = place / "report.csv"
    report.write_text("region,total\n")
    report.chmod(0o644)
    os.chown(report, 0, NOBODY)
    log = place / "gen.log"
    writer(log, report)
    verdict = next(f for f in log_findings(str(log), readings(place)) if f.family == "permissions")
    assert verdict.culprit == str(report) and verdict.values["refused"] == "write"
    report.chmod(0o664)  # the group nobody may write now
    again = next(f for f in log_findings(str(log), readings(place)) if f.family == "permissions")
    assert again.severity == "ok"


def test_with_no_writer_running_the_place_is_judged_for_an_unprivileged_user(place):
    out = place / "out"
    out.mkdir()
    log = place / "old.log"
    log.write_text(f"2026-11-30 ERROR gen: [Errno 13] Permission denied: '{out}/x.csv'\n")
    found = access_findings(str(log), log.read_text().splitlines(), readings(place))
    assert len(found) == 1 and found[0].severity == "warning" and found[0].pid is None
    assert "none has the log open now" in found[0].verdict


def test_a_denied_path_in_a_private_place_is_not_judged_or_named(place):
    log = place / "ssh.log"
    secret = Path.home() / ".ssh" / "id_rsa"
    line = f"ERROR agent: cannot open {secret}: Permission denied"
    assert access_findings(str(log), [line], readings(place)) == []


def test_the_mode_rule_is_the_kernels_for_owner_group_and_others(place):
    folder = place / "shared"
    folder.mkdir()
    os.chown(folder, 1000, 2000)
    folder.chmod(0o750)
    st = folder.stat()
    assert allowed(st, 1000, frozenset(), 0o3)              # the owner writes
    assert allowed(st, 1234, frozenset({2000}), 0o1)        # the group passes …
    assert not allowed(st, 1234, frozenset({2000}), 0o3)    # … but may not create
    assert not allowed(st, 1234, frozenset({1234}), 0o1)    # others may not even pass
    assert allowed(st, 0, frozenset(), 0o3)                 # root may
    assert blocking_place(str(folder / "f"), 1234, frozenset({1234}))[2] == "pass through"
    assert blocking_place(str(folder / "f"), 1000, frozenset()) is None


def test_the_appliances_own_processes_are_never_the_writer_judged(place, writer):
    out = place / "out"
    out.mkdir()
    log = place / "gen.log"
    writer(log, out / "x.csv")  # a child of this test: the appliance's own tree when the test is the appliance
    own = Readings(self_pids=frozenset({os.getpid()}), policy=PathPolicy.default([place]))
    verdict = next(f for f in log_findings(str(log), own) if f.family == "permissions")
    assert verdict.pid is None and "none has the log open now" in verdict.verdict


def test_a_log_that_shows_a_denial_is_judged_with_the_place_that_denied_it(place, writer):
    out = place / "srv" / "reports"
    out.mkdir(parents=True)
    log = place / "gen.log"
    writer(log, out / "daily-000.csv")
    found = tuple(log_findings(str(log), readings(place)))
    assert [f.family for f in found if f.is_problem] == ["log_errors", "permissions"]
    denied = next(f for f in found if f.family == "permissions")
    assert "may not create files in " + str(out) in denied.verdict and denied.path == str(out)
