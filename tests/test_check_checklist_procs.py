"""`appliance check` names each planted fault of the checklist's process and path families, and stays
quiet on its control (appliance/eval/families_checklist_procs.py).

The machine-wide families (process_names, user_load, memory_growth, disk_growth) are checked through
`run_all` over a fresh reading with the check's own windows; the families whose subject is a path
the question names (path_holders, path_lookup, path_permission, file_counts) through the function
the engine uses before the first step (`path_findings`), with the family's own precise question.
"""

from __future__ import annotations

import os
import time

import psutil
import pytest

from appliance.analyzers import Readings, run_all
from appliance.analyzers.named_path import path_findings
from appliance.eval.families_checklist_procs import SEALED_FAMILIES
from appliance.eval.sandbox import Sandbox
from appliance.tools.paths import PathPolicy

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="!!! the plants mount tmpfs and change users: need root")

FAMILIES = {f.name: f for f in SEALED_FAMILIES}
MACHINE = ("process_names", "user_load", "memory_growth", "disk_growth")
# the named-path families: (the verdict's family, the slot that names the path)
NAMED = {"path_holders": ("path_holders", "mount"), "path_lookup": ("path_lookup", "path"),
         "path_permission": ("path_lookup", "path"), "file_counts": ("file_counts", "root")}


def readings(fault) -> Readings:
    return Readings(self_pids=frozenset({os.getpid()}), policy=PathPolicy.default(list(fault.roots)))


def names_truth(finding, truth) -> bool:
    text = " ".join(str(x) for x in (finding.culprit, finding.pid, finding.path, finding.verdict) if x is not None)
    wanted = [truth.get(k) for k in ("pid", "name", "user", "mount", "path", "target", "folder") if truth.get(k)]
    return any(str(w) in text for w in wanted)


def assert_gone(fault) -> None:
    """Nothing the plant started is left once its sandbox is closed (forked workers included)."""
    deadline = time.monotonic() + 5
    while True:
        left = [p.pid for p in psutil.process_iter(["name"]) if p.info["name"] in fault.names]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not left, (fault.names, left)


def planted(plant):
    sandbox = Sandbox()
    try:
        return sandbox, plant(sandbox)
    except BaseException:
        sandbox.close()
        raise


@pytest.mark.parametrize("name", MACHINE)
def test_check_names_the_planted_fault_and_not_its_control(name):
    family = FAMILIES[name]
    sandbox, fault = planted(family.plant)
    with sandbox:
        findings = [f for f in run_all(readings(fault), families=[name]) if f.family == name]
        problems = [f for f in findings if f.is_problem]
        assert problems, f"{name}: no warning for the planted fault: {[f.line() for f in findings]}"
        assert any(names_truth(f, fault.truth) for f in problems), (name, fault.truth, [f.line() for f in problems])
    sandbox, control = planted(family.control)
    with sandbox:
        findings = [f for f in run_all(readings(control), families=[name]) if f.family == name]
        blamed = [f for f in findings if f.is_problem and (f.pid == control.truth.get("decoy_pid")
                                                          or control.truth.get("decoy") == f.culprit)]
        assert not blamed, f"{name}: the control's decoy was blamed: {[f.line() for f in blamed]}"
    assert_gone(fault)
    assert_gone(control)


@pytest.mark.parametrize("name", sorted(NAMED))
def test_a_named_path_gets_the_planted_cause_and_its_control_is_fine(name):
    family = FAMILIES[name]
    verdict_family, slot = NAMED[name]
    sandbox, fault = planted(family.plant)
    with sandbox:
        question = family.precise.format(**fault.slots)
        findings = [f for f in path_findings(str(fault.slots[slot]), question, readings(fault))
                    if f.family == verdict_family]
        problems = [f for f in findings if f.is_problem]
        assert problems, f"{name}: no warning: {[f.line() for f in findings]}"
        assert any(names_truth(f, fault.truth) for f in problems), (name, fault.truth, [f.line() for f in problems])
    sandbox, control = planted(family.control)
    with sandbox:
        question = family.control_precise.format(**control.slots)
        findings = [f for f in path_findings(str(control.slots[slot]), question, readings(control))
                    if f.family == verdict_family]
        assert findings and not [f for f in findings if f.is_problem], [f.line() for f in findings]
    assert_gone(fault)


def test_the_first_step_shows_a_named_paths_cause_first():
    """The engine's evidence before the first step carries the named path's verdict, first."""
    from appliance.agent.evidence import MachineEvidence
    from appliance.tools.registry import ToolContext, build_registry

    family = FAMILIES["path_lookup"]
    sandbox, fault = planted(family.plant)
    with sandbox:
        policy = PathPolicy.default(list(fault.roots))
        evidence = MachineEvidence(build_registry(ToolContext(policy=policy)), policy=policy).gather(
            family.vague.format(**fault.slots), frozenset({os.getpid()}))
    first = evidence.shown()[0]
    assert first.family == "path_lookup" and first.is_problem and fault.truth["target"] in first.verdict, first.line()


