"""The unnamed split (issue 55): at least 40 questions of kinds no family names, at least 10 of them
controls, each its own kind; no family name and no tuned-on suite selects one; the value checks
accept a right answer and refuse a wrong one for every kind of truth the split uses. No model runs
and nothing is planted here (tests/test_eval_unnamed_plants.py plants every case)."""

from __future__ import annotations

import datetime
import time

import pytest

from appliance.analyzers import ANALYZERS
from appliance.errors import UsageError
from appliance.eval.families import FAMILIES
from appliance.eval.metrics import SPLIT_ORDER
from appliance.eval.scenarios import SCENARIOS, SEALED_SCENARIOS, SUITES, UNNAMED_SCENARIOS, by_name, suite
from appliance.eval.scoring import Outcome, judge, mentions, no_culprit
from appliance.eval.scoring_values import (age_near, any_of, day_stated, number_stated, says_yes, size_near,
                                           stated_days, stated_sizes)
from appliance.eval.sealed import SEALED_FAMILIES
from appliance.eval.unnamed import CASES, EXPECTS

from test_eval_splits import ASKS

MIB = 1 << 20


def _passes(check, answer: str) -> bool:
    return judge(Outcome("ok", answer), [check]).success


def test_the_split_has_at_least_40_cases_of_which_at_least_10_controls():
    assert len(UNNAMED_SCENARIOS) == len(CASES) >= 40
    controls = [s for s in UNNAMED_SCENARIOS if s.kind == "control"]
    assert len(controls) >= 10 and len(UNNAMED_SCENARIOS) - len(controls) >= 28
    assert {s.split for s in UNNAMED_SCENARIOS} == {"unnamed"}
    assert {c.expect for c in CASES} <= set(EXPECTS) and {c.asks for c in CASES} <= ASKS
    assert all(c.right and c.question for c in CASES)
    assert {c.expect for c in CASES if c.control} == {"no"}
    kinds = {c.kind for c in CASES}
    assert len(kinds) >= 30, "each case asks its own kind of question (a control may share its fault's)"


def test_no_family_name_or_tuned_on_suite_selects_an_unnamed_case():
    unnamed = set(SUITES["unnamed"])
    for name in ("full", "dev", "dev2", "dev3", "sealed", "smoke", "test"):
        assert not unnamed & {s.name for s in suite(name)}, name
    for family in (*FAMILIES, *SEALED_FAMILIES):
        if any(s.family == family.name for s in SCENARIOS):
            assert not unnamed & {s.name for s in suite(family.name)}, family.name
    for kind in {s.family for s in UNNAMED_SCENARIOS}:  # an unnamed kind is no family name
        with pytest.raises(UsageError):
            suite(kind)
    assert [s.name for s in suite("folder_size.ask")] == ["folder_size.ask"]  # a case's own name does
    assert {s.name for s in suite("unnamed")} == unnamed and "unnamed" in SPLIT_ORDER


def test_the_unnamed_kinds_are_no_family_or_analyzer_and_their_questions_are_new():
    named = {f.name for f in (*FAMILIES, *SEALED_FAMILIES)} | {a.family for a in ANALYZERS}
    assert not named & {s.family for s in UNNAMED_SCENARIOS}
    others = {s.question for s in (*SCENARIOS, *SEALED_SCENARIOS)}
    assert not others & {s.question for s in UNNAMED_SCENARIOS}
    assert len(by_name()) == len(SCENARIOS) + len(SEALED_SCENARIOS) + len(UNNAMED_SCENARIOS)


def test_no_question_uses_the_appliances_own_words():
    internal = ("analyzer", "verdict", "finding", "family", "headline", "appliance", "tool", "evidence", "culprit")
    for case in CASES:
        assert not any(word in case.question.lower() for word in internal), case.name


def test_no_unnamed_case_gets_the_fault_cases_all_clear_rule():
    """Questions of fact: an answer may add that nothing is wrong; its own checks judge it."""
    assert not any(s.fault_checks for s in UNNAMED_SCENARIOS)


# -- the value checks: a right answer passes, a wrong one fails ---------------------------------------

