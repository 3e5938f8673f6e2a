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
import time
from typing import TYPE_CHECKING, Callable

from appliance.analyzers import ANALYZERS, Readings, for_question, run_all
from appliance.analyzers.base import Finding
from appliance.eval.scenarios import Scenario

if TYPE_CHECKING:
    from appliance.agent.evidence import ReadingsFactory

QuietCheck = Callable[[Scenario], "Finding | None"]


def case_families(scenario: Scenario) -> set[str]:
    """The analyzer families a case is about: its own, and those its question's words reach."""
    known = {a.family for a in ANALYZERS}
    families = set(for_question(scenario.question, ANALYZERS)) & known
    if scenario.family in known:
        families.add(scenario.family)
    return families


SETTLE_TRIES = 4  # the evaluator's own reaper may still be reaping the last case's processes
# Readings that lag what they measure: the load average and CPU pressure of a busy case just torn
# down fall for a minute after its processes are gone. Such a problem is read again for this long
# before it voids the next case (seen: a CPU-bound plant voided the two cases after it).
DECAYING = frozenset({"cpu"})
SETTLE_SECONDS = 60.0
SETTLE_STEP = 5.0


def machine_noise(scenario: Scenario, *, harness_pids: frozenset[int] | None = None,
                  readings: ReadingsFactory | None = None, settle_seconds: float = SETTLE_SECONDS) -> Finding | None:
    """The first problem the analyzers find on the machine, before planting, in the case's families.

    A problem of the evaluation's own process reaper (the zombies of the case just torn down,
    re-parented to it a moment before it reaps them) is the harness settling, not noise: it is
    read again a little later, and only a problem that stays voids the case; so is a lagging
    reading (`DECAYING`), for up to `settle_seconds`. readings: how the analyzers read the machine
    (by default the product's windows, as `run_eval`'s)."""
    families = case_families(scenario)
    if not families:
        return None
    harness = harness_pids if harness_pids is not None else _reaper_pids()
    analyzers = [a for a in ANALYZERS if a.family in families]
    make = readings or (lambda self_pids: Readings(self_pids=self_pids))
    waited, attempt = 0.0, 0
    while True:
        findings = run_all(make(frozenset({os.getpid()})), analyzers=analyzers, timeout=3.0)
        problem = next((f for f in findings if f.is_problem), None)
        if problem is None:
            return None
        if problem.pid in harness and attempt < SETTLE_TRIES - 1:
            attempt += 1
            time.sleep(0.5)
        elif problem.family in DECAYING and waited < settle_seconds:
            waited += SETTLE_STEP
            time.sleep(SETTLE_STEP)
        else:
            return problem


def _reaper_pids() -> frozenset[int]:
    from appliance.eval import reaper

    current = reaper.current()
    return frozenset({current.pid}) if current is not None else frozenset()


__all__ = ["QuietCheck", "case_families", "machine_noise"]
