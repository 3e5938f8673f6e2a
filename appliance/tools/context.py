"""What the tools are given instead of reading globals: the path policy, which processes are the
appliance itself (so no listing ever blames it), and the bounds of directory scans."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from appliance.tools.paths import PathPolicy


@dataclass(frozen=True)
class ToolContext:
    """policy: the one PathPolicy; self_pids: the appliance's own processes (their descendants are
    found at call time); scan_entries / scan_seconds: the budget of one directory walk."""

    policy: PathPolicy
    self_pids: frozenset[int] = field(default_factory=lambda: frozenset({os.getpid()}))
    scan_entries: int = 150_000
    scan_seconds: float = 8.0
    command_timeout: float = 10.0
