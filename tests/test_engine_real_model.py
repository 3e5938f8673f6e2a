"""The engine with real GGUF models through llama.cpp, the real tools and a real CPU hog.

Kept short on purpose (few steps): the whole suite must stay fast on a 2-core machine.
- SmolLM2-135M: a run ends within its step limit, every step the model wrote parses and fits the
  schema of the action it chose, and the transcript is reused from the KV cache between steps.
- SmolLM2-135M: the next question on the same loaded model reuses the system prompt from the cache.
- Qwen2.5-Coder-1.5B (the default model): with a real CPU hog (a process with a distinctive name
  started here and re-parented, so it is not "the appliance itself"), the run finishes within its
  limit with every step parsing, and its answer names the hog (a hard assertion; why not 0.5B: see
  the test's docstring).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from appliance.agent import events as ev
from appliance.agent.actions import FINISH, action_input_schemas
from appliance.agent.engine import Engine
from appliance.agent.settings import EngineSettings
from appliance.config import resolve_paths
from appliance.tools.registry import default_registry
from appliance.tools.schema import validate

pytestmark = [pytest.mark.model, pytest.mark.slow]

HOG_NAME = "spinburner"
HOG_CODE = """
import hashlib, threading
block = bytes(1 << 20)
def spin():
    while True:
        hashlib.sha256(block).digest()  # releases the GIL: each thread can use a whole core
for _ in range(1):  # one core: the model keeps the other, as on a laptop with a runaway process
    threading.Thread(target=spin, daemon=True).start()
