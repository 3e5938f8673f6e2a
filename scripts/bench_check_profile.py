"""Time `appliance check PATH` and `appliance check PROGRAM` (fresh processes, median of several
runs) against plain `appliance check` in the same run, and print the seconds.

Usage: python scripts/bench_check_profile.py [--runs N] [--path P] [--program NAME]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAUNCH = "import sys; from appliance.cli import main; sys.exit(main())"


def seconds(args: list[str], runs: int) -> float:
    """The median wall time of `appliance check ARGS` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH", "")]))}
    times = []
    for _ in range(runs):
        started = time.monotonic()
        subprocess.run([sys.executable, "-c", LAUNCH, "check", *args], env=env, capture_output=True, timeout=60)
        times.append(time.monotonic() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--path", default="/etc/hosts")
    parser.add_argument("--program", default="tar")
    args = parser.parse_args()
    for label, argv in (("check PATH", [args.path]), ("check PROGRAM", [args.program]), ("check (every analyzer)", [])):
        print(f"appliance {label:<24} {seconds(argv, args.runs):.3f} s (median of {args.runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
