"""The checklist's system side on real plants: a loopback-only listener, a process throttled by its
control group, a listener that never accepts, a task stuck in uninterruptible sleep (each named by
`appliance check`'s families, each control quiet); names, routes and cron tables over a tree of the
test's own; the new tools on the live host, the appliance's own listener marked."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import psutil
import pytest

from appliance.analyzers import Readings, run_all
from appliance.analyzers.reach import reach_finding
from appliance.analyzers.resolution import judge as judge_names
from appliance.analyzers.scheduled import judge as judge_jobs
from appliance.eval.families_checklist_system import SEALED_FAMILIES
from appliance.eval.sandbox import Sandbox
from appliance.tools import reach, resolution, schedules
from appliance.tools.paths import PathPolicy
from appliance.tools.procs import SELF_LABEL
from appliance.tools.registry import default_registry
from support.tools import gone_or_zombie

ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="the plants make control groups and need root")
FAMILIES = {family.name: family for family in SEALED_FAMILIES if family.has_fault}


def _findings(fault, name: str):
    readings = Readings(self_pids=frozenset({os.getpid()}), policy=PathPolicy.default(list(fault.roots)))
    if name == "reach":
        return [reach_finding(int(fault.truth["port"]), readings)]
    return [f for f in run_all(readings, families=[name]) if f.family == name]


@ROOT
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_check_names_each_planted_fault_and_stays_quiet_on_its_control(name):
    family = FAMILIES[name]
    with Sandbox() as sandbox:
        fault = family.plant(sandbox)
        problems = [f for f in _findings(fault, name) if f.is_problem]
        assert problems, f"{name}: no warning for the plant"
        assert any(f.pid == fault.truth["pid"] and fault.truth["name"] in f.verdict for f in problems), (
            [f.line() for f in problems])
    with Sandbox() as sandbox:
        control = family.control(sandbox)
        findings = _findings(control, name)
        assert not [f for f in findings if f.is_problem], [f.line() for f in findings]
    assert not [pid for pid in fault.pids + control.pids if not gone_or_zombie(pid)], "a plant outlived its sandbox"
    names = set(fault.names + control.names)  # the stuck task's sleeping child has its parent's name
    assert not [p.pid for p in psutil.process_iter(["name", "status"])
                if p.info["name"] in names and p.info["status"] != psutil.STATUS_ZOMBIE]


@ROOT
def test_the_throttling_plant_leaves_no_control_group_behind():
    with Sandbox() as sandbox:
        FAMILIES["cgroup_limits"].plant(sandbox)
        groups = list(sandbox.cgroups)
        assert groups and all(g.exists() for g in groups)
    assert not any(g.exists() for g in groups)


def test_what_an_address_means():
    assert reach.scope("127.0.0.1") == reach.scope("::1") == reach.scope("::ffff:127.0.0.1") == reach.LOOPBACK
    assert reach.scope("0.0.0.0") == reach.scope("::") == reach.scope("*") == reach.EVERYWHERE
    assert reach.scope("192.0.2.7") == reach.scope("fe80::1%eth0") == reach.ONE_ADDRESS
    assert "other machines cannot reach it" in reach.meaning("127.0.0.1")


def test_firewall_rules_naming_a_port_and_a_plain_word_when_none_can_be_read():
    wall = reach.Firewall(["iptables -S"], ["-P INPUT DROP", "-A INPUT -p tcp -m tcp --dport 8080 -j ACCEPT",
                                            "-A INPUT -p tcp --dport 80800 -j ACCEPT"])
    assert wall.naming_port(8080) == ["-A INPUT -p tcp -m tcp --dport 8080 -j ACCEPT"]
    assert wall.blocking() == ["-P INPUT DROP"]
    nft = reach.Firewall(["nft list ruleset"], ["tcp dport { 22, 8080 } accept"])
    assert nft.naming_port(8080) and not nft.naming_port(808)
    live = reach.read_firewall()
    if not live.readable:  # no firewall tool here, or no tables in the kernel: said plainly, never silently
        assert live.summary().startswith(("no firewall rules can be read here", "no firewall rules loaded"))


def _tree(tmp_path: Path, resolv: str, nsswitch: str = "hosts: files dns\n") -> tuple[Path, Path]:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "resolv.conf").write_text(resolv)
    (tmp_path / "etc" / "nsswitch.conf").write_text(nsswitch)
    (tmp_path / "etc" / "hosts").write_text("127.0.0.1 localhost\n10.9.8.7 db.internal db  # the database\n")
    proc = tmp_path / "proc"
    (proc / "net").mkdir(parents=True)
    (proc / "net" / "route").write_text(
        "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"
        "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n")
    (proc / "net" / "ipv6_route").write_text("")
    return tmp_path, proc


def test_names_and_routes_from_a_tree_of_our_own(tmp_path):
    root, proc = _tree(tmp_path, "nameserver 192.0.2.53\nsearch example.com\n")
    data = resolution.resolution(root, proc, name="DB.internal")
    assert data["resolv_conf"]["nameservers"] == ["192.0.2.53"]
    assert data["hosts_entries_for_DB.internal"] == [{"address": "10.9.8.7", "names": ["db.internal", "db"]}]
    assert data["default_routes"] == [{"family": "ipv4", "gateway": "192.0.2.1", "interface": "eth0", "metric": 0}]
    [ok] = judge_names(Readings(), root, proc)
    assert not ok.is_problem and "192.0.2.53" in ok.verdict and "192.0.2.1" in ok.verdict


def test_a_dead_local_resolver_dns_never_asked_and_no_default_route_are_named(tmp_path):
    with socket.socket() as probe:  # a loopback address nothing listens on port 53 of
        probe.bind(("127.0.0.1", 0))
    root, proc = _tree(tmp_path, "nameserver 127.0.0.53\n", nsswitch="hosts: files\n")
    (proc / "net" / "route").write_text("Iface\tDestination\tGateway\n")
    lines = " | ".join(f.verdict for f in judge_names(Readings(), root, proc) if f.is_problem)
    assert "127.0.0.53" in lines and "nothing listens on its port 53" in lines
    assert "DNS is never asked" in lines and "no default route" in lines
    (root / "etc" / "resolv.conf").write_text("# empty\n")
    assert any("names no nameserver" in f.verdict for f in judge_names(Readings(), root, proc))


def test_cron_tables_parsed_redacted_and_a_missing_program_named(tmp_path):
    (tmp_path / "etc" / "cron.d").mkdir(parents=True)
    (tmp_path / "usr" / "local" / "bin").mkdir(parents=True)
    present = tmp_path / "usr" / "local" / "bin" / "rotate"
    present.write_text("#!/bin/sh\n")
    present.chmod(0o755)
    (tmp_path / "etc" / "crontab").write_text(
        "SHELL=/bin/sh\n# m h dom mon dow user command\n17 * * * * root /usr/local/bin/rotate --all\n")
    (tmp_path / "etc" / "cron.d" / "backup").write_text(
        "MAILTO=ops\n30 2 * * * backup PGPASSWORD=hunter2secretvalue /opt/backup/run.sh --password=S3cretCanary99\n")
    spool = tmp_path / "var" / "spool" / "cron" / "crontabs"
    spool.mkdir(parents=True)
    (spool / "alice").write_text("@reboot /usr/local/bin/rotate\n")
    jobs, tables, _ = schedules.cron_jobs(tmp_path)
    assert tables == ["/etc/crontab", "/etc/cron.d/backup", "/var/spool/cron/crontabs/alice"]
    assert [(j.schedule, j.user) for j in jobs] == [("17 * * * *", "root"), ("30 2 * * *", "backup"),
                                                     ("@reboot", "alice")]
    shown = " ".join(j.shown()["command"] for j in jobs)
    # (today's redactor takes the rest of a line after PGPASSWORD= as its value; the word-by-word one will not)
    assert "S3cretCanary99" not in shown and "hunter2secretvalue" not in shown and "PGPASSWORD=" in shown
    findings = judge_jobs(tmp_path, daemon=None)
    missing = [f for f in findings if f.culprit == "/opt/backup/run.sh"]
    assert missing and "does not exist" in missing[0].verdict and "S3cretCanary99" not in missing[0].verdict
    assert any(f.culprit == "cron" and "/var/spool/cron/crontabs/alice" in f.verdict for f in findings)
    present.chmod(0o644)
    assert any(f.culprit == "/usr/local/bin/rotate" and "not executable" in f.verdict
               for f in judge_jobs(tmp_path, daemon="cron"))


def test_a_quiet_cron_tree_is_ok(tmp_path):
    (tmp_path / "etc" / "cron.daily").mkdir(parents=True)
    (tmp_path / "etc" / "cron.daily" / "logrotate").write_text("#!/bin/sh\n")
    [ok] = judge_jobs(tmp_path, daemon="cron")
    assert not ok.is_problem and "0 cron jobs" in ok.verdict and "periodic scripts: 1" in ok.verdict


def test_the_new_tools_mark_the_appliances_own_listener_and_say_what_they_cannot_read():
    registry = default_registry()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        out = registry.call("listening_reach", {"port": port})
    assert out["status"] == "ok"
    [row] = out["data"]["listening"]
    assert SELF_LABEL in row["process"] and "cannot reach it" in row["reach"]
    assert out["data"]["headline"].startswith(f"port {port} listens on loopback only")
    overview = registry.call("system_overview", {})["data"]
    assert overview["time_zone"] and overview["virtualization"] and "cpu" in overview
    jobs = registry.call("scheduled_jobs", {})["data"]
    if not schedules.systemd_running():
        assert jobs["systemd"].startswith("not running here")
    started = time.monotonic()
    sat = registry.call("saturation", {"sample_seconds": 0.3})
    assert sat["status"] == "ok" and time.monotonic() - started < 5.0


def test_a_question_about_reaching_a_port_from_other_machines_gets_its_verdict_first():
    from appliance.agent.evidence import reach_verdicts_for
    from appliance.analyzers import for_question
    with Sandbox() as sandbox:
        fault = FAMILIES["reach"].plant(sandbox)
        port = fault.truth["port"]
        question = f"my service on port {port} works here but other machines cannot reach it"
        [finding] = reach_verdicts_for(question, for_question(question), Readings())
        assert finding.is_problem and finding.pid == fault.truth["pid"] and "loopback only" in finding.verdict
        assert reach_verdicts_for(f"who listens on port {port}?", for_question(f"who listens on port {port}?"),
                                  Readings()) == []
    with socket.socket() as server:  # the appliance's own loopback listener is told, never blamed
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        own = reach_finding(server.getsockname()[1], Readings())
        assert not own.is_problem and SELF_LABEL in own.verdict and "loopback only" in own.verdict


def test_the_appliances_own_listener_that_does_not_accept_is_never_blamed():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        clients = [socket.socket() for _ in range(2)]
        for client in clients:
            client.setblocking(False)
            client.connect_ex(("127.0.0.1", port))
        try:
            time.sleep(0.1)
            findings = run_all(Readings(), families=["network_errors"])
            assert not [f for f in findings if f.pid == os.getpid() or str(port) in f.verdict], (
                [f.line() for f in findings])
            out = default_registry().call("saturation", {"sample_seconds": 0.3})["data"]["network_in_window"]
            [row] = [r for r in out["listeners_not_accepting"] if r["port"] == port]
            assert SELF_LABEL in row["process"]
        finally:
            for client in clients:
                client.close()


LIST_TIMERS = """\
NEXT                        LEFT          LAST                        PASSED       UNIT                         ACTIVATES
Fri 2026-12-04 21:00:00 UTC 14min left    Fri 2026-12-04 20:00:00 UTC 45min ago    logrotate.timer              logrotate.service
Sat 2026-12-05 00:00:00 UTC 3h 14min left Fri 2026-12-04 00:00:01 UTC 20h ago      backup-db.timer              backup-db.service
n/a                         n/a           n/a                         n/a          fstrim.timer                 fstrim.service

