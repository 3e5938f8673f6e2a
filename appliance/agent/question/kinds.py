"""The labels a question is read into: what it asks for, and which part of the machine it is about.

Why enums: a small model picks one label of a short list well under a grammar, and every check that
judges a claim declares the kinds it applies to in these terms, never in the question's words.
"""

from __future__ import annotations

from enum import Enum
from typing import Sequence


class Asks(str, Enum):
    """What the question asks for."""

    PROCESS = "process"
    USER = "user"
    FILE = "file"
    FOLDER = "folder"
    FILESYSTEM = "filesystem"
    PORT = "port"  # a port or a socket
    SERVICE = "service"
    LOG_CAUSE = "log_cause"
    COUNT = "count"
    AMOUNT = "amount"  # an amount with its unit
    YES_NO = "yes_no"
    EXPLANATION = "explanation"  # the explanation of a symptom
    SYSTEM_FACT = "system_fact"
    OUT_OF_SCOPE = "out_of_scope"


class Resource(str, Enum):
    """Which part of the machine the question is about."""

    CPU = "cpu"
    MEMORY = "memory"
    DISK_SPACE = "disk_space"
    DISK_IO = "disk_io"
    NETWORK = "network"
    FILES = "files"  # files and handles
    PROCESSES = "processes"
    TIME = "time"
    LOGS = "logs"
    CONFIG = "config"
    NONE = "none"


# Kinds whose answer names one thing an observation shows.
THINGS = frozenset({Asks.PROCESS, Asks.USER, Asks.FILE, Asks.FOLDER, Asks.FILESYSTEM, Asks.PORT, Asks.SERVICE})
# Kinds whose answer is a number with its unit.
NUMBERS = frozenset({Asks.COUNT, Asks.AMOUNT})
# Every kind a machine can answer.
ANSWERABLE = frozenset(Asks) - {Asks.OUT_OF_SCOPE}

# The analyzer families that judge a resource, used when the question's words name none of them
# (a complaint in words no family lists still gets the verdicts of the part it is about).
RESOURCE_FAMILIES: dict[Resource, tuple[str, ...]] = {
    Resource.CPU: ("cpu", "cgroup_limits", "stalled_tasks", "user_load"),
    Resource.MEMORY: ("memory", "swap", "oom", "memory_growth"),
    Resource.DISK_SPACE: ("filesystem_full", "inodes", "deleted_open", "disk_growth"),
    Resource.DISK_IO: ("disk_io", "stalled_tasks"),
    Resource.NETWORK: ("listening", "connections", "reach", "network_errors", "name_resolution"),
    Resource.FILES: ("open_files", "inodes"),
    Resource.PROCESSES: ("zombies", "threads", "restarts", "process_names", "failed_services"),
    Resource.TIME: ("clock", "uptime", "scheduled_jobs"),
    Resource.LOGS: ("log_errors", "kernel_errors"),
    Resource.CONFIG: (),
    Resource.NONE: (),
}


# The families whose verdicts list the things a kind asks for: a question asking for a port is
# answered from the listening verdict first, whatever other part its words touch ("port busy" is
# no CPU question). Kinds many families answer (a process, a file) have no entry.
KIND_FAMILIES: dict[Asks, tuple[str, ...]] = {
    Asks.PORT: ("listening",),
    Asks.USER: ("user_load",),
    Asks.SERVICE: ("failed_services",),
}


def led_by_kind(families: tuple[str, ...], asks: Asks, known: Sequence[str] = ()) -> tuple[str, ...]:
    """`families` with those that list the asked kind's things first (`known`: those that exist)."""
    lead = tuple(f for f in KIND_FAMILIES.get(asks, ()) if not known or f in known)
    return lead + tuple(f for f in families if f not in lead)


def with_resource(families: tuple[str, ...], resource: Resource, known: Sequence[str] = ()) -> tuple[str, ...]:
    """The families the words name, then those of the resource that the words did not reach."""
    extra = tuple(f for f in RESOURCE_FAMILIES[resource] if f not in families and (not known or f in known))
    return families + extra
