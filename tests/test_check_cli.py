"""`appliance check` through the real command line: exit status by the worst finding with planted
faults (a full tmpfs: critical; a read-only tmpfs holding files: warning), worst first, JSON, the
time limit, and one-line errors for bad arguments."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from support.resource_faults import fill, remount, tmpfs
from support.store import checkout_env

CHECKOUT = Path(__file__).resolve().parents[1]
RANK = {"ok": 0, "unknown": 0, "warning": 1, "critical": 2}


def cli(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    env = checkout_env()
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "appliance.cli", "check", *args], capture_output=True, text=True,
                          env=env, cwd=CHECKOUT, timeout=60)
    return done, time.monotonic() - started


def test_full_filesystem_exits_2_and_is_named(tmp_path):
    with tmpfs(tmp_path / "full", "size=8m") as mount:
        fill(mount / "blob")
        done, _ = cli("--json", "--family", "filesystem_full")
    assert done.returncode == 2, done.stderr
    report = json.loads(done.stdout)
    assert report["worst"] == "critical" and report["exit_status"] == 2
    mine = [f for f in report["findings"] if f.get("path") == str(mount)]
    assert mine and mine[0]["severity"] == "critical" and mine[0]["culprit"] == str(mount)
    assert mine[0]["values"]["used_percent"] == 100.0


def test_readonly_tmpfs_exits_1_and_text_puts_the_warning_first(tmp_path):
    with tmpfs(tmp_path / "ro", "size=8m") as mount:
        (mount / "saved.txt").write_text("work\n")
        remount(mount, "ro")
        done, _ = cli("--family", "readonly_fs", "--family", "inodes")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("[warning] readonly_fs: ") and str(mount) in lines[0]
    assert any(line.startswith("[ok] inodes: ") for line in lines[1:])
    assert lines[-1].startswith("verdict: 1 warning, 1 ok")


def test_quiet_families_exit_0():
    """Families whose state other sessions do not change from one second to the next."""
    done, _ = cli("--json", "--family", "inodes", "--family", "readonly_fs")
    report = json.loads(done.stdout)
    assert done.returncode == 0, report
    assert [f["severity"] for f in report["findings"]] == ["ok", "ok"]
    assert all(f["values"] for f in report["findings"])


def test_all_families_within_two_seconds_worst_first_and_status_by_the_worst():
    done, wall = cli("--json")
    report = json.loads(done.stdout)
    ranks = [RANK[f["severity"]] for f in report["findings"]]
    assert ranks == sorted(ranks, reverse=True)
    assert done.returncode == report["exit_status"] == max(ranks, default=0)
    assert report["seconds"] <= 2.0 and wall < 5.0, (report["seconds"], wall)
    families = {f["family"] for f in report["findings"]}
    assert {"cpu", "memory", "oom", "swap", "filesystem_full", "inodes", "deleted_open", "readonly_fs",
            "disk_io"} <= families


def test_bad_arguments_are_one_line_and_exit_2():
    runs = {args: cli(*args)[0] for args in (("--family", "nope"), ("--bogus",), ("--family",))}
    for args, done in runs.items():
        assert done.returncode == 2 and done.stdout == "", args
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    done = runs["--family", "nope"]
    assert "unknown family 'nope'" in done.stderr and "filesystem_full" in done.stderr
