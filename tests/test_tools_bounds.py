"""Bounds: a directory walk over a huge tree stops at its budget or deadline, says it is partial,
and still ranks what it saw."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from appliance.tools.paths import PathPolicy
from appliance.tools.registry import ToolContext, build_registry

FILES = 200_000


def _fill(root: Path) -> None:
    flags = os.O_CREAT | os.O_WRONLY | os.O_EXCL
    for d in range(200):
        sub = root / f"d{d:03d}"
        sub.mkdir()
        dir_fd = os.open(sub, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for i in range(FILES // 200):
                os.close(os.open(f"f{i}", flags, 0o644, dir_fd=dir_fd))
        finally:
            os.close(dir_fd)
    with open(root / "big.bin", "wb") as handle:  # one large entry at the top level
        handle.write(b"\x01" * (8 << 20))


@pytest.fixture(scope="module")
def huge_tree(tmp_path_factory) -> Path:
    # tmpfs creates and removes 200,000 inodes several times faster than a disk filesystem;
    # a small or full /dev/shm (containers) falls back to the temporary directory.
    root = None
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        root = Path(tempfile.mkdtemp(prefix="appliance-huge-", dir=shm))
        try:
            _fill(root)
        except OSError:
            shutil.rmtree(root, ignore_errors=True)
            root = None
    if root is None:
        root = tmp_path_factory.mktemp("huge")
        _fill(root)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.slow
def test_dir_sizes_over_200k_files_returns_partial_within_its_deadline(huge_tree):
    context = ToolContext(policy=PathPolicy.confined([huge_tree]))
    registry = build_registry(context)
    started = time.monotonic()
    outcome = registry.call("dir_sizes", {"path": str(huge_tree), "depth": 1, "top": 5})
    elapsed = time.monotonic() - started
    assert outcome["status"] == "partial", outcome["data"]["scan"]
    scan = outcome["data"]["scan"]
    assert scan["partial"] is True and scan["stopped_by"] and scan["dirs_not_scanned"] > 0
    assert scan["files"] < FILES
    assert "PARTIAL" in outcome["data"]["note"] and "lower bounds" in outcome["data"]["note"]
    assert elapsed < context.scan_seconds + 3
    # breadth first: the top level is always seen whole, so its largest entry is never missed
    assert outcome["data"]["largest"][0]["path"].endswith("big.bin")
    assert outcome["data"]["largest"][0]["size"] == "8.0 MiB"


@pytest.mark.slow
def test_a_short_deadline_stops_the_walk_on_time(huge_tree):
    context = ToolContext(policy=PathPolicy.confined([huge_tree]), scan_seconds=0.3, scan_entries=10_000_000)
    registry = build_registry(context)
    started = time.monotonic()
    outcome = registry.call("largest_files", {"path": str(huge_tree), "top": 3, "min_size_mb": 0})
    elapsed = time.monotonic() - started
    assert outcome["status"] == "partial"
    assert outcome["data"]["scan"]["stopped_by"].startswith("deadline")
    assert elapsed < 2.5
