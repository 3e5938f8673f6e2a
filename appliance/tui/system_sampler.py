"""Cheap once-a-second readings of CPU, memory and the busiest processes, for the system panel.

Runs in a thread worker (never on the event loop). `psutil.cpu_percent(interval=None)` compares
with the previous call instead of sleeping, and `process_iter` caches Process objects between
calls, so per-process CPU percentages come for free from the second sample on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

TOP_N = 5


@dataclass(frozen=True)
class ProcessReading:
    pid: int
    name: str
    cpu_percent: float
    memory_mb: float


@dataclass(frozen=True)
class SystemSample:
    cpu_percent: float
    memory_percent: float
    memory_used_gb: float
    memory_total_gb: float
    top: tuple[ProcessReading, ...] = field(default_factory=tuple)


Sampler = Callable[[], SystemSample]


class PsutilSampler:
    """The real sampler. Call it once a second from a thread."""

    def __init__(self, top_n: int = TOP_N) -> None:
        import psutil

        self._psutil = psutil
        self.top_n = top_n
        self._own_pid = os.getpid()
        psutil.cpu_percent(interval=None)  # prime: the first reading is meaningless

    def __call__(self) -> SystemSample:
        psutil = self._psutil
        cpu = psutil.cpu_percent(interval=None)
        memory = psutil.virtual_memory()
        readings: list[ProcessReading] = []
        for proc in psutil.process_iter(["pid", "name", "cpu_percent", "memory_info"]):
            info = proc.info
            if info.get("cpu_percent") is None or info.get("memory_info") is None:
                continue
            readings.append(
                ProcessReading(
                    pid=info["pid"],
                    name=(info.get("name") or "?")[:20],
                    cpu_percent=float(info["cpu_percent"]),
                    memory_mb=info["memory_info"].rss / 1e6,
                )
            )
        readings.sort(key=lambda r: (r.cpu_percent, r.memory_mb), reverse=True)
        return SystemSample(
            cpu_percent=cpu,
            memory_percent=memory.percent,
            memory_used_gb=(memory.total - memory.available) / 2**30,
            memory_total_gb=memory.total / 2**30,
            top=tuple(readings[: self.top_n]),
        )
