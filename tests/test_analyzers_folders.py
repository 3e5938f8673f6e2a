"""The verdict on a named folder's largest entries, measured for real by dir_sizes."""

import os

from appliance.agent.evidence import MachineEvidence
from appliance.analyzers.folder_sizes import folder_finding
from appliance.tools.paths import PathPolicy
from appliance.tools.registry import ToolContext, build_registry


def _fill(path, size):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:  # real blocks, not a sparse file: du counts what is allocated
        out.write(os.urandom(size))


def _gather(tmp_path, question):
    registry = build_registry(ToolContext(policy=PathPolicy.default([tmp_path])))
    return MachineEvidence(registry).gather(question, frozenset({os.getpid()}))


def test_one_entry_holding_most_of_a_named_folder_is_the_culprit_and_the_first_topic(tmp_path):
    root = tmp_path / "projects"
    for name in ("website", "mobile-app", "docs-site"):
        _fill(root / name / "src" / "a.bin", 100 * 1024)
    for i in range(6):
        _fill(root / "render-farm" / "cache" / f"frame-{i}.exr", 1024 * 1024)
    evidence = _gather(tmp_path, f"something is eating my disk space somewhere in {root}, what is it?")
    folder = [f for f in evidence.places if f.family == "disk_usage"]
    assert len(folder) == 1 and folder[0].severity == "warning" and folder[0].culprit == "render-farm"
    assert folder[0].path == str(root / "render-farm") and folder[0].values["largest_percent"] >= 80
    assert evidence.topics.index("disk_usage") < evidence.topics.index("filesystem_full")
    assert [f.culprit for f in evidence.main_problems()] == ["render-farm"]


def test_a_spread_of_sizes_is_ok(tmp_path):
    root = tmp_path / "projects"
    for index, name in enumerate(("website", "mobile-app", "docs-site", "render-farm")):
        _fill(root / name / "src" / "a.bin", (90 + 5 * index) * 1024)
    question = f"Does any one folder under {root} take much more space than the others? If so, which?"
    evidence = _gather(tmp_path, question)
    folder = next(f for f in evidence.places if f.family == "disk_usage")
    assert folder.severity == "ok" and folder.culprit is None and folder.verdict.startswith("no entry dominates")


def test_the_thresholds_half_of_the_folder_and_three_times_the_next():
    def measured(*shares):
        return {"path": "/srv", "total": "10 MiB",
                "largest": [{"path": f"/srv/e{i}", "size": "1 MiB", "percent_of_total": s} for i, s in enumerate(shares)]}

    assert folder_finding(measured(60, 20, 20)).is_problem  # half, three times the next
    assert not folder_finding(measured(60, 25, 15)).is_problem  # half, but 2.4 times the next
    assert not folder_finding(measured(45, 10, 10)).is_problem  # not half
    assert folder_finding(measured(100)) is None  # one entry is no ranking
