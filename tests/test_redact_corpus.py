"""The redactor against a corpus of secret shapes (tests/support/secret_corpus.py: the public rule sets of
gitleaks and detect-secrets plus the shapes of issue 15), written in real files of eleven formats
and read back through every tool that shows text, the store and the export: nothing of any secret
may come back (real process command lines and mount sources: test_redact_corpus_live.py). And the
other side: ordinary log lines stay as they were (a redactor that masks everything is not a fix).

Before this change 28 of 78 planted shapes came back in clear (issue 15); the first commit of the new
redactor made this file pass."""

from __future__ import annotations

import io
import sqlite3
import time
from collections import defaultdict
from pathlib import Path

import pytest

from support import secret_corpus as corpus
from appliance.agent import events as ev
from appliance.eval.records import leaked_in_text
from appliance.store import export, open_store
from appliance.tools.context import ToolContext
from appliance.tools.paths import PathPolicy
from appliance.tools.redact import redact
from appliance.tools.registry import build_registry
from support.store import MODEL, SETTINGS

ENTRIES = corpus.entries(seed=15)
FILE_CHARS = 4200  # each file's lines fit in one read_log result (5,000 characters)


def test_the_corpus_is_as_large_as_the_issue_asks():
    assert len({e.shape for e in ENTRIES}) >= 400  # issue 33 (200 before it)
    assert len({e.fmt for e in ENTRIES}) >= 12
    assert len({e.shape for e in ENTRIES if e.shape.startswith("i33:")}) >= 180


def _files(root: Path) -> dict[Path, list[corpus.Entry]]:
    """The entries written into files of their format, a few thousand characters each, each entry
    followed by two ordinary lines (a file of mostly secrets is refused whole: test_secret_files.py)."""
    groups: dict[Path, list[corpus.Entry]] = defaultdict(list)
    sizes: dict[str, int] = defaultdict(int)
    counters: dict[str, int] = defaultdict(int)
    ordinary = iter(corpus.ordinary_lines(2 * len(ENTRIES), seed=11))
    texts: dict[corpus.Entry, str] = {}
    for entry in ENTRIES:
        texts[entry] = "\n".join((entry.text, next(ordinary), next(ordinary)))
        if sizes[entry.fmt] + len(texts[entry]) > FILE_CHARS or entry.fmt == "keys":
            counters[entry.fmt] += 1
            sizes[entry.fmt] = 0
        sizes[entry.fmt] += len(texts[entry]) + 1
        groups[root / f"{entry.fmt}-{counters[entry.fmt]:03d}.{'log' if entry.fmt == 'log' else 'txt'}"].append(entry)
    for path, entries in groups.items():
        path.write_text("\n".join(texts[e] for e in entries) + "\n", encoding="utf-8")
    return groups


@pytest.fixture(scope="module")
def corpus_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    files = _files(root)
    registry = build_registry(ToolContext(policy=PathPolicy.confined([root])))
    return root, files, registry


def _database_text(path: Path) -> str:
    """Every value of every table (search index tables included), as one text."""
    conn = sqlite3.connect(path)
    try:
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return "\n".join(str(value) for table in tables for row in conn.execute(f'SELECT * FROM "{table}"')
                         for value in row if value is not None)
    finally:
        conn.close()


def _refused_whole(got: dict, entries) -> bool:
    """A file that is a credential store by its content (a key block alone) is refused whole
    (tools/credential_content.py): nothing of it is shown, so nothing can leak."""
    if got["status"] != "denied":
        return False
    assert "refused whole" in got["error"] and corpus.leaks(entries, got) == [], got
    return True


def test_redact_itself_masks_every_entry():
    assert [f"{e.shape} ({e.fmt})" for e in ENTRIES if leaked_in_text(e.canaries, redact(e.text))] == []


