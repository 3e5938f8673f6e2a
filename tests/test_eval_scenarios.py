"""Every scenario's set-up plants a real fault, and its tear-down leaves nothing behind: no process
(checked by PID and by the distinctive name, through psutil) and no file; also when the evaluator
is interrupted (SIGTERM) or killed outright (SIGKILL)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from appliance.eval import sandbox as sandbox_module
from appliance.eval.sandbox import PREFIX, Sandbox, SandboxError, sweep_stale
from appliance.eval.families import FAMILIES
from appliance.eval.scenarios import SCENARIOS, SEALED_SCENARIOS, SUITES, by_name, suite
from appliance.errors import UsageError
from support.tools import gone_or_zombie

MB = 1 << 20


def _processes_named(names, bin_dir: Path) -> list[psutil.Process]:
    """Live processes with one of `names`, or started from the sandbox's interpreter links."""
    found = []
    for proc in psutil.process_iter(["name", "cmdline"]):
        try:
            cmdline = proc.info["cmdline"] or []
            if proc.info["name"] in names or (cmdline and cmdline[0].startswith(str(bin_dir))):
                if proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def assert_torn_down(pids, names, paths) -> None:
    alive = [p for p in pids if not gone_or_zombie(p)]
    assert not alive, f"processes left behind: {alive}"
    for path in paths:
        assert not Path(path).exists(), f"left behind: {path}"
    named = _processes_named(set(names), Path(paths[-1]))
    assert not named, f"processes with the scenario's names left: {named}"


def test_the_cases_cover_at_least_20_families_each_asked_precisely_vaguely_and_on_a_control():
    families = {f.name for f in FAMILIES}
    assert len(families) >= 20 and len(SCENARIOS) >= 60
    assert len({s.name for s in SCENARIOS}) == len(SCENARIOS)
    for family in families:
        cases = [s for s in SCENARIOS if s.family == family]
        assert {(s.kind, s.phrasing) for s in cases} == {
            ("precise", "precise"), ("vague", "vague"), ("control", "precise"), ("control", "vague")}, family
        questions = [s.question for s in cases]
        assert len(set(questions)) == 4 and all("?" in q or len(q) > 20 for q in questions), family
        fault, control = (next(s for s in cases if s.kind == k) for k in ("precise", "control"))
        assert fault.plant is not control.plant or family == "uptime"  # a control is the place in health


def test_dev_and_dev2_are_disjoint_and_each_covers_every_family_with_a_fault_and_a_control():
    dev, test, dev3 = set(SUITES["dev"]), set(SUITES["dev2"]), set(SUITES["dev3"])
    assert not dev & test and dev | test | dev3 == set(SUITES["full"]) == {s.name for s in SCENARIOS}
    table = by_name()
    for split in (dev, test):
        cases = [table[n] for n in split]
        for family in FAMILIES:
            kinds = sorted(s.kind for s in cases if s.family == family.name)
            assert kinds in (["control", "precise"], ["control", "vague"]), (family.name, kinds)
        phrasings = [s.phrasing for s in cases]
        assert abs(phrasings.count("precise") - phrasings.count("vague")) <= 2  # both phrasings, about equally
        assert {s.split for s in cases} == {"dev" if split is dev else "dev2"}
    # Deterministic: the same split on every import, decided by the families' order alone.
    assert SUITES["dev"][:4] == ("cpu.precise", "cpu.control_vague", "memory.vague", "memory.control")


