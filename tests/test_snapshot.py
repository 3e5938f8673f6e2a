"""The first snapshot on the real host: built from the tools' own process sample, with the tools'
one label on the appliance's processes and a headline that never names the appliance."""

from __future__ import annotations

import os

from appliance.agent.snapshot import take_snapshot
from appliance.tools.procs import SELF_LABEL, label_records


def test_snapshot_labels_this_process_and_its_headline_skips_it():
    snap = take_snapshot(frozenset({os.getpid()}), sample_seconds=0.2, top=100_000)  # every process
    rows = snap["top_cpu"]
    mine = [r for r in rows if r["pid"] == os.getpid()]
    assert mine and mine[0]["self"] is True and mine[0]["name"].endswith(SELF_LABEL)
    strangers = [r for r in rows if r["pid"] == 1]
    assert strangers and "self" not in strangers[0] and SELF_LABEL not in strangers[0]["name"]
    # the same units as top_processes: a share of all cores and of all memory
    assert {"pid", "name", "cpu_percent", "memory_percent", "user"} <= set(rows[0])
    assert f"pid={os.getpid()} " not in snap["headline"] and snap["headline"].startswith("top cpu: pid=")
    assert len(snap["top_memory"]) == len(rows)


def test_label_records_marks_a_record_once_however_deep():
    data = {"top": [{"pid": 7, "name": "python3"}, {"pid": 8, "name": "nginx"}], "pid": 7}
    once = label_records(data, {7})
    twice = label_records(once, {7})
    assert twice["top"][0] == {"pid": 7, "name": f"python3 {SELF_LABEL}", "self": True}
    assert twice["top"][1] == {"pid": 8, "name": "nginx"}
    assert twice["self"] is True and data["top"][0] == {"pid": 7, "name": "python3"}  # the input is not changed
