#!/usr/bin/env python3
"""Drafts copied from the context (llm/lookup.py) against none, on real questions, side by side (issue 14).

In one process, one loaded model, the real engine and tools on this machine: each question is asked
with the fast decoder's lookup drafts on and off, alternating which goes first, for --rounds rounds.
Per run it sums over the model's steps the completion tokens, the tokens copied from the context and
kept, and the generation seconds; it prints each run, then per mode the generation tokens/s (total
tokens over total seconds), the generation seconds a question, the wall seconds a question and the
ratios on/off. The answers may differ a little between modes (a batch's logits differ from one
token's by rounding), so the rate is the fair comparison, and the answers are printed to compare.

  .venv/bin/python scripts/bench_lookup.py                 # the default model, 2 rounds
  .venv/bin/python scripts/bench_lookup.py --model small --rounds 3
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUESTIONS = [
    "Which process is using the most memory?",
    "How full is my disk?",
    "Is anything using a lot of CPU?",
    "What is listening on the network?",
]


def run_once(engine, model, question: str) -> dict:
    from appliance.agent import events as ev

    model.begin_run()
    started = time.perf_counter()
    tokens = copied = 0
    generation_ms = 0.0
    answer = ""
    for event in engine.run(question):
        if isinstance(event, ev.StepRecorded):
            tokens += event.stats.completion_tokens
            copied += event.stats.copied_tokens
            generation_ms += event.stats.generation_ms
        elif isinstance(event, ev.RunEnded):
            answer = event.answer
    return {"wall": time.perf_counter() - started, "tokens": tokens, "copied": copied,
            "generation": generation_ms / 1000.0, "answer": answer}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="catalog name or path (default: the default model)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-steps", type=int, default=3)
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    args = parser.parse_args()

    from appliance.agent.engine import Engine
    from appliance.agent.settings import EngineSettings
    from appliance.config import resolve_paths
    from appliance.llm.chat_model import LlamaChatModel
    from appliance.llm.runtime import open_chat_model
    from appliance.tools.registry import default_registry

    env = dict(os.environ, APPLIANCE_LOOKUP="1")
    on = open_chat_model(args.model, paths=resolve_paths(env), env=env)
    on.take_load_seconds()
    off = LlamaChatModel(on.llama, on.info, thread_policy=on.thread_policy, lookup=False)
    settings = EngineSettings(max_steps=args.max_steps, allow_ask=False)
    engines = {"lookup on": Engine(on, default_registry(), settings),
               "lookup off": Engine(off, default_registry(), settings)}
    engines["lookup on"].warm()
    questions = QUESTIONS[: max(1, args.questions)]
    print(f"model {on.info.name}, {args.rounds} rounds x {len(questions)} questions, max {args.max_steps} steps, "
          f"load average {os.getloadavg()}, {time.strftime('%F %T')}", flush=True)
    runs: dict[str, list[dict]] = {mode: [] for mode in engines}
    for round_index in range(args.rounds):
        for i, question in enumerate(questions):
            order = list(engines) if (round_index + i) % 2 == 0 else list(reversed(engines))
            for mode in order:
                model = on if mode == "lookup on" else off
                row = run_once(engines[mode], model, question)
                runs[mode].append(row)
                rate = row["tokens"] / max(row["generation"], 1e-9)
                print(f"  r{round_index + 1} {mode:10} {question[:34]:34} {row['tokens']:4d} tok "
                      f"({row['copied']:3d} copied) {row['generation']:6.1f} s gen {rate:5.1f} tok/s "
                      f"{row['wall']:6.1f} s wall | {row['answer'][:90]!r}", flush=True)
    print("summary")
    totals = {}
    for mode, rows in runs.items():
        tokens = sum(r["tokens"] for r in rows)
        generation = sum(r["generation"] for r in rows)
        wall = sum(r["wall"] for r in rows)
        totals[mode] = {"rate": tokens / max(generation, 1e-9), "generation": generation / len(rows),
                        "wall": wall / len(rows), "copied": sum(r["copied"] for r in rows) / max(tokens, 1)}
        t = totals[mode]
        print(f"  {mode:10} generation {t['rate']:5.1f} tok/s · {t['generation']:5.1f} s generation and "
              f"{t['wall']:5.1f} s wall a question · {100 * t['copied']:4.1f} % of tokens copied")
    a, b = totals["lookup on"], totals["lookup off"]
    print(f"  ratios on/off: generation rate {a['rate'] / b['rate']:.2f}x · generation seconds "
          f"{a['generation'] / b['generation']:.2f} · wall {a['wall'] / b['wall']:.2f}")
    print(f"load average at the end {os.getloadavg()}")
    on.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
