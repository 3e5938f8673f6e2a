"""Is the machine quiet enough for a case? The problems already on the machine, before planting,
in the families the case is about.

Why: a case's truth is what was planted. On a shared machine another program can be the real CPU
hog, or a test can have left an OOM kill in the kernel log; a no-fault control is then not a
no-fault machine, and a model that names the real hog is right while the scorer calls it wrong.
Such a case is recorded as void with the finding that voided it and counted in no rate, so the
rates are about the agent and a noisy machine shows as many voids, not as a worse agent.
"""

from __future__ import annotations

import os
from typing import Callable

from appliance.analyzers import ANALYZERS, Readings, for_question, run_all
from appliance.analyzers.base import Finding
from appliance.eval.scenarios import Scenario

QuietCheck = Callable[[Scenario], "Finding | None"]


def case_families(scenario: Scenario) -> set[str]:
    """The analyzer families a case is about: its own, and those its question's words reach."""
    known = {a.family for a in ANALYZERS}
    families = set(for_question(scenario.question, ANALYZERS)) & known
    if scenario.family in known:
        families.add(scenario.family)
    return families


def machine_noise(scenario: Scenario) -> Finding | None:
    """The first problem the analyzers find on the machine, before planting, in the case's families."""
    families = case_families(scenario)
    if not families:
        return None
    analyzers = [a for a in ANALYZERS if a.family in families]
    findings = run_all(Readings(self_pids=frozenset({os.getpid()})), analyzers=analyzers, timeout=3.0)
    return next((f for f in findings if f.is_problem), None)


__all__ = ["QuietCheck", "case_families", "machine_noise"]
