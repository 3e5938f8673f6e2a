#!/usr/bin/env python3
"""Benchmark of constrained decoding and of prefix reuse (issue 7).

For each model, in one process, on the same prompt and grammar (the engine's real step schema
and system prompt), interleaved round by round so that machine noise hits every mode alike:

  unconstrained   llama-cpp-python's own generation loop, no grammar
  builtin         llama-cpp-python's grammar sampling (whole vocabulary every token)
  fast            appliance.llm.fast_decoder.FastDecoder (sample first, batched verified drafts)
  fast-nodraft    the same without drafts (one token per decode, like builtin)

and prints tokens/s (medians over --rounds), the ratios, and over a scripted 8-step ReAct
transcript the prompt tokens the chat model evaluates per step against a loop that resets the
context every step (which evaluates the whole prompt each time).

Models come from the catalog (`appliance models pull NAME` fetches them; this script pulls them
itself when missing). Usage:

  .venv/bin/python scripts/bench_decode.py                   # smollm2 and qwen 0.5b
  .venv/bin/python scripts/bench_decode.py --with-1.5b       # and qwen 1.5b
  .venv/bin/python scripts/bench_decode.py --models smollm2-135m-instruct --rounds 3

Results also go to --out as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from appliance.agent.actions import step_schema  # noqa: E402
from appliance.agent.prompt import system_prompt  # noqa: E402
from appliance.agent.settings import EngineSettings  # noqa: E402
from appliance.config import resolve_paths  # noqa: E402
from appliance.errors import ApplianceError  # noqa: E402
from appliance.llm.base import Message, ModelInfo  # noqa: E402
from appliance.llm.catalog import load_catalog  # noqa: E402
from appliance.llm.chat_model import LlamaChatModel  # noqa: E402
from appliance.tools.registry import default_registry  # noqa: E402

DEFAULT_MODELS = ["smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct"]
LARGE_MODEL = "qwen2.5-coder-1.5b-instruct"
MODES = ["unconstrained", "builtin", "fast", "fast-nodraft"]
QUESTION = "My computer has been very slow since this morning and the fan is loud. Why?"
OBSERVATIONS = [
    '{"status": "ok", "data": {"load_1m": 7.9, "cpus": 2, "memory_used_pct": 61, "uptime_h": 5.2}}',
    '{"status": "ok", "data": [{"pid": 4242, "name": "thumbgen", "cpu_pct": 188.0, "rss_mb": 120}, '
    '{"pid": 1, "name": "systemd", "cpu_pct": 0.1, "rss_mb": 12}]}',
    '{"status": "ok", "data": {"pid": 4242, "name": "thumbgen", "cmdline": "thumbgen --all /home", '
    '"started": "09:12", "threads": 8, "user": "alice"}}',
    '{"status": "ok", "data": {"total_mb": 3900, "available_mb": 1500, "swap_used_mb": 10}}',
    '{"status": "empty", "data": [], "error": null}',
    '{"status": "ok", "data": {"/": {"used_pct": 41}, "/home": {"used_pct": 55}}}',
    '{"status": "ok", "data": "09:12 thumbgen started by cron; 09:13 thumbgen: scanning 48211 files"}',
    '{"status": "ok", "data": {"temp_c": 84, "fan_rpm": 4200}}',
]


def model_path(name: str) -> Path:
    """The model file, pulled through the catalog when missing (one line on failure)."""
    from appliance.llm.pull import pull

    entry = load_catalog().get(name)
    try:
        return pull(entry, resolve_paths().models_dir)
    except ApplianceError as exc:
        raise SystemExit(f"cannot get {name}: {exc.message}. Run: appliance models pull {name}") from None


def load(path: Path, threads: int, n_ctx: int):
    import llama_cpp

    return llama_cpp.Llama(str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False)


def measure_speed(llama, name: str, rounds: int, max_tokens: int) -> dict:
    """Tokens/s of each mode on the same prompt and grammar, interleaved per round."""
    settings = EngineSettings()
    specs = default_registry().specs
    schema = step_schema(specs, settings)
    messages = [Message("system", system_prompt(specs, settings)), Message("user", QUESTION)]
    info = ModelInfo(name=name)
    models = {
        "unconstrained": LlamaChatModel(llama, info, decoder="builtin"),  # no grammar, EOS ignored
        "builtin": LlamaChatModel(llama, info, decoder="builtin"),
        "fast": LlamaChatModel(llama, info, decoder="fast"),
        "fast-nodraft": LlamaChatModel(llama, info, decoder="fast", draft=False),
    }
    models["unconstrained"]._decoder.ignore_eog = True  # as many tokens as the others
    # Evaluate the long system prompt once; every trial then re-evaluates only the question, so
    # the trials differ in decoding only.
    models["fast"].generate(messages, schema, max_tokens=1)
    runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    for round_index in range(rounds):
        for mode in MODES:
            model = models[mode]
            model._transcript = type(model._transcript)()  # keep the KV cache, drop the transcript
            gen = model.generate(messages, {} if mode == "unconstrained" else schema, max_tokens=max_tokens)
            s = gen.stats
            runs[mode].append({
                "tokens": s.completion_tokens, "forced": s.forced_tokens, "generation_ms": round(s.generation_ms, 1),
                "tokens_per_second": round(s.tokens_per_second, 2), "finish": gen.finish_reason,
                "text": gen.text if round_index == 0 else None,
            })
            print(f"  round {round_index + 1} {mode:13s} {s.completion_tokens:4d} tok "
                  f"{s.tokens_per_second:6.1f} tok/s  forced {s.forced_tokens}", flush=True)
    medians = {mode: statistics.median(r["tokens_per_second"] for r in runs[mode]) for mode in MODES}
    ratios = {
        "fast/unconstrained": medians["fast"] / medians["unconstrained"],
        "fast/builtin": medians["fast"] / medians["builtin"],
        "fast-nodraft/builtin": medians["fast-nodraft"] / medians["builtin"],
        "builtin/unconstrained": medians["builtin"] / medians["unconstrained"],
    }
    texts_equal = runs["builtin"][0]["text"] == runs["fast-nodraft"][0]["text"]
    return {"median_tokens_per_second": medians, "ratios": ratios, "runs": runs,
            "builtin_equals_fast_nodraft_round1": texts_equal}


def measure_reuse(llama, name: str, max_tokens: int) -> list[dict]:
    """Prompt tokens evaluated per step over an 8-step transcript, against a reset-every-step loop."""
    settings = EngineSettings()
    specs = default_registry().specs
    schema = step_schema(specs, settings)
    # Step 1 finds the system prompt already cached by the speed trials, as a second run in the
    # same process would; steps 2-8 are what the target is about.
    model = LlamaChatModel(llama, ModelInfo(name=name), decoder="fast")
    messages = [Message("system", system_prompt(specs, settings)), Message("user", QUESTION)]
    steps = []
    cached = 0
    for step, observation in enumerate(OBSERVATIONS, start=1):
        gen = model.generate(messages, schema, max_tokens=max_tokens)
        s = gen.stats
        prompt_total = s.prompt_tokens_reused + s.prompt_tokens_evaluated
        new_tokens = prompt_total - cached if step > 1 else prompt_total
        # A loop that resets the context evaluates the whole rendered prompt at every step.
        reset_loop = model.count_tokens(messages)
        steps.append({
            "step": step, "prompt_tokens": prompt_total, "new_tokens": new_tokens,
            "evaluated": s.prompt_tokens_evaluated, "reused": s.prompt_tokens_reused,
            "reset_loop_evaluated": reset_loop, "prompt_ms": round(s.prompt_ms, 1),
            "within_target": s.prompt_tokens_evaluated <= new_tokens + 32,
            "reused_fraction": round(s.prompt_tokens_reused / prompt_total, 4),
        })
        print(f"  step {step}: prompt {prompt_total:5d}  new {new_tokens:4d}  evaluated {s.prompt_tokens_evaluated:5d}"
              f"  reset-loop {reset_loop:5d}  reused {100 * s.prompt_tokens_reused / prompt_total:5.1f}%", flush=True)
        cached = prompt_total + s.completion_tokens
        messages = messages + [Message("assistant", gen.text), Message("user", f"Observation: {observation}")]
    return steps


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="*", default=None, help="catalog names (default: smollm2 and qwen 0.5b)")
    parser.add_argument("--with-1.5b", dest="large", action="store_true", help="also Qwen2.5-Coder-1.5B")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--out", default="bench_decode.json")
    args = parser.parse_args(argv)
    names = args.models or list(DEFAULT_MODELS)
    if args.large and LARGE_MODEL not in names:
        names.append(LARGE_MODEL)
    report = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average_at_start": os.getloadavg()},
        "threads": args.threads, "rounds": args.rounds, "max_tokens": args.max_tokens, "models": {},
    }
    for name in names:
        path = model_path(name)
        print(f"{name} ({path.name}), {args.threads} threads, {args.rounds} rounds", flush=True)
        llama = load(path, args.threads, args.n_ctx)
        try:
            speed = measure_speed(llama, name, args.rounds, args.max_tokens)
            reuse = measure_reuse(llama, name, args.max_tokens)
        finally:
            llama.close()
        report["models"][name] = {"speed": speed, "prefix_reuse": reuse,
                                  "load_average_after": os.getloadavg()}
        Path(args.out).write_text(json.dumps(report, indent=2))  # after each model
        med, ratio = speed["median_tokens_per_second"], speed["ratios"]
        print(f"== {name}: tok/s unconstrained {med['unconstrained']:.1f} | builtin {med['builtin']:.1f} | "
              f"fast {med['fast']:.1f} | fast-nodraft {med['fast-nodraft']:.1f}")
        print(f"   fast/unconstrained {ratio['fast/unconstrained']:.2f}x  fast/builtin {ratio['fast/builtin']:.2f}x  "
              f"fast-nodraft/builtin {ratio['fast-nodraft/builtin']:.2f}x")
        later = [s for s in reuse if s["step"] > 1]
        print(f"   steps 2-8: evaluated {sum(s['evaluated'] for s in later)} prompt tokens vs "
              f"{sum(s['reset_loop_evaluated'] for s in later)} for a reset loop; all within new+32: "
              f"{all(s['within_target'] for s in later)}; load average {os.getloadavg()[0]:.1f}", flush=True)
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
