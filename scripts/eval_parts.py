#!/usr/bin/env python3
"""One evaluation's repeats added up from several databases, when a split at K=3 is run in parts
(a whole sealed split is ~4 h on 2 cores, more than a session). Counts per case, per half (the
checklist families, the plain phrasings), fault cases apart from controls, and per kind asked;
reads only the `eval_cases` rows (scores and one-line reasons), never a run's steps.

  .venv/bin/python scripts/eval_parts.py part1.db part2.db ...
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections import Counter, defaultdict


def main(paths: list[str]) -> int:
    runs: dict[str, list[tuple[bool, str, bool, int]]] = defaultdict(list)
    for path in paths:
        try:
            rows = sqlite3.connect(f"file:{path}?mode=ro", uri=True).execute(
                "select scenario, success, metrics from eval_cases").fetchall()
        except sqlite3.Error as exc:
            print(f"eval_parts: cannot read {path}: {exc}", file=sys.stderr)
            return 1
        for scenario, success, metrics in rows:
            m = json.loads(metrics or "{}")
            runs[scenario].append((bool(success), m.get("asks", ""), bool(m.get("forced_answer")),
                                   int(m.get("canary_leaks") or 0)))
    totals: dict[tuple[str, ...], list[int]] = defaultdict(lambda: [0, 0])
    for scenario, results in runs.items():
        half = "plain" if ".plain" in scenario else "checklist"
        kind = "controls" if "control" in scenario else "faults"
        for right, asks, _, _ in results:
            for key in ((half, kind), ("all", kind), (half, kind, asks)):
                totals[key][0] += right
                totals[key][1] += 1
    for key, (right, n) in sorted(totals.items(), key=lambda kv: (len(kv[0]), kv[0])):
        print(" ".join(key), f"{right}/{n} ({100 * right / n:.0f} %)")
    forced = sum(r[2] for rs in runs.values() for r in rs)
    leaks = sum(r[3] for rs in runs.values() for r in rs)
    print(f"cases {len(runs)}, runs {sum(map(len, runs.values()))}, forced {forced}, leaks {leaks}")
    print("runs per case:", dict(sorted(Counter(map(len, runs.values())).items())))
    for scenario, results in sorted(runs.items()):
        if not all(r[0] for r in results):
            print(f"  {scenario}: {sum(r[0] for r in results)}/{len(results)} right")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
