"""Tools that measure one tree together share one walk, and only inside the scope that asks for it."""

from __future__ import annotations

import os

from appliance.tools.registry import default_registry
from appliance.tools.shared_walk import walks_shared


def plant(root, files: dict[str, int]) -> None:
    for name, size in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as out:
            out.write(os.urandom(size))


def sizes_and_files(registry, root):
    folders = registry.call("dir_sizes", {"path": str(root), "depth": 1, "top": 5})
    files = registry.call("largest_files", {"path": str(root), "top": 3, "min_size_mb": 0})
    return folders["data"], files["data"]


def test_inside_the_scope_the_second_tool_reads_the_first_ones_walk(tmp_path):
    registry = default_registry([tmp_path])
    plant(tmp_path, {"big/a.bin": 3 << 20, "small/b.bin": 1 << 20})
    with walks_shared():
        folders = registry.call("dir_sizes", {"path": str(tmp_path), "depth": 1, "top": 5})["data"]
        plant(tmp_path, {"late/c.bin": 5 << 20})  # met by no walk of this scope
        files = registry.call("largest_files", {"path": str(tmp_path), "top": 3, "min_size_mb": 0})["data"]
    assert [e["path"] for e in folders["largest"]] == [str(tmp_path / "big"), str(tmp_path / "small")]
    assert [f["path"] for f in files["files"]] == [str(tmp_path / "big/a.bin"), str(tmp_path / "small/b.bin")]
    assert files["scan"] == folders["scan"]  # the same counts: one walk

    # Outside the scope every call walks afresh and sees the file planted since.
    fresh = registry.call("largest_files", {"path": str(tmp_path), "top": 3, "min_size_mb": 0})["data"]
    assert fresh["files"][0]["path"] == str(tmp_path / "late/c.bin")


def test_another_tree_in_the_scope_is_walked_on_its_own(tmp_path):
    registry = default_registry([tmp_path])
    plant(tmp_path, {"one/a.bin": 1 << 20, "two/b.bin": 2 << 20})
    with walks_shared():
        first = registry.call("largest_files", {"path": str(tmp_path / "one"), "top": 3, "min_size_mb": 0})["data"]
        second = registry.call("largest_files", {"path": str(tmp_path / "two"), "top": 3, "min_size_mb": 0})["data"]
    assert [f["path"] for f in first["files"]] == [str(tmp_path / "one/a.bin")]
    assert [f["path"] for f in second["files"]] == [str(tmp_path / "two/b.bin")]
