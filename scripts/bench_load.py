#!/usr/bin/env python3
"""Benchmark: fixed vs adaptive llama.cpp threads on a loaded and on an idle machine.

The appliance is used when a machine is in trouble, typically with a runaway process holding a
core. This runs the same scripted ReAct steps (the appliance's real system prompt, tool schemas
and grammar; canned observations of a CPU hog) with a fixed thread count equal to the physical
cores and with the adaptive choice (appliance.llm.threads), interleaved in one run so both see the
same machine, first with one busy process per core but one, then with none. It prints tokens/s
of each and the ratios, and writes everything to a JSON file.

    .venv/bin/python scripts/bench_load.py                    # Qwen 0.5B, both scenarios
    .venv/bin/python scripts/bench_load.py --model tiny --rounds 1 --scenario load

Target on a 2-core machine with Qwen 0.5B: adaptive >= 1.6x fixed under load, >= 0.97x idle.
"""

from __future__ import annotations

import argparse
import atexit
import ctypes
import gc
import json
import platform
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from appliance.agent.actions import step_schema  # noqa: E402
from appliance.agent.prompt import observation_message, question_message, system_prompt  # noqa: E402
from appliance.agent.settings import EngineSettings  # noqa: E402
from appliance.config import resolve_paths  # noqa: E402
from appliance.llm.base import Message  # noqa: E402
from appliance.llm.runtime import open_chat_model  # noqa: E402
from appliance.llm.threads import AdaptiveThreadPolicy, FixedThreadPolicy, physical_cores  # noqa: E402
from appliance.tools.paths import PathPolicy  # noqa: E402
from appliance.tools.registry import ToolContext, build_registry  # noqa: E402

QUESTION = "Why is my computer so slow and the fan so loud?"
OBSERVATIONS = [
    '<observation status="ok">\n{"processes": [{"pid": 48213, "name": "python3", "user": "sam", '
    '"cpu_percent": 99.7, "memory_mb": 12, "cmdline": "python3 burn.py"}, {"pid": 1022, "name": "Xorg", '
    '"cpu_percent": 2.1, "memory_mb": 180}, {"pid": 2210, "name": "firefox", "cpu_percent": 1.4, '
    '"memory_mb": 950}], "load_average": [2.1, 1.9, 1.2], "cpu_count": 2}\n</observation>',
    '<observation status="ok">\n{"total_mb": 7821, "available_mb": 5210, "swap_used_mb": 0, '
    '"top_memory": [{"pid": 2210, "name": "firefox", "memory_mb": 950}]}\n</observation>',
    '<observation status="ok">\n{"pid": 48213, "name": "python3", "started": "2 hours ago", '
    '"cpu_times_user_s": 7123.4, "threads": 1, "cwd": "/home/sam/scratch"}\n</observation>',
    '<observation status="ok">\n{"temperatures": "not available on this machine"}\n</observation>',
]


