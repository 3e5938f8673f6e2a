"""inspect_process on real processes the tests start: a stopped one, one writing a file and one reading
another, one holding a deleted file, a key and two sockets, one whose environment and command line
carry secrets that must never come out, one that is not the host's in its UTS namespace, and the
appliance's own process, labelled."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import psutil

from appliance.tools.procs import SELF_LABEL
from support.plants import child, wait_state
from support.tools import check_invariants, registry_for

REGISTRY = registry_for("/tmp", default=True, self_pids=frozenset())


def inspect(target: str | int) -> dict:
    outcome = REGISTRY.call("inspect_process", {"target": str(target)})
    check_invariants("inspect_process", outcome)
    assert outcome["status"] == "ok", outcome
    return outcome


def only(outcome: dict) -> dict:
    assert outcome["data"]["processes_matched"] == 1
    return outcome["data"]["profiles"][0]


def kinds(outcome: dict) -> dict[str, dict]:
    return {f["kind"]: f for f in outcome["data"]["flags"]}


def test_a_stopped_process_is_flagged_with_how_long_and_its_parents_reach_pid_1(tmp_path):
    with child("ready()", tmp_path) as proc:
        os.kill(proc.pid, signal.SIGSTOP)
        wait_state(proc.pid, "T")
        time.sleep(1.2)
        outcome = inspect(proc.pid)
        found = only(outcome)
        assert found["state"].startswith("T: stopped by a signal")
        seconds = float(found["in_this_state_for"].split()[1])
        assert 1 <= seconds < 30, found["in_this_state_for"]
        assert kinds(outcome)["stopped"]["severity"] == "warning"
        parents = [p["pid"] for p in found["parents"]]
        assert parents[0] == os.getpid() and parents[-1] == 1
        assert found["children"] == 0 and found["effective_user"] == "root" == found["real_user"]
        assert "stopped" in outcome["data"]["headline"]
        os.kill(proc.pid, signal.SIGCONT)
        wait_state(proc.pid, "S")
        resumed = inspect(proc.pid)
        assert only(resumed)["state"].startswith("S: sleeping") and "stopped" not in kinds(resumed)


FILES = """
out = open(sys.argv[2], "w"); out.write("x"); out.flush()
log = open(sys.argv[3], "a")
inp = open(sys.argv[4], "r")
gone = open(sys.argv[5], "w"); gone.write("y" * 4096); gone.flush(); os.unlink(sys.argv[5])
key = open(os.environ["KEY_PATH"], "r")
os.chdir(sys.argv[6])
ready()
"""


def test_open_files_by_name_with_their_modes_a_deleted_one_marked_and_a_key_withheld(tmp_path):
    (tmp_path / "input.txt").write_text("data")
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "server.key").write_text("-----BEGIN PRIVATE KEY-----\n")
    paths = [tmp_path / "output.csv", tmp_path / "app.log", tmp_path / "input.txt", tmp_path / "scratch.tmp", tmp_path]
    env = dict(os.environ, KEY_PATH=str(keys / "server.key"))  # not on its command line, which is shown
    with child(FILES, tmp_path, *map(str, paths), env=env) as proc:
        found = only(inspect(proc.pid))
        files = found["open_files"]
        by_name = {f["name"]: f for f in files["listed"]}
        assert by_name[str(paths[0])]["mode"] == "write"
        assert by_name[str(paths[1])]["mode"] == "write, append"
        assert by_name[str(paths[2])]["mode"] == "read"
        assert by_name[str(paths[3])]["deleted"] is True and by_name[str(paths[3])]["deleted_size"] == "4.0 KiB"
        assert str(paths[0]) in files["writing_to"] and str(paths[2]) in files["reading_from"]
        assert str(paths[2]) not in files["writing_to"]
        text = json.dumps(found, ensure_ascii=False)
        assert "server.key" not in text
        assert by_name[f"{keys}/… (name withheld: the path policy treats it as a key, "
                                                    f"credentials or a secret place)"]["mode"] == "read"
        assert files["count"] == len(os.listdir(f"/proc/{proc.pid}/fd"))
        assert found["working_directory"] == str(tmp_path)
        held = kinds(inspect(proc.pid))["deleted_files_open"]
        assert held["severity"] == "ok" and "1 deleted file(s)" in held["says"]


SOCKETS = """
import socket
server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen()
client = socket.create_connection(server.getsockname())
peer, _ = server.accept()
r, w = os.pipe()
print(server.getsockname()[1], client.getsockname()[1], file=sys.stderr, flush=True)
ready()
"""


def test_sockets_are_shown_as_their_addresses_listening_and_connected_and_pipes_as_pipes(tmp_path):
    with child(SOCKETS, tmp_path) as proc:
        port, local = proc.stderr.readline().decode().split()
        found = only(inspect(proc.pid))
        assert f"TCP listening on 127.0.0.1:{port}" in found["listening_sockets"]
        assert f"TCP 127.0.0.1:{local} to 127.0.0.1:{port} (established)" in found["connected_sockets"]
        assert f"TCP 127.0.0.1:{port} to 127.0.0.1:{local} (established)" in found["connected_sockets"]
        types = [f["type"] for f in found["open_files"]["listed"]]
        assert types.count("socket") == 3 and types.count("pipe") == 3  # its own two and stderr


def test_environment_names_are_shown_and_a_value_never_and_a_password_flag_is_redacted():
    short = Path(tempfile.mkdtemp(prefix="pw"))  # a short command line, shown whole
    canary = f"canary-{secrets.token_hex(12)}"
    password = f"pw{secrets.token_hex(8)}"
    env = dict(os.environ, APPLIANCE_TEST_CANARY=canary, PLAIN_SETTING=f"plain-{canary}")
    with child("ready()", short, "--password", password, env=env) as proc:
        outcome = inspect(proc.pid)
        found = only(outcome)
        text = json.dumps(outcome)
        assert canary not in text and password not in text
        assert {"APPLIANCE_TEST_CANARY", "PLAIN_SETTING", "PATH"} <= set(found["environment_variable_names"])
        assert "--password [REDACTED" in found["command"]
    shutil.rmtree(short)


UTS = """
import ctypes, socket
assert ctypes.CDLL(None, use_errno=True).unshare(0x04000000) == 0  # CLONE_NEWUTS
socket.sethostname("appliance-test-uts")
ready()
"""


def test_a_namespace_the_process_does_not_share_is_named(tmp_path):
    with child(UTS, tmp_path) as proc:
        found = only(inspect(proc.pid))
        assert list(found["namespaces_not_shared"]) == ["uts"], found["namespaces_not_shared"]
        assert found["namespaces_not_shared"]["uts"] == os.readlink(f"/proc/{proc.pid}/ns/uts")
    with child("ready()", tmp_path) as proc:
        assert only(inspect(proc.pid))["namespaces_not_shared"].startswith("none")


BUSY = """
import threading
def spin():
    while True:
        pass
