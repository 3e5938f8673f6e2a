"""Where the families about one named thing (issue 52) sit in the evaluation's splits: the tuned five
in `dev` and `dev2` by the old families' rule, the sealed five in `sealed` only, never selected by a
family name or any tuned-on suite; every case labeled with what it asks, in a person's words. No
model runs and nothing is planted here."""

from __future__ import annotations

import re
import string

import pytest

from appliance.agent.question.kinds import Asks
from appliance.errors import UsageError
from appliance.eval import sealed
from appliance.eval.families_profiles import SEALED_FAMILIES, TUNED_FAMILIES
from appliance.eval.scenarios import SCENARIOS, SEALED_SCENARIOS, SUITES, by_name, suite
from appliance.eval.scenarios import TUNED_FAMILIES as SPLIT_ORDER

ASKS = {a.value for a in Asks}  # the question reader's kinds (tests/test_eval_splits.py writes them out)
TUNED = [f.name for f in TUNED_FAMILIES]
SEALED = [f.name for f in SEALED_FAMILIES]
# Words of the program's own making, which a person asking about their machine would not type.
APPLIANCE_WORDS = re.compile(r"\b(?:inspect_\w+|profiles?|flags?|tools?|analy[sz]ers?|appliance|findings?|verdicts?|"
                             r"observations?|evidence)\b", re.IGNORECASE)
# What a person who does not know the cause would not say: the cause's own technical name.
CAUSE_WORDS = re.compile(r"\b(?:immutable|chattr|lsattr|attributes?|affinity|taskset|pinned|crlf|line endings?|"
                         r"sigstop|stale|execute bit|chmod|expired)\b", re.IGNORECASE)


def test_ten_families_five_tuned_five_sealed_as_the_issue_chose():
    assert TUNED == ["immutable", "certificate", "stopped_process", "stale_pidfile", "writing_to"]
    assert SEALED == ["not_executable", "script_format", "cpu_pinned", "installed", "own_address"]
    assert "appliance.eval.families_profiles" in sealed.CHECKLIST_MODULES
    assert [f.name for f in sealed.SEALED_FAMILIES][-5:] == SEALED


def test_the_tuned_five_split_between_dev_and_dev2_by_the_families_order():
    for family in TUNED_FAMILIES:
        index = SPLIT_ORDER.index(family)
        cases = {s.name: s for s in SCENARIOS if s.family == family.name}
        first, second = ("dev", "dev2") if index % 2 == 0 else ("dev2", "dev")
        assert {n: s.split for n, s in cases.items()} == {
            f"{family.name}.precise": first, f"{family.name}.control_vague": first,
            f"{family.name}.vague": second, f"{family.name}.control": second}
        assert {s.name for s in suite(family.name)} == set(cases)  # its name picks its four tuned cases
        assert not [s for s in SEALED_SCENARIOS if s.family == family.name]
        for split in ("dev", "dev2", "full"):
            assert set(cases) & set(SUITES[split]), split


def test_the_sealed_five_are_sealed_and_no_family_name_or_tuned_suite_selects_them():
    sealed_cases = [s for s in SEALED_SCENARIOS if s.family in SEALED]
    assert len(sealed_cases) == 4 * len(SEALED) and {s.split for s in sealed_cases} == {"sealed"}
    names = {s.name for s in sealed_cases}
    assert not names & {s.name for s in SCENARIOS}
    for tuned in ("smoke", "dev", "dev2", "dev3", "full"):
        assert not names & set(SUITES[tuned]), tuned
        assert not names & {s.name for s in suite(tuned)}, tuned
    assert names <= set(SUITES["sealed"]) and names <= {s.name for s in suite("sealed")}
    for family in SEALED:
        with pytest.raises(UsageError, match="sealed family"):
            suite(family)
        with pytest.raises(UsageError):
            suite(f"{family},{TUNED[0]}")  # not even beside a tuned family
    assert [s.name for s in suite("installed.control")] == ["installed.control"]  # its own name runs it


def test_a_sealed_question_is_asked_in_no_tuned_case():
    sealed_questions = {s.question for s in SEALED_SCENARIOS if s.family in SEALED}
    assert not sealed_questions & {s.question for s in SCENARIOS}


@pytest.mark.parametrize("family", [*TUNED_FAMILIES, *SEALED_FAMILIES], ids=lambda f: f.name)
def test_each_family_is_asked_four_ways_in_a_persons_words(family):
    cases = [s for s in (*SCENARIOS, *SEALED_SCENARIOS) if s.family == family.name]
    assert sorted((s.kind, s.phrasing) for s in cases) == [
        ("control", "precise"), ("control", "vague"), ("precise", "precise"), ("vague", "vague")]
    assert len({s.question for s in cases}) == 4 and all(s.asks in ASKS for s in cases)
    fault, control = (next(s for s in cases if s.kind == k) for k in ("precise", "control"))
    assert fault.plant is not control.plant or not family.has_fault  # a control is the thing in health
    for case in cases:
        assert not APPLIANCE_WORDS.search(case.question), case.name
        slots = {name for _, name, _, _ in string.Formatter().parse(case.question) if name}
        assert slots <= {"path", "pid", "name", "pidfile", "program"}, case.name
    vague = next(s for s in cases if s.kind == "vague")
    assert not CAUSE_WORDS.search(vague.question), vague.name  # the vague one does not name the cause
    assert by_name()[vague.name] is vague
