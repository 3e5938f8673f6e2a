"""The checklist's families that live in /etc, on real plants: a host name pinned in /etc/hosts and a
cron table with a job every minute, each named by the check and the tools and each control quiet;
/etc/hosts and /etc/cron.d are left byte for byte as they were, after tear-down, after a kill -9 of
the evaluator (the reaper's sweep) and after the reaper died too (the next evaluation's sweep)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from appliance.analyzers import Readings
from appliance.analyzers.host_pins import host_names, pin_findings
from appliance.analyzers.resolution import analyze as names_check
from appliance.analyzers.scheduled import judge as jobs_check
from appliance.eval import etc_files
from appliance.eval.families_checklist_names import SEALED_FAMILIES
from appliance.eval.sandbox import Sandbox, sweep_stale
from appliance.eval.scoring import Outcome
from appliance.tools.registry import default_registry

ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="the plants change /etc and need root")
FAMILIES = {family.name: family for family in SEALED_FAMILIES}


def _state() -> tuple[bytes, tuple[int, int, int], dict[str, bytes]]:
    """/etc/hosts (bytes, mode, owner) and every file of /etc/cron.d, to compare after."""
    stat = etc_files.HOSTS.stat()
    tables = {p.name: p.read_bytes() for p in etc_files.CRON_D.iterdir() if p.is_file()}
    return etc_files.HOSTS.read_bytes(), (stat.st_mode, stat.st_uid, stat.st_gid), tables


@pytest.fixture
def etc_unchanged():
    before = _state()
    yield before
    assert _state() == before, "/etc/hosts or /etc/cron.d changed"


@ROOT
def test_a_pinned_host_is_named_by_the_check_the_tool_and_the_first_evidence(etc_unchanged):
    family = FAMILIES["name_resolution"]
    with Sandbox() as sandbox:
        fault = family.plant(sandbox)
        host, address = fault.truth["host"], fault.truth["address"]
        question = family.precise.format(**fault.slots)
        assert host_names(question) == [host]
        [pin] = pin_findings(host_names(question))
        assert pin.is_problem and address in pin.verdict and "/etc/hosts" in pin.verdict and "line " in pin.verdict
        assert fault.truth["tag"] not in pin.verdict  # the entry is shown, not its comment
        [check] = names_check(Readings())
        assert f"{host} -> {address}" in check.verdict
        data = default_registry().call("name_resolution", {"name": host})["data"]
        assert data[f"hosts_entries_for_{host}"] == [{"address": address, "names": [host]}]
        from appliance.agent.evidence import MachineEvidence
        evidence = MachineEvidence(default_registry()).gather(question, frozenset({os.getpid()}))
        assert evidence.findings[0] == pin and evidence.topics[0] == "name_resolution"
        assert fault.score(Outcome("ok", f"/etc/hosts pins {host} to {address}, a stale entry.")).success
        assert not fault.score(Outcome("ok", f"DNS for {host} is slow.")).success
    with Sandbox() as sandbox:
        control = family.control(sandbox)
        host = control.truth["host"]
        [fine] = pin_findings(host_names(family.control_precise.format(**control.slots)))
        assert not fine.is_problem and f"no entry for {host}" in fine.verdict
        assert control.score(Outcome("ok", f"No: /etc/hosts has no entry for {host}; DNS decides.")).success


@ROOT
def test_a_host_named_without_a_port_leads_the_evidence_even_when_fine(etc_unchanged):
    """"something seems funny with db.x on this box": the host's own verdict (no entry, DNS decides)
    comes first whatever resource the reader chose; beside a port, the port's families lead."""
    from dataclasses import replace

    from appliance.agent.evidence import MachineEvidence
    from appliance.agent.question.kinds import Resource
    from appliance.agent.question.question import read_question
    with Sandbox() as sandbox:
        control = FAMILIES["name_resolution"].control(sandbox)
        host = control.truth["host"]
        source = MachineEvidence(default_registry())
        vague = read_question(f"something seems funny with {host} on this box")
        as_network = vague.relabelled(vague.asks, Resource.NETWORK, False, [a.family for a in source.analyzers])
        evidence = source.gather(as_network, frozenset({os.getpid()}))
        assert evidence.topics[0] == "name_resolution"
        assert f"no entry for {host}" in next(f for f in evidence.shown() if f.family == "name_resolution").verdict
        with_port = source.gather(read_question(f"can't connect to {host} port 5432 from here, why?"),
                                  frozenset({os.getpid()}))
        assert with_port.topics[0] != "name_resolution"