def _die_with_parent() -> None:
    """In each busy process: receive SIGKILL when the benchmark dies, however it dies (Linux)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def start_hogs(count: int) -> list[subprocess.Popen]:
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=_die_with_parent)
            for _ in range(count)]
    atexit.register(stop_hogs, hogs)
    # A plain `kill` of the benchmark must not leave the busy processes behind.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    time.sleep(0.5)
    return hogs


def stop_hogs(hogs: list[subprocess.Popen]) -> None:
    for hog in hogs:
        if hog.poll() is None:
            hog.kill()
            hog.wait()


def run_steps(model_spec: str, policy, steps: int, max_tokens: int, step_timeout: float) -> dict:
    """One scripted ReAct run on a freshly loaded model (no KV cache carried between runs)."""
    settings = EngineSettings()
    specs = list(build_registry(ToolContext(policy=PathPolicy.default())).specs)
    schema = step_schema(specs, settings, ask=False)
    model = open_chat_model(model_spec, paths=resolve_paths(), thread_policy=policy)
    messages = [Message("system", system_prompt(specs, settings)),
                Message("user", question_message(QUESTION, None, settings.max_steps))]
    records = []
    started = time.perf_counter()
    for step in range(steps):
        deadline: list[float] = []  # set at the first poll, i.e. after the prompt is evaluated

        def past_deadline() -> bool:
            if not deadline:
                deadline.append(time.monotonic() + step_timeout)
            return time.monotonic() > deadline[0]

        generation = model.generate(messages, schema, max_tokens=max_tokens, temperature=0.0,
                                    should_stop=past_deadline)
        s = generation.stats
        print(f"    step {step + 1}: threads {s.threads}/{s.threads_batch}, prompt {s.prompt_tokens_evaluated} tok "
              f"in {s.prompt_ms / 1000:.1f} s, {s.completion_tokens} tok in {s.generation_ms / 1000:.1f} s"
              + (" (cut at the step timeout)" if generation.finish_reason == "cancelled" else ""), flush=True)
        records.append({"step": step + 1, "finish": generation.finish_reason, "threads": s.threads, "threads_batch": s.threads_batch,
                        "prompt_tokens": s.prompt_tokens_evaluated, "prompt_ms": round(s.prompt_ms, 1),
                        "completion_tokens": s.completion_tokens, "generation_ms": round(s.generation_ms, 1)})
        messages.append(Message("assistant", generation.text))
        messages.append(Message("user", observation_message(OBSERVATIONS[step % len(OBSERVATIONS)],
                                                            steps_left=settings.max_steps - step - 1)))
    wall = time.perf_counter() - started
    if hasattr(model, "close"):
        model.close()
    del model
    gc.collect()
    return {"steps": records, "wall_s": round(wall, 3)}


def summarize(runs: list[dict]) -> dict:
    steps = [r for run in runs for r in run["steps"]]
    gen_tokens = sum(r["completion_tokens"] for r in steps)
    gen_s = sum(r["generation_ms"] for r in steps) / 1000
    prompt_tokens = sum(r["prompt_tokens"] for r in steps)
    prompt_s = sum(r["prompt_ms"] for r in steps) / 1000
    return {
        "generation_tokens_per_s": round(gen_tokens / gen_s, 2) if gen_s else 0.0,
        "prompt_tokens_per_s": round(prompt_tokens / prompt_s, 2) if prompt_s else 0.0,
        "wall_s": round(sum(run["wall_s"] for run in runs), 2),
        "completion_tokens": gen_tokens,
        "prompt_tokens": prompt_tokens,
        "threads_chosen": sorted({(r["threads"], r["threads_batch"]) for r in steps}),
    }


def scenario(name: str, hogs: int, args, physical: int) -> dict:
    print(f"\n== {name}: {hogs} busy process(es) on {physical} physical cores ==", flush=True)
    running = start_hogs(hogs) if hogs else []
    try:
        runs: dict[str, list[dict]] = {"fixed": [], "adaptive": []}
        for round_index in range(args.rounds):
            for mode in ("fixed", "adaptive"):
                policy = FixedThreadPolicy(physical) if mode == "fixed" else AdaptiveThreadPolicy(physical)
                print(f"  round {round_index + 1}, {mode} threads:", flush=True)
                run = run_steps(args.model, policy, args.steps, args.max_tokens, args.step_timeout)
                runs[mode].append(run)
                print(f"    {run['wall_s']:.1f} s in all", flush=True)
    finally:
        stop_hogs(running)
    fixed, adaptive = summarize(runs["fixed"]), summarize(runs["adaptive"])
    ratios = {
        "generation": round(adaptive["generation_tokens_per_s"] / fixed["generation_tokens_per_s"], 3),
        "prompt": round(adaptive["prompt_tokens_per_s"] / fixed["prompt_tokens_per_s"], 3),
        "wall_speedup": round(fixed["wall_s"] / adaptive["wall_s"], 3),
    }
    # Each round runs fixed then adaptive back to back, so the pair shares the machine's state; the
    # median over the pairs is what a noisy shared machine measures most steadily.
    pairs = [(summarize([f]), summarize([a])) for f, a in zip(runs["fixed"], runs["adaptive"])]
    median_ratios = {
        "generation": round(statistics.median(a["generation_tokens_per_s"] / f["generation_tokens_per_s"]
                                              for f, a in pairs), 3),
        "prompt": round(statistics.median(a["prompt_tokens_per_s"] / f["prompt_tokens_per_s"] for f, a in pairs), 3),
        "wall_speedup": round(statistics.median(f["wall_s"] / a["wall_s"] for f, a in pairs), 3),
    }
    print(f"  fixed   : generation {fixed['generation_tokens_per_s']:6.1f} tok/s, prompt "
          f"{fixed['prompt_tokens_per_s']:6.1f} tok/s, {fixed['wall_s']:6.1f} s")
    print(f"  adaptive: generation {adaptive['generation_tokens_per_s']:6.1f} tok/s, prompt "
          f"{adaptive['prompt_tokens_per_s']:6.1f} tok/s, {adaptive['wall_s']:6.1f} s")
    print(f"  ratio adaptive/fixed: generation {ratios['generation']:.2f}x, prompt {ratios['prompt']:.2f}x, "
          f"whole steps {ratios['wall_speedup']:.2f}x faster")
    print(f"  median of the {len(pairs)} round pairs: generation {median_ratios['generation']:.2f}x, prompt "
          f"{median_ratios['prompt']:.2f}x, whole steps {median_ratios['wall_speedup']:.2f}x faster")
    return {"busy_processes": hogs, "fixed": fixed, "adaptive": adaptive, "ratio": ratios,
            "median_pair_ratio": median_ratios, "runs": runs}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct", help="catalog name, alias or path")
    parser.add_argument("--steps", type=int, default=4, help="ReAct steps per run")
    parser.add_argument("--rounds", type=int, default=2, help="fixed/adaptive pairs per scenario")
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--step-timeout", type=float, default=180.0,
                        help="stop a step's generation this many seconds after its prompt is evaluated "
                             "(tokens/s stays exact)")
    parser.add_argument("--scenario", choices=("load", "idle", "both"), default="both")
    parser.add_argument("--out", default="results/bench_load.json")
    args = parser.parse_args(argv)

    physical = physical_cores()
    result = {"model": args.model, "physical_cores": physical, "steps": args.steps, "rounds": args.rounds,
              "max_tokens": args.max_tokens, "python": platform.python_version(),
              "machine": platform.machine(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if args.scenario in ("load", "both"):
        result["load"] = scenario("loaded", max(1, physical - 1), args, physical)
    if args.scenario in ("idle", "both"):
        result["idle"] = scenario("idle", 0, args, physical)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
