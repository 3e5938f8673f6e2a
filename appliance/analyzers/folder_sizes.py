"""Does one entry of a folder a person names take much more space than the others? A verdict on
the folder's largest entries, as `du -s *` shows them.

Why: "something is eating my disk space in /srv" and "does one folder take more space than the
others?" are answered by the folder's own ranking, not by the machine's fullest filesystem; a small
model reading eight sizes often names the folder asked about, or the filesystem, instead of the
entry that dominates. The call is a share a person would defend: one entry holds at least half of
the folder and at least three times the next one. Below that the sizes are a spread, and the
verdict says so with the two largest.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from appliance.analyzers.base import OK, WARNING, Finding

FAMILY = "disk_usage"
DOMINANT_SHARE = 50.0  # percent of the folder
DOMINANT_RATIO = 3.0  # times the next entry


def folder_finding(measured: Mapping[str, Any]) -> Finding | None:
    """The verdict on a folder from dir_sizes' data (its `path`, `total` and `largest` entries with
    `path`, `size` and `percent_of_total`); None when fewer than two entries were measured."""
    entries: Sequence[Mapping[str, Any]] = measured.get("largest") or []
    if len(entries) < 2:
        return None
    folder = str(measured.get("path") or "")
    first, second = entries[0], entries[1]
    share, next_share = float(first.get("percent_of_total") or 0), float(second.get("percent_of_total") or 0)
    name = os.path.basename(str(first["path"]).rstrip("/")) or str(first["path"])
    values = {"folder": folder, "total": measured.get("total"), "largest": str(first["path"]),
              "largest_size": first.get("size"), "largest_percent": share,
              "next": str(second["path"]), "next_percent": next_share}
    ratio = share / next_share if next_share else float("inf")
    shown_ratio = "all" if ratio == float("inf") else f"{ratio:.1f}×"
    if share >= DOMINANT_SHARE and ratio >= DOMINANT_RATIO:
        return Finding(FAMILY, WARNING,
                       f"one entry takes most of the space: {first['path']} holds {share:g} % of {folder} "
                       f"({first.get('size')} of {measured.get('total')}), {shown_ratio} the next "
                       f"({second['path']}, {next_share:g} %)", values, culprit=name, path=str(first["path"]))
    return Finding(FAMILY, OK,
                   f"no entry dominates: the largest under {folder}, {first['path']}, holds {share:g} % "
                   f"({first.get('size')} of {measured.get('total')}), {shown_ratio} the next "
                   f"({second['path']}, {next_share:g} %)", values, path=folder)


__all__ = ["DOMINANT_RATIO", "DOMINANT_SHARE", "FAMILY", "folder_finding"]
