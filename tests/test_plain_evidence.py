"""Every line a person reads as Evidence is plain words: no `key=value`, no `headline:` or `note`,
no `[ok]`, no snake_case key, no family, tool or flag name.

Run for real on this machine: every tool of the registry and every analyzer (real psutil, real
files planted in tmp_path), each reading rendered as the engine renders it, numbered as facts, and
said as the person reads it (`evidence_of`); then the engine's own answers through `ask`, a
finished one and a forced "could not settle" one. A word that is the machine's own (a value the
reading holds, a path, a process's name) may look like a label; a word the renderer wrote may not.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from typing import Any, Iterable

import psutil
import pytest

import appliance.llm.runtime as runtime
from appliance.agent.facts import FactBook
from appliance.agent.finishing import evidence_of
from appliance.agent.place_looks import place_verdicts
from appliance.agent.outcome import render_tool_result, render_with_headline
from appliance.agent.plain_words import plain_reading
from appliance.agent.settings import EngineSettings
from appliance.agent.snapshot import take_snapshot
from appliance.agent.tool_call import context_of
from appliance.analyzers import ANALYZERS, Readings, run_all
from appliance.analyzers.base import Finding
from appliance.analyzers.network import port_finding
from appliance.cli import main
from appliance.llm.fake import ScriptedModel
from appliance.store import open_store
from appliance.tools.base import ok
from appliance.tools.paths import PathPolicy
from appliance.tools.procs import label_records
from appliance.tools.registry import TOOL_FUNCTIONS, default_registry

SEVERITY_TAG = re.compile(r"\[(ok|warning|critical|unknown)\]")
PAIR = re.compile(r"\S*\w=\w\S*")
SNAKE = re.compile(r"(?<![\w/.-])[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+(?![\w/])")
FAMILIES = tuple(a.family for a in ANALYZERS)
TOOLS = tuple(f.__tool__.name for f in TOOL_FUNCTIONS)  # type: ignore[attr-defined]


def strings_of(data: Any) -> list[str]:
    """Every string value a reading holds, however deep (its keys are the renderer's, not data)."""
    if isinstance(data, dict):
        return [s for v in data.values() for s in strings_of(v)]
    if isinstance(data, (list, tuple)):
        return [s for v in data for s in strings_of(v)]
    return [] if data is None or isinstance(data, bool) else [str(data)]


def flag_kinds(data: Any) -> list[str]:
    """The rule names of the flags a reading carries (`kind` beside `severity` and `says`)."""
    if isinstance(data, dict):
        own = [str(data["kind"])] if {"kind", "severity", "says"} <= set(data) else []
        return own + [k for v in data.values() for k in flag_kinds(v)]
    if isinstance(data, list):
        return [k for v in data for k in flag_kinds(v)]
    return []


SEEN: set[str] = set()


def machine_words() -> set[str]:
    """The names of this machine's processes, now and whenever asked before (a verdict names a
    process in its sentence that may be gone by the time the line is checked)."""
    SEEN.update(p.info["name"] for p in psutil.process_iter(["name"]) if p.info.get("name"))
    return SEEN


UNIT_KEY = re.compile(r"(?<![\w.])([a-z][a-z0-9]*(?:_[a-z0-9]+)*_(?:percent|pct|seconds|bytes|mhz|mbps|ms|mb|gb))=([\d.]+)(?!\S)")
FLAG_KEY = re.compile(r"(?<![\w.])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)=(yes|no)(?!\S)")


def dumps_of(text: str) -> list[str]:
    """How the model's lines in `text` would read as a key=value dump in words: a key's words and its
    bare value, a number without its unit ("used percent 23.4") or a yes/no ("read only no")."""
    pairs = UNIT_KEY.findall(text) + FLAG_KEY.findall(text)
    return [f"{key.replace('_', ' ')} {value}" for key, value in pairs]


def labels_in(line: str, data: Iterable[str], rules: Iterable[str] = (), dumps: Iterable[str] = ()) -> list[str]:
    """What in `line` is a label, not words: each problem as a short description."""
    data = [d for d in data if d]
    words = machine_words()

    def the_machines(token: str) -> bool:
        return "/" in token or token.strip("(),.:;'\"") in words or any(token in d for d in data)

    problems = []
    for token in PAIR.findall(line):
        if not the_machines(token):
            problems.append(f"key=value {token!r}")
    for token in SNAKE.findall(line):
        if not the_machines(token):
            problems.append(f"snake_case {token!r}")
    if "headline:" in line or re.search(r"\bnote[=:]", line):
        problems.append("headline/note label")
    if SEVERITY_TAG.search(line):
        problems.append("severity tag")
    for name in FAMILIES:
        if line.startswith(f"{name}:") or ("_" in name and re.search(rf"(?<![\w/.-]){name}(?![\w/])", line)):
            problems.append(f"family {name!r}")
    for dump in dumps:
        if re.search(rf"(?<![\w.]){re.escape(dump)}(?![\w.])", line):
            problems.append(f"key said with its bare value {dump!r}")
    for name in (*TOOLS, *rules):
        if "_" in name and re.search(rf"(?<![\w/.-]){re.escape(name)}(?![\w/])", line):
            problems.append(f"internal name {name!r}")
    return problems


# -- the readings --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    """A folder with what the path tools read: a log with an error, a config file, a big file."""
    root = tmp_path_factory.mktemp("plain")
    (root / "app.log").write_text("2026-01-01 10:00:00 app started\n2026-01-01 10:00:05 ERROR cannot open cache\n")
    (root / "app.conf").write_text("# settings\nport = 8080\nworkers=4\n")
    data = root / "data"
    data.mkdir()
    (data / "big.bin").write_bytes(os.urandom(1024) * 11 * 1024)  # 11 MiB, really on the disk
    (data / "small.txt").write_text("hello\n")
    return root


@pytest.fixture(scope="module")
def listener():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    yield sock.getsockname()[1]
    sock.close()


def arguments(name: str, example: dict, root: Path, port: int) -> dict:
    """The tool's own example, pointed at the planted files and at things this machine has."""
    paths = {"read_log": root / "app.log", "read_file": root / "app.conf", "inspect_path": root / "app.conf"}
    args = dict(example)
    if "path" in args:
        args["path"] = str(paths.get(name, root / "data"))
    if name == "largest_files":
        args["min_size_mb"] = 1
    if name == "growth":
        args.update(path=str(root / "data"), seconds=1.0)
    overrides = {"process_tree": {"name": "python"}, "inspect_process": {"target": "1"},
                 "process_details": {"pid": 1}, "inspect_user": {"user": "root"},
                 "inspect_program": {"program": "python3"}, "listening_reach": {"port": port},
                 "name_resolution": {"name": "localhost"}, "path_lookup": {"path": str(root / "app.conf"), "user": "root"}}
    args.update(overrides.get(name, {}))
    return args


def more_calls(root: Path) -> list[tuple[str, dict]]:
    """Other shapes of the same tools' readings: an error with its hint, a folder's profile, every
    socket, processes by memory and by name, a log's errors only."""
    return [("read_log", {"path": str(root / "missing.log")}), ("inspect_path", {"path": str(root / "data")}),
            ("network_connections", {"kind": "all", "state": "all"}), ("top_processes", {"sort_by": "memory", "n": 5}),
            ("inspect_process", {"target": "python"}), ("read_log", {"path": str(root / "app.log"), "level": "error"}),
            ("list_dir", {"path": str(root)}), ("dir_sizes", {"path": str(root), "depth": 2, "top": 10})]


def person_lines(book: FactBook) -> list[tuple[str, str]]:
    """Each fact as the person reads it under the answer (the appliance's own are never shown),
    beside the line the model read."""
    return [(line, fact.text) for fact in book.facts for line in evidence_of([fact])]


def test_every_tool_reading_reads_as_plain_words(planted, listener):
    machine_words()
    registry = default_registry([planted])
    assert len(registry.specs) == len(TOOL_FUNCTIONS) == 29
    budget = EngineSettings().observation_token_budget
    self_pids = frozenset({os.getpid()})
    found = {}
    calls = [(spec.name, arguments(spec.name, dict(spec.example), planted, listener)) for spec in registry.specs]
    calls += more_calls(planted)
    for name, args in calls:
        result = registry.call(name, args)
        status, body, _ = render_tool_result(result, self_pids, budget)
        book = FactBook(self_pids)
        book.number_body(name, body, status, context_of(args))
        data = strings_of(result.get("data")) + [str(v) for v in args.values()]
        rules = flag_kinds(result.get("data"))
        for line, text in person_lines(book):
            problems = labels_in(line, data, rules, dumps_of(text))
            if problems:
                found.setdefault(name, []).append((line, problems))
    assert not found, "\n".join(f"{tool}: {line}\n    {problems}" for tool, rows in found.items()
                                for line, problems in rows)


def test_the_snapshot_reads_as_plain_words():
    self_pids = frozenset({os.getpid()})
    data = label_records(take_snapshot(self_pids), self_pids)
    status, body, _ = render_with_headline(ok(data), EngineSettings().observation_token_budget)
    book = FactBook(self_pids)
    book.number_body("snapshot", body, status)
    found = [(line, labels_in(line, strings_of(data), dumps=dumps_of(text))) for line, text in person_lines(book)]
    assert len(found) > 3 and not [row for row in found if row[1]], found


def finding_strings(finding: Finding) -> list[str]:
    standout = [finding.standout.name] if finding.standout else []
    return strings_of(dict(finding.values)) + [finding.culprit or "", finding.path or "", *standout]


def test_every_verdict_reads_as_plain_words(planted, listener):
    machine_words()
    readings = Readings(policy=PathPolicy.default([planted]))
    places = [f for path in (planted / "app.log", planted / "app.conf", planted / "data")
              for storage in (True, False) for f in place_verdicts(str(path), readings, storage=storage)]
    findings = run_all(readings, timeout=10.0) + [port_finding(listener, readings), port_finding(9, readings)] + places
    assert {f.family for f in places} >= {"log_errors"}
    assert {f.family for f in findings} >= set(FAMILIES) - {"listening"}
    book = FactBook(readings.self_pids)
    found = []
    for finding in findings:
        fact = book.add_finding(finding)
        for line in evidence_of([fact]):
            problems = labels_in(line, finding_strings(finding))
            if problems:
                found.append((finding.family, line, problems))
    assert not found, "\n".join(f"{family}: {line}\n    {problems}" for family, line, problems in found)


# -- what `ask` prints ---------------------------------------------------------------------------

@pytest.fixture
def scripted(monkeypatch):
    def install(replies):
        monkeypatch.setattr(runtime, "open_chat_model",
                            lambda spec, *, paths, verbose=False, **_: ScriptedModel(replies, name="scripted"))
    return install


def _printed(out: str, db: Path) -> tuple[list[str], list[str]]:
    """The answer and evidence lines `ask` printed, and the dumps the run's observations would make."""
    store = open_store(db, readonly=True)
    run = store.get_run(store.list_runs(limit=1)[0].id)
    store.close()
    return _answer_block(out), dumps_of("\n".join(step.observation for step in run.steps))


def _answer_block(out: str) -> list[str]:
    """The answer and its evidence lines as `ask` prints them."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Answer"))
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("time ")), len(lines))
    return [line.strip().lstrip("- ") for line in lines[start + 1:end] if line.strip() and line != "Evidence:"]


def _disk_finish(messages, schema) -> dict:
    """A finish citing the first filesystem line of a real disk_usage reading."""
    line = next(l for m in reversed(messages) for l in m.content.splitlines() if "mount=" in l)
    free = re.search(r'free="([^"]+)"', line).group(1)  # type: ignore[union-attr]
    mount = re.search(r"mount=(\S+)", line).group(1)  # type: ignore[union-attr]
    return {"thought": "The disk reading answers it.", "action": "finish",
            "action_input": {"stance": "value", "cites": [line.split(" ", 1)[0]], "subject": mount, "value": free,
                             "answer": f"{free} is free on {mount}."}}


def _made_up_finish(messages, schema) -> dict:
    """A finish whose figure no fact shows: refused, and refused again when written again."""
    done = _disk_finish(messages, schema)
    done["action_input"].update(value="9876.5 GiB", answer="9876.5 GiB is free.")
    return done


DISK = {"thought": "Look at the disks.", "action": "disk_usage", "action_input": {}}


def test_a_finished_answer_and_its_evidence_as_ask_prints_them(scripted, tmp_path, capsys):
    scripted([DISK, _disk_finish])
    main(["ask", "How much space is left on the disks?", "--db", str(tmp_path / "runs.db")])
    block, dumps = _printed(capsys.readouterr().out, tmp_path / "runs.db")
    assert len(block) >= 2 and " is " in block[1] and "% full" in block[1]
    mounts = [p.mountpoint for p in psutil.disk_partitions(all=True)]
    for line in block:
        assert not labels_in(line, mounts, dumps=dumps), line


def test_a_forced_answer_and_its_evidence_as_ask_prints_them(scripted, tmp_path, capsys):
    scripted([DISK, _made_up_finish, _made_up_finish])
    main(["ask", "How much space is left on the disks?", "--db", str(tmp_path / "runs.db")])
    block, dumps = _printed(capsys.readouterr().out, tmp_path / "runs.db")
    assert block[0].startswith("I could not settle") and any("% full" in line for line in block)
    mounts = [p.mountpoint for p in psutil.disk_partitions(all=True)]
    for line in block:
        assert not labels_in(line, mounts, dumps=dumps), line


# -- the renderer on its own ---------------------------------------------------------------------

@pytest.mark.parametrize("line, said", [
    ('pid=4711 name=hogzilla cpu_percent=49.3', "hogzilla (pid 4711): 49.3 % CPU"),
    ("[warning] zombies: 7 zombie processes", "7 zombie processes"),
    ("headline: largest: /srv/cache 3.9 GiB (97%)", "largest: /srv/cache 3.9 GiB (97%)"),
    ('mount=/ type=ext4 size="252.0 GiB" used="180.0 GiB" free="72.0 GiB" used_percent=71.4 read_only=no',
     "/ is 71.4 % full: 72.0 GiB free of 252.0 GiB, type ext4, writable"),
    ('kind=immutable severity=warning says="/srv/x is immutable"', "/srv/x is immutable"),
    ('command="env A=1 run" exit_code=0', "command env A=1 run, exit code 0"),
    ("speed_mbps=- cache_hits_total=12 up=no", "cache hits total 12, down"),
    ('owner root="read, write"', "owner root read, write"),
    ("error: /srv/a does not exist; the last folder reached is /srv (list_dir shows what is there)",
     "error: /srv/a does not exist; the last folder reached is /srv"),
    ('temperatures="none are exposed here"', "temperatures: none are exposed here"),
])
def test_a_line_in_words(line, said):
    assert plain_reading(line) == said
