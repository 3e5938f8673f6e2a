"""run_readonly: only the allow-listed forms run, from an absolute path without a shell; anything
else is refused with the list. The runner kills the whole process group on timeout and caps output."""

from __future__ import annotations

import os
import time

import psutil
import pytest

from appliance.tools.commands import ALLOWED, match_allowed
from appliance.tools.runner import find_program, run_capped
from support.tools import registry_for

REGISTRY = registry_for("/tmp")


@pytest.mark.parametrize("command", [
    "rm -rf /", "uname -a; rm -rf /", "uname -a && reboot", "df -h | sh", "$(reboot)", "`reboot`",
    "systemctl restart nginx.service", "systemctl stop sshd", "systemctl status --force",
    "systemctl status -H evil", "journalctl --rotate", "journalctl --vacuum-size=1M", "journalctl -p err -n 100000",
    "journalctl -p err -n -5", "dmesg -c", "dmesg --clear", "/tmp/uname -a", "../../bin/uname -a", "bash -c id",
    "python3 -c 'print(1)'", "ip link set eth0 down", "ss -K", "lsblk; id", "uname  -a  --help", "",
])
def test_anything_not_on_the_allow_list_is_refused_with_the_list(command):
    outcome = REGISTRY.call("run_readonly", {"command": command})
    assert outcome["status"] == "denied", outcome
    assert "Allowed: uname -a |" in outcome["error"]


@pytest.mark.parametrize("command,argv", [
    ("uname -a", ["uname", "-a"]),
    ("/usr/bin/free -m", ["free", "-m"]),
    ("systemctl status nginx.service", ["systemctl", "status", "nginx.service"]),
    ("systemctl status 'user@1000.service'", ["systemctl", "status", "user@1000.service"]),
    ("journalctl -u ssh.service -n 50", ["journalctl", "-u", "ssh.service", "-n", "50"]),
    ("journalctl -p err -n 500", ["journalctl", "-p", "err", "-n", "500"]),
])
def test_allowed_forms_and_their_placeholders_match(command, argv):
    assert match_allowed(command) == argv


def test_placeholders_reject_option_injection():
    assert isinstance(match_allowed("systemctl status -l"), str)
    assert isinstance(match_allowed("journalctl -u --all -n 5"), str)
    assert isinstance(match_allowed("journalctl -p err -n 501"), str)


def test_an_allowed_command_runs_from_an_absolute_path_and_reports_its_output():
    outcome = REGISTRY.call("run_readonly", {"command": "uname -a"})
    assert outcome["status"] == "ok"
    assert outcome["data"]["command"].startswith("/") and outcome["data"]["command"].endswith("uname -a")
    assert os.uname().release in outcome["data"]["output"]
    assert outcome["data"]["exit_code"] == 0


def test_pager_is_always_disabled_for_systemd_tools():
    if find_program("journalctl") is None:
        pytest.skip("no journalctl here")
    outcome = REGISTRY.call("run_readonly", {"command": "journalctl -p err -n 5"})
    assert "--no-pager" in outcome["data"]["command"]


def test_every_allowed_form_is_well_formed():
    for form in ALLOWED:
        tokens = form.split()
        assert not any(ch in form for ch in ";|&$`><")
        assert tokens[0].isidentifier() or tokens[0].replace("-", "").isalnum() or tokens[0] == "python3"


def test_timeout_kills_the_whole_process_group():
    started = time.monotonic()
    ran = run_capped(["/bin/sh", "-c", "sleep 30 & sleep 30; wait"], timeout=0.5, cap=1000)
    assert ran.timed_out and ran.exit_code is None
    assert time.monotonic() - started < 5
    time.sleep(0.2)
    leftovers = [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", "30"]
                 and p.ppid() in (1, os.getpid())]
    assert not leftovers


def test_output_is_capped():
    ran = run_capped([find_program("yes") or "/usr/bin/yes"], timeout=5, cap=10000)
    assert ran.truncated and len(ran.output) == 10000


def test_runner_requires_an_absolute_program():
    with pytest.raises(ValueError):
        run_capped(["uname"], timeout=1, cap=100)