@ROOT
def test_a_job_every_minute_is_named_and_a_daily_one_is_not(etc_unchanged):
    family = FAMILIES["scheduled_jobs"]
    with Sandbox() as sandbox:
        fault = family.plant(sandbox)
        table = Path(fault.truth["table"])
        assert table.parent == etc_files.CRON_D and table.read_text().startswith("# appliance-eval-")
        assert oct(table.stat().st_mode & 0o777) == "0o644" and table.stat().st_uid == 0
        [ok] = jobs_check(daemon=None)
        assert not ok.is_problem and f"every minute: '{fault.truth['command']}" in ok.verdict
        jobs = default_registry().call("scheduled_jobs", {})["data"]["cron_jobs"]
        assert {"table": str(table), "schedule": "* * * * *", "user": "root",
                "command": fault.truth["command"] + " 2>/dev/null"} in jobs
        assert fault.score(Outcome("ok", f"{table} runs /usr/bin/tar every minute.")).success
    with Sandbox() as sandbox:
        control = family.control(sandbox)
        [ok] = jobs_check(daemon=None)
        assert not ok.is_problem and "every minute" not in ok.verdict
        assert control.score(Outcome("ok", "No, only a daily clean-up job runs.")).success
        assert not control.score(Outcome("ok", f"{control.truth['decoy']} runs every minute.")).success


@ROOT
def test_every_case_plants_and_fills_its_question(etc_unchanged):
    from appliance.eval.scenarios import _cases
    for family in SEALED_FAMILIES:
        for case in _cases(family, 0, sealed=True):
            with case.setup() as fault:
                assert fault.question and "{" not in fault.question, fault.question


def test_lines_come_out_exactly_even_without_a_final_newline_and_beside_a_later_edit(tmp_path):
    hosts = tmp_path / "hosts"
    for original in (b"127.0.0.1 localhost\n", b"127.0.0.1 localhost", b""):
        hosts.write_bytes(original)
        hosts.chmod(0o640)
        tag = etc_files.new_tag()
        etc_files.add_lines(hosts, ["198.51.100.9\tone.internal", "198.51.100.9\ttwo.internal"], tag)
        assert hosts.read_bytes().count(tag.encode()) == 2 and oct(hosts.stat().st_mode & 0o777) == "0o640"
        with open(hosts, "ab") as handle:  # someone else's line, added after the plant
            handle.write(b"10.0.0.1 kept.internal\n")
        assert etc_files.remove_lines(hosts, tag) == 2
        assert hosts.read_bytes() == original + (b"\n" if original and not original.endswith(b"\n") else b"") \
            + b"10.0.0.1 kept.internal\n"
        assert oct(hosts.stat().st_mode & 0o777) == "0o640"
    hosts.write_bytes(b"127.0.0.1 localhost")
    tag = etc_files.new_tag()
    etc_files.add_lines(hosts, ["198.51.100.9\tthree.internal"], tag)
    etc_files.remove_lines(hosts, tag)
    assert hosts.read_bytes() == b"127.0.0.1 localhost"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "a temporary file was left"


def test_a_file_is_removed_only_with_its_own_tag(tmp_path):
    tag = etc_files.new_tag()
    table = etc_files.add_file(tmp_path, "job", "* * * * * root /bin/true\n", tag)
    assert not etc_files.remove_file(table, etc_files.new_tag()) and table.exists()
    assert etc_files.remove_file(table, tag) and not table.exists()


_EVALUATOR = """
import sys, time
from appliance.eval.families_checklist_names import SEALED_FAMILIES
from appliance.eval.sandbox import Sandbox
sandbox = Sandbox()
for family in SEALED_FAMILIES:
    family.plant(sandbox)
print("planted", flush=True)
time.sleep(120)
"""


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


@ROOT
def test_a_killed_evaluators_plants_are_taken_out_by_its_reaper(etc_unchanged):
    hosts, _, tables = etc_unchanged
    evaluator = subprocess.Popen([sys.executable, "-c", _EVALUATOR], stdout=subprocess.PIPE, text=True,
                                 env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    try:
        assert evaluator.stdout is not None and evaluator.stdout.readline().strip() == "planted"
        assert etc_files.HOSTS.read_bytes() != hosts and len(list(etc_files.CRON_D.iterdir())) == len(tables) + 1
        evaluator.send_signal(signal.SIGKILL)
        evaluator.wait(timeout=10)
        deadline = time.monotonic() + 15
        while _state() != etc_unchanged and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        if evaluator.poll() is None:
            evaluator.kill()


@ROOT
def test_what_a_dead_evaluator_left_is_swept_when_its_reaper_died_too(etc_unchanged, tmp_path):
    tag = f"{etc_files.TAG_PREFIX}{_dead_pid()}-0badc0de"
    etc_files.add_lines(etc_files.HOSTS, ["198.51.100.7\tleft.internal"], tag)
    etc_files.add_file(etc_files.CRON_D, "left-behind", "* * * * * root /bin/true\n", tag)
    live = etc_files.new_tag()  # this evaluator's own plant stays
    etc_files.add_lines(etc_files.HOSTS, ["198.51.100.8\tmine.internal"], live)
    try:
        sweep_stale(tmp_path)
        assert b"left.internal" not in etc_files.HOSTS.read_bytes()
        assert not (etc_files.CRON_D / "left-behind").exists()
        assert b"mine.internal" in etc_files.HOSTS.read_bytes()
    finally:
        etc_files.remove_lines(etc_files.HOSTS, live)
