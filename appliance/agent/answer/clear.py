"""Whether the checks settled the question's families as fine: they judged them and found nothing
wrong there nor at the places the question names.

Why a leaf of its own: the rules, the predicates they rest on and the steering all ask it of the
evidence; reading only the evidence, it keeps the answer path flat (issue 31).
"""

from __future__ import annotations

from appliance.agent.evidence import GENERAL_FAMILIES, Evidence
from appliance.analyzers import INVENTORY_FAMILIES
from appliance.analyzers.base import problems_for


def verdicts_clear(evidence: Evidence) -> bool:
    """The checks judged the question's fault families (the general ones when it names none) and
    found nothing wrong there nor at the places it names: an all-clear answer rests on those
    verdicts. Inventory families (listening ports, uptime) judge no fault, so back no all-clear;
    every other family does, the checklist's and the named places' too (`Analyzer.judges`)."""
    families = [f for f in evidence.topics or GENERAL_FAMILIES if f not in INVENTORY_FAMILIES]
    judged = [f for f in evidence.findings if f.family in families]
    return bool(judged) and not problems_for(evidence.findings, families) \
        and not any(f.is_problem for f in evidence.places)


def settled_clear(evidence: Evidence) -> bool:
    """The checks judged what the question is about and found nothing wrong: its fault families
    (verdicts_clear) and, when it names places, those places themselves (a place looked at but
    given no verdict is not judged)."""
    return verdicts_clear(evidence) and (not evidence.looks or bool(evidence.places))
