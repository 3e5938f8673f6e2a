"""The list of analyzers, in the order `appliance check` prints them. Each family lives in its own
module beside this one; adding a family is one import and one entry here."""

from __future__ import annotations

from appliance.analyzers import cpu, deleted_open, disk_io, memory, oom, readonly_fs, storage, swap
from appliance.analyzers.base import Analyzer

RESOURCES: tuple[Analyzer, ...] = (
    cpu.ANALYZER, memory.ANALYZER, oom.ANALYZER, swap.ANALYZER, storage.SPACE, storage.INODES,
    deleted_open.ANALYZER, readonly_fs.ANALYZER, disk_io.ANALYZER,
)

FAMILIES: tuple[Analyzer, ...] = RESOURCES
