"""The redactor's corpus (tests/support/secret_corpus.py) planted where the whole machine shows it:
in real process command lines, read back through process_details and top_processes, and as the
sources of real tmpfs mounts, read back through `df`. Nothing of any secret may come back."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

from support import secret_corpus as corpus
from appliance.tools.context import ToolContext
from appliance.tools.paths import PathPolicy
from appliance.tools.registry import build_registry

ENTRIES = corpus.entries(seed=15)


def _argv_shapes() -> list[corpus.Entry]:
    return [e for e in ENTRIES if e.fmt in ("cmdline", "history") and "\n" not in e.text and len(e.text) < 150]


def _words(text: str) -> list[str]:
    """The words a shell would make of a history line (quotes joined), or its plain words."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def test_process_command_lines_show_no_secret():
    """Real processes with the secrets in their argv, read back through process_details and
    top_processes (the busy one has to make the top of the CPU list)."""
    shapes = _argv_shapes()[::6]
    procs = [subprocess.Popen(["sh", "-c", "sleep 120; :", "corpus", *_words(e.text)], start_new_session=True)
             for e in shapes]
    busy_entries = shapes[:3]
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done", "corpus",
                             *[part for e in busy_entries for part in e.text.split()[-2:]]], start_new_session=True)
    try:
        registry = build_registry(ToolContext(policy=PathPolicy.default()))
        time.sleep(0.3)
        leaks = []
        with ThreadPoolExecutor(16) as pool:  # process_details samples CPU for 0.3 s
            results = list(pool.map(lambda proc: registry.call("process_details", {"pid": proc.pid}), procs))
        for got, entry in zip(results, shapes):
            assert got["status"] == "ok" and got["data"]["command"].startswith("sh -c"), got
            leaks += corpus.leaks([entry], got)
        top = registry.call("top_processes", {"sort_by": "cpu", "n": 25, "sample_seconds": 0.5})
        assert any(row["pid"] == busy.pid for row in top["data"]["top"]), "the busy process is not listed"
        leaks += corpus.leaks(shapes, top)
    finally:
        for proc in (*procs, busy):
            os.killpg(proc.pid, signal.SIGKILL)  # the shell and its sleep
            proc.wait()
    assert len(shapes) >= 40 and leaks == []


def test_run_readonly_output_shows_no_secret(tmp_path):
    """df prints mount sources, which are free text: tmpfs mounts named by secrets."""
    shapes = [e for e in ENTRIES if e.fmt == "env" and "\n" not in e.text and " " not in e.text
              and "," not in e.text and "\\" not in e.text and len(e.text) < 200][::4]
    registry = build_registry(ToolContext(policy=PathPolicy.default()))
    leaks = []
    for batch in range(0, len(shapes), 8):  # a few at a time, so the output is shown whole
        mounted = []
        try:
            for i, entry in enumerate(shapes[batch:batch + 8]):
                point = tmp_path / f"m{batch + i}"
                point.mkdir()
                subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", f"corpus:{entry.text}", str(point)], check=True,
                               capture_output=True)
                mounted.append(point)
            got = registry.call("run_readonly", {"command": "df -h"})
            assert got["status"] == "ok" and all(str(point) in got["data"]["output"] for point in mounted), got
            leaks += corpus.leaks(shapes[batch:batch + 8], got)
        finally:
            for point in mounted:
                subprocess.run(["umount", str(point)], check=False)
    assert len(shapes) >= 30 and leaks == []
