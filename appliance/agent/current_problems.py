"""Which part of the machine a complaint is about when the part its words point at shows nothing wrong.

Why: the words' guess of the part can be wrong ("the process list is full of one program" reads as
a full disk); what an expert does then is look at what is wrong now elsewhere, and so does the
evidence: those families lead the question's topics.
"""

from __future__ import annotations

from typing import Sequence

from appliance.agent.question.kinds import Asks
from appliance.agent.question.question import Question
from appliance.analyzers import PAST_FAMILIES, Finding, by_severity

# Complaints whose part of the machine is read from their words alone, and may be read wrong.
_COMPLAINTS = frozenset({Asks.PROCESS, Asks.EXPLANATION})


def with_current_problems(question: Question, topics: tuple[str, ...], findings: Sequence[Finding],
                          places: Sequence[Finding]) -> tuple[str, ...]:
    """The question's families, led by those of the problems found now elsewhere when the person
    reports a fault ("the process list is full of one program, what keeps launching them?"), asks
    for a culprit or an explanation, names no place or port, and the part its words point at shows
    nothing wrong: the words' guess of the part was likely wrong, and what is wrong now is the answer
    (a past event, an OOM kill an hour ago, is context and never leads)."""
    if not question.fault or question.asks not in _COMPLAINTS or question.paths or question.ports or places:
        return topics
    if any(f.is_problem and f.family in topics for f in findings):
        return topics
    current = [f.family for f in by_severity(list(findings)) if f.is_problem and f.family not in PAST_FAMILIES]
    return tuple(dict.fromkeys(current)) + tuple(t for t in topics if t not in current)
