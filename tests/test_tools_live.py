"""Every tool on the live host, checked against its shape and invariants the way osquery tests its
tables: whatever this machine is, results have the right types, sizes carry units, percentages
lie within 0-100, counts are non-negative and the PIDs named exist."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import psutil
import pytest

from appliance.tools.registry import TOOL_FUNCTIONS, default_registry
from appliance.tools.schema import validate
from support.tools import check_invariants

REGISTRY = default_registry()

# Output schemas, checked with the same validator that checks the model's calls. Fields whose
# type depends on the machine ("no swap configured" vs a dict) are left to the invariants.
STR = {"type": "string"}
INT = {"type": "integer", "minimum": 0}
NUM = {"type": "number", "minimum": 0}
PCT = {"type": "number", "minimum": 0, "maximum": 100}
BOOL = {"type": "boolean"}


def obj(**props) -> dict:
    return {"type": "object", "required": list(props), "properties": props}


def arr(item: dict) -> dict:
    return {"type": "array", "items": item}


PROCESS = obj(pid={"type": "integer", "minimum": 1}, name=STR, cpu_percent=PCT, cores_busy=NUM, memory=STR,
              memory_percent=PCT, started=STR, command=STR)
SCAN = obj(files=INT, dirs=INT, total=STR, elapsed_seconds=NUM, partial=BOOL, skipped={"type": "object"})
LOG = obj(lines_scanned=INT, counts=obj(error=INT, warning=INT), top_errors=arr(obj(count=INT, example=STR)),
          matching_lines=INT, lines=arr(STR))

# tool -> (arguments, schema of its data when the status is ok)
LIVE_CALLS = {
    "system_overview": ({}, obj(os=STR, kernel=STR, hostname=STR, uptime=STR, booted=STR, time_zone=STR, virtualization=STR,
                                cpu=obj(logical_cores={"type": "integer", "minimum": 1}, busy_percent=PCT),
                                load_average=obj(**{"1min": NUM, "5min": NUM, "15min": NUM, "per_core_1min": NUM}),
                                memory=obj(total=STR, available=STR, used_percent=PCT), processes=INT)),
    "top_processes": ({"n": 5, "sample_seconds": 0.5},
                      obj(sorted_by={"type": "string", "enum": ["cpu"]}, sample_seconds=NUM, machine_cpu_percent=PCT,
                          cpu_count={"type": "integer", "minimum": 1}, processes_total=INT, zombies=INT, top=arr(PROCESS))),
    "process_details": ({"pid": os.getpid()}, obj(pid=INT, name=STR, status=STR, command=STR, threads=INT, memory=STR,
                                                  memory_percent=PCT, parent=obj(pid=INT), children=arr(obj(pid=INT)),
                                                  open_files=INT, connections=INT, num_fds=INT, cwd=STR)),
    "memory_report": ({"n": 5}, obj(ram=obj(total=STR, used=STR, available=STR, used_percent=PCT),
                                    top_consumers=arr(obj(pid=INT, name=STR, memory=STR, memory_percent=PCT, command=STR)))),
    "disk_usage": ({}, obj(filesystems=arr(obj(mount=STR, device=STR, type=STR, size=STR, used=STR, free=STR,
                                                used_percent=PCT, read_only=BOOL)))),
    "dir_sizes": ({"path": "/etc", "depth": 1, "top": 5},
                  obj(path=STR, total=STR, scan=SCAN,
                      largest=arr(obj(path=STR, type={"type": "string", "enum": ["dir", "file"]}, size=STR, percent_of_total=PCT)))),
    "largest_files": ({"path": "/etc", "top": 5, "min_size_mb": 0},
                      obj(path=STR, min_size=STR, scan=SCAN, files=arr(obj(path=STR, size=STR, modified=STR)))),
    "disk_io": ({"sample_seconds": 0.3}, obj(sample_seconds=NUM, cpu_iowait_percent=PCT,
                                             disks=arr(obj(disk=STR, read=STR, write=STR, ops_per_second=NUM, busy_percent=PCT)))),
    "network_interfaces": ({"sample_seconds": 0.3}, obj(sample_seconds=NUM,
                                                        interfaces=arr(obj(interface=STR, up=BOOL, addresses=arr(STR))))),
    "network_connections": ({}, obj(listening=arr(obj(proto={"type": "string", "enum": ["tcp", "udp"]}, address=STR,
                                                      port=INT)),
                                    established_by_remote=arr(obj(remote=STR, connections=INT, local_ports=arr(INT))))),
    "sensors": ({}, {"type": "object", "required": ["temperatures", "fans", "battery"]}),
    "read_log": ({"path": "/etc/os-release", "lines": 5}, LOG),
    "read_file": ({"path": "/etc/os-release"}, obj(path=STR, text=STR, size=STR, truncated=BOOL)),
    "list_dir": ({"path": "/etc", "n": 10}, obj(path=STR, entries_total=INT, dirs=INT, files=INT,
                                                entries=arr(obj(name=STR, type=STR)))),
    "run_readonly": ({"command": "uname -a"}, obj(command=STR, exit_code=INT, seconds=NUM, output=STR)),
    "process_tree": ({"pid": 1}, obj(process=obj(pid=INT, name=STR), ancestry=arr({"type": ["object", "null"]}),
                                     children_total=INT, children=arr(obj(pid=INT)), descendants_total=INT)),
    "user_totals": ({"sample_seconds": 0.3}, obj(sample_seconds=NUM, cpu_count=INT, users=arr(
        obj(user=STR, cpu_percent=PCT, cores_busy=NUM, memory_rss=STR, memory_percent=PCT, processes=INT, threads=INT)))),
    "growth": ({"path": "/etc", "seconds": 1.0}, obj(path=STR, seconds=NUM, growing_files=arr(obj(path=STR)),
                                                     filesystem_free=STR)),
    "path_holders": ({"path": "/"}, obj(path=STR, is_mount_point=BOOL, holders_total=INT,
                                        holders=arr(obj(pid=INT, name=STR, holds_as=arr(STR), paths=arr(STR))))),
    "path_lookup": ({"path": "/etc/os-release"}, obj(path=STR, exists=BOOL, components=arr(obj(path=STR, type=STR)))),
    "inspect_path": ({"path": "/etc/hosts"}, obj(path=STR, type=STR, mode=STR, octal=STR, owner=STR, flags=arr(obj(kind=STR)))),
    "inspect_program": ({"program": "sh"}, obj(program=STR, installed=BOOL, found_at=STR, package=STR, flags=arr(obj(kind=STR)))),
    "listening_reach": ({}, obj(listening=arr(obj(proto=STR, port=INT, address=STR, reach=STR)), firewall=STR)),
    "name_resolution": ({"name": "localhost"}, obj(resolv_conf={}, nsswitch_hosts=STR, default_routes={})),
    "scheduled_jobs": ({}, obj(cron_daemon=STR, cron_tables={}, cron_jobs={}, periodic_scripts={}, systemd=STR)),
    "machine_facts": ({}, obj(hostname=STR, fqdn=STR, this_machine_addresses=arr(obj(interface=STR, up=BOOL)),
                              dns_servers={}, clock=STR, kernel_command_line=STR, booted=STR, flags=arr(obj(kind=STR)))),
    "inspect_process": ({"target": str(os.getpid())}, obj(target=STR, processes_matched=INT, headline=STR, flags=arr(
        obj(kind=STR, severity=STR, says=STR)), profiles=arr(obj(pid=INT, name=STR, state=STR, threads=INT,
                                                                 open_files=obj(count=INT), parents=arr(obj(pid=INT)))))),
    "inspect_user": ({"user": "root"}, obj(user=STR, uid=INT, groups=arr(STR), home=obj(path=STR, exists=BOOL),
                                           shell=STR, can_log_in=STR, flags=arr(obj(kind=STR)))),
    "saturation": ({"sample_seconds": 0.3}, obj(sample_seconds=NUM, load=obj(running_now=INT, uninterruptible_now=INT),
                                                stuck_in_D_whole_window={}, pressure={}, network_in_window=obj(
                                                    tcp_segments_out=INT, tcp_retransmitted=INT))),
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
    args, schema = LIVE_CALLS[name]
    started = time.monotonic()
    outcome = REGISTRY.call(name, args)
    elapsed = time.monotonic() - started
    check_invariants(name, outcome)
    assert outcome["status"] in {"ok", "empty", "partial"}, outcome
    if outcome["status"] == "ok":
        problem = validate(outcome["data"], schema, where=name)
        assert problem is None, (problem, outcome["data"])
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


def test_the_top_one_is_never_only_the_appliance():
    """The test process holds the most memory here (it is "the appliance" of this registry): asked
    for one process, the tool still shows the top one that is not the appliance."""
    hog = subprocess.Popen([sys.executable, "-c", "import time; x = bytearray(200 << 20); time.sleep(30)"])
    try:
        time.sleep(0.5)
        from appliance.tools.context import ToolContext
        from appliance.tools.paths import PathPolicy
        from appliance.tools.registry import build_registry
        mine = build_registry(ToolContext(policy=PathPolicy.default(), self_pids=frozenset({hog.pid})))
        data = mine.call("top_processes", {"sort_by": "memory", "n": 1, "sample_seconds": 0.2})["data"]
        assert any(not r.get("self") for r in data["top"]), data["top"]
        assert "only the appliance" not in data["headline"]
    finally:
        hog.kill()
        hog.wait()


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


def test_the_tools_layer_imports_neither_the_ui_nor_the_model_runtime():
    code = ("import sys, appliance.tools.registry, appliance.commands.tools; "
            "print(sorted(m for m in ('textual', 'llama_cpp', 'sqlite_utils') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def test_results_are_plain_json():
    for name, (args, _) in LIVE_CALLS.items():
        if name in {"top_processes", "disk_io", "network_interfaces"}:
            continue  # sampled; covered above
        json.loads(json.dumps(REGISTRY.call(name, args)))
