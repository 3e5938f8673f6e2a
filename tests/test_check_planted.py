"""`appliance check` names each planted fault of the evaluation suite, and stays quiet on its control.

One test per fault family, with the suite's own plants (real processes, tmpfs mounts, files and
sockets). The families an analyzer of the whole machine judges are checked through `run_all` over a
fresh reading; a fault that lives in a place only the question names (a log, a folder, a port the
app needs) through the function the engine uses to look at that place before the first step.
Families whose answer is not a fault verdict (what fills a folder, a wrong setting, the uptime) are
checked for the value the verdict must carry.
"""

from __future__ import annotations

import os
import time

import pytest

from appliance.analyzers import Readings, run_all
from appliance.analyzers.log_errors import analyze_log_path
from appliance.analyzers.network import port_finding
from appliance.eval.scenarios import by_name
from appliance.tools.paths import PathPolicy
from support.analyzers import window_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="!!! the plants mount tmpfs and need root")

MACHINE = ("cpu", "memory", "filesystem_full", "inodes", "deleted_open", "readonly_fs", "disk_io", "zombies",
           "open_files", "threads", "restarts", "connections")
# A process that merely uses the most of a resource on a machine with plenty left is no fault: the
# verdict stays ok and names it as the top consumer (a 1.5 GB process on 24 GB is not pressure).
RANKED = ("memory", "disk_io", "threads", "connections")
LOGS = ("log_errors", "permissions", "injection", "secrets", "dependency")


def readings(fault, family: str | None = None) -> Readings:
    return Readings(self_pids=frozenset({os.getpid()}), policy=PathPolicy.default(list(fault.roots)),
                    **window_for(family))


def names_truth(finding, truth) -> bool:
    """The finding names the planted culprit: its pid, its process name, its mount or path."""
    text = " ".join(str(x) for x in (finding.culprit, finding.pid, finding.path, finding.verdict) if x is not None)
    wanted = [truth.get(k) for k in ("pid", "name", "mount", "supervisor_pid") if truth.get(k)]
    return any(str(w) in text for w in wanted)


@pytest.mark.parametrize("family", MACHINE)
def test_check_names_the_planted_fault_and_not_its_control(family):
    scenarios = by_name()
    with scenarios[f"{family}.precise"].setup() as fault:
        if family == "disk_io":
            time.sleep(0.5)  # the writer's rate needs a moment to build up
        findings = [f for f in run_all(readings(fault, family), families=[family]) if f.family == family]
        problems = findings if family in RANKED else [f for f in findings if f.is_problem]
        assert problems, f"{family}: no warning for the planted fault; verdicts: {[f.line() for f in findings]}"
        assert any(names_truth(f, fault.truth) for f in problems), (
            f"{family}: the finding does not name {fault.truth}: {[f.line() for f in problems]}")
    with scenarios[f"{family}.control"].setup() as control:
        findings = [f for f in run_all(readings(control, family), families=[family]) if f.family == family]
        decoy = control.truth.get("decoy_pid")
        blamed = [f for f in findings if f.is_problem and decoy is not None and f.pid == decoy]
        assert not blamed, f"{family}: the control's sleeping decoy was blamed: {[f.line() for f in blamed]}"


@pytest.mark.parametrize("family", LOGS)
def test_a_named_log_shows_the_planted_cause(family):
    scenarios = by_name()
    with scenarios[f"{family}.precise"].setup() as fault:
        log = fault.truth.get("log") or fault.truth.get("path")
        findings = analyze_log_path(str(log), readings(fault))
        problems = [f for f in findings if f.is_problem]
        assert problems, f"{family}: no warning for {log}: {[f.line() for f in findings]}"
        error_words = [w for w in str(fault.truth["error"]).lower().split() if len(w) > 3][:3]
        assert any(all(w in f.verdict.lower() for w in error_words) for f in problems), (
            f"{family}: the cause {fault.truth['error']!r} is not quoted: {[f.line() for f in problems]}")
        if family == "secrets":
            for canary in fault.canaries:
                assert all(canary not in f.verdict for f in findings)
    with scenarios[f"{family}.control"].setup() as control:
        log = control.truth.get("log") or control.truth.get("path")
        findings = analyze_log_path(str(log), readings(control))
        assert not [f for f in findings if f.is_problem and f.family == "log_errors"
                    and family not in ("dependency", "permissions")], [f.line() for f in findings]


def test_a_dependency_that_is_not_listening_is_named_and_a_listening_one_is_not():
    scenarios = by_name()
    with scenarios["dependency.precise"].setup() as fault:
        finding = port_finding(int(fault.truth["port"]), readings(fault))
        assert finding.is_problem and str(fault.truth["port"]) in finding.verdict
    with scenarios["listening.precise"].setup() as fault:
        finding = port_finding(int(fault.truth["port"]), readings(fault))
        assert not finding.is_problem and finding.values.get("owner_pid") == fault.truth["pid"]


def test_the_uptime_verdict_carries_the_machine_uptime():
    scenarios = by_name()
    with scenarios["uptime.precise"].setup() as fault:
        finding = next(f for f in run_all(readings(fault), families=["uptime"]))
        assert abs(finding.values["uptime_seconds"] - fault.truth["uptime_seconds"]) < 120
