"""Which part of the machine a complaint is about when the part its words point at shows nothing wrong.

Why: the words' guess of the part can be wrong ("the process list is full of one program" reads as
a full disk); what an expert does then is look at what is wrong now elsewhere, and so does the
evidence: those families lead the question's topics.
"""

from __future__ import annotations

from typing import Sequence

from appliance.agent.question.kinds import RESOURCE_FAMILIES, Asks
from appliance.agent.question.question import Question
from appliance.analyzers import PAST_FAMILIES, Finding, by_severity

# Complaints whose part of the machine is read from their words alone, and may be read wrong.
_COMPLAINTS = frozenset({Asks.PROCESS, Asks.EXPLANATION})


def with_current_problems(question: Question, topics: tuple[str, ...], findings: Sequence[Finding],
                          places: Sequence[Finding]) -> tuple[str, ...]:
    """The question's families, led by those of the problems found now when the person reports a
    fault, names no place or port, and the families its words name show nothing wrong:
    - the problems of the same part of the machine (its resource's families: "my job crawls though
      the processor is idle, is something limiting it?" names the CPU; the quota holding the job
      back is judged with it), for any such question;
    - for a complaint asking for a culprit or an explanation, every current problem after those
      ("the process list is full of one program, what keeps launching them?" reads as a full disk;
      what is wrong now is the answer).
    A past event (an OOM kill an hour ago) never leads."""
    if not question.fault or question.paths or question.ports or places:
        return topics
    if any(f.is_problem and f.family in topics for f in findings):
        return topics
    current = [f.family for f in by_severity(list(findings)) if f.is_problem and f.family not in PAST_FAMILIES]
    part = RESOURCE_FAMILIES.get(question.resource, ())
    lead = [f for f in current if f in part]
    if question.asks in _COMPLAINTS:
        lead += [f for f in current if f not in lead]
    lead = list(dict.fromkeys(lead))
    return tuple(lead) + tuple(t for t in topics if t not in lead)
