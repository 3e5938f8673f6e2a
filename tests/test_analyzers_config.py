"""The configuration-file verdict on real files: what a person checks before restarting a service."""

import json
import os

import pytest

from appliance.analyzers.config_file import config_findings, is_config_path, value_problem
from appliance.analyzers.readings import Readings
from appliance.tools.paths import PathPolicy

RELAY = ("# mail relay configuration\nhostname = relay.internal\nlisten_address = 0.0.0.0\nlisten_port = {port}\n"
         "max_connections = 200\nqueue_dir = /var/spool/mailrelay\ntls = required\n"
         "tls_certificate = /etc/mailrelay/relay.pem\nlog_level = info\nretry_interval_seconds = 300\n")


def verdict(path):
    found = config_findings(str(path), Readings(policy=PathPolicy.default([path.parent])))
    assert len(found) == 1 and found[0].family == "config"
    return found[0]


def test_a_port_out_of_range_is_named_with_its_line_and_a_good_file_is_ok(tmp_path):
    conf = tmp_path / "relay.conf"
    conf.write_text(RELAY.format(port="99999"))
    bad = verdict(conf)
    assert bad.severity == "warning" and bad.culprit == "listen_port" and bad.values["line"] == 4
    assert "listen_port = 99999 is not a valid port (1–65535)" in bad.verdict and str(conf) in bad.verdict
    conf.write_text(RELAY.format(port="2525"))
    good = verdict(conf)
    assert good.severity == "ok" and good.culprit is None and good.values["settings"] == 9
    assert "none malformed" in good.verdict


@pytest.mark.parametrize("text, culprit", [
    ("Port 70000\nPermitRootLogin no\n", "Port"),                    # sshd_config style
    ("[server]\nbind_address = 10.0.601.4\n", "server.bind_address"),  # an INI section, a bad IPv4
    ("worker_timeout_seconds = soon\n", "worker_timeout_seconds"),    # the name says seconds
    ("cache:\n  size: -5\n", "size"),                                 # a nested YAML setting
    ("upstream = 127.0.0.1:0\n", None),                               # `upstream` says nothing: not judged
    ("max_connections = unlimited\nlisten 0.0.0.0:8080;\n", None),    # a word the rule cannot judge
])
def test_values_are_judged_by_what_their_names_say(tmp_path, text, culprit):
    conf = tmp_path / "app.conf"
    conf.write_text(text)
    found = verdict(conf)
    assert found.culprit == culprit and found.is_problem is (culprit is not None), found.verdict


def test_structured_files_must_parse(tmp_path):
    broken = tmp_path / "settings.json"
    broken.write_text('{"port": 8080,\n "debug": true,\n}\n')
    found = verdict(broken)
    assert found.is_problem and "does not parse as JSON" in found.verdict and "line 3" in found.verdict
    broken.write_text(json.dumps({"port": 8080}))
    assert verdict(broken).severity == "ok"
    toml = tmp_path / "app.toml"
    toml.write_text('[server]\nport = "8080\n')
    assert "does not parse as TOML" in verdict(toml).verdict


def test_an_unreadable_or_denied_file_is_unknown_not_ok(tmp_path):
    missing = tmp_path / "gone.conf"
    assert config_findings(str(missing), Readings())[0].severity == "unknown"
    outside = config_findings("/root/.ssh/config", Readings())[0]
    assert outside.severity == "unknown" and outside.values == {}


def test_which_paths_are_config_files():
    assert is_config_path("/etc/mailrelay/relay.conf") and is_config_path("/srv/app/settings.yaml")
    assert is_config_path("/etc/ssh/sshd_config")
    assert not is_config_path("/var/log/app.log") and not is_config_path("/srv/data/report.csv")
    assert value_problem("listen_port", "${PORT}") is None  # a variable is filled in at start


def test_a_named_config_file_is_judged_before_the_first_step(tmp_path):
    from appliance.agent.evidence import MachineEvidence
    from appliance.tools.registry import ToolContext, build_registry

    conf = tmp_path / "etc" / "mailrelay" / "relay.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text(RELAY.format(port="99999"))
    registry = build_registry(ToolContext(policy=PathPolicy.default([tmp_path])))
    question = f"the mail thing won't start, config is in {conf}"
    evidence = MachineEvidence(registry).gather(question, frozenset({os.getpid()}))
    assert evidence.topics[0] == "config"
    assert [f.culprit for f in evidence.places if f.family == "config"] == ["listen_port"]
    assert evidence.shown()[0].family == "config"  # the problem at the named place comes first
    conf.write_text(RELAY.format(port="2525"))
    evidence = MachineEvidence(registry).gather(f"Is any setting in {conf} invalid?", frozenset({os.getpid()}))
    fine = [f for f in evidence.places if f.family == "config"]
    assert fine and all(not f.is_problem for f in fine) and "none malformed" in fine[0].verdict


def test_a_script_is_no_configuration_file_whatever_its_name(tmp_path):
    script = tmp_path / "relay.conf"
    script.write_text("#!/bin/sh\nexport = PATH=/usr/bin\nimport = x\n")
    assert config_findings(str(script), Readings(policy=PathPolicy.default([tmp_path]))) == []
    assert not is_config_path("/etc/init.d/dbus") and not is_config_path("/etc/cron.daily/man-db")
    assert value_problem("export", "PATH=/usr/bin") is None and value_problem("support", "x") is None
