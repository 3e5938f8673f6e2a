"""How much a durable step costs: `python -m appliance.store.bench [--runs N] [--dir DIR]`.

Why measure it: every step is committed with `synchronous=FULL` (an fsync per step) so that a
crash loses nothing committed; this prints what that costs next to a model step (seconds), the
bytes a run takes, and how fast a search and an open are, on the disk given by --dir.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from appliance.agent import events as ev
from appliance.llm.base import GenerationStats, ModelInfo
from appliance.store.store import open_store


def synthetic_run(run_id: str, steps: int, observation_chars: int) -> list:
    t0 = time.time()
    events: list = [ev.RunStarted(run_id, "why is the machine slow?", ModelInfo("bench"), {"max_steps": 8}, t0, "bench")]
    for n in range(steps):
        events.append(ev.StepRecorded(run_id, n, t0 + n, f"thought {n}", "top_processes", {"n": n}, "ok",
                                      "x" * observation_chars, "summary", None, "", GenerationStats(300, 200, 40)))
    events.append(ev.RunEnded(run_id, ev.FINISHED, "answer", {}, "", steps, 300, 200, 40, 1.0, t0 + steps))
    return events


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--observation-chars", type=int, default=1500)
    parser.add_argument("--dir", default=None, help="where to put the scratch database (default: a temp dir)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        path = Path(scratch) / "bench.db"
        store = open_store(path)
        latencies = []
        for k in range(args.runs):
            for event in synthetic_run(f"bench-{k}", args.steps, args.observation_chars):
                started = time.perf_counter()
                store.record(event)
                if isinstance(event, ev.StepRecorded):
                    latencies.append((time.perf_counter() - started) * 1000)
        latencies.sort()
        started = time.perf_counter()
        for _ in range(20):
            store.list_runs(search="thought")
        search_ms = (time.perf_counter() - started) / 20 * 1000
        per_run = store.used_bytes() / args.runs
        store.close()
        started = time.perf_counter()
        open_store(path).close()
        open_ms = (time.perf_counter() - started) * 1000
    print(f"steps committed: {len(latencies)}; per step median {statistics.median(latencies):.1f} ms, "
          f"p95 {latencies[int(len(latencies) * 0.95)]:.1f} ms (synchronous=FULL)")
    print(f"database bytes per run ({args.steps} steps, {args.observation_chars}-char observations): {per_run:.0f}")
    print(f"full-text search over {args.runs} runs: {search_ms:.1f} ms; open (writer, migrated): {open_ms:.1f} ms")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
