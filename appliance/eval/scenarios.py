"""The evaluation's cases and suites: every family (appliance/eval/families.py, and the tuned half of
appliance/eval/families_profiles.py) asked four ways, and the sealed split (appliance/eval/sealed.py).

A case (a `Scenario`) is (family, kind, phrasing, question) with the family's plant: kind is
`precise` or `vague` for a planted fault and `control` for the same place in good health; phrasing
is how the question is put (precise, vague or plain, for controls too); `asks` is what the question
asks for (an `Asks` value), so a report can be read per kind of question. Names are `family.kind`
for the fault cases, `family.control` and `family.control_vague` for the controls, and
`family.plain1`, `family.plain2`, `family.plain_control` for the old families' sealed phrasings.

Splits, fixed by the families' order so they never depend on a run: family i (0-based) puts in
`dev` its precise fault case and its vague control when i is even, its vague fault case and its
precise control when i is odd; `dev2` gets the other two. `dev2` was called `test` until its
failures had been read often enough to make it a second `dev` (issue 31); `test` is still accepted
as its old name. `sealed` holds every case of the checklist families (and of the sealed half of the
families about one named thing) and the plain phrasings of the old ones; it is never tuned on, while
`dev3` holds other phrasings of the checklist families, written later to be tuned on
(appliance/eval/checklist_dev.py); and no family name selects it (only `sealed` or a case's own
name does), so a family's run while tuning never reads a sealed case (docs/eval.md).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable, Iterator

from appliance.eval.checklist_dev import DEV3 as DEV3_PHRASINGS
from appliance.eval.fault import Fault
from appliance.eval.families import FAMILIES, Family
from appliance.eval.families_profiles import TUNED_FAMILIES as PROFILE_FAMILIES
from appliance.eval.sandbox import Sandbox
from appliance.eval.sealed import PLAIN as PLAIN_PHRASINGS
from appliance.eval.sealed import SEALED_FAMILIES
from appliance.eval.scoring import not_all_clear
from appliance.eval.unnamed import CASES as UNNAMED_CASES
from appliance.eval.unnamed import UnnamedCase

PRECISE, VAGUE, CONTROL = "precise", "vague", "control"
KINDS = (PRECISE, VAGUE, CONTROL)
PLAIN = "plain"  # a phrasing: a plain-language question as people type it (sealed cases)
DEV, DEV2, DEV3, SEALED, UNNAMED = "dev", "dev2", "dev3", "sealed", "unnamed"
SPLIT_ALIASES = {"test": DEV2}  # the old name of dev2


@dataclass(frozen=True)
class Scenario:
    name: str
    family: str
    kind: str  # precise | vague | control
    phrasing: str  # precise | vague | plain
    question: str  # a template: {slots} come from the plant
    summary: str
    plant: Callable[[Sandbox], Fault] = field(repr=False)
    split: str = ""  # dev | dev2 | dev3 | sealed | unnamed
    fault_checks: bool = True  # add the fault-case rule that an all-clear is wrong
    asks: str = ""  # what the question asks for (an `Asks` value); "" when not labeled

    @contextlib.contextmanager
    def setup(self) -> Iterator[Fault]:
        """Plant; tear it down on the way out, whatever happened (even a failed plant)."""
        sandbox = Sandbox()
        try:
            fault = self.plant(sandbox)
            fault.question = self.question.format(**fault.slots)
            if self.kind != CONTROL and self.fault_checks:
                fault.checks = [*fault.checks, not_all_clear()]
            yield fault
        finally:
            sandbox.close()


def _cases(family: Family, index: int, sealed: bool = False) -> list[Scenario]:
    """A family's four cases: split between dev and dev2 by its index, or all sealed."""
    first, second = (SEALED, SEALED) if sealed else (DEV, DEV2) if index % 2 == 0 else (DEV2, DEV)
    rows = (
        (f"{family.name}.precise", PRECISE, PRECISE, family.precise, family.plant, first),
        (f"{family.name}.vague", VAGUE, VAGUE, family.vague, family.plant, second),
        (f"{family.name}.control", CONTROL, PRECISE, family.control_precise, family.control, second),
        (f"{family.name}.control_vague", CONTROL, VAGUE, family.control_vague, family.control, first),
    )
    asks = family.asks or ("", "", "", "")
    return [
        Scenario(name, family.name, kind, phrasing, question, family.summary, plant, split, family.has_fault, label)
        for (name, kind, phrasing, question, plant, split), label in zip(rows, asks)
    ]


