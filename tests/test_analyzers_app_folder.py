"""An application's folder named in a question: its logs and configuration are judged and read
before the first step, its secrets are not; a question about its storage measures it instead."""

import json
import os

from appliance.agent.evidence import MachineEvidence
from appliance.analyzers.app_folder import folder_configs, folder_logs
from appliance.analyzers.readings import Readings
from appliance.tools.paths import PathPolicy
from appliance.tools.registry import ToolContext, build_registry

PASSWORD = "hunter2-canary-Zq81"
FAILED = 'ERROR db: FATAL: password authentication failed for user "billing" (db.internal:5432)'


def _app(root, event):
    app = root / "opt" / "billing"
    (app / "logs").mkdir(parents=True)
    (app / ".env").write_text(f"DB_USER=billing\nDB_PASSWORD={PASSWORD}\n")
    (app / "config.yaml").write_text("database:\n  host: db.internal\n  port: 5432\n  user: billing\n")
    lines = [f"2026-12-01 10:{i // 60:02d}:{i % 60:02d} INFO request {i} served" for i in range(300)]
    lines.insert(240, f"2026-12-01 10:04:00 {event}")
    (app / "logs" / "billing.log").write_text("\n".join(lines) + "\n")
    (app / "logs" / "old.log").write_text("2026-11-01 10:00:00 INFO started\n")
    os.utime(app / "logs" / "old.log", (1_600_000_000, 1_600_000_000))
    return app


def _gather(root, question):
    registry = build_registry(ToolContext(policy=PathPolicy.default([root])))
    return MachineEvidence(registry).gather(question, frozenset({os.getpid()}))


def test_the_logs_below_an_app_folder_and_its_configuration_are_found_but_not_its_secrets(tmp_path):
    app = _app(tmp_path, FAILED)
    readings = Readings(policy=PathPolicy.default([tmp_path]))
    assert folder_logs(str(app), readings) == [str(app / "logs" / "billing.log"), str(app / "logs" / "old.log")]
    assert folder_configs(str(app), readings) == [str(app / "config.yaml")]  # .env is a private place


def test_an_app_folders_log_error_is_a_verdict_and_its_log_is_read_before_the_first_step(tmp_path):
    app = _app(tmp_path, FAILED)
    evidence = _gather(tmp_path, f"billing is broken, it lives in {app}, can you look?")
    log = [f for f in evidence.places if f.family == "log_errors"]
    assert log and log[0].is_problem and "password authentication failed" in log[0].verdict
    assert any(f.family == "config" and not f.is_problem for f in evidence.places)
    assert evidence.topics[-1] == "log_errors" and evidence.topics[0] != "config"  # the config was not named
    assert [look.tool for look in evidence.looks] == ["read_log", "read_log", "inspect_path"]  # then its profile
    assert evidence.looks[0].arguments["path"] == str(app / "logs" / "billing.log")
    seen = json.dumps([look.result for look in evidence.looks]) + json.dumps([f.verdict for f in evidence.findings])
    assert "password authentication failed" in seen and PASSWORD not in seen


def test_a_healthy_app_folder_has_clean_verdicts_only(tmp_path):
    app = _app(tmp_path, "INFO db: connected to db.internal:5432 as billing")
    evidence = _gather(tmp_path, f"Is anything wrong with the billing app in {app}?")
    assert [f for f in evidence.places if f.is_problem] == []
    assert any(f.family == "log_errors" and "no error lines" in f.verdict for f in evidence.places)


def test_a_storage_question_about_the_same_folder_measures_it_and_reads_no_log(tmp_path):
    app = _app(tmp_path, FAILED)
    evidence = _gather(tmp_path, f"which folder in {app} uses the most disk space?")
    assert [look.tool for look in evidence.looks] == ["dir_sizes", "inspect_path"]  # then its profile
    assert not any(f.family in ("log_errors", "config") and f.path and str(app) in f.path for f in evidence.places)