threading.Event().wait()
"""


def _open(path: Path, tmp_path: Path):
    from appliance.llm.runtime import open_chat_model

    env = dict(os.environ, APPLIANCE_HOME=str(tmp_path / "home"))
    return open_chat_model(str(path), paths=resolve_paths(env=env), env=env)


def _run(model, question: str, settings: EngineSettings) -> list:
    engine = Engine(model, default_registry(), settings)
    return list(engine.run(question))


def _step_texts(events) -> dict[int, str]:
    texts: dict[int, str] = {}
    for event in events:
        if isinstance(event, ev.TextDelta) and event.kind == "step":
            texts[event.step] = texts.get(event.step, "") + event.text
    return texts


def _assert_steps_parse(events, settings: EngineSettings) -> None:
    schemas = action_input_schemas(default_registry().specs, settings)
    texts = _step_texts(events)
    recorded = [e for e in events if isinstance(e, ev.StepRecorded) and e.step >= 1]
    assert recorded and len(texts) == len(recorded)
    for record in recorded:
        value = json.loads(texts[record.step])  # the grammar made it valid JSON
        assert list(value) == ["thought", "action", "action_input"], value
        assert value["action"] in schemas, value
        if value["action"] == FINISH:  # a claim over the facts of its own step: the engine checked it against them
            assert not record.evaluation.startswith("invalid finish"), record.evaluation
        else:
            assert validate(value["action_input"], schemas[value["action"]]) is None, value
        assert not record.evaluation.startswith("unparsable"), record.evaluation


@pytest.fixture
def hog():
    """A CPU hog with a distinctive name, detached (own session: not our descendant, so the tools do
    not label it as the appliance). Where allowed, its scheduling weight is raised so it stays the
    top CPU user even on a machine shared with other busy processes."""
    bin_dir = Path(f"/tmp/appliance-engine-test-{os.getpid()}")
    bin_dir.mkdir(exist_ok=True)
    link = bin_dir / HOG_NAME
    if not link.exists():
        link.symlink_to(os.path.realpath(sys.executable))
    # started through a launcher that exits at once, so the hog is re-parented and is not our
    # descendant: the tools label the appliance's descendants "(appliance itself)" and the
    # headlines skip them, as they must for the model run itself
    launcher = ("import subprocess, sys; p = subprocess.Popen([sys.argv[1], '-c', sys.argv[2]], "
                "start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)")
    pid = int(subprocess.run([sys.executable, "-c", launcher, str(link), HOG_CODE], capture_output=True,
                             text=True, check=True, timeout=30).stdout)
    try:  # best effort: needs root or CAP_SYS_NICE; on a quiet machine it is the top user anyway
        Path(f"/proc/{pid}/autogroup").write_text("-10")
    except OSError:
        pass
    time.sleep(1.0)
    try:
        yield pid
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 10
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # re-parented: init reaps it
        link.unlink(missing_ok=True)
        bin_dir.rmdir()


def test_smollm2_run_ends_within_the_limit_and_every_step_parses(smollm2_path, tmp_path):
    model = _open(smollm2_path, tmp_path)
    settings = EngineSettings(max_steps=3)
    events = _run(model, "Which process is using the most CPU on this machine?", settings)
    end = events[-1]
    assert isinstance(end, ev.RunEnded), end
    assert end.status in (ev.FINISHED, ev.MAX_STEPS), end
    assert 1 <= end.steps <= 3
    _assert_steps_parse(events, settings)
    steps = [e for e in events if isinstance(e, ev.StepRecorded) and e.step >= 1]
    # the last step may only finish, so a run that reaches the limit still finishes there
    assert steps[-1].action == FINISH or end.status == ev.FINISHED
    for later in steps[1:]:
        assert later.stats.prompt_tokens_reused > later.stats.prompt_tokens_evaluated, later.stats


def test_the_next_question_reuses_the_system_prompt_from_the_kv_cache(smollm2_path, tmp_path):
    """The TUI keeps the model loaded between questions: the second question's first step must not
    evaluate the system prompt again, only its own question and evidence."""
    from appliance.agent.prompt import system_prompt
    from appliance.llm.base import Message

    model = _open(smollm2_path, tmp_path)
    settings = EngineSettings(max_steps=1)
    system_tokens = model.count_tokens([Message("system", system_prompt(default_registry().specs, settings))])
    _run(model, "Which process is using the most CPU on this machine?", settings)
    events = _run(model, "Is my disk full?", settings)
    first = [e for e in events if isinstance(e, ev.StepRecorded) and e.step == 1][0]
    assert first.stats.prompt_tokens_reused >= system_tokens - 8, (first.stats, system_tokens)
    assert first.stats.prompt_tokens_evaluated < first.stats.prompt_tokens_reused, first.stats


def test_qwen15_names_a_real_cpu_hog(qwen15_path, tmp_path, hog):
    """The run finishes within its limit, every step parses, and the model's own answer (not one
    the engine made from the evidence) names the hog.

    Qwen 1.5B, the default model, not 0.5B: on a quiet machine Qwen 0.5B named the hog in 10 of its
    first 10 runs here, then, once the answer check got stricter, copied the prompt's battery
    example ("The fan is at 50.1% and not plugged in, with about 41 seconds left.") in about one
    run in four; the engine refused the copy and replaced the answer, so the model's own answer did
    not name the hog. Qwen 1.5B named the hog in every full-eval cpu_hog case (6 of 6)."""
    model = _open(qwen15_path, tmp_path)
    settings = EngineSettings(max_steps=4)
    events = _run(model, "My computer's fan is loud and everything is slow. Which process is using the CPU?",
                  settings)
    end = events[-1]
    assert isinstance(end, ev.RunEnded) and end.status == ev.FINISHED, end
    assert end.steps <= 4
    _assert_steps_parse(events, settings)
    final = [e for e in events if isinstance(e, ev.FinalAnswer)][-1]
    named = HOG_NAME in json.dumps(dict(end.result)) or str(hog) in json.dumps(dict(end.result))
    named = named or HOG_NAME in end.answer  # the prose answer names it (the structured result may not)
    trace = [(e.step, e.action, e.action_input, e.evaluation) for e in events if isinstance(e, ev.StepRecorded)]
    assert named and not final.forced, (
        f"Qwen 1.5B did not name the hog {HOG_NAME} (pid {hog}): {end.answer!r} {dict(end.result)}; steps: {trace}")


def test_ask_command_with_a_real_model(smollm2_path, tmp_path):
    env = dict(os.environ, APPLIANCE_HOME=str(tmp_path / "home"))
    proc = subprocess.run(
        [sys.executable, "-m", "appliance.cli", "ask", "How full are the disks?", "--model", str(smollm2_path),
         "--max-steps", "2", "--json", "--db", str(tmp_path / "runs.db")],
        capture_output=True, text=True, env=env, timeout=600,
    )
    data = json.loads(proc.stdout)
    assert data["status"] in ("finished", "max_steps"), (data, proc.stderr[-500:])
    assert data["steps"] <= 2 and data["model"] and data["prompt_tokens"] > 0
    assert proc.returncode == (0 if data["status"] == "finished" and data["answer"] else 1)
    assert "Traceback" not in proc.stderr
