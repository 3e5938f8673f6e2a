"""The evaluation's cases and suites: every family (appliance/eval/families.py) asked four ways.

A case (a `Scenario`) is (family, kind, phrasing, question) with the family's plant: kind is
`precise` or `vague` for a planted fault and `control` for the same place in good health; phrasing
is how the question is put (precise or vague, for controls too). Names are `family.kind` for the
fault cases, `family.control` and `family.control_vague` for the controls.

Splits, fixed by the families' order so they never depend on a run: family i (0-based) puts in
`dev` its precise fault case and its vague control when i is even, its vague fault case and its
precise control when i is odd; `test` gets the other two. So the splits are disjoint, each covers
every family with one fault case and one control, and each holds both phrasings about equally.
Tune on `dev`; report `test`; never change code to pass one `test` case (docs/eval.md).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable, Iterator

from appliance.eval.fault import Fault
from appliance.eval.families import FAMILIES, Family
from appliance.eval.sandbox import Sandbox
from appliance.eval.scoring import not_all_clear

PRECISE, VAGUE, CONTROL = "precise", "vague", "control"
KINDS = (PRECISE, VAGUE, CONTROL)


@dataclass(frozen=True)
class Scenario:
    name: str
    family: str
    kind: str  # precise | vague | control
    phrasing: str  # precise | vague
    question: str  # a template: {slots} come from the plant
    summary: str
    plant: Callable[[Sandbox], Fault] = field(repr=False)
    split: str = ""  # dev | test
    fault_checks: bool = True  # add the fault-case rule that an all-clear is wrong

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


def _cases(family: Family, index: int) -> list[Scenario]:
    even = index % 2 == 0
    rows = (
        (f"{family.name}.precise", PRECISE, PRECISE, family.precise, family.plant, "dev" if even else "test"),
        (f"{family.name}.vague", VAGUE, VAGUE, family.vague, family.plant, "test" if even else "dev"),
        (f"{family.name}.control", CONTROL, PRECISE, family.control_precise, family.control, "test" if even else "dev"),
        (f"{family.name}.control_vague", CONTROL, VAGUE, family.control_vague, family.control,
         "dev" if even else "test"),
    )
    return [
        Scenario(name, family.name, kind, phrasing, question, family.summary, plant, split, family.has_fault)
        for name, kind, phrasing, question, plant, split in rows
    ]


SCENARIOS: tuple[Scenario, ...] = tuple(c for i, f in enumerate(FAMILIES) for c in _cases(f, i))

SUITES: dict[str, tuple[str, ...]] = {
    "smoke": ("listening.precise", "log_errors.precise", "listening.control"),
    "dev": tuple(s.name for s in SCENARIOS if s.split == "dev"),
    "test": tuple(s.name for s in SCENARIOS if s.split == "test"),
    "full": tuple(s.name for s in SCENARIOS),
}


def by_name() -> dict[str, Scenario]:
    return {s.name: s for s in SCENARIOS}


def suite(name: str) -> tuple[Scenario, ...]:
    """The scenarios of a suite, or of a comma-separated list of scenario or family names."""
    table = by_name()
    families = {f.name for f in FAMILIES}
    names = SUITES.get(name) or tuple(part.strip() for part in name.split(",") if part.strip())
    picked: list[Scenario] = []
    unknown = []
    for part in names:
        if part in table:
            picked.append(table[part])
        elif part in families:
            picked.extend(s for s in SCENARIOS if s.family == part)
        else:
            unknown.append(part)
    if unknown or not picked:
        from appliance.errors import UsageError

        raise UsageError(
            f"unknown suite, family or scenario {', '.join(unknown) or name!r}; suites: {', '.join(SUITES)}; "
            f"families: {', '.join(sorted(families))} (see `appliance eval scenarios`)"
        )
    return tuple(picked)
