"""Plants in the machine's own configuration, all real and all reversible: a line in /etc/hosts that
pins a host name to an address nothing answers at, and a cron table in /etc/cron.d with a heavy job
every minute. Each line and file carries a tag, and tear-down (or the reaper, after a crash) takes
out exactly what was added, atomically (appliance/eval/etc_files.py).

The controls: the same host name with no entry at all (nothing on this machine overrides it: the
healthy case of "where does this name go?"; a pin to loopback would itself be an override), and a
cron table whose one job runs once a day and only cleans up old files.

No cron daemon runs here, so the planted job never runs: the table is what the question is about,
as the tools read it (an installed table is the same file whether a daemon is up or not).
"""

from __future__ import annotations

import random

from appliance.eval import etc_files
from appliance.eval.fault import Fault
from appliance.eval.sandbox import Sandbox, short_token
from appliance.eval.scoring import mentions, no_culprit

# TEST-NET-2 (RFC 5737): reserved for documentation, never routed; nothing answers there.
_NOWHERE = "198.51.100.{}"


def _host() -> str:
    return f"ledgerdb-{short_token()}.internal"


# -- a host name pinned in /etc/hosts ---------------------------------------------------------------

def plant_name_resolution(sandbox: Sandbox) -> Fault:
    host = _host()
    address = _NOWHERE.format(random.randint(10, 250))
    tag = sandbox.add_etc_lines(etc_files.HOSTS, [f"{address}\t{host}"])
    return Fault(sandbox, {"host": host, "address": address, "path": str(etc_files.HOSTS), "tag": tag},
                 [mentions("pinning entry", [address, "/etc/hosts", "hosts file", "hosts entry", "etc/hosts"])],
                 slots={"host": host})


def control_name_resolution(sandbox: Sandbox) -> Fault:
    host = _host()
    fine = ("no entry", "not in /etc/hosts", "not listed", "no override", "not overridden", "nothing overrides",
            "through dns", "via dns", "dns decides", "not pinned")
    return Fault(sandbox, {"host": host, "fault": None}, [no_culprit(fine=fine)], slots={"host": host})


# -- a cron table ------------------------------------------------------------------------------------

def _table(sandbox: Sandbox, base: str, line: str) -> tuple[str, str]:
    name = f"{base}-{short_token()}"
    path = sandbox.add_etc_file(etc_files.CRON_D, name, f"SHELL=/bin/sh\n{line.format(name=name)}\n")
    return name, str(path)


def plant_scheduled_jobs(sandbox: Sandbox) -> Fault:
    name, path = _table(sandbox, "snapmirror",
                        "* * * * * root /usr/bin/tar -czf /var/tmp/{name}.tar.gz /usr /var/lib 2>/dev/null")
    return Fault(sandbox, {"table": path, "schedule": "* * * * *", "name": name,
                           "command": f"/usr/bin/tar -czf /var/tmp/{name}.tar.gz /usr /var/lib"},
                 [mentions("every-minute job", [name, "snapmirror", "tar -czf", "/usr/bin/tar"])])


def control_scheduled_jobs(sandbox: Sandbox) -> Fault:
    name, path = _table(sandbox, "tmpsweep",
                        "17 3 * * * root /usr/bin/find /var/tmp -name '*.tmp' -mtime +7 -delete")
    fine = ("once a day", "daily", "every day", "nothing runs every minute", "no job runs every minute",
            "nothing is scheduled every minute", "no cron job", "no job", "none of them runs every minute",
            "none runs every minute")
    return Fault(sandbox, {"table": path, "fault": None, "decoy": name, "schedule": "17 3 * * *"},
                 [no_culprit(decoys=[name, "tmpsweep"], fine=fine)])
