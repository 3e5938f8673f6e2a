"""inspect_path and inspect_program over machine-wide state planted here: a noexec tmpfs mounted
and unmounted by the test, a lock held by a child (fcntl.lockf), a deleted file a child holds
open, a program's processes; and `appliance check THING`'s exit codes and one-line errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

from appliance.tools.context import ToolContext
from appliance.tools.paths import PathPolicy
from appliance.tools.registry import build_registry

# The test's children stand for other programs here, so no process counts as the appliance's own.
REGISTRY = build_registry(ToolContext(policy=PathPolicy.default(), self_pids=frozenset()))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def inspect(path) -> dict:
    out = REGISTRY.call("inspect_path", {"path": str(path)})
    assert out["status"] == "ok", out
    return out["data"]


@pytest.fixture
def noexec_mount(tmp_path):
    point = tmp_path / "mnt"
    point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "noexec,nosuid,size=4m", "tmpfs", str(point)], check=True)
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], check=True)


def test_an_executable_on_a_noexec_mount_is_flagged_with_the_mount_options(noexec_mount, tmp_path):
    program = noexec_mount / "run.sh"
    program.write_text("#!/bin/sh\necho hi\n")
    os.chmod(program, 0o755)
    with pytest.raises(PermissionError):
        subprocess.run([str(program)])
    data = inspect(program)
    assert data["filesystem"]["mount_point"] == str(noexec_mount) and data["filesystem"]["type"] == "tmpfs"
    assert any(r.startswith("noexec") for r in data["filesystem"]["restrictions"])
    assert any(r.startswith("nosuid") for r in data["filesystem"]["restrictions"])
    assert {f["kind"] for f in data["flags"]} == {"noexec_mount"}
    outside = tmp_path / "run.sh"
    outside.write_text("#!/bin/sh\necho hi\n")
    os.chmod(outside, 0o755)
    assert inspect(outside)["flags"] == []


def _child(code: str) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    return child


def test_a_lock_held_by_another_process_and_its_holder(tmp_path):
    path = tmp_path / "queue.db"
    path.write_text("x")
    child = _child(f"""
        import fcntl, sys, time
        f = open({str(path)!r}, "r+")
        fcntl.lockf(f, fcntl.LOCK_EX)
        print("ready", flush=True)
        time.sleep(30)
    """)
    try:
        data = inspect(path)
        assert data["locks"] == [f"pid {child.pid} holds a POSIX write lock (advisory)"]
        assert child.pid in {h["pid"] for h in data["held_open_by"]}
    finally:
        child.kill()
        child.wait()
    assert "locks" not in inspect(path)


def test_a_deleted_file_held_open_is_flagged_on_its_folder_and_under_its_own_name(tmp_path):
    path = tmp_path / "big.log"
    path.write_text("x" * 1000)
    child = _child(f"""
        import os, time
        f = open({str(path)!r})
        os.unlink({str(path)!r})
        print("ready", flush=True)
        time.sleep(30)
    """)
    try:
        folder = inspect(tmp_path)
        assert {f["kind"] for f in folder["flags"]} == {"held_open_deleted"}
        gone = inspect(path)
        assert gone["type"] == "deleted file still held open" and gone["held_open_by"][0]["pid"] == child.pid
    finally:
        child.kill()
        child.wait()
    assert REGISTRY.call("inspect_path", {"path": str(path)})["status"] == "error"


def test_inspect_program_finds_an_installed_program_its_package_and_its_processes():
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.2)
        out = REGISTRY.call("inspect_program", {"program": "sleep"})["data"]
    finally:
        sleeper.kill()
        sleeper.wait()
    assert out["installed"] is True and out["found_at"] == shutil.which("sleep")
    assert out["package"].startswith("coreutils ") and sleeper.pid in {p["pid"] for p in out["processes"]}
    tar = REGISTRY.call("inspect_program", {"program": "tar"})["data"]
    assert tar["package"].startswith("tar ") and tar["flags"] == []


def test_inspect_program_says_where_it_looked_for_a_name_nothing_has():
    out = REGISTRY.call("inspect_program", {"program": "zz-no-such-program"})["data"]
    assert out["installed"] is False and out["processes_total"] == 0
    assert "/usr/sbin" in out["found_at"] and "dpkg file lists" in out["package"]
    assert [f["kind"] for f in out["flags"]] == ["not_installed"]
    assert REGISTRY.call("inspect_program", {"program": "../bin/sh"})["status"] == "invalid"


def check(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, *sys.path])}
    return subprocess.run([sys.executable, "-c", "import sys; from appliance.cli import main; sys.exit(main())",
                           "check", *args], capture_output=True, text=True, env=env, timeout=30)


def test_check_thing_exits_by_the_worst_flag_in_plain_words(tmp_path):
    plain = tmp_path / "ok.txt"
    plain.write_text("hello\n")
    fine = check(str(plain))
    assert fine.returncode == 0 and fine.stdout.startswith(f"{plain} is a text file") and "Flags: none" in fine.stdout
    assert "=" not in fine.stdout.split("\n", 1)[1]
    crlf = tmp_path / "run.sh"
    crlf.write_bytes(b"#!/bin/sh\r\necho hi\r\n")
    os.chmod(crlf, 0o755)
    bad = check(str(crlf))
    assert bad.returncode == 2 and "critical: " in bad.stdout and "warning: " in bad.stdout
    noexec = tmp_path / "job.sh"
    noexec.write_text("#!/bin/sh\n")
    assert check(str(noexec)).returncode == 1
    as_json = check(str(crlf), "--json")
    assert as_json.returncode == 2 and '"worst": "critical"' in as_json.stdout
    assert check("sh").returncode == 0


def test_check_thing_bad_input_is_one_line_and_a_non_zero_exit(tmp_path):
    for thing in (str(tmp_path / "missing" / "file"), "zz-no-such-program"):
        out = check(thing)
        assert out.returncode == 2 and out.stdout == "" and len(out.stderr.strip().splitlines()) == 1, out
        assert "Traceback" not in out.stderr
    assert "has no entry missing" in check(str(tmp_path / "missing" / "file")).stderr


def test_check_thing_chooses_the_profile_by_what_the_thing_is(tmp_path):
    from appliance.commands.check_thing import profile_tool

    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.2)
        assert profile_tool(str(tmp_path)) == ("inspect_path", str(tmp_path))
        assert profile_tool("./relative")[0] == "inspect_path"
        assert profile_tool(str(sleeper.pid)) == ("inspect_process", str(sleeper.pid))
        assert profile_tool("sleep") == ("inspect_process", "sleep")  # a name some process has
    finally:
        sleeper.kill()
        sleeper.wait()
    assert profile_tool("nobody") == ("inspect_user", "nobody")  # a user, and no program of that name
    assert profile_tool("tar") == ("inspect_program", "tar")


def test_check_thing_imports_no_analyzer_and_no_certificate_library_for_a_plain_file(tmp_path):
    """What keeps a profile within its second: the analyzers (a third of a second of imports) are
    the plain check's alone, and `cryptography` is loaded only for a file shaped like a certificate."""
    plain = tmp_path / "notes.txt"
    plain.write_text("hello\n")
    probe = ("import json, sys; from appliance.cli import main; code = main(sys.argv[1:]); "
             "print(json.dumps([m for m in sys.modules if m.startswith(('appliance.analyzers', 'cryptography'))]))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, *sys.path])}
    done = subprocess.run([sys.executable, "-c", probe, "check", str(plain)], capture_output=True, text=True,
                          env=env, timeout=30)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
    everything = subprocess.run([sys.executable, "-c", probe, "check", "--family", "cpu"], capture_output=True,
                                text=True, env=env, timeout=30)
    assert "appliance.analyzers" in json.loads(everything.stdout.splitlines()[-1])  # the probe can see them
