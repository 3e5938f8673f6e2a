"""Issue 54's corpus (tests/support/secret_issue54.py) through every tool that shows it: each command
line as a REAL process whose /proc/PID/cmdline holds exactly that argument vector (a tiny C program
that ignores its arguments, started under each program's name with `executable=`), read back through
process_details, process_tree, path_holders (every plant holds one file open), read_file of
/proc/PID/cmdline, top_processes and memory_report (and the row they render each process with);
each as a cron job through scheduled_jobs' reader; each file format, log and history through
read_file, read_log and list_dir. Each secret is a unique canary: a leak is its text in the output.
Near-miss non-secrets (public keys, certificates, checksums, placeholders) are at most 3 % masked."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from support import secret_issue54 as corpus
from appliance.tools.context import ToolContext
from appliance.tools.paths import PathPolicy
from appliance.tools.procs import command_line
from appliance.tools.redact import redact
from appliance.tools.registry import build_registry
from appliance.tools.schedules import cron_jobs

_HOLDER = r"""
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) { const char *path = getenv("HOLD"); if (path) open(path, O_RDONLY); pause(); return 0; }
"""

# Reads [(binary, argv), ...] on stdin; forks each as a new session that execs `binary` with exactly
# `argv`; prints their pids; exits (so the plants are reparented).
_LAUNCHER = """
import json, os, sys
pids = []
for binary, argv in json.load(sys.stdin):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.execve(binary, argv, dict(os.environ))
    pids.append(pid)
