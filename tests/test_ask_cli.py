"""`appliance ask`: arguments, live and --json output, exit codes, recording, Ctrl+C.

The model is the scripted one (this tests the command, not the model); the store, the tools and the
engine are real. The real-model run of the command is in test_engine_real_model.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import appliance.llm.runtime as runtime
from appliance.cli import main
from appliance.errors import ModelError
from appliance.llm.fake import ScriptedModel
from appliance.store import open_store

OVERVIEW = {"thought": "Look at the machine first.", "action": "system_overview", "action_input": {}}


def finish_from_overview(messages, schema) -> dict:
    """A finish that cites the kernel line of the real system_overview observation."""
    observation = messages[-1].content
    line = next(l for l in observation.splitlines() if "kernel" in l)
    kernel = line.split("kernel=")[1].split()[0].strip('"') if "kernel=" in line else line.strip()
    fact = line.split(" ", 1)[0]
    return {"thought": "The overview answers it.", "action": "finish",
            "action_input": {"stance": "value", "cites": [fact], "subject": "", "value": kernel,
                             "answer": f"This machine runs kernel {kernel}."}}


@pytest.fixture
def scripted(monkeypatch):
    """Make `open_chat_model` hand out a scripted model with the given replies."""
    holder: dict = {}

    def install(replies, **kw):
        def fake_open(spec, *, paths, verbose=False, **_):
            holder["spec"] = spec
            holder["model"] = ScriptedModel(replies, name="scripted-test", **kw)
            return holder["model"]

        monkeypatch.setattr(runtime, "open_chat_model", fake_open)
        return holder

    return install


def _ask(tmp_path: Path, *extra: str) -> list[str]:
    return ["ask", "What kernel does this machine run?", "--db", str(tmp_path / "runs.db"), *extra]


def test_json_output_is_one_object_and_the_run_is_recorded(scripted, tmp_path, capsys):
    holder = scripted([OVERVIEW, finish_from_overview])
    code = main(_ask(tmp_path, "--json", "--model", "tiny"))
    out = capsys.readouterr().out
    data = json.loads(out)  # exactly one JSON document on stdout
    assert code == 0 and holder["spec"] == "tiny"
    assert set(data) >= {"run_id", "status", "answer", "result", "steps", "prompt_tokens",
                         "completion_tokens", "seconds", "model"}
    assert data["status"] == "finished" and data["steps"] == 2 and data["model"] == "scripted-test"
    assert data["answer"].startswith("This machine runs kernel ") and data["recorded"] is True
    assert data["answer"].split()[-1].rstrip(".") == os.uname().release
    store = open_store(tmp_path / "runs.db", readonly=True)
    run = store.get_run(data["run_id"])
    assert run["status"] == "finished" and run["answer"] == data["answer"]
    assert [s["action"] for s in run["steps"]] == ["snapshot", "system_overview", "finish"]


def test_live_output_shows_steps_and_answer(scripted, tmp_path, capsys):
    scripted([OVERVIEW, finish_from_overview])
    assert main(_ask(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "step 1/8" in out and "action:  system_overview {}" in out and "result:  ok:" in out
    assert "Answer:" in out and "This machine runs kernel" in out and "finished — 2 steps" in out


def test_max_steps_reaches_the_engine_and_a_run_without_answer_exits_nonzero(scripted, tmp_path, capsys):
    holder = scripted([OVERVIEW])
    code = main(_ask(tmp_path, "--json", "--max-steps", "1"))
    data = json.loads(capsys.readouterr().out)
    # one step: the only step is the last one, so the grammar allows only finish; the scripted
    # model ignores that, so the run ends at the limit with a forced answer
    schema = holder["model"].calls[0][1]
    assert schema["properties"]["action"]["const"] == "finish"
    assert data["status"] == "max_steps" and data["forced"] is True and code == 1


def test_headless_run_cannot_ask(scripted, tmp_path, capsys):
    holder = scripted([OVERVIEW, finish_from_overview])
    assert main(_ask(tmp_path, "--json")) == 0  # stdin is not a terminal under pytest
    first_message = holder["model"].calls[0][0][1].content
    assert "Nobody can answer questions in this run" in first_message


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--max-steps", "0"], "--max-steps must be between 1 and 50"),
        (["--allow-path", "/definitely/not/here"], "is not an existing directory"),
    ],
)
def test_bad_arguments_are_one_line_errors(scripted, tmp_path, capsys, extra, message):
    scripted([])
    assert main(_ask(tmp_path, *extra)) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_empty_question_is_refused(scripted, tmp_path, capsys):
    scripted([])
    assert main(["ask", "  ", "--db", str(tmp_path / "r.db")]) == 2
    assert "the question is empty" in capsys.readouterr().err


def test_model_that_cannot_be_opened_is_one_line(monkeypatch, tmp_path, capsys):
    def broken(spec, **_):
        raise ModelError("model file /x.gguf is not a GGUF file")

    monkeypatch.setattr(runtime, "open_chat_model", broken)
    assert main(_ask(tmp_path, "--json")) == 3
    captured = capsys.readouterr()
    assert captured.err.strip() == "appliance: model file /x.gguf is not a GGUF file" and captured.out == ""


def test_run_answers_even_when_it_cannot_be_recorded(scripted, tmp_path, capsys):
    scripted([OVERVIEW, finish_from_overview])
    db_dir = tmp_path / "ro"
    db_dir.mkdir()
    db_dir.chmod(0o500)
    try:
        if os.access(db_dir, os.W_OK):
            pytest.skip("running as root: a read-only directory is still writable")
        code = main(["ask", "What kernel?", "--db", str(db_dir / "runs.db"), "--json"])
    finally:
        db_dir.chmod(0o700)
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert code == 0 and data["status"] == "finished" and data["recorded"] is False
    assert "the run could not be recorded" in captured.err


def test_run_answers_when_the_database_path_is_unusable(scripted, tmp_path, capsys):
    """Works as root too: the database path is a directory."""
    scripted([OVERVIEW, finish_from_overview])
    (tmp_path / "runs.db").mkdir()
    code = main(_ask(tmp_path, "--json"))
    captured = capsys.readouterr()
    assert code == 0 and json.loads(captured.out)["recorded"] is False
    assert "appliance: the run could not be recorded:" in captured.err


CTRL_C_SCRIPT = r"""
import sys
import appliance.llm.runtime as runtime
from appliance.llm.fake import ScriptedModel
step = {"thought": "x" * 190, "action": "system_overview", "action_input": {}}
runtime.open_chat_model = lambda spec, **kw: ScriptedModel([step] * 8, delay=0.05, piece_size=1)
from appliance.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_ctrl_c_stops_cleanly_and_records_the_run_as_cancelled(tmp_path):
    db = tmp_path / "runs.db"
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C_SCRIPT, "ask", "Why?", "--db", str(db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:  # wait until the model is generating step 1, however slow the machine
        seen.append(line)
        if line.startswith("step 1/"):
            break
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    out = "".join(seen) + out
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "stopping" in err
    assert "\ncancelled" in out
    run_id = out.strip().rsplit("run ", 1)[1].strip()
    run = open_store(db, readonly=True).get_run(run_id)
    assert run["status"] == "cancelled"
    assert [s["step"] for s in run["steps"]] == [0]  # the snapshot; the interrupted step is not recorded
