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


MOUNTINFO = "\n".join([
    "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw",
    "23 22 8:2 / /boot/efi rw,relatime - vfat /dev/sda2 rw",
    "24 22 0:5 / /proc rw - proc proc rw",
    "25 22 0:20 / /run rw - tmpfs tmpfs rw",
    "26 22 8:17 / /media/me/STICK rw,nosuid - vfat /dev/sdb1 rw",
    "27 22 8:33 / /mnt/backup rw - ext4 /dev/sdc1 rw",
    "28 22 8:49 / /srv/cam rw - exfat /dev/sdd1 rw",
    "29 22 0:40 / /mnt/share rw - nfs4 nas:/share rw",
])


def _seeded() -> Readings:
    from appliance.analyzers.mounts import parse
    readings = Readings(self_pids=frozenset({os.getpid()}), policy=PathPolicy.default([]))
    readings.get("mountinfo", lambda: parse(MOUNTINFO))
    return readings


@pytest.mark.parametrize("question", ["my usb stick wont eject, it says the device is in use",
                                      "i cant unmount my external disk, target is busy"])
def test_a_disk_in_the_way_named_by_no_path_means_the_personal_mounts(question):
    """Those under /media, /mnt and /run/media, and a removable disk's filesystem elsewhere; not
    the root, /boot/efi, virtual filesystems nor network shares. A removable disk's type first."""
    from appliance.agent.question.question import read_question
    from appliance.analyzers.named_path import mounts_in_the_way
    assert mounts_in_the_way(read_question(question).path_ask, _seeded()) == ["/media/me/STICK", "/srv/cam",
                                                                              "/mnt/backup"]


@pytest.mark.parametrize("question", ["which process is using the most cpu?", "what is on my usb stick?",
                                      "how big is my external disk?", "is the cpu busy?",
                                      "the server is busy all day, why?",
                                      # a disk's activity, not a disk taken away
                                      "the disk is busy all the time and everything stutters, what's hammering it?"])
def test_no_mount_is_meant_where_nothing_is_said_to_be_in_the_way(question):
    from appliance.agent.question.question import read_question
    from appliance.analyzers.named_path import mounts_in_the_way
    assert mounts_in_the_way(read_question(question).path_ask, _seeded()) == []
