"""How many threads llama.cpp should use for the next model call, given what else is running.

llama.cpp's threads spin and wait for each other at every layer, so one thread that shares its core
with a runaway process holds all the others back: measured here with Qwen 0.5B and one of two cores
held by a busy process, 2 threads generate 17.9 tokens/s and 1 thread 33.7. The appliance is run
exactly when such a process exists, so before each model call the threads are chosen from the
cores that are actually idle.

The load is sampled without sleeping: per-CPU times (/proc/stat through psutil) are kept between
calls and the busy share over the window since the previous call is computed. That window mostly
covers the previous generation, when the appliance's own threads were busy too, so the process's
own CPU time over the same window is subtracted: what remains is the load of everyone else.
`choose_threads` is the pure decision; `AdaptiveThreadPolicy` is the callable a chat model calls.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Callable, Sequence

# Another program's load counts as holding a core once it uses this share of one: a core that
# is busy a third of the time already stalls llama.cpp's lock-step threads.
TAKEN_THRESHOLD = 0.35
# A single CPU counts as in use by others from this share (light noise stays below it).
CPU_BUSY_THRESHOLD = 0.25


def physical_cores() -> int:
    """Physical cores this process may use: psutil's physical count, capped by the CPU affinity
    and by a container's CPU quota (cgroup v2 cpu.max), where more threads would only queue."""
    import psutil

    count = psutil.cpu_count(logical=False) or psutil.cpu_count(logical=True) or 1
    try:
        allowed = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        allowed = count
    return max(1, min(count, allowed, cgroup_cpu_limit() or count))


def cgroup_cpu_limit(path: str = "/sys/fs/cgroup/cpu.max") -> int | None:
    """CPUs a cgroup v2 quota allows (rounded up), or None when there is no quota."""
    try:
        quota, period = open(path).read().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    try:
        return max(1, math.ceil(int(quota) / int(period)))
    except (ValueError, ZeroDivisionError):
        return None


def choose_threads(per_core_busy: Sequence[float], physical_cores: int,
                   own_busy_cores: float = 0.0) -> tuple[int, int]:
    """(n_threads, n_threads_batch) for the next call, from per-CPU busy shares (0..1 each).

    The appliance's own busy time (`own_busy_cores`, in cores) is taken off the busiest CPUs
    first (that is where its threads ran); what remains on each CPU is other programs' load. A CPU
    counts as taken when that load reaches CPU_BUSY_THRESHOLD, but never more CPUs than the total
    of others' load rounds up to from TAKEN_THRESHOLD (a hog hopping between two CPUs holds one
    core, not two), so light background noise spread over many CPUs takes nothing away. Never more threads than
    physical cores, never fewer than one. Prompt evaluation follows the same rule: measured here,
    it too is faster on one free core than on two shared ones.
    """
    physical = max(1, int(physical_cores))
    busy = sorted((min(1.0, max(0.0, float(b))) for b in per_core_busy), reverse=True)
    own = max(0.0, float(own_busy_cores))
    others = []
    for share in busy:
        mine = min(share, own)
        own -= mine
        others.append(share - mine)
    held = sum(1 for share in others if share >= CPU_BUSY_THRESHOLD)
    total = math.floor(sum(others) + (1.0 - TAKEN_THRESHOLD))
    threads = max(1, min(physical, physical - min(held, total)))
    return threads, threads


@dataclass(frozen=True)
class LoadSample:
    """Per-CPU busy shares and the appliance's own busy cores over `window` seconds."""

    per_core_busy: tuple[float, ...]
    own_busy_cores: float
    window: float


class LoadSampler:
    """Per-CPU load and own CPU use over the window since the previous `sample()` (no sleep).

    If the previous reading is older than `max_window` (the person was reading an answer), a fresh
    `fresh_window`-second reading is taken instead, so an old quiet minute does not hide a new hog.
    """

    def __init__(self, *, min_window: float = 0.1, max_window: float = 5.0, fresh_window: float = 0.15,
                 clock: Callable[[], float] = time.monotonic) -> None:
        import psutil

        self._psutil = psutil
        self._process = psutil.Process()
        self.min_window = min_window
        self.max_window = max_window
        self.fresh_window = fresh_window
        self._clock = clock
        self._stale = False
        self._last = self._read()

    def _read(self):
        cpus = self._psutil.cpu_times(percpu=True)
        own = self._process.cpu_times()
        return self._clock(), cpus, own.user + own.system

    def expire(self) -> None:
        """Make the next `sample()` take a fresh reading instead of using the window since the
        previous one. Called when a new question starts: the window then covers the gap between
        runs, in which the situation may have changed (measured in `appliance eval`: a CPU hog
        started one second before the question hid in a 4-second window that was mostly quiet,
        2 threads were chosen and the first step took 210 s instead of about 70 s)."""
        self._stale = True

    def sample(self) -> LoadSample:
        elapsed = self._clock() - self._last[0]
        if elapsed > self.max_window or self._stale:
            self._stale = False
            self._last = self._read()
            time.sleep(self.fresh_window)
        elif elapsed < self.min_window:
            time.sleep(self.min_window - elapsed)
        now = self._read()
        before, self._last = self._last, now
        window = max(1e-6, now[0] - before[0])
        busy = tuple(_busy_share(a, b) for a, b in zip(before[1], now[1]))
        own = max(0.0, (now[2] - before[2]) / window)
        return LoadSample(busy, own, window)


def _busy_share(before, after) -> float:
    total = sum(after) - sum(before)
    if total <= 0:
        return 0.0
    idle = (after.idle - before.idle) + (getattr(after, "iowait", 0.0) - getattr(before, "iowait", 0.0))
    return min(1.0, max(0.0, 1.0 - idle / total))


@dataclass(frozen=True)
class ThreadChoice:
    """One decision, kept for the status bar and the store."""

    threads: int
    threads_batch: int
    per_core_busy: tuple[float, ...]
    own_busy_cores: float


class AdaptiveThreadPolicy:
    """Callable returning (n_threads, n_threads_batch) for the next model call.

    Pass it as `thread_policy` to the chat model; `last` holds the latest decision and its readings.
    """

    def __init__(self, physical: int | None = None, sampler: LoadSampler | None = None) -> None:
        self.physical = physical if physical is not None else physical_cores()
        self.sampler = sampler if sampler is not None else LoadSampler()
        self.last: ThreadChoice | None = None

    def expire(self) -> None:
        """A new run starts: read the load afresh before its first model call."""
        self.sampler.expire()

    def __call__(self) -> tuple[int, int]:
        sample = self.sampler.sample()
        threads, batch = choose_threads(sample.per_core_busy, self.physical, sample.own_busy_cores)
        self.last = ThreadChoice(threads, batch, sample.per_core_busy, sample.own_busy_cores)
        return threads, batch


class FixedThreadPolicy:
    """Always the same pair: the baseline the benchmark compares against."""

    def __init__(self, threads: int, threads_batch: int | None = None) -> None:
        self.pair = (threads, threads_batch or threads)

    def __call__(self) -> tuple[int, int]:
        return self.pair
