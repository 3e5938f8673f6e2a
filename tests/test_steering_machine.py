"""Steering never proposes an opening its own answer check refuses: the ok verdicts of the analyzers
run on this machine as it is, each the all-clear of questions about its family in several forms."""

import pytest

from appliance.agent.answer.openings import fine_opening
from appliance.agent.answer.rules import AnswerContext, judge_answer
from appliance.agent.evidence import Evidence
from appliance.agent.question.question import read_question
from appliance.analyzers.runner import ANALYZERS, run_all

pytestmark = pytest.mark.machine

# The forms of a question a "No problem found: …" retry answers: yes/no, "if so, which?", what is wrong.
FORMS = ("Is anything wrong with the {topic} on this machine?", "Is there a {topic} problem? If so, which process?",
         "What is wrong with the {topic}?")


def test_an_all_clear_opening_passes_the_check_it_will_face():
    findings = run_all()
    bodies = [f.line() for f in findings]
    # each family's first topic that names a thing (not "how many processes", itself a question)
    topics = {a.family: next(t for t in a.topics if not t.startswith("how")) for a in ANALYZERS}
    judged, refused = 0, []
    for fine in (f for f in findings if f.severity == "ok"):
        for form in FORMS:
            question = read_question(form.format(topic=topics[fine.family]))
            families = question.families or (fine.family,)
            if fine.family not in families or any(f.is_problem for f in findings if f.family in families):
                continue  # steering states the problem there, not an all-clear
            evidence = Evidence(findings=tuple(findings), topics=families)
            opening = fine_opening(fine, question)
            verdict = judge_answer(opening + ".", {}, AnswerContext(question=question, evidence=evidence,
                                                                     bodies=bodies, tools_worked=True))
            judged += 1
            if verdict.problem is not None:
                refused.append((question.text, opening, verdict.problem))
    assert judged >= 20, judged  # most families are quiet on a test machine
    assert not refused, refused
