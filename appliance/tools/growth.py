"""What grows over a short window: processes whose memory grows, or files under a folder whose size
grows and the free space of their filesystem, each as a rate per second and, where there is a
limit, the time until it is reached at that rate.

Why a window: every other reading is one moment, and "it keeps growing" is a difference between
two. The window is seconds long, so only a fast leak or a busy writer shows; the verdict says so.
Memory is RSS read from /proc/PID/statm (cheap enough to read every process several times).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import psutil

from appliance.tools import units
from appliance.tools.base import EMPTY, ok, result, tool
from appliance.tools.context import ToolContext
from appliance.tools.paths import PathPolicy
from appliance.tools.procs import command_line, label, own_tree
from appliance.tools.schema import Doc, MaxLen, Range
from appliance.tools.walk import WalkStats, walk

PAGE = os.sysconf("SC_PAGE_SIZE")
STEPS = 4  # readings after the first: a steady grower grows in all intervals but one
MAX_SHOWN = 8
WALK_ENTRIES = 50_000
FREE = "\x00free"  # the filesystem's free bytes beside the files' sizes (no file name holds a NUL)


def rss_all() -> dict[int, int]:
    """Resident bytes of every process now (kernel threads and vanished processes left out)."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/statm", "rb") as statm:
                resident = int(statm.read().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            continue
        if resident:
            found[int(name)] = resident
    return found


@dataclass(frozen=True)
class Grower:
    """A process's or a file's size at the start and end of the window, and whether it grew
    steadily (never shrank, grew in all intervals but one) rather than once."""

    key: int | str
    first: int
    last: int
    seconds: float
    steady: bool

    @property
    def rate(self) -> float:
        return (self.last - self.first) / self.seconds if self.seconds > 0 else 0.0


def series(read, seconds: float, steps: int = STEPS) -> tuple[list[dict], float]:
    """`read()` taken steps+1 times over `seconds`; the readings and the time they spanned."""
    started = time.monotonic()
    taken = [read()]
    for step in range(1, steps + 1):
        time.sleep(max(0.0, started + seconds * step / steps - time.monotonic()))
        taken.append(read())
    return taken, max(time.monotonic() - started, 1e-3)


def growers(taken: list[dict], seconds: float) -> list[Grower]:
    """Everything present in the first and last reading that ended larger, fastest first."""
    first, last = taken[0], taken[-1]
    out = []
    for key, end in last.items():
        start = first.get(key)
        if start is None or end <= start:
            continue
        values = [t.get(key) for t in taken]
        pairs = list(zip(values, values[1:]))
        # steady: never smaller, and larger in all intervals but one (a busy machine may not run the
        # grower in one of them)
        steady = all(a is not None and b is not None and b >= a for a, b in pairs) and \
            sum(1 for a, b in pairs if a is not None and b is not None and b > a) >= max(1, len(pairs) - 1)
        out.append(Grower(key, start, end, seconds, steady))
    return sorted(out, key=lambda g: g.rate, reverse=True)


def until(left: float, rate: float) -> str | None:
    """How long `left` bytes last at `rate` bytes per second ("3 min"), None when not shrinking."""
    return units.duration(left / rate) if rate > 0 else None


def _process_rows(found: list[Grower], own: set[int]) -> list[dict]:
    available = psutil.virtual_memory().available
    rows = []
    for grower in found[:MAX_SHOWN]:
        try:
            info = psutil.Process(int(grower.key)).as_dict(["name", "username", "cmdline"], ad_value=None)
        except psutil.Error:
            continue
        row = {"pid": grower.key, "name": info.get("name") or "?", "user": info.get("username"),
               "memory_start": units.size(grower.first), "memory_end": units.size(grower.last),
               "growth_per_second": units.rate(grower.rate), "steady": grower.steady,
               "memory_full_in": until(available, grower.rate), "command": command_line(info)}
        rows.append(label(row, int(grower.key), own))
    return rows


def file_sizes(real: str, policy: PathPolicy, seconds: float = 2.0) -> dict[str, int]:
    """Apparent size of every file below `real` (one filesystem, links not followed, bounded)."""
    fd, _ = policy.open_dir(real, "list")
    deadline = time.monotonic() + seconds
    return {"/".join(found.parts): found.st.st_size
            for found in walk(Path(real), fd, WalkStats(), WALK_ENTRIES, deadline)
            if not found.is_dir and found.named_depth >= len(found.parts)}


def place_series(real: str, policy: PathPolicy, seconds: float) -> tuple[list[dict], float]:
    """The sizes of the files at or below `real` ("" for `real` itself when it is a file) and its
    filesystem's free bytes (key FREE), read STEPS+1 times over `seconds`."""

    def read() -> dict:
        stv = os.statvfs(real)
        sizes = file_sizes(real, policy) if os.path.isdir(real) else {"": os.stat(real).st_size}
        return {**sizes, FREE: stv.f_bavail * stv.f_frsize}

    return series(read, seconds)


def split_free(taken: list[dict]) -> tuple[list[dict], int, int]:
    """(the readings without FREE, the free bytes at the start, at the end)."""
    return [{k: v for k, v in t.items() if k != FREE} for t in taken], taken[0][FREE], taken[-1][FREE]


def _path_growth(ctx: ToolContext, path: str, seconds: float) -> dict:
    real = str(ctx.policy.resolve(path, "list"))
    taken, spanned = place_series(real, ctx.policy, seconds)
    sizes, start_free, end_free = split_free(taken)
    loss = (start_free - end_free) / spanned
    files = growers(sizes, spanned)
    rows = [{"path": os.path.join(real, str(g.key)) if g.key else real, "size_start": units.size(g.first),
             "size_end": units.size(g.last), "growth_per_second": units.rate(g.rate), "steady": g.steady}
            for g in files[:MAX_SHOWN]]
    data: dict = {"path": real, "seconds": round(spanned, 2), "growing_files": rows,
                  "filesystem_free": units.size(end_free),
                  "filesystem_free_change_per_second": ("-" if loss > 0 else "+") + units.rate(abs(loss)),
                  "filesystem_full_in": until(end_free, loss)}
    if max(len(t) for t in sizes) >= WALK_ENTRIES:
        data["note"] = f"only the first {WALK_ENTRIES:,} files were watched: watch a subfolder for the rest"
    first = f"; fastest: {rows[0]['path']} +{rows[0]['growth_per_second']}" if rows else ""
    data = {"headline": f"{len(rows)} file(s) grew under {real} in {spanned:.1f} s{first}; the filesystem "
                        f"{'is full in ' + data['filesystem_full_in'] if data['filesystem_full_in'] else 'is not filling'}",
            **data}
    return ok(data) if rows else result(EMPTY, data, f"nothing under {real} grew in {spanned:.1f} s")


@tool(reads="process", ttl=0.0, timeout=20.0, example={"path": "", "seconds": 3},
      first_for=("memory_growth", "disk_growth"))
def growth(
    ctx: ToolContext,
    path: Annotated[str, MaxLen(512), Doc("folder or file to watch; empty: process memory")] = "",
    seconds: Annotated[float, Range(1.0, 10.0), Doc("how long to watch")] = 3.0,
) -> dict:
    """What grows over a few seconds: process memory, or (with path) files under it; rate and time to full.
    Use for "leaking", "keeps growing"."""
    if path.strip():
        return _path_growth(ctx, path.strip(), seconds)
    taken, spanned = series(rss_all, seconds)
    own = own_tree(ctx.self_pids)
    rows = _process_rows(growers(taken, spanned), own)
    data: dict = {"seconds": round(spanned, 2), "growing": rows,
                  "memory_available": units.size(psutil.virtual_memory().available)}
    first = next((r for r in rows if not r.get("self")), None)
    if first is None:
        return result(EMPTY, data, f"no process's memory grew in {spanned:.1f} s")
    data = {"headline": f"fastest growing: pid={first['pid']} name={first['name']} +{first['growth_per_second']} "
                        f"({'steady' if first['steady'] else 'not steady'})", **data}
    return ok(data)
