"""Deterministic analyzers, one per fault family, and the runner that applies them all.

Layer: beside `appliance.tools` (they read the machine through the same read-only helpers); the
engine, `appliance check` and the TUI import them; they import nothing above the tools.
"""

from appliance.analyzers.base import (
    CRITICAL,
    OK,
    UNKNOWN,
    WARNING,
    Analyzer,
    Finding,
    by_severity,
    exit_status,
    worst,
)
from appliance.analyzers.readings import ReadingUnavailable, Readings
from appliance.analyzers.runner import ANALYZERS, INVENTORY_FAMILIES, PAST_FAMILIES, for_question, run_all

__all__ = [
    "ANALYZERS", "CRITICAL", "INVENTORY_FAMILIES", "PAST_FAMILIES", "OK", "UNKNOWN", "WARNING", "Analyzer", "Finding", "ReadingUnavailable",
    "Readings", "by_severity", "exit_status", "for_question", "run_all", "worst",
]
