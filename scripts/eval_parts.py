#!/usr/bin/env python3
"""One evaluation's repeats added up from several databases, when a split at K=3 is run in parts
(a whole sealed split is ~4 h on 2 cores, more than a session): the cases of every evaluation in
each database, reported as `appliance eval` reports one run (appliance.eval.metrics), then the
headline of each half (the plain phrasings of the old families, the checklist's families) and the
cases not right every time. Reads the recorded cases (scores, one-line reasons), never a run's steps.

  .venv/bin/python scripts/eval_parts.py part1.db part2.db ...
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from appliance.errors import ApplianceError  # noqa: E402
from appliance.eval.metrics import format_headline, format_report, headline, label_of  # noqa: E402
from appliance.eval.records import load_eval  # noqa: E402
from appliance.store.store import open_store  # noqa: E402


def cases_of(path: str) -> list[dict[str, Any]]:
    """Every case of every evaluation recorded in the database at `path`."""
    store = open_store(path, readonly=True)
    try:
        return [case for record in store.list_evals() for case in load_eval(store, record.id)["cases"]]
    finally:
        store.close()


def main(paths: list[str]) -> int:
    try:
        cases = [case for path in paths for case in cases_of(path)]
    except ApplianceError as exc:
        print(f"eval_parts: {exc}", file=sys.stderr)
        return 1
    print(format_report(cases, title=f"{len(paths)} parts added up"))
    for half, wanted in (("plain phrasings", True), ("checklist families", False)):
        group = [c for c in cases if (label_of(c, "phrasing") == "plain") is wanted]
        print(f"{half}: {format_headline(headline(group))}")
    runs = Counter(c["scenario"] for c in cases)
    right = Counter(c["scenario"] for c in cases if c["success"])
    print("runs per case:", dict(sorted(Counter(runs.values()).items())))
    for scenario in sorted(s for s in runs if right[s] < runs[s]):
        print(f"  {scenario}: {right[scenario]}/{runs[scenario]} right")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