def _plain_cases(family: Family) -> list[Scenario]:
    """The sealed plain-language phrasings of an old family, on its own plants."""
    phrasings = next((p for p in PLAIN_PHRASINGS if p.family == family.name), None)
    if phrasings is None:
        return []
    rows = [(f"{family.name}.plain{i}", VAGUE, p, family.plant) for i, p in enumerate(phrasings.faults, 1)]
    rows.append((f"{family.name}.plain_control", CONTROL, phrasings.control, family.control))
    return [
        Scenario(name, family.name, kind, PLAIN, p.question, family.summary, plant, SEALED, family.has_fault, p.asks)
        for name, kind, p, plant in rows
    ]


def _dev3_cases(family: Family) -> list[Scenario]:
    """The tuned-on phrasings of a checklist family (appliance/eval/checklist_dev.py), on its own plants."""
    phrasings = next((p for p in DEV3_PHRASINGS if p.family == family.name), None)
    if phrasings is None:
        return []
    rows = ((f"{family.name}.dev_fault", VAGUE, phrasings.fault, family.plant),
            (f"{family.name}.dev_control", CONTROL, phrasings.control, family.control))
    return [Scenario(name, family.name, kind, PLAIN, p.question, family.summary, plant, DEV3, family.has_fault, p.asks)
            for name, kind, p, plant in rows]


def _unnamed_case(case: UnnamedCase) -> Scenario:
    """A case of the unnamed split: its kind is its family, what a right answer holds its summary. No
    all-clear rule is added: a question of fact has no fault, and its own checks say what is right."""
    kind = CONTROL if case.control else case.phrasing
    return Scenario(case.name, case.kind, kind, case.phrasing, case.question, case.right, case.plant, UNNAMED,
                    False, case.asks)


# The families split between dev and dev2, in the order that splits them: the old ones, then the tuned
# half of the families about one named thing (appliance/eval/families_profiles.py).
TUNED_FAMILIES: tuple[Family, ...] = (*FAMILIES, *PROFILE_FAMILIES)

# The tuned-on cases (dev, dev2 and the checklist families' dev3), the sealed ones, the unnamed ones.
SCENARIOS: tuple[Scenario, ...] = (
    *(c for i, f in enumerate(TUNED_FAMILIES) for c in _cases(f, i)),
    *(c for f in SEALED_FAMILIES for c in _dev3_cases(f)),
)
SEALED_SCENARIOS: tuple[Scenario, ...] = (
    *(c for f in SEALED_FAMILIES for c in _cases(f, 0, sealed=True)),
    *(c for f in FAMILIES for c in _plain_cases(f)),
)
UNNAMED_SCENARIOS: tuple[Scenario, ...] = tuple(_unnamed_case(c) for c in UNNAMED_CASES)

SUITES: dict[str, tuple[str, ...]] = {
    "smoke": ("listening.precise", "log_errors.precise", "listening.control"),
    DEV: tuple(s.name for s in SCENARIOS if s.split == DEV),
    DEV2: tuple(s.name for s in SCENARIOS if s.split == DEV2),
    DEV3: tuple(s.name for s in SCENARIOS if s.split == DEV3),
    SEALED: tuple(s.name for s in SEALED_SCENARIOS),
    UNNAMED: tuple(s.name for s in UNNAMED_SCENARIOS),
    "full": tuple(s.name for s in SCENARIOS),  # dev, dev2 and dev3; never the sealed or unnamed cases
}


def by_name() -> dict[str, Scenario]:
    return {s.name: s for s in (*SCENARIOS, *SEALED_SCENARIOS, *UNNAMED_SCENARIOS)}


def suite(name: str) -> tuple[Scenario, ...]:
    """The scenarios of a suite (or a split's old name), or of a comma-separated list of scenario or
    family names; a family name picks its tuned-on cases (dev, dev2, dev3), never its sealed ones, and
    an unnamed case's kind is no family name at all."""
    table = by_name()
    families = {f.name for f in (*TUNED_FAMILIES, *SEALED_FAMILIES)}
    name = SPLIT_ALIASES.get(name, name)
    names = SUITES.get(name) or tuple(part.strip() for part in name.split(",") if part.strip())
    picked: list[Scenario] = []
    unknown = []
    for part in names:
        if part in table:
            picked.append(table[part])
        elif part in families:
            tuned = [s for s in SCENARIOS if s.family == part]
            if not tuned:
                from appliance.errors import UsageError

                raise UsageError(f"{part!r} is a sealed family with no tuned-on cases: its cases run only in the "
                                 f"sealed split (--split sealed)")
            picked.extend(tuned)
        else:
            unknown.append(part)
    if unknown or not picked:
        from appliance.errors import UsageError

        raise UsageError(
            f"unknown suite, family or scenario {', '.join(unknown) or name!r}; suites: {', '.join(SUITES)}; "
            f"families: {', '.join(sorted(families))} (see `appliance eval scenarios`)"
        )
    return tuple(picked)
