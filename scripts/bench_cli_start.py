#!/usr/bin/env python3
"""Benchmark: how long an `appliance` command takes to start (its parser built and its arguments
parsed, nothing run), building only its own command's parser against building every command's.

Each try is a fresh Python process (what a person's command is), CPU time of the child, both ways
alternating in one run so the machine's load falls on both alike. Prints the medians and their
ratio per command line.

    .venv/bin/python scripts/bench_cli_start.py              # 7 tries each way
    .venv/bin/python scripts/bench_cli_start.py --tries 15
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# builds the parser one way, parses the words, prints the child's CPU seconds
PROBE = """
import json, resource, sys
from appliance.cli import build_parser
words = json.loads(sys.argv[2])
parser = build_parser(words) if sys.argv[1] == "own" else build_parser()
parser.parse_args(words)
usage = resource.getrusage(resource.RUSAGE_SELF)
print(usage.ru_utime + usage.ru_stime)
"""

LINES = (["--verbose"], ["runs", "list"], ["check", "--family", "cpu"], ["tools", "list"], ["ask", "why?"])


def cpu_seconds(way: str, words: list[str]) -> float:
    # compiled bytecode kept, as an installed package has it (also where the environment turns
    # writing it off): a start that compiles every module measures the compiler
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               PYTHONPYCACHEPREFIX=str(Path(tempfile.gettempdir()) / f"appliance-bench-pycache-{os.getuid()}"))
    out = subprocess.run([sys.executable, "-c", PROBE, way, json.dumps(words)], capture_output=True, text=True,
                         env=env, cwd=str(ROOT), check=True, timeout=120)
    return float(out.stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=7, help="tries per command line and way (default 7)")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; "
          f"{args.tries} tries each way, CPU seconds of a fresh process (median)")
    print(f"{'command line':28} {'its own parser':>15} {'every parser':>13} {'ratio':>6}")
    for words in LINES:
        cpu_seconds("whole", words)  # compiles what the first try would
        own, whole = [], []
        for _ in range(args.tries):
            own.append(cpu_seconds("own", words))
            whole.append(cpu_seconds("whole", words))
        mine, every = statistics.median(own), statistics.median(whole)
        label = " ".join(words) if words != ["--verbose"] else "(none: the TUI)"
        print(f"{label:28} {mine:14.3f}s {every:12.3f}s {mine / every:6.2f}")
    print(f"load at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
