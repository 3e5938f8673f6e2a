"""What the checks settled about the question's families, read off the evidence: the verdicts in
the order of its topics, the fine place a which-question rests on, and whether an answer names
what an all-clear (`clear.py`) makes unasked.

Why apart from the rules: the steering asks the same of the evidence as the rules do; both import
this module instead of each other (issue 31: a flat answer path).
"""

from __future__ import annotations

import re
from typing import Iterable

from appliance.agent.answer.said import claims_any_fault, named_processes, names_process
from appliance.agent.answer.clear import settled_clear, verdicts_clear
from appliance.agent.evidence import Evidence
from appliance.analyzers import INVENTORY_FAMILIES
from appliance.analyzers.base import OK, Finding
from appliance.analyzers.named_path import GROWTH
from appliance.agent.question.question import YES_NO_FORM as YES_NO, Question, is_conditional, question_form


def by_topic(evidence: Evidence, findings: Iterable[Finding]) -> list[Finding]:
    """Verdicts in the order of the question's topics (who holds a named place, its lookup, its
    folder ranking …), the filesystem holding a place last, the rest as they came."""
    rank = {family: i for i, family in enumerate(evidence.topics)}
    return sorted(findings, key=lambda f: (f.family not in rank, rank.get(f.family, 0),
                                           f.family in _FILESYSTEM_FAMILIES))


def first_fine_place(evidence: Evidence) -> Finding | None:
    """The ok verdict on a named place that says most about what was asked (`by_topic`); where the
    question's lead family judges the whole machine only (deleted files still held open, for "is
    any deleted file holding space on /x?"), its verdict, not the place's filesystem's."""
    lead = evidence.topics[0] if evidence.topics else None
    if lead is not None and not any(f.family == lead for f in evidence.places):
        machine = next((f for f in evidence.findings if f.family == lead and f.severity == OK), None)
        if machine is not None and lead not in INVENTORY_FAMILIES:
            return machine
    return next((f for f in by_topic(evidence, evidence.places) if f.severity == OK), None)


_FILESYSTEM_FAMILIES = ("filesystem_full", "inodes", "readonly_fs")
def alongside(fine: Finding, evidence: Evidence) -> list[Finding]:
    """The ok verdicts that answer the same thing as `fine`: a place's growth and how full it is
    both answer "is /x about to fill up?", so a retry may begin with either."""
    if fine.family != GROWTH or fine not in evidence.places:
        return []
    return [f for f in evidence.places if f.family == "filesystem_full" and f.severity == OK][:1]
PID_STATED = re.compile(r"\bpid\W{0,3}\d+", re.I)


def answers_unasked_which(text: str, question: "Question | str", evidence: Evidence) -> bool:
    """"… If so, which?" asks which only if the answer is yes. Where the checks settled it no, a
    sentence that names a process the verdicts rank ("NAME (pid N) uses the most, 30 MiB")
    or states a pid answers a which nobody asked, and reads as blame beside the no."""
    if not is_conditional(question) or not settled_clear(evidence) or claims_any_fault(text):
        return False
    return bool(PID_STATED.search(text)) or any(names_process(text, name, None)
                                                 for name in named_processes(evidence.findings))


def fine_place(question: "Question | str", evidence: Evidence) -> Finding | None:
    """For a yes/no question (or "… If so, which?") about places the checks all judged fine: the verdict on what the
    place is (its folder ranking, its log, its settings), by the question's topics, before the
    verdicts of the filesystem that holds it."""
    if (question_form(question) != YES_NO and not is_conditional(question)) or not evidence.places \
            or any(f.is_problem for f in evidence.places):
        return None
    return first_fine_place(evidence)
