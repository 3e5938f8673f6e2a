"""The redactor against a corpus of secret shapes (tests/support/secret_corpus.py: the public rule sets of
gitleaks and detect-secrets plus the shapes of issue 15), planted in real files of eleven formats,
real process command lines and real mount sources, and read back through every tool that shows
text, the store and the export: nothing of any secret may come back. And the other side: ordinary
log lines stay as they were (a redactor that masks everything is not a fix).

Before this change 28 of 78 planted shapes came back in clear (issue 15); the first commit of the new
redactor made this file pass."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from support import secret_corpus as corpus
from appliance.agent import events as ev
from appliance.eval.records import CANARY_WINDOW, canary_windows, leaked_in_text
from appliance.store import export, open_store
from appliance.tools.context import ToolContext
from appliance.tools.paths import PathPolicy
from appliance.tools.redact import redact
from appliance.tools.registry import build_registry
from support.store import MODEL, SETTINGS

ENTRIES = corpus.entries(seed=15)
FILE_CHARS = 4200  # each file's lines fit in one read_log result (5,000 characters)


def test_the_corpus_is_as_large_as_the_issue_asks():
    assert len({e.shape for e in ENTRIES}) >= 200
    assert len({e.fmt for e in ENTRIES}) >= 10


def _files(root: Path) -> dict[Path, list[corpus.Entry]]:
    """The entries written into files of their format, a few thousand characters each."""
    groups: dict[Path, list[corpus.Entry]] = defaultdict(list)
    sizes: dict[str, int] = defaultdict(int)
    counters: dict[str, int] = defaultdict(int)
    for entry in ENTRIES:
        if sizes[entry.fmt] + len(entry.text) > FILE_CHARS or entry.fmt == "keys":
            counters[entry.fmt] += 1
            sizes[entry.fmt] = 0
        sizes[entry.fmt] += len(entry.text) + 1
        groups[root / f"{entry.fmt}-{counters[entry.fmt]:03d}.{'log' if entry.fmt == 'log' else 'txt'}"].append(entry)
    for path, entries in groups.items():
        path.write_text("\n".join(e.text for e in entries) + "\n", encoding="utf-8")
    return groups


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = tmp_path_factory.mktemp("planted")
    files = _files(root)
    registry = build_registry(ToolContext(policy=PathPolicy.confined([root])))
    return root, files, registry


def _leaks(entries, shown) -> list[str]:
    """The entries of which any 12-character stretch (records.canary_windows) is in `shown`."""
    text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False)
    grams = {text[i:i + CANARY_WINDOW] for i in range(len(text) - CANARY_WINDOW + 1)}
    return [f"{e.shape} ({e.fmt})" for e in entries
            if any((w in grams) if len(w) == CANARY_WINDOW else (w in text) for c in e.canaries for w in canary_windows(c))]


def _database_text(path: Path) -> str:
    """Every value of every table (search index tables included), as one text."""
    conn = sqlite3.connect(path)
    try:
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return "\n".join(str(value) for table in tables for row in conn.execute(f'SELECT * FROM "{table}"')
                         for value in row if value is not None)
    finally:
        conn.close()


def test_redact_itself_masks_every_entry():
    assert [f"{e.shape} ({e.fmt})" for e in ENTRIES if leaked_in_text(e.canaries, redact(e.text))] == []


def test_read_file_shows_no_secret(planted):
    _, files, registry = planted
    leaks = []
    for path, entries in files.items():
        got = registry.call("read_file", {"path": str(path), "max_bytes": 32768})
        assert got["status"] == "ok" and got["data"]["truncated"] is False, got
        leaks += _leaks(entries, got)
    assert leaks == []


def test_read_log_shows_no_secret_in_any_line(planted):
    _, files, registry = planted
    leaks = []
    for path, entries in files.items():
        got = registry.call("read_log", {"path": str(path), "lines": 200})
        assert got["status"] == "ok", got
        assert "lines_omitted" not in got["data"], f"{path.name}: not every line was shown, so not every line was checked"
        leaks += _leaks(entries, got)
    assert leaks == []


def test_read_log_pattern_cannot_confirm_a_guessed_secret(planted):
    """Before: the pattern ran on the raw lines, so a match (even redacted) confirmed the guess."""
    _, files, registry = planted
    confirmed = []
    for path, entries in list(files.items())[::3]:
        for entry in entries[::4]:
            guess = entry.canaries[0][-12:]
            got = registry.call("read_log", {"path": str(path), "pattern": guess})
            if got["data"] and got["data"].get("matching_lines"):
                confirmed.append(entry.shape)
    assert confirmed == []


def test_list_dir_names_show_no_secret(tmp_path):
    named = [e for e in ENTRIES if e.fmt in ("env", "log", "ini") and "\n" not in e.text and "/" not in e.text
             and len(e.text.encode()) < 250][:200]
    for entry in named:
        (tmp_path / entry.text).write_bytes(b"")
    assert len(named) == 200 and len({e.shape for e in named}) > 60
    registry = build_registry(ToolContext(policy=PathPolicy.confined([tmp_path])))
    got = registry.call("list_dir", {"path": str(tmp_path), "n": 200})
    assert got["data"]["entries_total"] == len(got["data"]["entries"]) == len(named)
    assert _leaks(named, got) == []


def _argv_shapes() -> list[corpus.Entry]:
    return [e for e in ENTRIES if e.fmt in ("cmdline", "history") and "\n" not in e.text and len(e.text) < 150]


def test_process_command_lines_show_no_secret():
    """Real processes with the secrets in their argv, read back through process_details and
    top_processes (the busy one has to make the top of the CPU list)."""
    shapes = _argv_shapes()[::6]
    procs = [subprocess.Popen(["sh", "-c", "sleep 120; :", "corpus", *e.text.split()], start_new_session=True)
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
            leaks += _leaks([entry], got)
        top = registry.call("top_processes", {"sort_by": "cpu", "n": 25, "sample_seconds": 0.5})
        assert any(row["pid"] == busy.pid for row in top["data"]["top"]), "the busy process is not listed"
        leaks += _leaks(shapes, top)
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
            leaks += _leaks(shapes[batch:batch + 8], got)
        finally:
            for point in mounted:
                subprocess.run(["umount", str(point)], check=False)
    assert len(shapes) >= 30 and leaks == []


def test_store_and_export_keep_no_secret(tmp_path, planted):
    """Everything a run writes (question, thoughts, inputs, observations, answer) is redacted on
    its way into the database and again on its way out of it."""
    _, files, _ = planted
    store = open_store(tmp_path / "runs.db")
    all_entries = []
    try:
        for n, (path, entries) in enumerate(files.items()):
            run_id = f"run-{n}"
            text = path.read_text(encoding="utf-8")
            first = entries[0]
            store.record(ev.RunStarted(run_id, f"why does this fail?\n{first.text}", MODEL, SETTINGS, time.time(), "0.1.0"))
            store.record(ev.StepRecorded(run_id, 0, time.time(), f"I saw:\n{first.text}", "read_file",
                                         {"path": str(path), "password": first.canaries[0]}, "ok", text,
                                         text.splitlines()[0], None, ""))
            store.record(ev.RunEnded(run_id, ev.FINISHED, f"the config holds:\n{entries[-1].text}", {"line": entries[-1].text},
                                     "", 1, 0, 0, 0, 1.0, time.time()))
            all_entries += entries
    finally:
        store.close()
    assert _leaks(all_entries, _database_text(tmp_path / "runs.db")) == []
    reader = open_store(tmp_path / "runs.db", readonly=True)
    try:
        runs = [reader.get_run(f"run-{n}") for n in range(len(files))]
    finally:
        reader.close()
    for anonymize in (False, True):
        out = io.StringIO()
        export.write(runs, out, fmt="jsonl", anonymize=anonymize)
        assert _leaks(all_entries, out.getvalue()) == []


def test_ordinary_log_lines_stay_readable():
    lines = corpus.ordinary_lines(10_000, seed=7)
    changed = [line for line in lines if redact(line) != line]
    assert len(changed) <= len(lines) // 100, changed[:5]
    sample = "\n".join(lines[:200])
    out = redact(sample)
    import re
    for pattern in (r"[0-9a-f]{64}", r"[0-9a-f]{40}", r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                    r"\d+\.\d+\.\d+\.\d+", r"/var/lib/docker/overlay2/[0-9a-f]{64}/merged", r"SHA256:[A-Za-z0-9+/]{43}"):
        found = set(re.findall(pattern, sample))
        assert found and found == set(re.findall(pattern, out)), pattern
