"""The list of analyzers, in the order `appliance check` prints them. Each family lives in its own
module beside this one; adding a family is one import and one entry here."""

from __future__ import annotations

from appliance.analyzers import (
    cpu, deleted_open, disk_io, kernel, log_errors, memory, network, oom, process_counts, readonly_fs, restarts,
    sensors, services, storage, swap, timekeeping,
)
from appliance.analyzers import growth, process_names, user_load  # the checklist's process side
from appliance.analyzers import cgroup_limits, net_errors, reach, resolution, scheduled, stalled  # its system side
from appliance.analyzers.base import Analyzer

# Resources (docs/analyzers.md).
RESOURCES: tuple[Analyzer, ...] = (
    cpu.ANALYZER, memory.ANALYZER, oom.ANALYZER, swap.ANALYZER, storage.SPACE, storage.INODES,
    deleted_open.ANALYZER, readonly_fs.ANALYZER, disk_io.ANALYZER,
)

# Words that name the machine itself. A restart said of one ("when did this box last restart?") is
# its boot, not a program's restart loop: the subject decides (question/facts.py reads the same words).
MACHINE_SUBJECTS = ("machine", "computer", "laptop", "box", "system", "pc", "thing", "vm")
MACHINE_RESTARTS = tuple(f"{subject} {verb}" for subject in MACHINE_SUBJECTS for verb in ("restart", "restarted"))

# Processes, network, logs and time (docs/analyzers.md).
PROCESS_NETWORK_LOG_TIME: tuple[Analyzer, ...] = (
    Analyzer("zombies", ("zombie", "defunct", "dead process", "reap", "pid exhaustion"), process_counts.zombies),
    Analyzer("open_files", ("open files", "file descriptor", "descriptors", "fd", "ulimit", "too many open",
                            "nofile", "file handle", "handles"), process_counts.open_files),
    Analyzer("threads", ("thread", "threads-max", "pid_max", "fork", "cannot create thread"), process_counts.threads),
    Analyzer("restarts", ("restart", "restarting", "restarted", "crash", "crashing", "crashed", "keeps dying",
                          "crash loop", "respawn", "started", "new process", "recently", "keeps starting"), restarts.restarts),
    Analyzer("listening", ("listen", "listening", "port", "open port", "bind", "address in use", "dependency",
                           "server down", "not responding", "connection refused"), network.listening, judges=False),
    Analyzer("connections", ("connection", "connections", "socket", "close_wait", "syn_sent", "network", "who is connected",
                             "established"), network.connections),
    Analyzer("failed_services", ("service", "services", "systemd", "unit", "daemon", "failed", "fail"),
             services.failed_services),
    Analyzer("log_errors", ("log", "logs", "error", "errors", "journal", "syslog", "failing", "crash"),
             log_errors.log_errors, past=True),
    Analyzer("kernel_errors", ("kernel", "dmesg", "driver", "hardware", "i/o error", "freeze", "crash", "panic"),
             kernel.kernel_errors, past=True),
    Analyzer("clock", ("clock", "time", "ntp", "time sync", "chrony", "date", "timezone", "drift", "certificate"),
             timekeeping.clock),
    Analyzer("sensors", ("temperature", "hot", "heat", "fan", "loud", "noise", "battery", "thermal", "overheat"),
             sensors.sensors),
    Analyzer("uptime", ("uptime", "been up", "reboot", "rebooted", "boot", "how long up", "how long running", *MACHINE_RESTARTS),
             timekeeping.uptime, judges=False),
)

# The checklist's process readings (issue 32; docs/analyzers.md "Processes by name, users, growth").
CHECKLIST_PROCS: tuple[Analyzer, ...] = (
    Analyzer("process_names", ("how many processes", "how many copies", "copies", "instances", "spawn", "spawns",
                               "spawning", "spawned", "forking", "forks", "forked", "pgrep", "pstree", "process tree", "who starts",
                               "starts them"),
             process_names.process_names),
    Analyzer("user_load", ("user", "users", "which user", "per user", "user account", "account", "accounts"),
             user_load.user_load),
    Analyzer("memory_growth", growth.MEMORY_TOPICS, growth.memory_growth),
    Analyzer("disk_growth", growth.DISK_TOPICS, growth.disk_growth),
)

# The checklist's system side: reach of listeners, names and routes, scheduled jobs, saturation
# (docs/analyzers.md, "The checklist: reach, names, schedules, saturation").
CHECKLIST_SYSTEM: tuple[Analyzer, ...] = (
    reach.ANALYZER, resolution.ANALYZER, scheduled.ANALYZER, stalled.ANALYZER, cgroup_limits.ANALYZER,
    net_errors.ANALYZER,
)

FAMILIES: tuple[Analyzer, ...] = RESOURCES + PROCESS_NETWORK_LOG_TIME + CHECKLIST_PROCS + CHECKLIST_SYSTEM