def test_a_named_place_that_grows_names_the_file_and_its_writer_and_its_control_is_fine():
    family = FAMILIES["disk_growth"]
    sandbox, fault = planted(family.plant)
    with sandbox:
        found = [f for f in path_findings(fault.slots["mount"], family.precise.format(**fault.slots), readings(fault))
                 if f.family == "disk_growth"]
    assert found and found[0].is_problem and found[0].pid == fault.truth["pid"], [f.line() for f in found]
    assert found[0].path == fault.truth["path"] and "full in" in found[0].verdict
    sandbox, control = planted(family.control)
    with sandbox:
        found = [f for f in path_findings(control.slots["mount"], family.control_precise.format(**control.slots),
                                          readings(control)) if f.family == "disk_growth"]
    assert found and not found[0].is_problem, [f.line() for f in found]
    assert_gone(fault)


def test_growth_asked_of_a_named_place_leads_its_evidence_and_a_size_question_does_not():
    """A question about a named place whose space keeps going down is about that place's growth
    first (not a memory's or the fullest filesystem's); a question of its size is not."""
    from appliance.agent.evidence import MachineEvidence
    from appliance.tools.registry import ToolContext, build_registry

    sandbox, control = planted(FAMILIES["disk_growth"].control)
    with sandbox:
        policy = PathPolicy.default(list(control.roots))
        source = MachineEvidence(build_registry(ToolContext(policy=policy)), policy=policy)
        mount = control.slots["mount"]
        grows = source.gather(f"the free space on {mount} keeps shrinking, which log is ballooning?",
                              frozenset({os.getpid()}))
        size = source.gather(f"how big is {mount}?", frozenset({os.getpid()}))
    assert grows.topics[0] == "disk_growth", grows.topics
    place = [f for f in grows.places if f.family == "disk_growth"]
    assert place and not place[0].is_problem and mount in place[0].verdict, [f.line() for f in grows.places]
    assert "disk_growth" not in size.topics[:1] and not [f for f in size.places if f.family == "disk_growth"]
    assert_gone(control)


def test_a_named_file_asked_nothing_particular_is_judged_by_its_lookup_whatever_resource_the_model_chose():
    """"is X fine?" names no resource; the question reader's model may choose disk space for it.
    The file's lookup is still what the question is about and leads its evidence; a question
    whose own words ask about space is answered by the file's filesystem instead."""
    from appliance.agent.evidence import MachineEvidence
    from appliance.agent.question.kinds import Asks, Resource
    from appliance.agent.question.question import read_question
    from appliance.tools.registry import ToolContext, build_registry

    sandbox, control = planted(FAMILIES["path_permission"].control)
    with sandbox:
        policy = PathPolicy.default(list(control.roots))
        source = MachineEvidence(build_registry(ToolContext(policy=policy)), policy=policy)
        path = control.slots["path"]
        fine = read_question(f"is {path} fine?").relabelled(Asks.YES_NO, Resource.DISK_SPACE, False,
                                                            source.families)
        assert fine.resource is Resource.DISK_SPACE and not fine.resource_in_words
        plain = source.gather(fine, frozenset({os.getpid()}))
        space = source.gather(read_question(f"is the disk that holds {path} full?").relabelled(
            Asks.YES_NO, Resource.DISK_SPACE, True, source.families), frozenset({os.getpid()}))
    assert plain.topics[0] == "path_lookup", plain.topics
    lookup = [f for f in plain.places if f.family == "path_lookup"]
    assert lookup and not lookup[0].is_problem and f"{path} exists" in lookup[0].verdict
    assert not [f for f in space.places if f.family == "path_lookup"], [f.line() for f in space.places]
    assert_gone(control)


def test_a_stick_that_will_not_eject_named_by_no_path_is_found_under_the_personal_mounts(tmp_path):
    """"my usb stick wont eject, it says the device is in use" names no path: the mounts under
    /media and /mnt are the ones it can mean, and the one a real process holds is named with it."""
    import subprocess
    import sys
    from appliance.agent.evidence import MachineEvidence
    from appliance.tools.registry import ToolContext, build_registry

    point = f"/mnt/appliance-stick-{os.getpid()}"
    os.makedirs(point)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", point], check=True)
    # a process of its own, not the test's child (the appliance's own descendants are never judged)
    started = subprocess.run(["sh", "-c", f"cd {point} && {sys.executable} -c 'import time; time.sleep(60)' "
                              ">/dev/null 2>&1 & echo $!"], capture_output=True, text=True, check=True)
    holder = psutil.Process(int(started.stdout.strip()))
    try:
        policy = PathPolicy.default([point])
        source = MachineEvidence(build_registry(ToolContext(policy=policy)), policy=policy)
        evidence = source.gather("my usb stick wont eject, it says the device is in use", frozenset({os.getpid()}))
        held = [f for f in evidence.places if f.family == "path_holders" and f.path == point]
        assert held and held[0].is_problem and held[0].pid == holder.pid, [f.line() for f in evidence.places]
        assert evidence.topics[0] == "path_holders", evidence.topics
    finally:
        holder.kill()
        holder.wait(5)
        subprocess.run(["umount", point], check=False)
        os.rmdir(point)
