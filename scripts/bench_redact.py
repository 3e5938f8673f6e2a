#!/usr/bin/env python3
"""Benchmark: how long `redact()` takes per observation, and what it does to the corpus.

An observation is what one tool step shows the model: at most ~5,000 characters (read_log's
TEXT_LIMIT), usually less. This builds observations from the test corpus (tests/support/secret_corpus.py):
ordinary log lines with the planted secret lines mixed in, 5,000 characters each, and times
`redact` on each, then reports the corpus numbers the docs quote (shapes, formats, masked share,
false-positive rate on 10,000 ordinary log lines).

    .venv/bin/python scripts/bench_redact.py            # 200 observations
    .venv/bin/python scripts/bench_redact.py --n 500 --chars 8000
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support import secret_corpus  # noqa: E402
from appliance.eval.records import leaked_in_text  # noqa: E402
from appliance.tools.redact import redact  # noqa: E402


def observations(n: int, chars: int) -> list[str]:
    """n texts of about `chars` characters: nine ordinary log lines to one planted secret line."""
    ordinary = iter(secret_corpus.ordinary_lines(n * chars // 100, seed=3))
    planted = [e.text for e in secret_corpus.entries(seed=4)]
    out = []
    for i in range(n):
        lines, size = [], 0
        while size < chars:
            line = planted[(i * 7 + len(lines)) % len(planted)] if len(lines) % 10 == 9 else next(ordinary)
            lines.append(line)
            size += len(line) + 1
        out.append("\n".join(lines)[:chars])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="observations to time")
    parser.add_argument("--chars", type=int, default=5000, help="characters per observation")
    args = parser.parse_args()
    texts = observations(args.n, args.chars)
    redact(texts[0])  # warm the caches of compiled patterns and key names
    times, cpu = [], []
    for text in texts:
        started, started_cpu = time.perf_counter(), time.process_time()
        redact(text)
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    entries = secret_corpus.entries(seed=15)
    masked = sum(not leaked_in_text(e.canaries, redact(e.text)) for e in entries)
    lines = secret_corpus.ordinary_lines(10_000, seed=7)
    changed = sum(redact(line) != line for line in lines)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    print(f"redact: {args.n} observations of {args.chars} characters: median {statistics.median(times):.2f} ms, "
          f"p95 {sorted(times)[int(len(times) * 0.95) - 1]:.2f} ms, max {max(times):.2f} ms per observation "
          f"(CPU time: median {statistics.median(cpu):.2f} ms, total {sum(cpu):.0f} ms)")
    print(f"corpus: {len({e.shape for e in entries})} shapes, {len({e.fmt for e in entries})} formats, "
          f"{len(entries)} planted entries, {masked / len(entries):.1%} masked")
    print(f"ordinary log lines: {changed} of {len(lines)} changed ({changed / len(lines):.2%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
