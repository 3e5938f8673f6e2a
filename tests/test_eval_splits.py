"""The evaluation's splits (issue 31): dev, dev2 and dev3 are tuned on, sealed and unnamed never are. The splits are
disjoint, names are unique, every sealed family has its four cases, every old family its three
plain-language phrasings, every sealed case says what its question asks, and a family's name never
selects a sealed case. No model runs and nothing is planted here."""

from __future__ import annotations

import pytest

from appliance.errors import UsageError
from appliance.eval import metrics, scenarios
from appliance.eval.checklist_dev import DEV3
from appliance.eval.families import FAMILIES, Family
from appliance.eval.families_profiles import SEALED_FAMILIES as PROFILE_SEALED
from appliance.eval.scenarios import SCENARIOS, SEALED_SCENARIOS, SUITES, UNNAMED_SCENARIOS, by_name, suite
from appliance.eval.sealed import PLAIN, SEALED_FAMILIES, _gather

# The `Asks` values of the question reader's interface (appliance/agent/answer/question.py), written
# out so a change there is a change this test makes someone look at.
ASKS = {"process", "user", "file", "folder", "filesystem", "port", "service", "log_cause", "count", "amount",
        "yes_no", "explanation", "system_fact", "out_of_scope"}


def test_the_splits_are_disjoint_and_together_hold_every_case_once():
    splits = [set(SUITES[name]) for name in ("dev", "dev2", "dev3", "sealed", "unnamed")]
    assert sum(len(s) for s in splits) == len(set().union(*splits))
    every = [s.name for s in (*SCENARIOS, *SEALED_SCENARIOS, *UNNAMED_SCENARIOS)]
    assert len(every) == len(set(every)) == len(by_name())
    assert set().union(*splits) == set(every)
    assert not set(SUITES["full"]) & (splits[-2] | splits[-1]), "full is what may be tuned on"
    for name, split in (("dev", "dev"), ("dev2", "dev2"), ("dev3", "dev3"), ("sealed", "sealed"),
                        ("unnamed", "unnamed")):
        assert {s.split for s in suite(name)} == {split}


def test_test_is_dev2s_old_name():
    assert suite("test") == suite("dev2") and "test" not in SUITES


def test_every_old_family_has_two_plain_fault_phrasings_and_one_plain_control_in_sealed():
    assert sorted(p.family for p in PLAIN) == sorted(f.name for f in FAMILIES)
    for family in FAMILIES:
        cases = [s for s in SEALED_SCENARIOS if s.family == family.name]
        assert [(s.kind, s.phrasing) for s in cases] == [("vague", "plain"), ("vague", "plain"), ("control", "plain")]
        faults, control = cases[:2], cases[2]
        assert all(s.plant is family.plant for s in faults) and control.plant is family.control
        tuned = {s.question for s in SCENARIOS if s.family == family.name}
        assert len({s.question for s in cases}) == 3 and not tuned & {s.question for s in cases}, family.name


def test_every_sealed_family_has_four_cases_all_sealed():
    for family in SEALED_FAMILIES:
        cases = [s for s in SEALED_SCENARIOS if s.family == family.name]
        assert len(cases) >= 4 and {s.split for s in cases} == {"sealed"}, family.name
    names = [f.name for f in (*FAMILIES, *SEALED_FAMILIES)]
    assert len(names) == len(set(names))


def test_every_sealed_case_says_what_its_question_asks():
    unlabeled = [s.name for s in SEALED_SCENARIOS if s.asks not in ASKS]
    assert not unlabeled
    assert {s.asks for s in SCENARIOS} <= ASKS  # the old families are labeled too


def test_plain_phrasings_read_as_people_type_them():
    """Lowercase throughout (typos are not checked: they are written by hand)."""
    for case in (s for s in SEALED_SCENARIOS if s.phrasing == "plain"):
        text = case.question.format(mount="/x", root="/x", port=1, log="/x", config="/x", folder="/x")
        assert text == text.lower(), case.name


def test_a_family_name_never_selects_a_sealed_case_but_a_case_name_does():
    for family in FAMILIES:
        assert {s.split for s in suite(family.name)} == {"dev", "dev2"}
    assert [s.name for s in suite("cpu.plain1")] == ["cpu.plain1"]
    with_dev3 = {p.family for p in DEV3}
    for family in SEALED_FAMILIES:  # a checklist family's name picks its dev3 phrasings only
        if family.name in with_dev3:
            assert {s.split for s in suite(family.name)} == {"dev3"}, family.name
        else:  # a sealed family without tuned-on phrasings (issue 52's) is refused by name
            with pytest.raises(UsageError, match="sealed family"):
                suite(family.name)


