"""Every tool on the live host, checked against its shape and invariants the way osquery tests its
tables: whatever this machine is, results have the right types, sizes carry units, percentages
lie within 0-100, counts are non-negative and the PIDs named exist."""

from __future__ import annotations

import json
import os
import time

import psutil
import pytest

from appliance.tools.registry import TOOL_FUNCTIONS, default_registry
from appliance.tools.schema import validate
from test_tools_support import check_invariants

REGISTRY = default_registry()

# tool -> (arguments, keys its data must have when the status is ok)
LIVE_CALLS = {
    "system_overview": ({}, {"os", "kernel", "uptime", "booted", "cpu", "load_average", "memory", "swap", "battery"}),
    "top_processes": ({"n": 5, "sample_seconds": 0.5}, {"top", "machine_cpu_percent", "processes_total", "sample_seconds"}),
    "process_details": ({"pid": os.getpid()}, {"pid", "name", "status", "command", "threads", "memory", "parent"}),
    "memory_report": ({"n": 5}, {"ram", "swap", "pressure", "top_consumers"}),
    "disk_usage": ({}, {"filesystems"}),
    "dir_sizes": ({"path": "/etc", "depth": 1, "top": 5}, {"path", "total", "largest", "scan"}),
    "largest_files": ({"path": "/etc", "top": 5, "min_size_mb": 0}, {"path", "files", "scan"}),
    "disk_io": ({"sample_seconds": 0.3}, {"disks", "sample_seconds"}),
    "network_interfaces": ({"sample_seconds": 0.3}, {"interfaces"}),
    "network_connections": ({}, set()),
    "sensors": ({}, {"temperatures", "fans", "battery"}),
    "read_log": ({"path": "/etc/os-release", "lines": 5}, {"lines", "counts", "top_errors", "lines_scanned"}),
    "read_file": ({"path": "/etc/os-release"}, {"path", "text", "size", "truncated"}),
    "list_dir": ({"path": "/etc", "n": 10}, {"path", "entries", "entries_total"}),
    "run_readonly": ({"command": "uname -a"}, {"command", "exit_code", "output"}),
}


def test_every_registered_tool_has_a_live_check_and_a_short_description():
    assert set(REGISTRY.names()) == set(LIVE_CALLS)
    assert len(TOOL_FUNCTIONS) == len(LIVE_CALLS)
    for spec in REGISTRY.specs:
        assert 40 <= len(spec.description) <= 330, (spec.name, len(spec.description))
        assert spec.parameters["additionalProperties"] is False
        assert "ctx" not in spec.parameters["properties"]
        assert validate(dict(spec.example), spec.parameters) is None, spec.name  # examples are valid calls


@pytest.mark.parametrize("name", sorted(LIVE_CALLS))
def test_tool_on_the_live_host(name):
    args, keys = LIVE_CALLS[name]
    started = time.monotonic()
    outcome = REGISTRY.call(name, args)
    elapsed = time.monotonic() - started
    check_invariants(name, outcome)
    assert outcome["status"] in {"ok", "empty", "partial"}, outcome
    if outcome["status"] == "ok":
        assert keys <= set(outcome["data"]), (name, sorted(outcome["data"]))
    assert elapsed < REGISTRY.get(name).timeout


def test_top_processes_lists_real_processes_ranked_and_labels_this_one():
    data = REGISTRY.call("top_processes", {"sort_by": "memory", "n": 25, "sample_seconds": 0.3})["data"]
    rows = data["top"]
    assert rows and data["processes_total"] >= len(rows)
    assert all(psutil.pid_exists(r["pid"]) or r.get("status") == "zombie" for r in rows[:5])
    mine = [r for r in rows if r["pid"] == os.getpid()]
    if mine:  # the test process is "the appliance" of this registry
        assert mine[0]["self"] is True and mine[0]["name"].endswith("(appliance itself)")
    assert all("self" not in r for r in rows if r["pid"] != os.getpid() and r["pid"] not in {p.pid for p in psutil.Process().children(recursive=True)})


def test_top_processes_io_sort_reports_rates():
    data = REGISTRY.call("top_processes", {"sort_by": "io", "n": 3, "sample_seconds": 0.3})["data"]
    assert all("io_read" in r and "io_write" in r for r in data["top"])


def test_process_details_of_a_vanished_pid_is_a_clear_error():
    pid = max(psutil.pids()) + 100000
    outcome = REGISTRY.call("process_details", {"pid": min(pid, 4194304)})
    assert outcome["status"] == "error" and "no process" in outcome["error"]


def test_process_details_names_parent_and_self():
    data = REGISTRY.call("process_details", {"pid": os.getpid()})["data"]
    assert data["parent"]["pid"] == os.getppid()
    assert data["self"] is True


def test_disk_usage_percentages_match_the_kernel():
    data = REGISTRY.call("disk_usage", {})["data"]
    root = [fs for fs in data["filesystems"] if fs["mount"] == "/"]
    if root:
        assert abs(root[0]["used_percent"] - psutil.disk_usage("/").percent) < 1.0
    assert [fs["used_percent"] for fs in data["filesystems"]] == sorted(
        (fs["used_percent"] for fs in data["filesystems"]), reverse=True)


def test_schema_refuses_bad_arguments_before_the_tool_runs():
    assert REGISTRY.call("top_processes", {"n": 500})["status"] == "invalid"
    assert REGISTRY.call("top_processes", {"sort_by": "fun"})["status"] == "invalid"
    assert REGISTRY.call("read_file", {})["status"] == "invalid"
    assert REGISTRY.call("read_file", {"path": "/etc/hostname", "extra": 1})["status"] == "invalid"
    assert REGISTRY.call("read_file", {"path": "x" * 600})["status"] == "invalid"


def test_results_are_plain_json():
    for name, (args, _) in LIVE_CALLS.items():
        if name in {"top_processes", "disk_io", "network_interfaces"}:
            continue  # sampled; covered above
        json.loads(json.dumps(REGISTRY.call(name, args)))
