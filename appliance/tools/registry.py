"""All the tools, bound to one context, as the Registry the engine and `appliance tools` use.

Every tool is wrapped once here, so no tool can forget: a path denial becomes a `denied` result
that says why, a missing or unreadable file becomes a one-line `error`, and the whole result
passes through the redactor before anyone sees it.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Callable, Sequence

from appliance.tools import (
    commands, disks, files, logs, memory, network, processes, reach, resolution, saturation, schedules, sensors, system,
    tree_sizes,
)
from appliance.tools import growth, holders, inspect_path, inspect_program, lookup, proctree, users
from appliance.tools import inspect_process, inspect_user, machine_facts
from appliance.tools.base import ERROR, Registry, ToolResult, bind, fail
from appliance.tools.context import ToolContext
from appliance.tools.paths import PathDenied, PathPolicy
from appliance.tools.procs import is_root
from appliance.tools.redact import redact_value

__all__ = ["ToolContext", "build_registry", "default_registry", "TOOL_FUNCTIONS"]

# The order of the prompt and the grammar: the overview first, then by subject.
TOOL_FUNCTIONS: tuple[Callable[..., Any], ...] = (
    system.system_overview,
    machine_facts.machine_facts,
    processes.top_processes,
    processes.process_details,
    memory.memory_report,
    disks.disk_usage,
    tree_sizes.dir_sizes,
    tree_sizes.largest_files,
    disks.disk_io,
    network.network_interfaces,
    network.network_connections,
    sensors.sensors,
    logs.read_log,
    files.read_file,
    files.list_dir,
    # The checklist's process and path readings: processes by name, users, growth, who holds a path.
    proctree.process_tree,
    users.user_totals,
    growth.growth,
    holders.path_holders,
    lookup.path_lookup,
    # Profiles of one named thing: a path, a program.
    inspect_path.inspect_path,
    inspect_program.inspect_program,
    # The checklist's system side: who can reach a listener, names and routes, jobs, saturation.
    reach.listening_reach,
    resolution.name_resolution,
    schedules.scheduled_jobs,
    saturation.saturation,
    # Profiles of one named thing: a process (by pid or name), a user.
    inspect_process.inspect_process,
    inspect_user.inspect_user,
    commands.run_readonly,
)


def guarded(func: Callable[..., ToolResult]) -> Callable[..., ToolResult]:
    """Turn policy denials, file errors and tool bugs into results, and redact whatever comes out."""

    @functools.wraps(func)
    def call(**kwargs: Any) -> ToolResult:
        try:
            outcome = func(**kwargs)
        except PathDenied as exc:
            outcome = exc.as_result()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            outcome = fail(str(exc) if not exc.filename else f"{exc.filename}: {exc.strerror}", ERROR)
        except PermissionError as exc:
            outcome = fail(permission_message(exc.filename or kwargs.get("path") or "it"), ERROR)
        except OSError as exc:  # EINVAL from /proc/N/attr/*, EIO, ...: one line, not a traceback
            outcome = fail(f"{exc.filename or kwargs.get('path') or 'it'} cannot be read: {exc.strerror or exc}", ERROR)
        except Exception as exc:  # a tool bug is an observation; its message may quote data, so redact it
            outcome = fail(f"{type(exc).__name__}: {exc}", ERROR)
        return redact_value(outcome)

    return call


def permission_message(where: str) -> str:
    """Why the kernel refused: as root, not a missing privilege the person could add."""
    if not is_root():
        return f"permission denied reading {where} (the appliance is not running as root)"
    if str(where).startswith("/proc/"):
        return (f"permission denied reading {where}, even as root: the kernel allows another process's root, cwd, "
                f"ns and io entries only with ptrace access, which this system refuses")
    return f"permission denied reading {where}, even as root (a security module, mount option or file attribute refuses it)"


def build_registry(context: ToolContext) -> Registry:
    """Every tool, bound to `context`, guarded and redacted."""
    return Registry(bind(func, wrap=guarded, ctx=context) for func in TOOL_FUNCTIONS)


def default_registry(extra_roots: Sequence[str | os.PathLike] = ()) -> Registry:
    """The registry with the default path policy plus `extra_roots`, for this process."""
    return build_registry(ToolContext(policy=PathPolicy.default(extra_roots)))
