"""Durability under a real kill -9, and a reader reading while a writer writes (two processes).

The writer is a real child process recording runs through Store.record: alternately a run of the
real ReAct engine driven by a ScriptedModel (real tool calls, real events) and a synthetic run with
large observations (longer transactions, more chances to be killed inside one). After each step
returns from `record` — i.e. is committed — the child prints a digest of what it wrote. The test
kills it with SIGKILL at a random moment, then checks that every step it reported is in the file,
byte for byte, that the file passes `PRAGMA integrity_check`, and that opening the store marks the
run in flight `interrupted`. Each writer is forked, before it opens the store, from one process that
imported the store and the engine once (20 interpreters each importing them again were most of the
test's CPU; what is killed is still a whole process holding its own connection).
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from appliance.agent import events as ev
from appliance.store import open_store
from support.store import REPO

# The writers' server: imports once, then for each line on stdin ("engine" or "synthetic") forks a
# writer, which opens the store, prints READY and its pid, and records runs until it is killed; the
# server reaps it and prints EXIT and its exit code (after everything the writer printed).
CHILD = textwrap.dedent(r'''
    import hashlib, itertools, os, sys, time
    sys.path.insert(0, sys.argv[2])
    from appliance.agent import events as ev
    from appliance.llm.base import GenerationStats, ModelInfo
    from appliance.store import open_store
    from appliance.store.store import _dumps, _redact, cap_text
    try:  # what the engine's runs use, imported once here rather than in every writer
        import appliance.agent.engine, appliance.agent.settings, appliance.llm.fake, appliance.tools.base
        import appliance.tools.schema
    except ImportError:
        pass

    db_path = sys.argv[1]
    MODEL = ModelInfo("crash-model", "/m.gguf", 1, "cd" * 32, 2048)

    def digest(step):
        parts = [step.thought, step.action, _dumps(dict(step.action_input)), step.observation_status,
                 cap_text(_redact(step.observation))]
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()

    def synthetic(run_id):
        yield ev.RunStarted(run_id, "synthetic " + run_id, MODEL, {"max_steps": 50}, time.time(), "0.1.0")
        for n in range(40):
            yield ev.StepRecorded(run_id, n, time.time(), f"thought {n} " * 20, "probe", {"n": n}, "ok",
                                  (f"{run_id}:{n}:" + "observation line\n" * 700), f"summary {n}", None, "",
                                  GenerationStats(100, 50, 20, 0, 300.0, 10.0, 1, 2), 2.0)
        yield ev.RunEnded(run_id, "max_steps", "", {}, "", 40, 4000, 2000, 800, 1.0, time.time())

    def engine(run_id):
        from appliance.agent.engine import Engine
        from appliance.agent.settings import EngineSettings
        from appliance.llm.fake import ScriptedModel
        from appliance.tools.base import Registry, ToolSpec, ok
        from appliance.tools.schema import schema_from_signature

        def probe(n: int = 0):
            time.sleep(0.01)
            return ok(f"culprit=/srv/bigfile.log probe={n}\n" + "\n".join(f"line {i} of probe {n}" for i in range(60)))

        registry = Registry([ToolSpec("probe", "Probe something.", schema_from_signature(probe), probe, {"n": 1})])
        replies = [{"thought": f"probe {n}", "action": "probe", "action_input": {"n": n}} for n in range(1, 6)]
        replies.append({"thought": "done", "action": "finish",
                        "action_input": {"stance": "value", "cites": ["F2"], "subject": "/srv/bigfile.log", "value": "",
                                         "answer": "/srv/bigfile.log fills the disk"}})
        model = ScriptedModel(replies)
        settings = EngineSettings(max_steps=8, reflection=False, no_progress_steps=8)
        yield from Engine(model, registry, settings, snapshot=lambda pids: {"load": 0.1}).run("crash question")

    def write(mode):
        store = open_store(db_path)
        print("READY", os.getpid(), flush=True)
        for k in itertools.count():
            run_id = f"{mode}-{time.time_ns()}-{k}"
            source = engine if mode == "engine" else synthetic
            for event in source(run_id):
                store.record(event)
                if isinstance(event, ev.RunStarted):
                    print("RUN", event.run_id, flush=True)
                elif isinstance(event, ev.StepRecorded):
                    print("STEP", event.run_id, event.step, digest(event), flush=True)
                elif isinstance(event, ev.RunEnded):
                    print("END", event.run_id, flush=True)

    from appliance.tools.redact import redact
    redact("warm the secret scanner up")  # the secret engine's rules load once here, not in every child before its first commit
    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            try:
                write(line.strip())
            finally:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        print("EXIT", os.waitstatus_to_exitcode(status), flush=True)
''')


def engine_available() -> bool:
    try:
        import appliance.agent.engine  # noqa: F401
        import appliance.llm.fake  # noqa: F401
        return True
    except ImportError:
        return False


def stored_digest(conn: sqlite3.Connection, run_id: str, step: int) -> str | None:
    import hashlib

    row = conn.execute("SELECT thought, action, action_input, observation_status, observation FROM steps "
                       "WHERE run_id = ? AND step = ?", [run_id, step]).fetchone()
    if row is None:
        return None
    return hashlib.sha256("\x1f".join(row).encode()).hexdigest()


def parse_report(text: str) -> tuple[set[str], set[str], list[tuple[str, int, str]]]:
    started, ended, steps = set(), set(), []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "RUN":
            started.add(parts[1])
        elif len(parts) == 2 and parts[0] == "END":
            ended.add(parts[1])
        elif len(parts) == 4 and parts[0] == "STEP" and len(parts[3]) == 64:
            steps.append((parts[1], int(parts[2]), parts[3]))
    return started, ended, steps


@pytest.mark.slow
def test_sigkill_at_random_points_loses_no_committed_step_and_marks_the_run_interrupted(tmp_path):
    db_path = tmp_path / "crash.db"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    rng = random.Random(int(os.environ.get("STORE_CRASH_SEED", "0")) or None)
    modes = ["engine", "synthetic"] if engine_available() else ["synthetic"]
    kills, interrupted_total, steps_checked = 20, 0, 0
    deadline = time.monotonic() + 150  # ~15-30 s here; generous for a loaded CI machine
    errors = tmp_path / "writers.err"
    with errors.open("w") as err:
        server = subprocess.Popen([sys.executable, str(script), str(db_path), str(REPO)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        for i in range(kills):
            interrupted, steps = _kill_a_writer(server, modes[i % len(modes)], rng, db_path, errors)
            interrupted_total += interrupted
            steps_checked += steps
            assert time.monotonic() < deadline, "the crash test is taking too long for CI"
    finally:
        server.kill()
        server.wait()
    assert steps_checked > 20, "the children were killed before committing anything: the test proved little"
    assert interrupted_total >= kills // 2, "too few kills landed inside a run"
    # and the file is still a normal, searchable store
    store = open_store(db_path, readonly=True)
    assert store.list_runs(search="observation", limit=None)
    store.close()


def _kill_a_writer(server: subprocess.Popen, mode: str, rng: random.Random, db_path: Path,
                   errors: Path) -> tuple[int, int]:
    """One writer of `mode` forked by the server, killed with SIGKILL at a random moment, and the
    file checked after it: (1 if the run in flight was marked interrupted else 0, steps checked)."""
    server.stdin.write(mode + "\n")
    server.stdin.flush()
    ready = server.stdout.readline().split()
    assert ready[:1] == ["READY"], errors.read_text()
    time.sleep(rng.uniform(0.0, 0.5))
    os.kill(int(ready[1]), signal.SIGKILL)
    printed, line = [], ""
    for line in iter(server.stdout.readline, ""):
        if line.startswith("EXIT "):
            break
        printed.append(line)
    assert line.split() == ["EXIT", str(-signal.SIGKILL)], errors.read_text()
    started, ended, steps = parse_report("".join(printed))

    # every step the child saw committed is there, intact (before anything else touches the file)
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    for run_id, step, digest in steps:
        assert stored_digest(conn, run_id, step) == digest, f"step {step} of {run_id} lost or damaged"
    running_before = {r[0] for r in conn.execute("SELECT id FROM runs WHERE status = 'running'")}
    conn.close()

    # opening for writing recovers: the run in flight becomes interrupted, with its real totals
    store = open_store(db_path)
    assert store.integrity_checked, "an unclean shutdown must trigger PRAGMA integrity_check"
    assert set(store.recovered) == running_before
    assert store.list_runs(status=ev.RUNNING, limit=None) == []
    interrupted = 0
    for run_id in started - ended:  # the run in flight (its RunEnded may have committed unreported)
        run = store.get_run(run_id)
        if run_id in running_before:
            interrupted += 1
            assert run["status"] == ev.INTERRUPTED
            assert run["step_count"] == len(run["steps"]) and "stopped before the run ended" in run["error"]
        else:
            # its RunEnded committed before the kill: whatever status the engine gave is kept
            assert run["status"] not in (ev.RUNNING, ev.INTERRUPTED) and run["ended_at"], run
    store.close()
    return interrupted, len(steps)


WRITER = textwrap.dedent(r'''
    import sys, time
    sys.path.insert(0, sys.argv[3])
    from appliance.agent import events as ev
    from appliance.llm.base import GenerationStats, ModelInfo
    from appliance.store import open_store
    store = open_store(sys.argv[1])
    print("READY", flush=True)
    for k in range(int(sys.argv[2])):
        run_id = f"w-{k:04d}"
        store.record(ev.RunStarted(run_id, f"question {k} about zebras", ModelInfo("m"), {}, time.time(), "0"))
        for n in range(5):
            store.record(ev.StepRecorded(run_id, n, time.time(), f"zebra thought {n}", "probe", {"n": n}, "ok",
                                         "zebra observation " * 200, "", None, "", GenerationStats(10, 0, 5)))
            time.sleep(0.005)  # a run's pace, so the reader gets to watch it grow even on a fast disk
        store.record(ev.RunEnded(run_id, "finished", "zebras", {}, "", 5, 50, 0, 25, 0.1, time.time()))
    store.close()
    print("DONE", flush=True)
''')


def test_a_reader_reads_while_a_writer_writes(tmp_path):
    """The TUI's history (a reader) keeps working while a run is being written by another process."""
    db_path = tmp_path / "shared.db"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    total = 60
    writer = subprocess.Popen([sys.executable, str(script), str(db_path), str(total), str(REPO)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "READY", writer.stderr.read()
        reader = open_store(db_path, readonly=True)
        seen_counts, reads = [], 0
        while writer.poll() is None:
            runs = reader.list_runs(limit=None)
            found = reader.list_runs(search="zebra", limit=5)
            if runs:
                newest = reader.get_run(runs[0]["id"])
                assert [s["step"] for s in newest["steps"]] == list(range(len(newest["steps"])))
                assert all(s["observation"].startswith("zebra observation") for s in newest["steps"])
            reader.stats()
            seen_counts.append(len(runs))
            reads += 1
            assert len(found) <= 5
        out, err = writer.communicate(timeout=60)
        assert writer.returncode == 0 and "DONE" in out, err
        final = reader.list_runs(limit=None)
        reader.close()
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    assert len(final) == total and all(r["status"] == "finished" for r in final)
    assert reads >= 5, "the reader hardly ran while the writer wrote"
    assert seen_counts == sorted(seen_counts), "a reader saw runs disappear"
    assert len(set(seen_counts)) > 2, "the reader never saw the writer's progress"
