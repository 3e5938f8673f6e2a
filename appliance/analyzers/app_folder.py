"""An application's own folder, named in a question that is not about its storage ("billing is
broken, it lives in /opt/billing"): its logs and its configuration files are judged, as a person
would open logs/ and the config first; the folder's sizes answer no such question.

Which files: the newest logs anywhere below the folder (named like logs or inside a log folder,
MAX_LOGS of them) and the configuration files directly in it (MAX_CONFIGS); files in private
places (.env, keys: the path policy's deny-list) are neither read nor named.
"""

from __future__ import annotations

import os
from pathlib import Path

from appliance.analyzers.base import Finding
from appliance.analyzers.config_file import config_findings, is_config_path
from appliance.analyzers.dependencies import log_findings
from appliance.analyzers.log_errors import newest_logs
from appliance.analyzers.readings import Readings
from appliance.tools.logs import is_log_path
from appliance.tools.paths import PathDenied

MAX_LOGS = 2
MAX_CONFIGS = 2


def folder_logs(folder: str, readings: Readings) -> list[str]:
    """The newest logs below `folder` (a path relative to it names them as logs), newest first;
    walked once per check (the first step's looks and the folder's verdicts both ask)."""
    return readings.get(f"folder_logs:{folder}", lambda: _walk_logs(folder, readings))


def _walk_logs(folder: str, readings: Readings) -> list[str]:
    try:
        root = str(readings.policy.resolve(folder, "read"))
        files = newest_logs(readings, root)
    except (PathDenied, OSError):
        return []
    return [f for f in files if is_log_path(os.path.relpath(f, root))][:MAX_LOGS]


def folder_configs(folder: str, readings: Readings) -> list[str]:
    """The configuration files directly in `folder` that are not in a private place, by name."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    return [e.path for e in entries if e.is_file(follow_symlinks=False) and is_config_path(e.path)
            and not readings.policy.is_secret(Path(e.path))][:MAX_CONFIGS]


def app_folder_findings(folder: str, readings: Readings) -> list[Finding]:
    """The verdicts on the folder's logs (with what their errors point at) and its configuration."""
    found: list[Finding] = []
    for log in folder_logs(folder, readings):
        found += [f for f in log_findings(log, readings) if f not in found]
    for config in folder_configs(folder, readings):
        found += config_findings(config, readings)
    return found


__all__ = ["app_folder_findings", "folder_configs", "folder_logs"]
