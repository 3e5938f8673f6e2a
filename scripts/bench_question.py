#!/usr/bin/env python3
"""Where a question's time goes, cold and warm, through the appliance and a plain chat loop (issue 14).

In one run, on one model, for each question:

  appliance, first start   `appliance ask --json` in a new process with an empty prompt cache
  appliance, cold          `appliance ask --json` in a new process (the prompt cache written above)
  appliance, warm          the engine in this process, model loaded and the system prompt in context
  plain, cold              a new process: llama-cpp-python's `Llama` and `create_chat_completion`
                           in a small ReAct loop (same system prompt, same tools, no grammar)
  plain, warm              the same loop in this process with the model loaded

Each prints its seconds by phase (wall clock of the process, model load, prompt evaluation,
generation, tools, the rest; and when the first token came after the load) and the ratios that matter: cold/warm for the appliance (issue 14
wants ≤ 1.3 with the cache) and appliance/plain. Usage:

  .venv/bin/python scripts/bench_question.py --model tiny              # quick check
  .venv/bin/python scripts/bench_question.py --max-steps 3             # the default model
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUESTIONS = ["Which process is using the most memory?", "How full is my disk?"]
WARM_UP = "What is this machine?"  # not one of the questions: warm means the system prompt only
# llama-cpp-python's own default (half the logical CPUs): a fixed 2 on two shared cores made the plain
# loop crawl (its threads wait for each other whenever another process takes a core).
PLAIN_THREADS = max(1, (os.cpu_count() or 2) // 2)
PHASES = ("wall", "model_load", "prompt", "generation", "tools", "engine", "first_token")
# first_token: seconds from the loaded model (the run's start) to its first generated token; not a part of wall


# ---- the plain llama-cpp-python loop --------------------------------------------------------------
def plain_loop(llama, question: str, max_steps: int) -> dict:
    """A ReAct loop as a plain agent would write it: chat completion, parse the JSON, run the tool."""
    from appliance.agent.prompt import system_prompt
    from appliance.agent.settings import EngineSettings
    from appliance.tools.registry import default_registry

    registry = default_registry()
    messages = [{"role": "system", "content": system_prompt(registry.specs, EngineSettings(max_steps=max_steps))},
                {"role": "user", "content": f"Question: {question}\nReply with one JSON object."}]
    times: dict[str, float] = {"prompt": 0.0, "generation": 0.0, "tools": 0.0}
    steps = 0
    for steps in range(1, max_steps + 1):
        started = time.perf_counter()
        first = None
        text = ""
        for chunk in llama.create_chat_completion(messages, max_tokens=200, temperature=0.0, stream=True):
            if first is None:
                first = time.perf_counter()
            text += chunk["choices"][0]["delta"].get("content") or ""
        done = time.perf_counter()
        times["prompt"] += (first or done) - started
        times.setdefault("first_token", (first or done) - started)  # the first step's: no tool runs before it
        times["generation"] += done - (first or done)
        messages.append({"role": "assistant", "content": text})
        match = re.search(r"\{.*\}", text, re.S)
        try:
            reply = json.loads(match.group(0)) if match else {}
        except ValueError:
            reply = {}
        action = reply.get("action") if isinstance(reply, dict) else None
        if action == "finish" or not action:
            break
        started = time.perf_counter()
        result = registry.call(action, reply.get("action_input") or {})
        times["tools"] += time.perf_counter() - started
        observation = json.dumps(result, default=str)[:2000]
        messages.append({"role": "user", "content": f"<observation>{observation}</observation>"})
    return {**times, "steps": steps}


def plain_child(model_path: str, question: str, max_steps: int, n_ctx: int) -> None:
    """The cold plain run: a process of its own that loads the model and asks once."""
    started = time.perf_counter()
    from appliance.llm.runtime import load_llama

    loaded = time.perf_counter()
    llama = load_llama(model_path, n_ctx=n_ctx, n_threads=PLAIN_THREADS)
    load = time.perf_counter() - loaded
    result = plain_loop(llama, question, max_steps)
    print(json.dumps({**result, "model_load": load, "imports": loaded - started}))


# ---- the measurements -----------------------------------------------------------------------------
def timed_process(command: list[str], env: dict) -> tuple[float, dict]:
    started = time.perf_counter()
    proc = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - started
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"bench_question: {' '.join(command[:4])} gave no JSON: {proc.stderr.strip()[-300:]}")
    return wall, json.loads(lines[-1])


def appliance_cold(question: str, args, env: dict) -> dict:
    command = [sys.executable, "-m", "appliance.cli", "ask", question, "--json", "--no-ask",
               "--max-steps", str(args.max_steps)] + (["--model", args.model] if args.model else [])
    wall, out = timed_process(command, env)
    timing = out.get("timing") or {}
    arrival = (out.get("runtime") or {}).get("system_prompt", {}).get("status", "?")
    return {"wall": wall, **{k: timing.get(k, 0.0) for k in PHASES[1:]}, "steps": out.get("steps"),
            "status": out.get("status"), "system prompt": arrival}


def plain_cold(question: str, args, model_path: str, env: dict) -> dict:
    command = [sys.executable, __file__, "--plain-child", model_path, "--question", question,
               "--max-steps", str(args.max_steps), "--n-ctx", str(args.n_ctx)]
    wall, out = timed_process(command, env)
    rest = wall - out["model_load"] - out["prompt"] - out["generation"] - out["tools"]
    return {"wall": wall, "model_load": out["model_load"], "prompt": out["prompt"],
            "generation": out["generation"], "tools": out["tools"], "engine": rest, "steps": out["steps"],
            "first_token": out["first_token"]}


def warm_runs(args, env: dict, model_path: str, measured) -> None:
    """The appliance's engine and the plain loop, in this process, each with its model loaded;
    each row handed to `measured(question, label, row)` as soon as it is known."""
    from appliance.agent import events as ev
    from appliance.agent.engine import Engine
    from appliance.agent.settings import EngineSettings
    from appliance.config import resolve_paths
    from appliance.llm.runtime import load_llama, open_chat_model
    from appliance.tools.registry import default_registry

    model = open_chat_model(args.model, paths=resolve_paths(env), env=env)
    model.take_load_seconds()
    engine = Engine(model, default_registry(), EngineSettings(max_steps=args.max_steps, allow_ask=False))
    engine.warm()
    for question in QUESTIONS:
        model.begin_run()
        started = time.perf_counter()
        end = [e for e in engine.run(question) if isinstance(e, ev.RunEnded)][0]
        measured(question, "appliance, warm", {"wall": time.perf_counter() - started,
                                               **{k: end.timing.get(k, 0.0) for k in PHASES[1:]},
                                               "steps": end.steps, "status": end.status})
    model.close()
    del model, engine
    llama = load_llama(model_path, n_ctx=args.n_ctx, n_threads=PLAIN_THREADS)
    plain_loop(llama, WARM_UP, 1)  # the system prompt into its KV cache, as a loaded process has it
    for question in QUESTIONS:
        started = time.perf_counter()
        result = plain_loop(llama, question, args.max_steps)
        wall = time.perf_counter() - started
        measured(question, "plain, warm", {"wall": wall, "model_load": 0.0,
                                           **{k: result[k] for k in ("prompt", "generation", "tools", "first_token")},
                                           "engine": wall - result["prompt"] - result["generation"] - result["tools"],
                                           "steps": result["steps"]})


def show(label: str, row: dict) -> None:
    phases = " ".join(f"{row.get(k, 0.0):8.1f}" for k in PHASES)
    extra = f" steps {row.get('steps')}" + (f" {row['status']}" if row.get("status") else "")
    extra += f" (system prompt {row['system prompt']})" if row.get("system prompt") else ""
    print(f"  {label:26} {phases}{extra}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="catalog name or path (default: the default model)")
    parser.add_argument("--max-steps", type=int, default=3)
    parser.add_argument("--questions", type=int, default=len(QUESTIONS), help="how many of the questions")
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--plain-child", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--question", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.plain_child:
        plain_child(args.plain_child, args.question, args.max_steps, args.n_ctx)
        return 0
    del QUESTIONS[max(1, args.questions):]
    from appliance.config import resolve_paths
    from appliance.llm.catalog import load_catalog, resolve_model

    home = tempfile.mkdtemp(prefix="bench-question-")
    env = dict(os.environ, APPLIANCE_HOME=home, PYTHONPATH=str(ROOT))
    model_path = str(resolve_model(args.model, models_dir=resolve_paths(env).models_dir, catalog=load_catalog(),
                                   env=env).path)
    print(f"model {model_path}, max {args.max_steps} steps, load average {os.getloadavg()}, {time.strftime('%F %T')}")
    rows: dict[str, dict] = {q: {} for q in QUESTIONS}
    print(f"  {'seconds':26} " + " ".join(f"{k[:8]:>8}" for k in PHASES), flush=True)

    def measured(question: str, label: str, row: dict) -> None:
        rows[question][label] = row
        show(f"{label}: {question[:12]}…", row)  # as it comes, so a cut-short run still tells something

    measured(QUESTIONS[0], "appliance, first start", appliance_cold(QUESTIONS[0], args, env))  # writes the cache
    for question in QUESTIONS:
        measured(question, "appliance, cold", appliance_cold(question, args, env))
        measured(question, "plain, cold", plain_cold(question, args, model_path, env))
    warm_runs(args, env, model_path, measured)
    print("summary")
    for question, modes in rows.items():
        print(question)
        for label, row in modes.items():
            show(label, row)
        ratio = lambda a, b: modes[a]["wall"] / max(modes[b]["wall"], 1e-9)  # noqa: E731
        print(f"  ratios (wall): appliance cold/warm {ratio('appliance, cold', 'appliance, warm'):.2f} · "
              f"appliance/plain cold {ratio('appliance, cold', 'plain, cold'):.2f} · "
              f"appliance/plain warm {ratio('appliance, warm', 'plain, warm'):.2f}")
    print(f"load average at the end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
