#!/usr/bin/env python3
"""Which llama.cpp settings are fastest here: flash attention, batch sizes, KV cache type (issue 14).

Every mode is a context of its own on the same model file (the weights are mmapped once), all
loaded up front; then, round by round and in a rotating order so that the noise of a shared machine
hits every mode alike, each mode evaluates the engine's real system prompt from an empty cache
(chunked, as a run does) and decodes 32 greedy tokens after it. Prints the medians and each mode's
ratio to the first (llama.cpp's defaults), and the machine load. Usage:

  .venv/bin/python scripts/bench_settings.py --model small --rounds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from appliance.agent.prompt import system_prompt  # noqa: E402
from appliance.agent.settings import EngineSettings  # noqa: E402
from appliance.config import resolve_paths  # noqa: E402
from appliance.llm.catalog import load_catalog, resolve_model  # noqa: E402
from appliance.llm.chat_template import ChatTemplate  # noqa: E402
from appliance.llm.base import Message  # noqa: E402
from appliance.llm.session import Session  # noqa: E402
from appliance.llm.runtime import load_llama  # noqa: E402
from appliance.llm.speed import SpeedSettings  # noqa: E402
from appliance.llm.threads import physical_cores  # noqa: E402
from appliance.tools.registry import default_registry  # noqa: E402

MODES = {
    "defaults (no flash, ubatch 512, f16)": SpeedSettings(flash_attn=False),
    "flash_attn": SpeedSettings(flash_attn=True),
    "flash_attn, ubatch 128": SpeedSettings(flash_attn=True, n_ubatch=128),
    "flash_attn, KV q8_0": SpeedSettings(flash_attn=True, kv_type="q8_0"),
}
GENERATE = 32


def measure(session: Session, prompt: list[int]) -> tuple[float, float]:
    """(prompt tokens/s, generation tokens/s) from an empty cache."""
    session.trim(0)
    started = time.perf_counter()
    session.prefill(prompt)
    prompt_s = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(GENERATE):
        session.decode([int(np.argmax(session.logits(-1)))])
    return len(prompt) / prompt_s, GENERATE / (time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="small")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=0, help="threads (default: the physical cores)")
    parser.add_argument("--tokens", type=int, default=1024, help="prompt tokens to evaluate (the system prompt's first N)")
    args = parser.parse_args()
    paths = resolve_paths()
    resolved = resolve_model(args.model, models_dir=paths.models_dir, catalog=load_catalog(), env={})
    cores = args.threads or physical_cores()
    sessions = {}
    for name, speed in MODES.items():
        llama = load_llama(resolved.path, n_ctx=args.n_ctx, n_threads=cores, speed=speed)
        sessions[name] = Session(llama)
    first = next(iter(sessions.values())).llama
    text = ChatTemplate.from_llama(first).render(
        [Message("system", system_prompt(default_registry().specs, EngineSettings()))],
        add_generation_prompt=False)
    prompt = first.tokenize(text.encode(), add_bos=False, special=True)[: args.tokens]
    print(f"model {resolved.name}, {len(prompt)} prompt tokens, {cores} threads, {args.rounds} rounds, "
          f"load average before {os.getloadavg()}")
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in MODES}
    names = list(MODES)
    for round_index in range(args.rounds):
        order = names[round_index % len(names):] + names[: round_index % len(names)]
        for name in order:
            results[name].append(measure(sessions[name], prompt))
        print(f"round {round_index + 1}: " + "; ".join(f"{n}: {results[n][-1][0]:.0f}/{results[n][-1][1]:.1f}"
                                                       for n in names), flush=True)
    base_p = statistics.median(r[0] for r in results[names[0]])
    base_g = statistics.median(r[1] for r in results[names[0]])
    print(f"{'mode':40} {'prompt tok/s':>12} {'ratio':>6} {'gen tok/s':>10} {'ratio':>6}")
    for name in names:
        p = statistics.median(r[0] for r in results[name])
        g = statistics.median(r[1] for r in results[name])
        print(f"{name:40} {p:12.1f} {p / base_p:6.2f} {g:10.1f} {g / base_g:6.2f}")
    print(f"load average after {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
