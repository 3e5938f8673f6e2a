"""A plain file a question names with nothing particular asked of it gets its lookup (does it
exist, can the way to it be passed): "is X ok?" and "the app has trouble with X" are about X, and
without a verdict of X's own the answer rested on the machine's. Real files and folders."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from appliance.analyzers.named_path import LOOKUP, path_findings
from appliance.analyzers.readings import Readings
from appliance.tools.paths import PathPolicy


@pytest.fixture
def place(tmp_path: Path) -> Path:
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "q2.csv").write_text("a,b\n1,2\n")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "app.log").write_text("started\n")
    (tmp_path / "app.conf").write_text("port = 8080\n")
    return tmp_path


def _families(path: Path, question: str, place: Path, *, storage: bool = False) -> list[str]:
    readings = Readings(self_pids=frozenset({os.getpid()}), policy=PathPolicy.default([place]))
    return [f.family for f in path_findings(str(path), question.format(path=path), readings, storage=storage)]


@pytest.mark.parametrize("question", ["is {path} fine?", "the reports app has trouble with {path}",
                                      "something is off with {path}, can you check"])
def test_a_plain_file_asked_nothing_particular_gets_its_lookup(place, question):
    file = place / "reports" / "q2.csv"
    readings = Readings(self_pids=frozenset({os.getpid()}), policy=PathPolicy.default([place]))
    found = path_findings(str(file), question.format(path=file), readings)
    assert [f.family for f in found] == [LOOKUP] and not found[0].is_problem
    assert f"{file} exists" in found[0].verdict


def test_the_lookup_of_a_plain_file_names_a_folder_on_the_way_that_is_gone(place):
    missing = place / "reports" / "2023" / "q2.csv"
    readings = Readings(self_pids=frozenset({os.getpid()}), policy=PathPolicy.default([place]))
    found = path_findings(str(missing), f"is {missing} fine?", readings)
    assert [f.family for f in found] == [LOOKUP] and found[0].is_problem
    assert "does not exist" in found[0].verdict and "2023" in found[0].verdict


@pytest.mark.parametrize("name, question, storage", [
    # a log and a configuration file have verdicts of their own; a folder is no plain file
    ("logs/app.log", "is {path} fine?", False),
    ("app.conf", "is {path} fine?", False),
    ("reports", "is {path} fine?", False),
    # a question about space is answered by the file's filesystem
    ("reports/q2.csv", "is the disk holding {path} full?", True),
])
def test_no_lookup_where_another_verdict_judges_the_path(place, name, question, storage):
    assert _families(place / name, question, place, storage=storage) == []


def test_a_file_closed_to_others_is_a_fact_not_a_fault_for_a_question_that_names_no_reader(place):
    """Nothing asked of access, no account named: a private folder on the way is said, as a fact
    (which folder, its mode), and is no fault; named with an account, it is that account's denial."""
    (place / "reports").chmod(stat.S_IRWXU)
    try:
        readings = Readings(self_pids=frozenset({os.getpid()}), policy=PathPolicy.default([place]))
        file = place / "reports" / "q2.csv"
        found = path_findings(str(file), f"is {file} ok?", readings)
        assert [f.family for f in found] == [LOOKUP] and not found[0].is_problem
        assert "a user other than the owner may not pass through" in found[0].verdict and "(drwx------" in found[0].verdict
        denied = path_findings(str(file), f"nobody gets permission denied on {file}", readings)
        assert denied[0].is_problem and denied[0].verdict.startswith("permission denied on the way")
    finally:
        (place / "reports").chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)


def test_an_owners_home_closed_to_others_is_how_homes_are_kept():
    from appliance.analyzers.named_path import _owners_home
    from appliance.tools.components import Step

    root_home = os.path.expanduser("~root")
    assert _owners_home(Step(root_home, "dir", os.stat(root_home)))
    assert not _owners_home(Step("/usr", "dir", os.stat("/usr")))
