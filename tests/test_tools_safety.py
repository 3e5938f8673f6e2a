"""Safety of the tools as a whole: planted secrets never come out of any tool, running every tool
over a tree changes nothing in it (not even access times), and no tool opens a network
connection."""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path

import psutil
import pytest

from appliance.tools.registry import TOOL_FUNCTIONS
from support.tools import kill, registry_for, spawn_detached

# Each canary is a secret of one kind; the tests look for the distinctive part of each.
GITHUB = "ghp_" + "CanaryGithub" + "0123456789abcdefghijklmnop"[:24]
CANARIES = {
    "aws-access-key": "AKIAQ4CANARY7EXAMPL3",
    "github-token": GITHUB,
    "gitlab-token": "glpat-CanaryGitlabTok3n0123",
    "slack-token": "xoxb-1111-2222-CanarySlackT0ken",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJjYW5hcnkiOiJ5ZXMifQ.CanaryJwtSignature0123",
    "google-api-key": "AIzaCanaryGoogleKey0123456789abcdefghi",
    "password": "CanaryPassw0rd-xyz",
    "url-password": "CanaryUrlPass99",
    "private-key": "CanaryPrivateKeyBody0123",
    "token": "CanaryApiTokenValue77",
}
SECRET_TEXT = f"""# application config (as many ordinary settings as secrets: a file of mostly secrets is refused whole)
listen = 127.0.0.1:8080
workers = 4
log_level = info
log_file = /var/log/app/app.log
cache_dir = /var/cache/app
max_body = 10m
timeout = 30s
retries = 3
region = eu-west-1
queue = jobs
metrics = on
aws_access_key_id = {CANARIES['aws-access-key']}
github = {CANARIES['github-token']}
gitlab = {CANARIES['gitlab-token']}
slack_hook_token = {CANARIES['slack-token']}
session = {CANARIES['jwt']}
maps = {CANARIES['google-api-key']}
db_password = {CANARIES['password']}
database_url = postgres://svc:{CANARIES['url-password']}@db.local/app
api_token: {CANARIES['token']}
-----BEGIN OPENSSH PRIVATE KEY-----
{CANARIES['private-key']}
-----END OPENSSH PRIVATE KEY-----
"""