def test_dev3_asks_each_checklist_family_about_its_fault_and_its_control_in_other_words():
    dev3 = [s for s in SCENARIOS if s.split == "dev3"]
    checklist = {f.name for f in SEALED_FAMILIES} - {f.name for f in PROFILE_SEALED}
    assert {s.family for s in dev3} == checklist  # the sealed families about one named thing have none yet
    for family in (f for f in SEALED_FAMILIES if f.name in checklist):
        kinds = sorted(s.kind for s in dev3 if s.family == family.name)
        assert kinds == ["control", "vague"], family.name
    sealed_questions = {s.question for s in SEALED_SCENARIOS}
    assert not sealed_questions & {s.question for s in dev3}
    assert all(s.asks in ASKS for s in dev3)


def test_a_sealed_family_joins_the_sealed_split_and_only_it(monkeypatch):
    """What the checklist modules' SEALED_FAMILIES become: four sealed cases, none in dev or dev2,
    its name rejected as a family selection (it is sealed)."""
    template = FAMILIES[0]
    extra = Family("probe_family", "a probe", template.plant, template.control, "Which process?",
                   "whats up", "Is any?", "is it ok", asks=("process", "explanation", "yes_no", "yes_no"))
    monkeypatch.setattr(scenarios, "SEALED_FAMILIES", (extra,))
    cases = scenarios._cases(extra, 0, sealed=True)
    assert [s.split for s in cases] == ["sealed"] * 4
    assert [s.asks for s in cases] == ["process", "explanation", "yes_no", "yes_no"]
    with pytest.raises(UsageError, match="sealed family"):
        suite("probe_family")


def test_a_checklist_module_that_is_missing_adds_nothing_but_a_broken_one_fails_loudly(tmp_path, monkeypatch):
    assert _gather(("appliance.eval.no_such_module_here",)) == ()
    (tmp_path / "probe_broken_checklist.py").write_text("import probe_no_such_dependency\n")
    (tmp_path / "probe_checklist.py").write_text(
        "from appliance.eval.families import FAMILIES\nSEALED_FAMILIES = FAMILIES[:1]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="probe_no_such_dependency"):
        _gather(("probe_broken_checklist",))
    assert _gather(("probe_checklist", "appliance.eval.no_such_module_here")) == FAMILIES[:1]


def test_the_report_shows_each_split_and_each_kind_of_question():
    def case(split, asks, kind, success):
        return {"scenario": f"{split}-{asks}-{kind}", "family": "f", "kind": kind, "success": success,
                "metrics": {"split": split, "asks": asks}}  # as a recorded case keeps them

    cases = [case("dev", "process", "precise", True), case("sealed", "yes_no", "control", True),
             case("sealed", "process", "vague", False), case("sealed", "log_cause", "vague", True)]
    views = metrics.grouped(cases)
    assert list(views["by_split"]) == ["dev", "sealed", "overall"]
    assert views["by_split"]["sealed"]["cases"] == 3
    assert views["by_asks"]["process"]["success_rate"] == 0.5
    sealed = views["headline_by_split"]["sealed"]
    assert (sealed["fault_cases"], sealed["fault_success_rate"], sealed["control_success_rate"]) == (2, 0.5, 1.0)
    text = metrics.format_report(cases, title="t")
    assert "| question asks" in text and "| split" in text and "\nsealed: fault cases right: 1/2 (50%)" in text


def test_the_command_takes_a_split_and_lists_it(tmp_path, capsys):
    import argparse

    from appliance.cli import main
    from appliance.commands.eval import _suite_name

    assert _suite_name(argparse.Namespace(split="sealed")) == "sealed"
    assert _suite_name(argparse.Namespace(suite="dev")) == "dev"
    assert main(["eval", "--split", "sealed", "--suite", "dev", "--db", str(tmp_path / "x.db")]) == 2
    assert "--split or --suite" in capsys.readouterr().err
    assert main(["eval", "scenarios", "--split", "sealed"]) == 0
    listed = [line.split()[4] for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    assert sorted(listed) == sorted(SUITES["sealed"])  # listed family by family