def test_read_file_shows_no_secret(corpus_files):
    _, files, registry = corpus_files
    leaks = []
    for path, entries in files.items():
        got = registry.call("read_file", {"path": str(path), "max_bytes": 32768})
        if _refused_whole(got, entries):
            continue
        assert got["status"] == "ok" and got["data"]["truncated"] is False, got
        leaks += corpus.leaks(entries, got)
    assert leaks == []


def test_read_log_shows_no_secret_in_any_line(corpus_files):
    _, files, registry = corpus_files
    leaks = []
    for path, entries in files.items():
        got = registry.call("read_log", {"path": str(path), "lines": 200})
        if _refused_whole(got, entries):
            continue
        assert got["status"] == "ok", got
        assert "lines_omitted" not in got["data"], f"{path.name}: not every line was shown, so not every line was checked"
        leaks += corpus.leaks(entries, got)
    assert leaks == []


def test_read_log_pattern_cannot_confirm_a_guessed_secret(corpus_files):
    """Before: the pattern ran on the raw lines, so a match (even redacted) confirmed the guess."""
    _, files, registry = corpus_files
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
    assert corpus.leaks(named, got) == []


def test_store_and_export_keep_no_secret(tmp_path, corpus_files):
    """Everything a run writes (question, thoughts, inputs, observations, answer) is redacted on
    its way into the database and again on its way out of it."""
    _, files, _ = corpus_files
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
    assert corpus.leaks(all_entries, _database_text(tmp_path / "runs.db")) == []
    reader = open_store(tmp_path / "runs.db", readonly=True)
    try:
        runs = [reader.get_run(f"run-{n}") for n in range(len(files))]
    finally:
        reader.close()
    for anonymize in (False, True):
        out = io.StringIO()
        export.write(runs, out, fmt="jsonl", anonymize=anonymize)
        assert corpus.leaks(all_entries, out.getvalue()) == []


def test_ordinary_log_lines_stay_readable():
    lines = corpus.ordinary_lines(10_000, seed=7) + corpus.ordinary_config_lines(2_000, seed=8)
    changed = [line for line in lines if redact(line) != line]
    assert len(changed) <= len(lines) * 0.005, changed[:5]  # issue 33: at most 0.5 %
    sample = "\n".join(lines[:200])
    out = redact(sample)
    import re
    for pattern in (r"[0-9a-f]{64}", r"[0-9a-f]{40}", r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                    r"\d+\.\d+\.\d+\.\d+", r"/var/lib/docker/overlay2/[0-9a-f]{64}/merged", r"SHA256:[A-Za-z0-9+/]{43}"):
        found = set(re.findall(pattern, sample))
        assert found and found == set(re.findall(pattern, out)), pattern


def test_a_secret_pasted_into_a_question_never_reaches_the_database_or_an_anonymized_export(tmp_path):
    """Every shape of issue 33 pasted into a question (the engine redacts it too: test_redact_leaks.py),
    the question read back from every table (the search index included) and from `runs export
    --anonymize`."""
    pasted = [e for e in ENTRIES if e.shape.startswith("i33:")]
    store = open_store(tmp_path / "runs.db")
    try:
        for n, entry in enumerate(pasted):
            run_id = f"q-{n}"
            store.record(ev.RunStarted(run_id, f"it fails since I ran this:\n{entry.text}\nwhy?", MODEL, SETTINGS,
                                       time.time(), "0.1.0"))
            store.record(ev.RunEnded(run_id, ev.FINISHED, "done", {}, "", 0, 0, 0, 0, 1.0, time.time()))
    finally:
        store.close()
    assert corpus.leaks(pasted, _database_text(tmp_path / "runs.db")) == []
    reader = open_store(tmp_path / "runs.db", readonly=True)
    try:
        runs = [reader.get_run(f"q-{n}") for n in range(len(pasted))]
    finally:
        reader.close()
    out = io.StringIO()
    export.write(runs, out, fmt="jsonl", anonymize=True)
    assert len(pasted) >= 180 and corpus.leaks(pasted, out.getvalue()) == []