def test_every_question_fills_its_slots_from_the_plant():
    """The templates name only the slots a plant provides (a slot name typo fails here, not in an
    evaluation an hour in); the plants themselves are checked in test_eval_plants.py."""
    import string

    provided = {
        "filesystem_full": {"mount"}, "inodes": {"mount"}, "deleted_open": {"mount"}, "readonly_fs": {"mount"},
        "disk_usage": {"root"}, "listening": {"port"}, "dependency": {"log", "port"}, "log_errors": {"log"},
        "permissions": {"log"}, "config": {"config"}, "injection": {"log"}, "secrets": {"folder"},
        # the tuned families about one named thing (appliance/eval/families_profiles.py)
        "immutable": {"path"}, "certificate": {"path"}, "stopped_process": {"pid", "name"},
        "stale_pidfile": {"pidfile"}, "writing_to": {"pid", "name"},
    }
    def slots(question: str) -> set[str]:
        return {field for _, field, _, _ in string.Formatter().parse(question) if field}

    # The checklist families' own modules check their sealed phrasings; dev3's use no slot they do not.
    for s in SEALED_SCENARIOS:
        if s.phrasing != "plain":
            provided.setdefault(s.family, set()).update(slots(s.question))
    # The old families' plain phrasings too.
    for s in (*SCENARIOS, *(s for s in SEALED_SCENARIOS if s.phrasing == "plain")):
        assert slots(s.question) <= provided.get(s.family, set()), (s.name, slots(s.question))


def test_teardown_runs_when_the_body_raises():
    with pytest.raises(RuntimeError):
        with by_name()["listening.precise"].setup() as fault:
            pids, names = list(fault.pids), list(fault.names)
            paths = [fault.sandbox.root, fault.sandbox.bin_dir]
            raise RuntimeError("the run failed")
    assert_torn_down(pids, names, paths)


def test_teardown_runs_when_planting_fails_half_way():
    sandbox_ref = {}

    def bad_plant(sandbox: Sandbox):
        sandbox_ref["s"] = sandbox
        sandbox.spawn("halfway-ok", "ready()\nimport time\ntime.sleep(60)\n")
        sandbox.spawn("never-ready", "raise SystemExit(3)\n")

    from appliance.eval.scenarios import Scenario

    with pytest.raises(SandboxError, match="exited before it was ready"):
        with Scenario("bad", "test", "precise", "precise", "?", "fails while planting", bad_plant).setup():
            pass
    s = sandbox_ref["s"]
    assert_torn_down(s.pids(), ["halfway-ok", "never-ready"], [s.root, s.bin_dir])


def _in_table(pids) -> list[int]:
    """PIDs still in the process table, zombies included."""
    return [p for p in pids if Path(f"/proc/{p}").exists()]


def test_faults_are_children_of_the_reaper_which_reaps_them_and_their_orphans_at_once():
    """Not the evaluator's descendants (the tools would label them as the appliance), not PID 1's
    (which reaps only every ~2 s here): the reaper's, so a dead fault and the zombies of a dead
    zombie parent leave the process table within half a second."""
    with by_name()["zombies.precise"].setup() as fault:
        parent = psutil.Process(fault.truth["pid"])
        reaper = psutil.Process(parent.ppid())
        assert reaper.pid not in (1, os.getpid())
        assert reaper.pid not in {c.pid for c in psutil.Process().children(recursive=True)}
        doomed = [parent.pid, *fault.truth["zombies"]]
        assert len(_in_table(doomed)) == 6  # the parent and its 5 zombies
    deadline = time.monotonic() + 0.5
    while _in_table(doomed) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _in_table(doomed), "dead faults or their orphans stayed zombies"


def test_a_reaper_killed_from_outside_is_replaced_on_the_next_spawn():
    from appliance.eval.reaper import reaper

    with Sandbox() as box:
        first, _ = box.spawn("reaped-one", "ready()\nimport time\ntime.sleep(60)\n")
        old = psutil.Process(first).ppid()
        os.kill(old, signal.SIGKILL)
        _wait_gone([old], timeout=5)
        second, _ = box.spawn("reaped-two", "ready()\nimport time\ntime.sleep(60)\n")
        assert psutil.Process(second).ppid() == reaper().pid != old


def test_process_names_are_limited_to_what_the_kernel_shows():
    with Sandbox() as box:
        with pytest.raises(ValueError):
            box.spawn("a-name-longer-than-15", "ready()")