3 timers listed.
Pass --all to see loaded but inactive timers, too.
"""
FAILED = """\
  UNIT              LOAD   ACTIVE SUB    DESCRIPTION
● backup-db.service loaded failed failed Nightly database backup

LOAD   = Reflects whether the unit definition was properly loaded.
1 loaded units listed.
"""


def test_systemd_timers_are_read_by_their_columns_and_a_failed_run_is_marked():
    rows = schedules.parse_list_timers(LIST_TIMERS)
    assert [(r["timer"], r["activates"]) for r in rows] == [
        ("logrotate.timer", "logrotate.service"), ("backup-db.timer", "backup-db.service"),
        ("fstrim.timer", "fstrim.service")]
    assert rows[1]["next"] == "Sat 2026-12-05 00:00:00 UTC" and rows[1]["left"] == "3h 14min left"
    assert rows[1]["last"] == "Fri 2026-12-04 00:00:01 UTC" and rows[2]["last"] == "n/a"
    assert schedules.failed_units(FAILED) == {"backup-db.service"}
    assert schedules.parse_list_timers("0 timers listed.\n") == []
    rows[1]["result"] = "failed"
    [warning] = judge_jobs(Path("/nonexistent"), daemon="cron", timers=rows)
    assert warning.culprit == "backup-db.service" and "backup-db.timer" in warning.verdict


def test_the_system_facts_case_is_scored_on_the_kernel_release_and_what_it_runs_on():
    import platform

    from appliance.eval.scoring import Outcome
    [facts_family] = [f for f in SEALED_FAMILIES if f.name == "system_facts"]
    overview = default_registry().call("system_overview", {})["data"]
    with Sandbox() as sandbox:
        truth = facts_family.plant(sandbox)
        assert truth.truth["kernel"] == platform.release() == overview["kernel"]
        assert truth.truth["virtualization"] == overview["virtualization"]
        answer = f"It runs Linux {overview['kernel']}; it is a {overview['virtualization']}."
        assert truth.score(Outcome("ok", answer)).success
        assert not truth.score(Outcome("ok", "It runs Linux 1.0 on real hardware.")).success


@ROOT
def test_every_sealed_case_plants_and_fills_its_question():
    from appliance.eval.scenarios import _cases
    names = set()
    for index, family in enumerate(SEALED_FAMILIES):
        for case in _cases(family, index):
            with case.setup() as fault:
                assert fault.question and "{" not in fault.question, fault.question
                names.add(case.name)
    assert len(names) == 4 * len(SEALED_FAMILIES)
