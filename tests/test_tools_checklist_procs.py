"""The checklist's process and path tools on real processes, files, links and users: who holds a
folder, processes by name and their parent, totals per user, what grows, a path part by part, folders
by number of files; the appliance's own processes are marked and never counted as a stranger."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from support.tools import kill, registry_for, spawn_detached

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="!!! runs processes as another user: needs root")

SLEEP = "import time\nwhile True:\n    time.sleep(60)\n"
READY = "import pathlib\npathlib.Path(READY_FILE).write_text('ready')\n"


@pytest.fixture
def tree():
    """A world-readable tree in /tmp (pytest's own tmp folders are private to root)."""
    with tempfile.TemporaryDirectory(prefix="appliance-test-tree-") as folder:
        os.chmod(folder, 0o755)
        yield Path(folder)


def call(tree: Path, tool: str, **args):
    return registry_for(tree, default=True).call(tool, args)


def test_path_holders_names_a_stranger_by_how_it_holds_the_folder_and_marks_the_appliance(tree):
    (tree / "data").mkdir()
    code = f"import os\nos.chdir({str(tree / 'data')!r})\nh = open('journal.db', 'ab')\n" + READY + SLEEP
    stranger = spawn_detached(code, argv0="appliance-test-holder", ready="ready")
    mine = open(tree / "mine.txt", "w")
    try:
        outcome = call(tree, "path_holders", path=str(tree))
    finally:
        kill(stranger)
        mine.close()
    data = outcome["data"]
    assert outcome["status"] == "ok" and data["holders_total"] == 1, outcome
    row = next(r for r in data["holders"] if r["pid"] == stranger)
    assert row["holds_as"] == ["working directory", "open file"] and not row.get("self")
    assert str(tree / "data" / "journal.db") in row["paths"]
    own = next(r for r in data["holders"] if r["pid"] == os.getpid())
    assert own["self"] and "appliance itself" in own["name"]
    assert data["headline"].startswith("1 process(es) hold") and f"pid={stranger}" in data["headline"]
    quiet = call(tree, "path_holders", path=str(tree / "data"))
    assert quiet["status"] == "empty" and quiet["data"]["holders_total"] == 0


def test_process_tree_counts_a_name_and_names_the_parent_and_a_pid_gets_its_ancestry():
    token = f"cptree{os.getpid()}"
    code = ("import os, time\nkids = []\nfor _ in range(4):\n    pid = os.fork()\n    if pid == 0:\n"
            "        while True:\n            time.sleep(60)\n    kids.append(pid)\n" + READY + SLEEP)
    parent = spawn_detached(code, argv0=f"{token}-queue", ready="ready")
    try:
        by_name = call(Path("/tmp"), "process_tree", name=token)
        child = next(r["pid"] for r in by_name["data"]["processes"] if r["pid"] != parent)
        around = call(Path("/tmp"), "process_tree", pid=child)
        mine = call(Path("/tmp"), "process_tree", pid=os.getpid())
        both = call(Path("/tmp"), "process_tree", name=token, pid=child)  # a model often gives both
        disagree = call(Path("/tmp"), "process_tree", name=f"other{token}", pid=child)
    finally:
        kill(parent)
    data = by_name["data"]
    assert data["count"] == 5 and data["matched_by"] == {"command line": 5}, data
    assert data["started_by"][0]["pid"] == parent and data["started_by"][0]["children_matching"] == 4
    assert f"4 of them started by pid={parent}" in data["headline"]
    assert around["data"]["ancestry"][0]["pid"] == parent and around["data"]["process"]["pid"] == child
    assert mine["data"]["process"]["self"]  # the appliance is marked, even when asked about by pid
    assert both["status"] == "ok" and both["data"]["process"]["pid"] == child
    assert disagree["status"] == "invalid" and f"PID {child} is " in disagree["error"]
    assert call(Path("/tmp"), "process_tree")["status"] == "invalid"


def _as_user(user: str, body: str) -> str:
    entry = pwd.getpwnam(user)
    return (f"import os\nos.setgroups([])\nos.setgid({entry.pw_gid})\nos.setuid({entry.pw_uid})\n" + body)


def test_user_totals_count_a_service_users_processes_and_leave_the_appliance_out(tree):
    (tree / "ready").mkdir()
    os.chmod(tree / "ready", 0o777)
    stranger = spawn_detached(_as_user("www-data", READY + SLEEP), argv0="appliance-test-webuser", ready="ready")
    # a child of the appliance, as another user: counted as the appliance's, never as that user's
    child = subprocess.Popen([sys.executable, "-c", _as_user("daemon", SLEEP)])
    try:
        time.sleep(0.3)
        outcome = call(tree, "user_totals", sample_seconds=0.3)
    finally:
        kill(stranger)
        child.kill()
        child.wait()
    data = outcome["data"]
    users = {row["user"]: row for row in data["users"]}
    assert users["www-data"]["processes"] >= 1 and users["www-data"]["threads"] >= 1
    assert "daemon" not in users, users
    assert data["appliance_itself"]["processes"] >= 2 and "appliance itself" in data["appliance_itself"]["name"]


def test_growth_names_a_process_whose_memory_grows_and_a_file_that_grows(tree):
    grower = ("import time\nheld = []\n" + READY + "while True:\n    block = bytearray(2 << 20)\n"
              "    for i in range(0, len(block), 4096):\n        block[i] = 1\n"
              "    held.append(block)\n    time.sleep(0.2)\n")
    writer = (f"import os, time\nout = open({str(tree / 'trace.log')!r}, 'ab')\n" + READY +
              "while True:\n    out.write(os.urandom(64 << 10)); out.flush()\n    time.sleep(0.1)\n")
    grows = spawn_detached(grower, argv0="appliance-test-leak", ready="ready")
    writes = spawn_detached(writer, argv0="appliance-test-writer", ready="ready")
    try:
        memory = call(tree, "growth", seconds=1.2)
        files = call(tree, "growth", path=str(tree), seconds=1.0)
    finally:
        kill(grows)
        kill(writes)
    row = next(r for r in memory["data"]["growing"] if r["pid"] == grows)
    assert row["steady"] and row["growth_per_second"].endswith("MiB/s") and not row.get("self")
    assert row["memory_full_in"]
    grown = files["data"]["growing_files"]
    assert files["status"] == "ok" and grown[0]["path"] == str(tree / "trace.log") and grown[0]["steady"]


def test_path_lookup_names_a_dangling_link_and_the_folder_a_user_may_not_pass(tree):
    (tree / "releases" / "v1").mkdir(parents=True)
    (tree / "releases" / "v1" / "config.yml").write_text("a: 1\n")
    (tree / "current").symlink_to(tree / "releases" / "v2")
    missing = call(tree, "path_lookup", path=str(tree / "current" / "config.yml"))["data"]
    assert not missing["exists"]
    assert missing["problem"] == (f"{tree}/current is a link to {tree}/releases/v2, which does not exist "
                                  f"({tree}/releases has no entry v2): a dangling link")
    assert [c["type"] for c in missing["components"]][-2:] == ["folder", "MISSING"]
    (tree / "closed").mkdir(mode=0o700)
    (tree / "closed" / "report.csv").write_text("x\n")
    blocked = call(tree, "path_lookup", path=str(tree / "closed" / "report.csv"), user="www-data")["data"]
    assert blocked["exists"] and blocked["verdict_for_user"] == f"www-data may not pass through {tree}/closed (drwx------ root:root)"
    fine = call(tree, "path_lookup", path=str(tree / "releases" / "v1" / "config.yml"), user="www-data")["data"]
    assert fine["verdict_for_user"] == "www-data may pass every folder and read it"


def test_a_missing_file_behind_a_dangling_link_is_explained_by_the_link_not_the_targets_folder(tree):
    (tree / "releases").mkdir()
    (tree / "current").symlink_to(tree / "releases" / "v2")
    outcome = call(tree, "read_file", path=str(tree / "current" / "config.yml"))
    assert outcome["status"] == "error"
    assert outcome["error"].startswith(f"{tree}/current/config.yml does not exist: {tree}/current is a link to "
                                       f"{tree}/releases/v2, which does not exist")


def test_dir_sizes_ranks_by_number_of_files_and_names_the_most_crowded_folder(tree):
    (tree / "big").mkdir()
    (tree / "big" / "blob.bin").write_bytes(os.urandom(1 << 20))
    (tree / "many" / "deep").mkdir(parents=True)
    for i in range(300):
        (tree / "many" / "deep" / f"f{i}").touch()
    by_files = call(tree, "dir_sizes", path=str(tree), rank_by="files")["data"]
    assert by_files["largest"][0]["path"] == str(tree / "many") and by_files["largest"][0]["files"] == 300
    assert f"most entries directly in one folder: {tree}/many/deep (300)" in by_files["headline"]
    by_bytes = call(tree, "dir_sizes", path=str(tree))["data"]
    assert by_bytes["largest"][0]["path"] == str(tree / "big")


def test_the_checklist_analyzers_never_name_the_appliance_or_its_children(tree):
    """The appliance's own children leak memory, keep 70 copies of one worker and hold a folder: no
    verdict names them (they are the appliance's own), and the folder is said to be free."""
    from appliance.analyzers import Readings, run_all
    from appliance.analyzers.named_path import path_findings

    (tree / "held").mkdir()
    leak = ("import time\nheld = []\nwhile True:\n    block = bytearray(2 << 20)\n"
            "    for i in range(0, len(block), 4096):\n        block[i] = 1\n    held.append(block)\n    time.sleep(0.2)\n")
    swarm = ("import os, time\nfor _ in range(70):\n    if os.fork() == 0:\n        time.sleep(30)\n        os._exit(0)\n"
             "time.sleep(30)\n")
    children = [subprocess.Popen([sys.executable, "-c", leak]),
                subprocess.Popen([sys.executable, "-c", swarm]),
                subprocess.Popen([sys.executable, "-c", "import time\ntime.sleep(30)"], cwd=tree / "held")]
    try:
        time.sleep(1.0)
        ours = {c.pid for c in children}
        findings = run_all(Readings(), families=["memory_growth", "process_names", "user_load"])
        held = path_findings(str(tree / "held"), f"umount {tree / 'held'} says target is busy", Readings())
    finally:
        for child in children:
            kill(child.pid)  # the swarm's forks too: 70 sleepers left behind show in what runs next
            child.wait()
    for finding in findings + held:
        assert finding.pid not in ours, finding.line()
        assert "appliance" not in str(finding.culprit), finding.line()
    holders = next(f for f in held if f.family == "path_holders")
    assert not holders.is_problem and holders.verdict.startswith("nothing holds")
