"""One test per class of leak found in issue 15 (a planted corpus read back as an attacker would).
Each failed before the change that added it (checked against commit 3a8c4ee, the tree before the
new redactor): the old redactor masked `--key=value` not at all, cut values at the first `:` `=` `;`,
cut URL passwords at `@` and `/`, needed a key block's BEGIN line, and knew none of the shapes in
`SHAPES`; the tools matched patterns on raw text, cut read_file's redacted text at the raw length,
read hard links to denied files and blamed a missing root for /proc/N/root; bad input ended in
tracebacks or usage blocks."""

from __future__ import annotations

import base64
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from appliance.agent.engine import Engine
from appliance.agent.settings import EngineSettings
from appliance.cli import main
from appliance.config import resolve_paths
from appliance.llm.fake import ScriptedModel
from appliance.store import open_store
from appliance.tools.commands import match_allowed
from appliance.tools.context import ToolContext
from appliance.tools.paths import PathPolicy
from appliance.tools.redact import redact
from appliance.tools.registry import build_registry
from support.store import checkout_env
from test_ask_cli import OVERVIEW, finish_from_overview, scripted  # noqa: F401  (a fixture)

PW = "Qx7;kL=9@zz/Tw&m,p8 Rv"  # : = ; & , @ / and a space: every character that cut a value short


def _registry(*roots) -> object:
    return build_registry(ToolContext(policy=PathPolicy.confined(roots)))


@pytest.mark.parametrize("line, secret", [
    ("worker --password=Hunter2Hunter2 --verbose", "Hunter2Hunter2"),
    ("worker --token=tok_4f9a8b7c6d5e --port 80", "tok_4f9a8b7c6d5e"),
    ("worker --api_key=AbC123dEf456 start", "AbC123dEf456"),
    ("worker --db-password 'two words here' start", "two words here"),
    ("2026-12-01 app: exec sync --client-secret s3cr3t-valu3 --dry-run", "s3cr3t-valu3"),
])
def test_option_forms_are_masked(line, secret):
    assert secret not in redact(line)


def test_option_forms_in_a_real_process_command_line():
    proc = subprocess.Popen(["sh", "-c", "sleep 20; :", "x", "--password=Hunter2Hunter2", "--token", "tok_4f9a8b7c6d5e"],
                            start_new_session=True)
    try:
        time.sleep(0.2)
        got = build_registry(ToolContext(policy=PathPolicy.default())).call("process_details", {"pid": proc.pid})
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the shell and its sleep
        proc.wait()
    assert "--password=[REDACTED:password]" in got["data"]["command"]
    assert "Hunter2Hunter2" not in str(got) and "tok_4f9a8b7c6d5e" not in str(got)


@pytest.mark.parametrize("text", [
    f"password={PW}",  # key at the start of a line: the value runs to the end of the line
    "password=ab:cd",
    "token=c2VjcmV0LXZhbHVlLTEyMw==",
    "session: pw=first;second&third,fourth",
])
def test_a_value_is_masked_to_its_end(text):
    value = text.split("=", 1)[1]
    out = redact(text)
    assert all(part not in out for part in value.replace(";", " ").replace("&", " ").replace(",", " ").split() if len(part) > 3)


@pytest.mark.parametrize("password", ["p@ss/w0rd", "a/b@c@d", "x@y", "sl/ash"])
def test_url_passwords_with_at_and_slash(password):
    out = redact(f"DATABASE_URL=postgres://app:{password}@db.internal:5432/prod")
    assert out == "DATABASE_URL=postgres://app:[REDACTED:url-password]@db.internal:5432/prod"


def test_a_key_block_whose_begin_line_is_outside_the_log_window(tmp_path):
    body = [base64.b64encode(os.urandom(48)).decode() for _ in range(40000)]  # longer than the 2 MiB window
    log = tmp_path / "dump.log"
    log.write_text("-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END RSA PRIVATE KEY-----\napp: started\n")
    got = _registry(tmp_path).call("read_log", {"path": str(log), "lines": 50})
    assert got["data"]["scanned"].startswith("last")  # the BEGIN line really is outside the window
    assert not any(line in str(got) for line in body[-60:])
    assert "[REDACTED:private-key]" in str(got)


