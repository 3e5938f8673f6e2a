"""Many processes of one name, and who starts them (`pgrep -c NAME`, `pstree -p`): a fork loop, a
pool that grew without bound, or a job queue that never waits for its workers.

Why by name and parent: a person counts the copies of one program and asks where they come from;
the parent that started most of them is the answer ("who keeps starting these?"). The appliance's
own processes and kernel threads are never counted. Thresholds and why: docs/analyzers.md.
"""

from __future__ import annotations

from collections import defaultdict

from appliance.analyzers.base import OK, WARNING, Finding
from appliance.analyzers.common import candidates, name_of, plural, proc_table, who
from appliance.analyzers.readings import Readings
from appliance.tools.proctree import Swarm, swarm_of

FAMILY = "process_names"
SWARM = 64  # processes of one name started by one parent: more than any usual pool keeps
MAX_SWARMS = 3


def process_names(readings: Readings) -> list[Finding]:
    """Every name kept in SWARM copies or more by one parent (up to MAX_SWARMS, largest first);
    else the name with the most processes, with the parent that started most of them."""
    table = {p["pid"]: p for p in proc_table(readings)}
    groups: dict[str, list[dict]] = defaultdict(list)
    for info in candidates(readings):
        groups[info.get("name") or "?"].append(info)
    if not groups:
        return [Finding(FAMILY, OK, "no processes besides the appliance's own", {"processes": 0})]
    swarms = sorted((swarm_of(name, members) for name, members in groups.items()),
                    key=lambda s: (s.from_parent, len(s.pids), s.name), reverse=True)
    found = [_swarm(s, table) for s in swarms[:MAX_SWARMS] if s.from_parent >= SWARM]
    if found:
        return found
    largest = max(swarms, key=lambda s: (len(s.pids), s.name))
    return [Finding(FAMILY, OK, f"no program runs in unusual numbers: the most common name is {_counted(largest, table)} "
                    f"(a warning from {SWARM} copies with one parent)", _values(largest, table))]


def _counted(swarm: Swarm, table: dict[int, dict]) -> str:
    parent = table.get(swarm.parent or 0)
    by = who(parent) if parent else f"pid {swarm.parent}"
    return (f"{plural(len(swarm.pids), 'process', 'processes')} named {name_of({'name': swarm.name})}, "
            f"{swarm.from_parent} of them started by {by}")


def _values(swarm: Swarm, table: dict[int, dict]) -> dict:
    parent = table.get(swarm.parent or 0) or {}
    return {"name": name_of({"name": swarm.name}), "count": len(swarm.pids), "parent": name_of(parent),
            "parent_pid": swarm.parent, "from_parent": swarm.from_parent, "processes_total": len(table)}


def _swarm(swarm: Swarm, table: dict[int, dict]) -> Finding:
    parent = table.get(swarm.parent or 0)
    return Finding(FAMILY, WARNING, f"{_counted(swarm, table)}: one parent keeps {swarm.from_parent} copies of one "
                   f"program running (at least {SWARM} is more than a usual pool)", _values(swarm, table),
                   culprit=name_of(parent or {"name": swarm.name}), pid=swarm.parent)
