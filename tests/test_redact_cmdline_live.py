"""Command lines are redacted as argument vectors (appliance.tools.redaction.cmdline), in every tool
that shows one: real processes, one per class of password-on-a-command-line, read back through
process_details, top_processes, memory_report, read_file of /proc/PID/cmdline and the analyzers'
`command`. Each process is a small shell script named after the program it stands for (`mysql`,
`sqlcmd`, ...), so its /proc/PID/cmdline is `/bin/sh /tmp/.../mysql -pSECRET shop` as the kernel
records it for any script; a secret that is joined before it is redacted (`--password 'two words'`)
or that only its program's rules know (`-P SECRET`) would show."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from appliance.analyzers.common import command
from appliance.tools.context import ToolContext
from appliance.tools.paths import PathPolicy
from appliance.tools.procs import command_line
from appliance.tools.redaction.cmdline import redact_argv, show_argv
from appliance.tools.registry import build_registry


def _pw() -> str:
    return "Pw" + secrets.token_urlsafe(12).replace("-", "x").replace("_", "y")


# (class, program, arguments with {pw} where the secret goes)
CLASSES = [
    ("short option glued", "mysql", ["-u", "root", "-p{pw}", "shop"]),
    ("short option spaced", "sqlcmd", ["-S", "db", "-U", "sa", "-P", "{pw}", "-Q", "select 1"]),
    ("empty-looking option value", "ssh-keygen", ["-t", "ed25519", "-N", "{pw}", "-f", "/tmp/none"]),
    ("redis -a", "redis-cli", ["-h", "cache", "-a", "{pw}", "ping"]),
    ("user/password@service", "sqlplus", ["-s", "scott/{pw}@orcl"]),
    ("user,password", "lftp", ["-u", "bob,{pw}", "ftp.example.com"]),
    ("user%password", "smbclient", ["//nas/share", "-U", "bob%{pw}"]),
    ("user:password", "curl", ["-s", "-u", "admin:{pw}", "https://api.example.com"]),
    ("positional after subcommand", "rabbitmqctl", ["add_user", "bob", "{pw}"]),
    ("positional after -b", "htpasswd", ["-b", "/etc/nginx/.htpasswd", "bob", "{pw}"]),
    ("positional AUTH", "redis-cli", ["-h", "cache", "AUTH", "{pw}"]),
    ("two words after --password", "backup", ["--password", "{pw} and more", "--verbose"]),
    ("--password=", "backup", ["--password={pw}"]),
    ("secret-named single-dash option", "keytool", ["-list", "-storepass", "{pw}"]),
    ("docker login -p", "docker", ["login", "-u", "bob", "-p", "{pw}", "registry.example.com"]),
]


def _spawn(folder: Path, program: str, argv: list[str]) -> subprocess.Popen:
    script = folder / program
    if not script.exists():
        script.write_text("#!/bin/sh\nsleep 60\n")
        script.chmod(0o755)
    return subprocess.Popen([str(script), *argv], start_new_session=True)


def _kill(procs) -> None:
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """One real process per class, plus VAR=value words (in a shell's script, and as arguments) and an
    echo piped into sudo -S."""
    folder = tmp_path_factory.mktemp("bin")
    planted, procs = [], []
    for name, program, args in CLASSES:
        pw = _pw()
        procs.append(_spawn(folder, program, [a.replace("{pw}", pw) for a in args]))
        planted.append((name, pw, procs[-1]))
    pw = _pw()
    procs.append(subprocess.Popen(["sh", "-c", f"PGPASSWORD={pw} {folder / 'mysql'} -h db; sleep 60"], start_new_session=True))
    planted.append(("VAR=value before the program", pw, procs[-1]))
    pw = _pw()
    procs.append(_spawn(folder, "make", [f"DB_PASSWORD={pw}", "deploy"]))
    planted.append(("VAR=value as an argument", pw, procs[-1]))
    pw = _pw()
    procs.append(subprocess.Popen(["sh", "-c", f"echo '{pw}' | sudo -S true 2>/dev/null; sleep 60"], start_new_session=True))
    planted.append(("echo piped into sudo -S", pw, procs[-1]))
    time.sleep(0.3)
    try:
        yield planted
    finally:
        _kill(procs)


def test_every_class_is_masked_in_process_details_and_read_file(planted):
    registry = build_registry(ToolContext(policy=PathPolicy.default()))
    leaks, shown = [], []
    for name, pw, proc in planted:
        cmdline = psutil.Process(proc.pid).cmdline()
        assert any(pw in word for word in cmdline), (name, cmdline)  # the plant holds its secret
        details = registry.call("process_details", {"pid": proc.pid})
        assert details["status"] == "ok", details
        text = details["data"]["command"]
        shown.append(text)
        raw = registry.call("read_file", {"path": f"/proc/{proc.pid}/cmdline"})
        assert raw["status"] == "ok", raw
        for where in (text, raw["data"]["text"], command({"cmdline": cmdline, "pid": proc.pid}),
                      command_line({"cmdline": cmdline})):
            if pw in where or pw[:10] in where:
                leaks.append(f"{name}: {where}")
        assert "[REDACTED" in text, (name, text)
    assert leaks == [], leaks
    assert len(shown) == len(CLASSES) + 3


def test_top_processes_and_memory_report_mask_their_commands(tmp_path):
    """A busy process and a large one, each with secrets of several classes on its command line."""
    pws = [_pw() for _ in range(3)]
    hog_script = tmp_path / "mysql"
    hog_script.write_text("#!/bin/sh\nwhile :; do :; done\n")
    hog_script.chmod(0o755)
    busy = subprocess.Popen([str(hog_script), f"-p{pws[0]}", "--password", f"{pws[1]} x", f"--token={pws[2]}"],
                            start_new_session=True)
    big_pw = _pw()
    big = subprocess.Popen([sys.executable, "-c", "import time; b = bytearray(900 << 20); time.sleep(60)",
                            "--db-password", big_pw], start_new_session=True)
    try:
        registry = build_registry(ToolContext(policy=PathPolicy.default()))
        deadline = time.monotonic() + 10
        while psutil.Process(big.pid).memory_info().rss < 800 << 20 and time.monotonic() < deadline:
            time.sleep(0.1)
        top = registry.call("top_processes", {"sort_by": "cpu", "n": 25, "sample_seconds": 0.5})
        rows = [row for row in top["data"]["top"] if row["pid"] == busy.pid]
        assert rows and rows[0]["command"].count("[REDACTED") == 3, top
        memory = registry.call("memory_report", {"n": 20})
        mine = [row for row in memory["data"]["top_consumers"] if row["pid"] == big.pid]
        assert mine and "--db-password [REDACTED:password]" in mine[0]["command"], memory
        text = f"{top} {memory}"
        assert not [pw for pw in (*pws, big_pw) if pw in text or pw[:10] in text]
    finally:
        _kill([busy, big])


def test_ordinary_command_lines_are_left_as_they_are():
    for argv in (["nginx: worker process"], ["/usr/sbin/sshd", "-D"], ["python3", "-m", "http.server", "--bind", "127.0.0.1"],
                 ["postgres", "-D", "/var/lib/postgresql/16/main", "-c", "config_file=/etc/postgresql/16/main/postgresql.conf"],
                 ["/usr/bin/dockerd", "-H", "fd://", "--containerd=/run/containerd/containerd.sock"],
                 ["psql", "--password", "--host", "db"], ["git", "log", "--format=%H %s", "-n", "5"],
                 ["mysql", "-h", "db", "-P", "3306"], ["ssh", "-p", "2222", "bob@host"]):
        assert redact_argv(argv) == [word for word in argv], argv
    assert show_argv([]) == "[?]" and show_argv([], "kthreadd") == "[kthreadd]"
    assert show_argv(["git", "log", "--format=%H %s"]) == "git log --format=%H %s"
    assert show_argv(["backup", "--password", "two words", "-v"]) == "backup --password [REDACTED:password] -v"