def test_ssh2_key_blocks():
    body = [base64.b64encode(os.urandom(52)).decode() for _ in range(6)]
    text = "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"k\"\n" + "\n".join(body) + "\n---- END SSH2 ENCRYPTED PRIVATE KEY ----"
    out = redact(text)
    assert not any(line in out for line in body) and out == "[REDACTED:private-key]"


SHAPES = [
    ("bare AWS secret key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "{s}"),
    ("base64-encoded assignment", base64.b64encode(b"password=Hunter2Hunter2").decode(), "echo {s} | base64 -d"),
    ("curl -u", "S3cr3tPw!", "curl -u admin:{s} https://api.example.com"),
    ("PHP define", "Wp-s3cret!x", "define('DB_PASSWORD', '{s}');"),
    ("XML password", "XmlS3cret9", "<password>{s}</password>"),
    ("redis requirepass", "RedisPw2026", "requirepass {s}"),
    ("psk", "wifi-pass-phrase-1", 'psk="{s}"'),
    ("LDAP bindpw", "LdapBind#Pw", "bindpw {s}"),
    ("contraseña", "MiClave123", "contraseña={s}"),
    ("GCP private_key_id", "4f5e6d7c8b9a0f1e2d3c4b5a69788796a5b4c3d2", '"private_key_id": "{s}",'),
]


@pytest.mark.parametrize("name, secret, template", SHAPES, ids=[s[0] for s in SHAPES])
def test_shapes_outside_the_old_patterns(name, secret, template):
    assert secret not in redact(template.format(s=secret))


def test_a_secret_split_over_two_lines():
    text = 'DB_PASSWORD="firsthalf1234\nsecondhalf5678"\nuser=app'
    out = redact(text)
    assert "firsthalf1234" not in out and "secondhalf5678" not in out and out.endswith("user=app")


def test_read_log_pattern_runs_on_the_redacted_text(tmp_path):
    log = tmp_path / "app.log"
    log.write_text("2026-12-01 app: login password=Hunter2Hunter2 ok\n2026-12-01 app: Hunter is a name\n")
    registry = _registry(tmp_path)
    guessed = registry.call("read_log", {"path": str(log), "pattern": "hunter2hunter2"})
    assert guessed["status"] == "empty" and guessed["data"]["matching_lines"] == 0
    plain = registry.call("read_log", {"path": str(log), "pattern": "hunter"})
    assert plain["data"]["matching_lines"] == 1 and "Hunter is a name" in plain["data"]["lines"][0]


def test_read_file_does_not_drop_the_end_when_markers_make_the_text_longer(tmp_path):
    conf = tmp_path / "app.conf"
    # half the lines ordinary: a file of mostly secrets is refused whole (test_secret_files.py)
    conf.write_text("".join(f"db{i}_password=a{i}\nhost{i}=h\n" for i in range(110)) + "last_line=kept\n")
    got = _registry(tmp_path).call("read_file", {"path": str(conf), "max_bytes": 4096})
    assert conf.stat().st_size < 4096
    assert got["data"]["truncated"] is False and got["data"]["text"].endswith("last_line=kept\n")


def test_the_question_is_redacted_before_the_model_and_the_database(tmp_path):
    finish = {"thought": "done", "action": "finish",
              "action_input": {"stance": "cannot_tell", "cites": ["F1"], "subject": "", "value": "",
                               "answer": "The service is down."}}
    model = ScriptedModel([finish])
    engine = Engine(model, build_registry(ToolContext(policy=PathPolicy.default())), EngineSettings(),
                    snapshot=lambda pids: {"load": {"1m": 0.4, "5m": 0.3, "15m": 0.2, "cpus": 2}})
    store = open_store(tmp_path / "runs.db")
    try:
        for event in engine.run("why does login fail with password=Hunter2Hunter2?"):
            store.record(event)
    finally:
        store.close()
    assert "Hunter2Hunter2" not in str([m.content for m in model.calls[0][0]])
    conn = sqlite3.connect(tmp_path / "runs.db")
    (question,) = conn.execute("SELECT question FROM runs").fetchone()
    assert "Hunter2Hunter2" not in question and "password=[REDACTED:password]" in question


def test_a_hard_link_cannot_launder_a_denied_file(tmp_path):
    (tmp_path / "secret").mkdir()
    (tmp_path / "allowed").mkdir()
    env = tmp_path / "secret" / ".env"
    env.write_text("API_TOKEN=abc\n")
    os.link(env, tmp_path / "allowed" / "notes.txt")
    policy = PathPolicy.default([tmp_path / "allowed"])
    got = build_registry(ToolContext(policy=policy)).call("read_file", {"path": str(tmp_path / "allowed" / "notes.txt")})
    assert got["status"] == "denied" and "hard links" in got["error"]
    plain = tmp_path / "allowed" / "plain.txt"
    plain.write_text("hello\n")
    assert build_registry(ToolContext(policy=policy)).call("read_file", {"path": str(plain)})["status"] == "ok"


@pytest.mark.skipif(os.geteuid() != 0, reason="the wrong reason was given only when running as root")
def test_proc_root_is_refused_with_the_right_reason():
    got = build_registry(ToolContext(policy=PathPolicy.default())).call("read_file", {"path": "/proc/1/root/etc/hostname"})
    assert got["status"] == "denied" and "not running as root" not in got["error"]


def test_an_argument_that_is_not_utf8_is_one_line_and_the_run_is_recorded(scripted, tmp_path, capsys):  # noqa: F811
    scripted([OVERVIEW, finish_from_overview])
    question = b"What kernel \xff runs here?".decode("utf-8", "surrogateescape")
    code = main(["ask", question, "--db", str(tmp_path / "runs.db"), "--json", "--model", "tiny"])
    err = capsys.readouterr().err
    assert code == 0 and len(err.strip().splitlines()) == 1 and "not valid UTF-8" in err
    conn = sqlite3.connect(tmp_path / "runs.db")
    (recorded,) = conn.execute("SELECT question FROM runs").fetchone()
    assert recorded == "What kernel \ufffd runs here?"


def test_argparse_errors_are_one_line_with_a_help_hint():
    ran = subprocess.run([sys.executable, "-m", "appliance.cli", "runs", "list", "--limit", "x"],
                         capture_output=True, text=True, env=checkout_env())
    assert ran.returncode == 2 and len(ran.stderr.strip().splitlines()) == 1
    assert "--help" in ran.stderr and "usage:" not in ran.stderr


def test_doctor_says_a_corrupt_database_is_not_ok(tmp_path):
    from appliance.commands.doctor import check_database

    db = tmp_path / "runs.db"
    store = open_store(db)
    store.close()
    with open(db, "r+b") as handle:
        handle.seek(4096)
        handle.write(os.urandom(4096))
    check = check_database(resolve_paths(env={"APPLIANCE_HOME": str(tmp_path)}, db=db))
    assert check.status == "FAIL"
    (tmp_path / "fine.db").unlink(missing_ok=True)
    good = open_store(tmp_path / "fine.db")
    good.close()
    assert check_database(resolve_paths(env={"APPLIANCE_HOME": str(tmp_path)}, db=tmp_path / "fine.db")).status == "ok"


@pytest.mark.parametrize("command", ["journalctl -p err -n 1\u0665", "journalctl -p err -n 1\uff15", "journalctl -p err -n '5\n'",
                                     "systemctl status 'ssh\n'"])
def test_run_readonly_refuses_non_ascii_digits_and_trailing_newlines(command):
    assert isinstance(match_allowed(command), str)


def test_sqlite_keeps_temporary_data_in_memory(tmp_path):
    store = open_store(tmp_path / "runs.db")
    try:
        assert store.db.execute("PRAGMA temp_store").fetchone()[0] == 2  # MEMORY
    finally:
        store.close()