print(json.dumps(pids))
"""


def _leaks(secrets: list[str], text: str) -> list[str]:
    return [secret for secret in secrets if secret[:7] in text]


def test_the_corpus_is_as_large_as_the_issue_asks():
    commands = corpus.command_shapes()
    shapes = (sum(len(s) for _, _, s in commands) + len(corpus.file_shapes()) + len(corpus.cron_lines())
              + len(corpus.logged_lines()))
    assert shapes >= 600
    assert len({program for program, _, _ in commands}) >= 60
    assert len({fmt for fmt, _, _, _ in corpus.file_shapes()} | {fmt for fmt, _, _ in corpus.logged_lines()}) >= 40
    assert len(corpus.NEAR_MISSES) >= 120
    every = [s for _, _, ss in commands for s in ss] + [s for *_, ss in corpus.file_shapes() for s in ss]
    assert len(set(every)) == len(every)  # each canary unique


@pytest.fixture(scope="module")
def plants(tmp_path_factory):
    if shutil.which("cc") is None:
        pytest.fail("a C compiler (cc) is needed to build the argument-ignoring holder")
    folder = tmp_path_factory.mktemp("plants")
    source = folder / "holder.c"
    source.write_text(_HOLDER)
    subprocess.run(["cc", "-O2", "-o", str(folder / "holder"), str(source)], check=True)
    held = folder / "held.txt"
    held.write_text("held\n")
    specs = []
    for program, argv, secrets in corpus.command_shapes():
        binary = folder / "bin" / program
        binary.parent.mkdir(exist_ok=True)
        if not binary.exists():
            shutil.copy(folder / "holder", binary)
        specs.append((str(binary), argv))
    # started by a launcher that exits at once, so the plants are no children of this test (the
    # process tools leave the appliance's own tree out)
    launched = subprocess.run([sys.executable, "-c", _LAUNCHER], input=json.dumps(specs), capture_output=True, text=True,
                              env={"HOLD": str(held)}, check=True)
    pids = json.loads(launched.stdout)
    procs = [(pid, argv, secrets) for pid, (_, argv, secrets) in zip(pids, corpus.command_shapes())]
    try:
        for pid, _, _ in procs:  # each holds its file (and so has started) before it is read
            for _ in range(200):
                if any(f.path == str(held) for f in psutil.Process(pid).open_files()):
                    break
                time.sleep(0.01)
        yield held, procs
    finally:
        for pid, _, _ in procs:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_every_process_tool_shows_no_secret_of_a_real_process(plants):
    held, procs = plants
    registry = build_registry(ToolContext(policy=PathPolicy.default()))
    leaks = []
    for pid, argv, secrets in procs:
        assert psutil.Process(pid).cmdline() == argv  # the plant's cmdline is that argv, exactly
        details = registry.call("process_details", {"pid": pid})
        tree = registry.call("process_tree", {"pid": pid})
        raw = registry.call("read_file", {"path": f"/proc/{pid}/cmdline"})
        assert details["status"] == "ok" and tree["status"] == "ok" and raw["status"] == "ok", (details, tree, raw)
        row = command_line({"cmdline": argv, "name": argv[0]})
        for where, result in (("process_details", details), ("process_tree", tree), ("read_file", raw), ("row", row)):
            leaks += [f"{where}: {argv[0]}: {s}" for s in _leaks(secrets, json.dumps(result, ensure_ascii=False))]
    holders = registry.call("path_holders", {"path": str(held)})
    assert holders["status"] == "ok" and len(json.dumps(holders)) > 1000, holders
    shown = json.dumps([holders, registry.call("top_processes", {"sort_by": "memory", "n": 25}),
                        registry.call("memory_report", {"n": 20}), registry.call("process_tree", {"name": "mysql"})],
                       ensure_ascii=False)
    every = [s for _, _, ss in procs for s in ss]
    leaks += [f"path_holders/top/memory: {s}" for s in _leaks(every, shown)]
    assert leaks == []


def test_cron_lines_show_no_secret(tmp_path):
    (tmp_path / "etc/cron.d").mkdir(parents=True)
    lines = corpus.cron_lines()
    (tmp_path / "etc/cron.d/plants").write_text("\n".join(line for line, _ in lines) + "\n")
    jobs, tables, problems = cron_jobs(tmp_path)
    assert len(jobs) == len(lines) and not problems
    shown = json.dumps([job.shown() for job in jobs], ensure_ascii=False)
    assert _leaks([s for _, s in lines], shown) == []


def _files(root: Path) -> list[tuple[str, Path, list[str]]]:
    """Each file shape in a folder of its own (names repeat across formats); the logged lines in
    files of 30 lines each, as a log, an audit log and a history hold them."""
    out = []
    for n, (fmt, name, text, secrets) in enumerate(corpus.file_shapes()):
        path = root / f"{n:03d}-{fmt}" / name
        path.parent.mkdir()
        path.write_text(f"# {fmt} written for a test\nlisten 8080\n{text}", encoding="utf-8")
        out.append((fmt, path, secrets))
    logged = corpus.logged_lines()
    for fmt in ("bash-history", "auditd", "sudo"):
        mine = [(line, secret) for f, line, secret in logged if f == fmt]
        for start in range(0, len(mine), 30):
            path = root / "logs" / f"{fmt}-{start:03d}.log"
            path.parent.mkdir(exist_ok=True)
            path.write_text("\n".join(line for line, _ in mine[start:start + 30]) + "\n", encoding="utf-8")
            out.append((fmt, path, [secret for _, secret in mine[start:start + 30]]))
    return out


def test_file_formats_logs_and_histories_show_no_secret(tmp_path):
    files = _files(tmp_path)
    registry = build_registry(ToolContext(policy=PathPolicy.confined([tmp_path])))
    leaks = []
    for fmt, path, secrets in files:
        read = registry.call("read_file", {"path": str(path)})
        log = registry.call("read_log", {"path": str(path), "lines": 200})
        listing = registry.call("list_dir", {"path": str(path.parent)})
        leaks += [f"{fmt} {path.name}: {s}" for s in _leaks(secrets, json.dumps([read, log, listing], ensure_ascii=False))]
    assert leaks == []


def test_near_misses_stay_visible():
    masked = [text for text in corpus.NEAR_MISSES if redact(text) != text]
    assert len(masked) <= 0.03 * len(corpus.NEAR_MISSES), masked