def test_a_size_passes_within_its_tolerance_read_either_way_and_fails_outside_or_without_a_unit():
    check = size_near("folder's size", 37 * MIB)
    for right in ("It takes 37 MiB.", "about 38.8 MB", "0.036 GB on disk", "38,797,312 bytes", "37M\tholiday-2023"):
        assert _passes(check, right), right
    for wrong in ("It takes 370 MiB.", "about 12 MB", "it is 37 files", "4 GB", ""):
        assert not _passes(check, wrong), wrong
    assert stated_sizes("3 MiB of 4 GiB") == [(3e6, 3 * MIB), (4e9, 4 << 30)]


def test_a_yes_passes_and_a_no_or_a_silence_fails():
    check = says_yes("its own filesystem", ("tmpfs",))
    assert _passes(check, "Yes, it is a separate filesystem.") and _passes(check, "It is a tmpfs of 32 MB.")
    assert not _passes(check, "No, it is part of the root filesystem.")
    assert not _passes(check, "It lives under /tmp.")


def test_a_day_passes_in_the_ways_people_write_it_and_another_day_fails():
    check = day_stated("day it was last changed", datetime.date(2025, 3, 9))
    for right in ("It was modified on 2025-03-09 14:27.", "Last changed 9 March 2025.", "on Mar 9, 2025 at 2:27 pm",
                  "Mar 9 14:27 2025", "the 9th of March, 2025"):
        assert _passes(check, right), right
    for wrong in ("It was modified on 2025-03-10.", "March 2025", "yesterday", "9/3"):
        assert not _passes(check, wrong), wrong
    assert stated_days("2025-02-30 or 1 Foo 2024") == set()


def test_an_age_is_judged_against_the_process_as_it_is_when_scored():
    started = time.time() - 150
    check = age_near("time it has been running", started)
    assert _passes(check, "It has been running for 2 minutes and 30 seconds.")
    assert _passes(check, "about 3 minutes")
    assert not _passes(check, "It has been running for 3 hours.")
    assert not _passes(check, "a little while")


def test_a_name_a_user_a_path_and_words_pass_when_named_and_fail_otherwise():
    check = mentions("program holding the file", ["ledgerd-3d19", "ledgerd"], pid=8466)
    assert _passes(check, "ledgerd-3d19 (PID 8466) has it open.") and _passes(check, "process 8466")
    assert not _passes(check, "systemd-journald has it open (pid 84661).")
    user = mentions("file's owner", ["rhea-ddd4"])
    assert _passes(user, "It belongs to rhea-ddd4.") and not _passes(user, "It is owned by root.")


def test_a_plain_number_passes_alone_and_not_inside_a_name_or_another_and_any_of_takes_either_form():
    links = any_of(number_stated("number of hard links", 4), mentions("other names", ["3 other", "three other"]))
    assert _passes(links, "It has 4 hard links.") and _passes(links, "Three other names point to it.")
    assert _passes(links, "Links: 4.") and _passes(links, "4")
    for wrong in ("It has 2 hard links (inode 412345).", "intro-2024.mp4 has 1 hard link.", "It has 4.5 links",
                  "/srv/4/intro.mp4: 1 link"):
        assert not _passes(links, wrong), wrong
    count = number_stated("count", 6)
    assert _passes(count, "jbauer-6a2f runs 6 processes.")
    assert not _passes(count, "The user runs 16 processes.") and not _passes(count, "jbauer-6a2f runs 2 processes.")


def test_a_control_passes_on_a_no_and_fails_on_a_yes_that_names_the_decoy():
    check = no_culprit(decoys=["ledgerd-b187", "ledgerd"], fine=("safe to move",))
    assert _passes(check, "No program has it open; it is safe to move.")
    assert _passes(check, "No, nothing holds it.")
    assert not _passes(check, "Yes, ledgerd-b187 is using it.")
    assert not _passes(check, "ledgerd (pid 8469) has it open.")


def test_the_command_takes_the_split_and_lists_its_cases_with_what_a_right_answer_holds(tmp_path, capsys):
    from appliance.cli import main

    assert main(["eval", "--split", "unnamed", "--suite", "dev", "--db", str(tmp_path / "x.db")]) == 2
    assert "--split or --suite" in capsys.readouterr().err  # the split is a choice the parser takes
    assert main(["eval", "scenarios", "--split", "unnamed"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    assert sorted(line.split()[4] for line in lines) == sorted(SUITES["unnamed"])
    assert all("(right: " in line for line in lines)
