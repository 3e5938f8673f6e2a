"""The saturation counters (appliance.tools.saturation) read twice over the check's interval, once
per check for the families that judge them (stalled tasks, cgroup limits, network errors). Taken in
the asking analyzer's thread, beside the process sample, so it adds nothing to the check's time."""

from __future__ import annotations

from appliance.analyzers import procfs
from appliance.analyzers.readings import Readings
from appliance.tools import saturation


def window(readings: Readings) -> saturation.Window:
    pair = procfs.over_interval(readings, "saturation", saturation.snapshot)
    return saturation.Window(pair.before, pair.after)