def leaked(outcome: dict) -> list[str]:
    text = json.dumps(outcome)
    return [kind for kind, value in CANARIES.items() if value in text]


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """A tree where secrets sit in a config, a log, key files and a process's command line."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "app.conf").write_text(SECRET_TEXT)
    (tmp_path / "log").mkdir()
    lines = [f"2026-11-29 10:00:{i:02d} INFO tick {i}" for i in range(40)]
    lines += [f"2026-11-29 10:01:00 ERROR login failed, config was: {line}" for line in SECRET_TEXT.splitlines() if "=" in line or ":" in line]
    (tmp_path / "log" / "app.log").write_text("\n".join(lines) + "\n")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{CANARIES['private-key']}\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"[default]\naws_access_key_id={CANARIES['aws-access-key']}\n")
    (home / "project").mkdir()
    (home / "project" / ".env").write_text(f"PASSWORD={CANARIES['password']}\n")
    (home / "project" / "notes").symlink_to(home / ".ssh" / "id_ed25519")
    return tmp_path


def every_call(tree: Path, pid: int | None = None) -> list[tuple[str, dict]]:
    """One or more calls of every tool, pointed at the tree where paths are taken."""
    calls = [
        ("system_overview", {}),
        ("top_processes", {"sort_by": "cpu", "n": 25, "sample_seconds": 0.3}),
        ("top_processes", {"sort_by": "memory", "n": 25, "sample_seconds": 0.2}),
        ("memory_report", {"n": 20}),
        ("disk_usage", {}),
        ("dir_sizes", {"path": str(tree), "depth": 3, "top": 30}),
        ("largest_files", {"path": str(tree), "top": 50, "min_size_mb": 0}),
        ("disk_io", {"sample_seconds": 0.2}),
        ("network_interfaces", {"sample_seconds": 0.2}),
        ("network_connections", {}),
        ("sensors", {}),
        ("read_log", {"path": str(tree / "log" / "app.log"), "lines": 200}),
        ("read_log", {"path": str(tree / "log" / "app.log"), "level": "error"}),
        ("read_log", {"path": str(tree / "etc" / "app.conf"), "lines": 200}),
        ("read_log", {"path": "journal", "lines": 20}),
        ("read_file", {"path": str(tree / "etc" / "app.conf")}),
        ("read_file", {"path": str(tree / "etc" / "app.conf"), "max_bytes": 200}),
        ("read_file", {"path": str(tree / "home" / ".ssh" / "id_ed25519")}),
        ("read_file", {"path": str(tree / "home" / ".aws" / "credentials")}),
        ("read_file", {"path": str(tree / "home" / "project" / ".env")}),
        ("read_file", {"path": str(tree / "home" / "project" / "notes")}),
        ("list_dir", {"path": str(tree / "home")}),
        ("list_dir", {"path": str(tree / "home" / ".ssh")}),
        ("list_dir", {"path": str(tree / "home" / "project")}),
        ("run_readonly", {"command": "ss -tnp"}),
        ("run_readonly", {"command": "uname -a"}),
        ("process_details", {"pid": pid or os.getpid()}),
        ("process_tree", {"name": "appliance-test-canary"}),
        ("process_tree", {"pid": pid or os.getpid()}),
        ("user_totals", {"sample_seconds": 0.2}),
        ("growth", {"seconds": 1.0}),
        ("growth", {"path": str(tree), "seconds": 1.0}),
        ("path_holders", {"path": str(tree)}),
        ("path_lookup", {"path": str(tree / "home" / "project" / "notes"), "user": "nobody"}),
        ("path_lookup", {"path": str(tree / "home" / ".ssh" / "id_ed25519")}),
        ("inspect_path", {"path": str(tree / "home" / "project" / "notes")}),
        ("inspect_path", {"path": str(tree / "etc" / "app.conf")}),
        ("inspect_path", {"path": str(tree / "home" / ".ssh" / "id_ed25519")}),
        ("inspect_program", {"program": "appliance-test-canary"}),
        ("listening_reach", {}),
        ("name_resolution", {"name": "localhost"}),
        ("scheduled_jobs", {}),
        ("saturation", {"sample_seconds": 0.3}),
        ("machine_facts", {}),
        ("inspect_process", {"target": str(pid or os.getpid())}),
        ("inspect_process", {"target": "appliance-test-canary"}),
        ("inspect_user", {"user": "root"}),
    ]
    assert {name for name, _ in calls} == {f.__name__ for f in TOOL_FUNCTIONS}  # no tool left out
    return calls


def test_canary_secrets_never_appear_in_any_tool_result(planted):
    registry = registry_for(planted, default=True)
    script = (f"# --password {CANARIES['password']} {CANARIES['github-token']} "
              f"postgres://svc:{CANARIES['url-password']}@db.local/app {CANARIES['aws-access-key']}\n"
              "import pathlib, socket, time\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
              "pathlib.Path(READY_FILE).write_text('ready')\nwhile True: pass\n")
    pid = spawn_detached(script, argv0="appliance-test-canary", ready="ready")
    try:
        results = [(name, args, registry.call(name, args)) for name, args in every_call(planted, pid)]
    finally:
        kill(pid)
    for name, args, outcome in results:
        assert not leaked(outcome), (name, args, leaked(outcome), outcome)
    by_call = {(name, json.dumps(args)): outcome for name, args, outcome in results}
    conf = by_call[("read_file", json.dumps({"path": str(planted / "etc" / "app.conf")}))]
    assert conf["status"] == "ok"
    for kind in CANARIES:  # the content was read, and each secret replaced by its own marker
        assert f"[REDACTED:{kind}]" in conf["data"]["text"], kind
    assert "listen = 127.0.0.1:8080" in conf["data"]["text"]
    for path in (".ssh/id_ed25519", ".aws/credentials", "project/.env", "project/notes"):
        denied = by_call[("read_file", json.dumps({"path": str(planted / "home" / path)}))]
        assert denied["status"] == "denied" and "off limits" in denied["error"]
    details = by_call[("process_details", json.dumps({"pid": pid}))]
    assert "appliance-test-canary" in details["data"]["command"] and "[REDACTED:" in details["data"]["command"]


def test_a_secret_across_the_read_cut_is_not_shown_half_way(tmp_path):
    token = CANARIES["github-token"]
    (tmp_path / "cut.conf").write_text("x" * 90 + " " + token + "\n")
    outcome = registry_for(tmp_path).call("read_file", {"path": str(tmp_path / "cut.conf"), "max_bytes": 100})
    assert outcome["data"]["truncated"] is True
    assert token[:8] not in json.dumps(outcome)


def _snapshot(tree: Path) -> dict[str, tuple]:
    """Everything stat can tell about every entry, access time included."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(tree):
        for name in [".", *dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            out[os.path.normpath(path)] = (st.st_mode, st.st_ino, st.st_nlink, st.st_size, st.st_mtime_ns,
                                           st.st_ctime_ns, st.st_atime_ns, st.st_uid, st.st_gid)
    return out


def test_running_every_tool_changes_nothing_in_the_tree(planted):
    os.mkfifo(planted / "log" / "pipe")
    old = 1_500_000_000_000_000_000
    for dirpath, dirnames, filenames in os.walk(planted):
        for name in [*dirnames, *filenames, "."]:
            path = os.path.join(dirpath, name)
            # atime older than mtime: under relatime, any ordinary read or listing would bump it
            os.utime(path, ns=(old, os.lstat(path).st_mtime_ns), follow_symlinks=False)
    before = _snapshot(planted)
    registry = registry_for(planted, default=True)
    calls = every_call(planted) + [("read_file", {"path": str(planted / "log" / "pipe")}),
                                   ("read_log", {"path": str(planted / "log" / "pipe")})]
    outcomes = [registry.call(name, args) for name, args in calls]
    assert outcomes[-1]["status"] == "denied" and "FIFO" in outcomes[-1]["error"]
    after = _snapshot(planted)
    assert after.keys() == before.keys()
    changed = {path: (before[path], after[path]) for path in before if before[path] != after[path]}
    # Following a symlink (which the policy must do to know where it leads) updates the symlink's
    # own access time in the kernel's path walk; nothing can avoid that. Everything else is untouched.
    for path in [p for p in changed if stat.S_ISLNK(before[p][0])]:
        (b, a) = changed.pop(path)
        assert b[:6] == a[:6] and b[7:] == a[7:], path  # only the atime differs
    assert not changed


def test_no_tool_opens_a_network_connection(planted, monkeypatch):
    attempts: list[str] = []

    def refuse(name):
        def blocked(*args, **kwargs):
            attempts.append(f"{name}{args[1:] if len(args) > 1 else args}")
            raise AssertionError(f"a tool tried socket.{name}")
        return blocked

    for method in ("connect", "connect_ex", "sendto", "sendmsg"):
        monkeypatch.setattr(socket.socket, method, refuse(method))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    monkeypatch.setattr(socket, "gethostbyname", refuse("gethostbyname"))
    me = psutil.Process()
    sockets_before = {(c.laddr, c.raddr, c.status) for c in me.net_connections("all")}
    registry = registry_for(planted, default=True)
    for name, args in every_call(planted):
        outcome = registry.call(name, args)
        assert "tried socket" not in (outcome["error"] or ""), (name, outcome)
    sockets_after = {(c.laddr, c.raddr, c.status) for c in me.net_connections("all")}
    assert not attempts
    assert sockets_after <= sockets_before


def test_what_a_walk_shows_of_secret_places(planted):
    registry = registry_for(planted, default=True)
    sizes = registry.call("dir_sizes", {"path": str(planted / "home"), "depth": 3, "top": 30})["data"]
    shown = [Path(e["path"]).relative_to(planted / "home").as_posix() for e in sizes["largest"]]
    assert ".ssh" in shown and ".aws" in shown  # summed under their own names...
    assert not [p for p in shown if p.startswith((".ssh/", ".aws/"))]  # ...but never opened up
    assert "project/.env" in shown or sizes["scan"]["skipped"]  # a secret file is a boundary too
    listing = registry.call("list_dir", {"path": str(planted / "home" / "project")})["data"]
    env = next(e for e in listing["entries"] if e["name"] == ".env")
    assert env["off_limits"] is True and "size" not in env
    biggest = registry.call("largest_files", {"path": str(planted / "home"), "min_size_mb": 0})["data"]["files"]
    assert not [f for f in biggest if "/.ssh/" in f["path"] or "/.aws/" in f["path"]]
    assert stat.S_ISLNK(os.lstat(planted / "home" / "project" / "notes").st_mode)


def test_a_failing_tool_is_an_error_result_and_its_message_is_redacted(monkeypatch):
    from appliance.tools import registry as registry_module, system

    def broken(ctx):
        raise ValueError(f"could not parse line: password={CANARIES['password']}")

    broken.__tool__ = system.system_overview.__tool__
    broken.__doc__ = system.system_overview.__doc__
    monkeypatch.setattr(registry_module, "TOOL_FUNCTIONS", (broken,))
    outcome = registry_module.default_registry().call("system_overview", {})
    assert outcome["status"] == "error" and outcome["error"].startswith("ValueError: could not parse line")
    assert not leaked(outcome)
