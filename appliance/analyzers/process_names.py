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
from appliance.tools.proctree import swarm_of

FAMILY = "process_names"
SWARM = 64  # processes of one name started by one parent: more than any usual pool keeps


def process_names(readings: Readings) -> list[Finding]:
    """The name with the most processes, with the parent that started most of them."""
    table = {p["pid"]: p for p in proc_table(readings)}
    groups: dict[str, list[dict]] = defaultdict(list)
    for info in candidates(readings):
        groups[info.get("name") or "?"].append(info)
    if not groups:
        return [Finding(FAMILY, OK, "no processes besides the appliance's own", {"processes": 0})]
    name, members = max(groups.items(), key=lambda kv: (len(kv[1]), kv[0]))
    swarm = swarm_of(name, members)
    parent = table.get(swarm.parent or 0)
    by = who(parent) if parent else f"pid {swarm.parent}"
    values = {"name": name_of({"name": name}), "count": len(members), "parent": name_of(parent or {}),
              "parent_pid": swarm.parent, "from_parent": swarm.from_parent, "processes_total": len(table)}
    counted = (f"{plural(len(members), 'process', 'processes')} named {name_of({'name': name})}, "
               f"{swarm.from_parent} of them started by {by}")
    if swarm.from_parent >= SWARM:
        return [Finding(FAMILY, WARNING, f"{counted}: one parent keeps {swarm.from_parent} copies of one program "
                        f"running (at least {SWARM} is more than a usual pool)", values,
                        culprit=name_of(parent or {"name": name}), pid=swarm.parent)]
    return [Finding(FAMILY, OK, f"no program runs in unusual numbers: the most common name is {counted} "
                    f"(a warning from {SWARM} copies with one parent)", values)]
