"""What fills a disk: directory totals and the largest files, from bounded walks (walk.py), the
two sharing one walk when asked together (shared_walk.py)."""

from __future__ import annotations

import heapq
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Literal

from appliance.tools import units
from appliance.tools.base import EMPTY, OK, PARTIAL, result, tool
from appliance.tools.context import ToolContext
from appliance.tools.schema import Doc, MaxLen, Range
from appliance.tools.shared_walk import shared_walk
from appliance.tools.shown_names import shown_path
from appliance.tools.walk import WalkStats


def _start(ctx: ToolContext, path: str) -> tuple[Path, int, WalkStats, float]:
    fd, real = ctx.policy.open_dir(path, "list")
    return real, fd, WalkStats(), time.monotonic() + ctx.scan_seconds


def _finish(stats: WalkStats, data: dict, empty: bool, what: str) -> dict:
    data["scan"] = stats.as_data()
    if stats.stopped:
        data["note"] = (f"PARTIAL scan: stopped by the {stats.stopped}; sizes are lower bounds. "
                        f"Call again on one of the largest directories for a complete figure.")
        return result(PARTIAL, data, f"scan incomplete: stopped by the {stats.stopped}")
    if stats.unreadable:
        data["note"] = (f"PARTIAL scan: {stats.unreadable} entries could not be read (no permission); "
                        f"sizes are lower bounds. Running the appliance as root gives complete figures.")
        return result(PARTIAL, data, f"scan incomplete: {stats.unreadable} entries unreadable")
    if empty:
        return result(EMPTY, data, f"no {what} found")
    return result(OK, data)


@tool(reads="tree", ttl=None, timeout=30.0, example={"path": "/var", "depth": 1, "top": 10},
      also_for=("filesystem_full",))
def dir_sizes(
    ctx: ToolContext,
    path: Annotated[str, MaxLen(512), Doc("directory to measure, e.g. / or /var or ~")],
    depth: Annotated[int, Range(1, 3), Doc("how many levels below path to report")] = 1,
    top: Annotated[int, Range(1, 30), Doc("how many entries")] = 10,
    rank_by: Annotated[Literal["bytes", "files"], Doc("bytes, or number of files (slow listings)")] = "bytes",
) -> dict:
    """Disk space used under a directory, by subdirectory (like du), largest first (or by number of files), on one filesystem.
    Use to find what fills a disk, drilling down level by level. May be partial on huge trees (it says so)."""
    real, fd, stats, deadline = _start(ctx, path)
    totals: dict[tuple[str, ...], list] = {}
    direct: Counter[tuple[str, ...]] = Counter()  # entries directly in each folder: what makes a listing slow
    for found in shared_walk(real, fd, stats, ctx.scan_entries, deadline):
        direct[found.parts[:-1]] += found.named_depth >= len(found.parts)
        shown = min(depth, found.named_depth, len(found.parts))
        for level in range(1, shown + 1):
            key = found.parts[:level]
            slot = totals.get(key)
            if slot is None:
                is_dir = found.is_dir or level < len(found.parts)
                slot = totals[key] = [0, 0, is_dir]
            slot[0] += found.allocated
            if not found.is_dir:
                slot[1] += 1
    ranked = heapq.nlargest(top, totals.items(), key=lambda kv: kv[1][1 if rank_by == "files" else 0])
    entries = [
        {"path": shown_path(str(real.joinpath(*key))), "type": "dir" if is_dir else "file", "size": units.size(size),
         "percent_of_total": units.pct(size, stats.bytes), **({"files": files} if is_dir else {})}
        for key, (size, files, is_dir) in ranked
    ]
    data = {"path": str(real), "total": units.size(stats.bytes), "largest": entries}
    if rank_by == "files":
        data = {"headline": _most_files(real, entries, direct), **data, "ranked_by": "number of files"}
    elif entries:  # the ranked answer first (small models answer with the last line they read)
        top_entry = entries[0]
        data = {"headline": f"largest: {top_entry['path']} {top_entry['size']} ({top_entry['percent_of_total']}%)", **data}
    return _finish(stats, data, empty=not entries, what="entries")


def _most_files(real: Path, entries: list[dict], direct: Counter[tuple[str, ...]]) -> str:
    """The ranking's first entry and the folder with the most entries directly inside it."""
    first = f"most files: {entries[0]['path']} ({entries[0].get('files', 1):,} files)" if entries else "no entries"
    crowded = direct.most_common(1)
    if crowded:
        folder, count = crowded[0]
        first += f"; most entries directly in one folder: {real.joinpath(*folder)} ({count:,})"
    return first


@tool(reads="tree", ttl=None, timeout=30.0, example={"path": "/var/log", "top": 10, "min_size_mb": 10})
def largest_files(
    ctx: ToolContext,
    path: Annotated[str, MaxLen(512), Doc("directory to search, e.g. / or /var/log or ~")],
    top: Annotated[int, Range(1, 50), Doc("how many files")] = 10,
    min_size_mb: Annotated[int, Range(0, 1048576), Doc("ignore files smaller than this many MiB")] = 1,
) -> dict:
    """The largest single files under a directory (on one filesystem), with size and modification time.
    Use for "which single file takes the most space", huge logs, dumps, caches or images. Not for totals per folder (use dir_sizes)."""
    real, fd, stats, deadline = _start(ctx, path)
    floor = min_size_mb * 1024 * 1024
    heap: list[tuple[int, tuple[str, ...], float, int]] = []
    for found in shared_walk(real, fd, stats, ctx.scan_entries, deadline):
        if found.is_dir or found.named_depth < len(found.parts) or found.allocated < floor:
            continue
        item = (found.allocated, found.parts, found.st.st_mtime, found.st.st_size)
        if len(heap) < top:
            heapq.heappush(heap, item)
        elif item[0] > heap[0][0]:
            heapq.heapreplace(heap, item)
    entries = [
        {"path": shown_path(str(real.joinpath(*parts))), "size": units.size(alloc),
         **({"apparent_size": units.size(apparent)} if abs(apparent - alloc) > max(alloc // 4, 65536) else {}),
         "modified": units.when(mtime)}
        for alloc, parts, mtime, apparent in sorted(heap, reverse=True)
    ]
    data = {"path": str(real), "min_size": units.size(floor), "files": entries}
    if entries:  # the ranked answer first
        data = {"headline": f"largest file: {entries[0]['path']} {entries[0]['size']}", **data}
    return _finish(stats, data, empty=not entries, what=f"files of at least {units.size(floor)}")
