#!/usr/bin/env python3
"""Prompt evaluation after the cached system prompt: chunk pacing and how fast a stop acts (issue 14).

One loaded model, one context. The engine's real system prompt is evaluated once (the part the
prompt cache holds); then, round by round in a rotating order, each pacing evaluates the same
--tokens new tokens after it (the first step's evidence and question are of this size), and the
tokens/s are compared. Then the stop: in each mode a stop is asked --stop-after seconds into a
long evaluation, and the seconds from the stop to the return are measured, with the abort callback
(llm/abort.py) and without it (a stop acts between chunks only). Prints medians and ratios.

  .venv/bin/python scripts/bench_prefill.py                  # the default model, 3 rounds
  .venv/bin/python scripts/bench_prefill.py --model small --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from appliance.agent.prompt import system_prompt  # noqa: E402
from appliance.agent.settings import EngineSettings  # noqa: E402
from appliance.config import resolve_paths  # noqa: E402
from appliance.llm.base import Message  # noqa: E402
from appliance.llm.catalog import load_catalog, resolve_model  # noqa: E402
from appliance.llm.chat_template import ChatTemplate  # noqa: E402
from appliance.llm.runtime import load_llama  # noqa: E402
from appliance.llm.session import Pacing, Session  # noqa: E402
from appliance.llm.threads import physical_cores  # noqa: E402
from appliance.tools.registry import default_registry  # noqa: E402

PACINGS = {
    "0.4 s chunks (first 64, at least 16)": Pacing(target=0.4, first=64, smallest=16),
    "1.0 s chunks (first 128, at least 64)": Pacing(target=1.0),
    "2.0 s chunks (first 128, at least 64; default)": Pacing(),
    "one chunk of n_batch": Pacing(target=1e9, first=1 << 20, smallest=1 << 20),
}


def evaluate(session: Session, prefix: int, tokens: list[int], should_stop=None) -> tuple[float, bool]:
    session.trim(prefix)
    started = time.perf_counter()
    done = session.prefill(tokens, should_stop=should_stop)
    return time.perf_counter() - started, done.stopped


def stop_latency(session: Session, prefix: int, tokens: list[int], after: float) -> float:
    """Seconds from a stop asked `after` seconds into the evaluation to prefill's return."""
    asked: list[float] = []
    timer = threading.Timer(after, lambda: asked.append(time.perf_counter()))
    timer.start()
    _, stopped = evaluate(session, prefix, tokens, should_stop=lambda: bool(asked))
    ended = time.perf_counter()
    timer.cancel()
    if not stopped or not asked:
        return float("nan")
    return ended - asked[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="catalog name or path (default: the default model)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=400, help="new tokens after the system prompt")
    parser.add_argument("--stop-after", type=float, default=0.7, help="seconds into an evaluation to ask a stop")
    parser.add_argument("--threads", type=int, default=0, help="threads (default: the physical cores)")
    args = parser.parse_args()
    paths = resolve_paths()
    resolved = resolve_model(args.model, models_dir=paths.models_dir, catalog=load_catalog(), env={})
    cores = args.threads or physical_cores()
    llama = load_llama(resolved.path, n_ctx=8192, n_threads=cores)
    text = ChatTemplate.from_llama(llama).render(
        [Message("system", system_prompt(default_registry().specs, EngineSettings()))],
        add_generation_prompt=False)
    system = llama.tokenize(text.encode(), add_bos=False, special=True)
    filler = llama.tokenize((Path(__file__).resolve().parents[1] / "README.md").read_bytes(), add_bos=False)
    prompt = system + filler[: args.tokens]
    sessions = {name: Session(llama, pacing=pacing) for name, pacing in PACINGS.items()}
    next(iter(sessions.values())).prefill(system)
    print(f"model {resolved.name}, system prompt {len(system)} tokens cached, {args.tokens} new tokens, "
          f"{cores} threads, {args.rounds} rounds, load average {os.getloadavg()}, {time.strftime('%F %T')}", flush=True)
    rates: dict[str, list[float]] = {name: [] for name in sessions}
    names = list(sessions)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            seconds, _ = evaluate(sessions[name], len(system), prompt)
            rates[name].append(args.tokens / seconds)
            print(f"  round {r + 1} {name:48} {rates[name][-1]:6.1f} tok/s", flush=True)
    base = statistics.median(rates[names[0]])
    print("prompt evaluation (median tok/s, ratio to the first)")
    for name in names:
        median = statistics.median(rates[name])
        print(f"  {name:48} {median:6.1f} tok/s  {median / base:.2f}x")
    # The stop: the default pacing with and without the abort callback, a long evaluation each.
    long_prompt = system + filler[: min(len(filler), 4 * args.tokens)]
    modes = {"abort callback (default)": Session(llama), "between chunks only": Session(llama, abort=False)}
    latencies: dict[str, list[float]] = {name: [] for name in modes}
    for r in range(args.rounds):
        for name, session in (modes.items() if r % 2 == 0 else reversed(list(modes.items()))):
            latencies[name].append(stop_latency(session, len(system), long_prompt, args.stop_after))
            print(f"  round {r + 1} stop {name:30} {latencies[name][-1]:.3f} s after the stop", flush=True)
    print(f"stop asked {args.stop_after} s into the evaluation (median seconds until prefill returned)")
    for name, values in latencies.items():
        print(f"  {name:30} {statistics.median(values):.3f} s (max {max(values):.3f})")
    print(f"load average at the end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