block = bytearray(64 * 1024 * 1024)
for i in range(len(block) // 4096):
    block[i * 4096] = 1
for _ in range(4):
    threading.Thread(target=lambda: time.sleep(3600), daemon=True).start()
threading.Thread(target=spin, daemon=True).start()
open("/proc/self/oom_score_adj", "w").write("500")
mark()
os.setresgid(0, 65534, 0)
os.setresuid(0, 65534, 0)
while True:
    time.sleep(1)
"""


def test_threads_memory_cpu_oom_score_and_real_and_effective_users(tmp_path):
    with child(BUSY, tmp_path) as proc:
        while psutil.Process(proc.pid).uids().effective != 65534:
            time.sleep(0.02)
        found = only(inspect(proc.pid))
        assert found["threads"] == 6
        assert found["memory_rss"].endswith("MiB") and float(found["memory_rss"].split()[0]) >= 64
        assert found["memory_pss"].endswith("MiB")
        assert found["cpu_percent_of_one_core"] > 5
        assert found["oom_score_adj"] == 500 and found["oom_score"] >= 500
        assert (found["real_user"], found["effective_user"]) == ("root", "nobody")
        assert (found["real_group"], found["effective_group"]) == ("root", "nogroup")
        assert found["state"][0] in "RS"
    with child("ready()", tmp_path) as quiet:
        assert only(inspect(quiet.pid))["cpu_percent_of_one_core"] < 5


def test_the_appliances_own_process_is_labelled():
    registry = registry_for("/tmp", default=True)
    outcome = registry.call("inspect_process", {"target": str(os.getpid())})
    found = outcome["data"]["profiles"][0]
    assert found["self"] is True and found["name"].endswith(SELF_LABEL)
    assert found["program"] == os.path.realpath(sys.executable)


def test_a_pid_or_name_that_no_process_has_is_an_empty_result_that_says_so():
    free = max(psutil.pids()) + 100_000
    outcome = REGISTRY.call("inspect_process", {"target": str(free)})
    assert outcome["status"] == "empty" and outcome["data"]["processes_matched"] == 0
    assert f"no process has pid {free}" in outcome["data"]["headline"]
    named = REGISTRY.call("inspect_process", {"target": "no-such-program-here"})
    assert named["status"] == "empty" and "no running process is named" in named["data"]["headline"]
