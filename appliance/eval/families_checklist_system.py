"""The checklist's system-side fault families, for a sealed split of their own (the lead wires
them in; they are not in `appliance.eval.families.FAMILIES`). Phrasings were written before any
tuning and have never been run with a model.

Name resolution and scheduled jobs live in /etc: their families (a pinned /etc/hosts line, a cron
table) are in families_checklist_names.py, planted with tagged lines and files that are taken out
exactly. Still left out: the resolver and routes (/etc/resolv.conf and the route table serve the
whole machine, the evaluation included), systemd timers (systemd does not run here), interface
errors and TCP retransmits (they need a lossy link; loopback loses nothing). System facts are a
question without a fault (like uptime): its truth is read when the case starts.
"""

from __future__ import annotations

from appliance.eval.families import Family
from appliance.eval.plants import checklist_system as plants

SEALED_FAMILIES: tuple[Family, ...] = (
    Family(
        "reach", "a web server bound to 127.0.0.1 only; control: the same bound to all interfaces",
        plants.plant_reach, plants.control_reach,
        "My web server on port {port} answers on this machine but other machines cannot connect to it. Why?",
        "site on port {port} works here but not from my laptop??",
        "Can other machines on the network connect to the service on port {port}?",
        "is port {port} open to other computers or just this one?",
        asks=('explanation', 'explanation', 'yes_no', 'yes_no'),
    ),
    Family(
        "cgroup_limits", "a busy process held to 5 % of a core by its control group's quota; control: asleep in one",
        plants.plant_cgroup_limits, plants.control_cgroup_limits,
        "A process here is slow although the CPU is mostly idle. Is it being throttled by a CPU limit? Which one?",
        "my image job crawls but top says the cpu is barely used, what's holding it back?",
        "Is any process being throttled by a CPU quota of its control group right now?",
        "is anything on this box capped on cpu?",
        asks=('process', 'explanation', 'yes_no', 'yes_no'),
    ),
    Family(
        "network_errors", "a loopback listener that never accepts its queued connections; control: one that accepts",
        plants.plant_network_errors, plants.control_network_errors,
        "Connections to the service on TCP port {port} hang and time out. Which process is not accepting them?",
        "stuff connecting to port {port} just hangs forever, what's up?",
        "Is any listening service failing to accept its incoming connections?",
        "are connections piling up anywhere on this machine?",
        asks=('process', 'explanation', 'yes_no', 'yes_no'),
    ),
    Family(
        "stalled_tasks", "a process stuck in uninterruptible sleep (D state); control: the same name, asleep",
        plants.plant_stalled_tasks, plants.control_stalled_tasks,
        "Is any process stuck in uninterruptible sleep (D state)? Give its name and PID.",
        "the load average is up but the cpu is idle, something seems hung, what is it?",
        "Are there any processes in uninterruptible sleep (D state) right now?",
        "anything hung on this machine?",
        asks=('process', 'process', 'yes_no', 'yes_no'),
    ),
    Family(
        "system_facts", "no fault: the kernel release and whether this is a container or a virtual machine",
        plants.plant_system_facts, plants.plant_system_facts,
        "What kernel version does this machine run, and is it a virtual machine or a container?",
        "what am i even running on here? kernel, vm, that kind of thing",
        "Which Linux kernel release is running, and is this bare metal, a VM or a container?",
        "is this a real server or some vm/container thing? which kernel?",
        has_fault=False,
        asks=('system_fact', 'system_fact', 'system_fact', 'system_fact'),
    ),
)
