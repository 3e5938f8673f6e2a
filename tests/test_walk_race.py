"""A folder swapped for a symlink while a walk is under way is skipped and counted, never followed:
a real race, a thread swapping a queued folder for a symlink into a secret place as fast as it can
while dir_sizes and largest_files walk the tree again and again, bounded in time."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from appliance.tools.context import ToolContext
from appliance.tools.paths import PathPolicy
from appliance.tools.registry import build_registry

CANARY = "canary-behind-the-symlink"


def _tree(root: Path) -> Path:
    """root/scan with many folders, each with an `inner` folder (queued while its parent is real, and
    listed later), and a target outside it with an `inner` of its own: reopening scan/d39/inner by
    absolute path while d39 is a symlink would list the target's."""
    scan = root / "scan"
    for i in range(40):
        folder = scan / f"d{i:02d}" / "inner"
        folder.mkdir(parents=True)
        (folder / "file.bin").write_bytes(b"x" * 8192)
    inner = root / "target" / "inner"
    inner.mkdir(parents=True)
    (inner / CANARY).write_bytes(b"s" * 65536)
    (inner / f"{CANARY}-dir").mkdir()
    return scan


def test_a_folder_swapped_for_a_symlink_mid_walk_is_never_followed(tmp_path):
    scan = _tree(tmp_path)
    victim, parked, link = scan / "d39", scan / ".parked", scan / ".link"
    os.symlink(tmp_path / "target", link)
    stop = threading.Event()
    swaps = [0]

    def swapper() -> None:
        while not stop.is_set():
            os.rename(victim, parked)
            os.rename(link, victim)  # the name now points at the target
            time.sleep(0.0002)
            os.rename(victim, link)
            os.rename(parked, victim)
            swaps[0] += 1

    registry = build_registry(ToolContext(policy=PathPolicy.confined([tmp_path])))
    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    shown, changed, walks = [], 0, 0
    start = time.monotonic()
    try:
        # at least 4 s of walks, and on a loaded machine on until a walk met the swap (20 s at most)
        while time.monotonic() < start + 4.0 or (changed == 0 and time.monotonic() < start + 20.0):
            for name, args in (("largest_files", {"path": str(scan), "min_size_mb": 0, "top": 50}),
                               ("dir_sizes", {"path": str(scan), "depth": 3, "top": 30})):
                got = registry.call(name, args)
                walks += 1
                if CANARY in str(got):
                    shown.append(got)
                changed += got["data"]["scan"]["skipped"].get("folders_changed_during_scan", 0) if got.get("data") else 0
    finally:
        stop.set()
        thread.join(5)
    assert walks >= 20 and swaps[0] >= 100, (walks, swaps)
    assert shown == []
    assert changed > 0  # the race was really run: some walks met the swapped folder and said so