_CHILD = textwrap.dedent(
    """
    import json, sys, time
    from appliance.eval.sandbox import raise_on_termination
    from appliance.eval.scenarios import by_name
    with raise_on_termination():
        with by_name()[sys.argv[1]].setup() as fault:
            print(json.dumps({"pids": fault.pids, "names": list(fault.names),
                              "paths": [str(fault.sandbox.root), str(fault.sandbox.bin_dir)]}), flush=True)
            time.sleep(120)
    """
)


def _start_evaluator(scenario: str) -> tuple[subprocess.Popen, dict]:
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, scenario], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[1])
    line = proc.stdout.readline()
    assert line, "the evaluator subprocess did not set up its scenario"
    return proc, json.loads(line)


def _wait_gone(pids, timeout=10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(gone_or_zombie(p) for p in pids):
            return
        time.sleep(0.1)


def test_sigterm_to_the_evaluator_tears_the_scenario_down():
    proc, info = _start_evaluator("listening.precise")
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
    _wait_gone(info["pids"])
    assert_torn_down(info["pids"], info["names"], info["paths"])


def test_sigkill_of_the_evaluator_kills_its_processes_and_sweep_removes_its_files():
    proc, info = _start_evaluator("listening.precise")
    proc.kill()
    proc.wait(timeout=20)
    _wait_gone(info["pids"])  # they watch the evaluator's PID
    assert all(gone_or_zombie(p) for p in info["pids"])
    assert all(Path(p).exists() for p in info["paths"])  # nothing could remove them...
    removed = sweep_stale()
    assert {str(p) for p in removed} >= set(info["paths"])  # ...until the next evaluation starts
    assert_torn_down(info["pids"], info["names"], info["paths"])


def test_sigkill_of_the_evaluator_leaves_mounts_that_the_next_sweep_unmounts():
    proc, info = _start_evaluator("filesystem_full.precise")
    mounted = sandbox_module.mounts_under(Path(info["paths"][0]))
    assert len(mounted) == 1
    proc.kill()
    proc.wait(timeout=20)
    _wait_gone(info["pids"])
    assert sandbox_module.mounts_under(Path(info["paths"][0])) == mounted  # nothing could unmount it...
    sweep_stale()
    assert sandbox_module.mounts_under(Path(info["paths"][0])) == []  # ...until the next evaluation starts
    assert not Path(info["paths"][0]).exists()


def test_sweep_leaves_live_owners_alone():
    with Sandbox() as box:
        assert box.root.name.startswith(f"{PREFIX}{os.getpid()}-")
        sweep_stale()
        assert box.root.is_dir() and box.bin_dir.is_dir()


def test_close_all_at_exit_closes_open_sandboxes():
    box = Sandbox()
    pid, _ = box.spawn("atexit-probe", "ready()\nimport time\ntime.sleep(60)\n")
    sandbox_module.close_all()
    assert_torn_down([pid], ["atexit-probe"], [box.root, box.bin_dir])


def test_suite_selection():
    assert [s.name for s in suite("smoke")] == list(SUITES["smoke"])
    assert [s.name for s in suite("cpu.precise,log_errors.control")] == ["cpu.precise", "log_errors.control"]
    assert [s.kind for s in suite("inodes")] == ["precise", "vague", "control", "control"]  # a family: its 4 cases
    assert len(suite("dev")) == len(suite("dev2")) == len([s for s in SCENARIOS if s.split != "dev3"]) // 2
    assert suite("test") == suite("dev2")  # the old name of dev2
    with pytest.raises(UsageError, match="unknown suite, family or scenario"):
        suite("nope")


def test_the_scenarios_command_lists_every_case_with_its_split_kind_and_question(capsys):
    from appliance.cli import main

    assert main(["eval", "scenarios"]) == 0
    out = capsys.readouterr().out
    for scenario in (*SCENARIOS, *SEALED_SCENARIOS):
        line = next(line for line in out.splitlines() if f" {scenario.name} " in line)
        assert line.split()[:3] == [scenario.split, scenario.kind, scenario.phrasing]
        assert line.rstrip().endswith(scenario.question)
    assert f"suite dev2 ({len(SUITES['dev2'])}): " in out and "suite smoke (3): " in out
    assert f"suite sealed ({len(SUITES['sealed'])}): " in out
