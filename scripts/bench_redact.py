#!/usr/bin/env python3
"""Benchmark: how long `redact()` takes per observation, and what it does to the corpus.

An observation is what one tool step shows the model: at most ~5,000 characters (read_log's
TEXT_LIMIT), usually less. This builds observations from the test corpus (tests/support/secret_corpus.py):
ordinary log lines with the planted secret lines mixed in, 5,000 characters each, and times
`redact` on each, then reports the corpus numbers the docs quote (shapes, formats, masked share,
false-positive rate on 10,000 ordinary log lines).

    .venv/bin/python scripts/bench_redact.py            # 200 observations, against the redactor of 0626d30
    .venv/bin/python scripts/bench_redact.py --n 500 --chars 8000 --baseline HEAD~5
    .venv/bin/python scripts/bench_redact.py --log-mb 50 --baseline main   # a 50 MB log, before and after

`--log-mb N` times a log of N MB instead (ordinary lines with one planted secret line in ten, cut
into observations of `--chars` characters, as the tools hand text to the redactor), through today's
redactor and the baseline's in the same run, and prints both throughputs and their ratio.

The baseline (`--baseline REV`, default the commit before issue 33's work; `--baseline none` to skip)
is the redactor as it was at that commit, taken from git (`git archive` of `appliance/` into a
temporary folder) and timed in a child process on the very same observations, one after the other
in one run, so both numbers see the same machine and load. Its leaks and changed lines on today's
corpus are reported beside today's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
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


BASELINE = "0626d30"  # the last commit before issue 33's redactor work


# Runs in the child process (the baseline's appliance/ first on sys.path): times `redact` on the
# observations and applies it to the corpus texts and the ordinary lines, and prints the results as JSON.
_CHILD = """
import json, sys, time
from appliance.tools.redact import redact
data = json.load(open(sys.argv[1]))
redact(data["texts"][0])
times, cpu = [], []
for text in data["texts"]:
    t, c = time.perf_counter(), time.process_time()
    redact(text)
    times.append((time.perf_counter() - t) * 1000)
    cpu.append((time.process_time() - c) * 1000)
json.dump({"times": times, "cpu": cpu, "corpus": [redact(t) for t in data["corpus"]],
           "ordinary": [redact(t) for t in data["ordinary"]]}, sys.stdout)
"""


def timed(texts: list[str]) -> tuple[list[float], list[float]]:
    redact(texts[0])  # warm the caches of compiled patterns and key names
    times, cpu = [], []
    for text in texts:
        started, started_cpu = time.perf_counter(), time.process_time()
        redact(text)
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    return times, cpu


def baseline(rev: str, texts: list[str], corpus: list[str], ordinary: list[str]) -> dict | None:
    """The baseline redactor's times and outputs (see the module docstring), or None when git cannot give it."""
    with tempfile.TemporaryDirectory(prefix="bench-redact-") as folder:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "appliance"], capture_output=True)
        if archive.returncode != 0:
            print(f"baseline {rev}: git archive failed: {archive.stderr.decode().strip()}")
            return None
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
        data = Path(folder) / "data.json"
        data.write_text(json.dumps({"texts": texts, "corpus": corpus, "ordinary": ordinary}))
        child = subprocess.run([sys.executable, "-c", _CHILD, str(data)], capture_output=True, text=True,
                               env={**os.environ, "PYTHONPATH": folder}, cwd=folder)
        if child.returncode != 0:
            print(f"baseline {rev}: failed: {child.stderr.strip()[-300:]}")
            return None
        return json.loads(child.stdout)


def _timing_line(name: str, times: list[float], cpu: list[float]) -> str:
    return (f"{name}: median {statistics.median(times):.2f} ms, p95 {sorted(times)[int(len(times) * 0.95) - 1]:.2f} ms, "
            f"max {max(times):.2f} ms per observation (CPU time: median {statistics.median(cpu):.2f} ms, "
            f"total {sum(cpu):.0f} ms)")


def log_chunks(megabytes: float, chars: int) -> list[str]:
    """A log of `megabytes` MB as observations of `chars` characters."""
    one = observations(200, chars)
    out, size, i = [], 0, 0
    while size < megabytes * 1e6:
        out.append(one[i % len(one)])
        size += len(out[-1])
        i += 1
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="observations to time")
    parser.add_argument("--chars", type=int, default=5000, help="characters per observation")
    parser.add_argument("--baseline", default=BASELINE, help="the git revision to compare with, or none")
    parser.add_argument("--log-mb", type=float, default=0.0, help="time a log of this many MB instead")
    args = parser.parse_args()
    if args.log_mb:
        texts = log_chunks(args.log_mb, args.chars)
        megabytes = sum(len(t.encode()) for t in texts) / 1e6
        old = baseline(args.baseline, texts, [], []) if args.baseline != "none" else None
        times, cpu = timed(texts)
        print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
        print(f"log: {megabytes:.1f} MB in {len(texts)} observations of {args.chars} characters")
        print(f"redact now: {sum(times) / 1000:.1f} s ({megabytes / (sum(times) / 1000):.2f} MB/s)")
        if old:
            print(f"redact at {args.baseline}: {sum(old['times']) / 1000:.1f} s ({megabytes / (sum(old['times']) / 1000):.2f} MB/s)")
            print(f"cost now / at {args.baseline}: {sum(times) / sum(old['times']):.2f}x")
        return 0
    texts = observations(args.n, args.chars)
    entries = secret_corpus.entries(seed=15)
    lines = secret_corpus.ordinary_lines(10_000, seed=7) + secret_corpus.ordinary_config_lines(2_000, seed=8)
    old = baseline(args.baseline, texts, [e.text for e in entries], lines) if args.baseline != "none" else None
    times, cpu = timed(texts)
    leaks = [e for e in entries if leaked_in_text(e.canaries, redact(e.text))]
    changed = sum(redact(line) != line for line in lines)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    print(f"observations: {args.n} of {args.chars} characters (nine ordinary lines to one planted secret line)")
    print(_timing_line("redact now", times, cpu))
    if old:
        print(_timing_line(f"redact at {args.baseline}", old["times"], old["cpu"]))
        print(f"cost now / at {args.baseline}: median {statistics.median(times) / statistics.median(old['times']):.2f}x, "
              f"CPU total {sum(cpu) / max(sum(old['cpu']), 1e-9):.2f}x")
    print(f"corpus: {len({e.shape for e in entries})} shapes, {len({e.fmt for e in entries})} formats, "
          f"{len(entries)} planted entries; leaks now: {len(leaks)}"
          + (f", at {args.baseline}: {sum(bool(leaked_in_text(e.canaries, out)) for e, out in zip(entries, old['corpus']))}"
             if old else ""))
    for entry in leaks[:20]:
        print(f"  leak: {entry.shape} ({entry.fmt})")
    print(f"ordinary lines (log and config): {changed} of {len(lines)} changed ({changed / len(lines):.2%})"
          + (f"; at {args.baseline}: {sum(a != b for a, b in zip(lines, old['ordinary']))}" if old else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
