"""One final answer judged against everything the run knows: the observations, the verdicts, the
appliance's own processes and the question's form.

Why one function over plain values: the order of the checks matters (an answer that invents a
fact is refused for that before anything else is asked of it), and keeping them out of the engine
lets each rule be tested with the evidence a run would have, without a model or a loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

from appliance.agent.agreement import (FAULT_CLAIMS, all_clear_drops, check_agreement, unasked_culprit, claims_any_fault, denies_all, misses_culprit,
                                       named_processes, names_a_problem, names_first_ranked, names_process, names_self,
                                       not_verdicts_first, place_fit, problems_for, wrong_place, yes_no_fit)
from appliance.agent.answer_fit import (SAY_YES_OR_NO, WHICH, YES_NO, asks_ranking, begins_yes_or_no, check_fit, is_conditional,
                                        outside_place, question_form, seeks_fault, yes_or_no)
from appliance.agent.checks import CULPRIT_FIELDS, Verdict, check_answer, claims_problem
from appliance.agent.evidence import GENERAL_FAMILIES, LOGS, STORAGE_FAMILIES, Evidence, named_ports
from appliance.agent.port_fit import port_fit, unasked_port

NO_FACT = "[no-observed-fact-named]"
NOTHING_CLAIMED = "[claims-no-fault: the question asks what is wrong and the checks found nothing wrong; say so with their values, or name what an observation shows at fault]"


@dataclass(frozen=True)
class AnswerContext:
    """What the run knows when a finish arrives.

    bodies: every observation body; log_bodies: those that read a log the question is about;
    looked: a tool ran beyond the first evidence (or the evidence may answer alone);
    copy_guard: texts an answer must not repeat; rejected: answers already sent back (normalized)."""

    question: str
    evidence: Evidence
    bodies: Sequence[str]
    log_bodies: Sequence[str] = ()
    self_pids: frozenset[int] = frozenset()
    tools_worked: bool = False
    looked: bool = True
    copy_guard: Sequence[str] = ()
    rejected: Iterable[str] = ()


def verdicts_clear(evidence: Evidence) -> bool:
    """The checks judged the question's fault families (the general ones when it names none) and
    found nothing wrong there nor at the places it names: an all-clear answer rests on those
    verdicts. Inventory families (listening ports, uptime) judge no fault, so back no all-clear."""
    families = [f for f in evidence.topics or GENERAL_FAMILIES if f in FAULT_CLAIMS]  # families that judge a fault
    judged = [f for f in evidence.findings if f.family in families]
    return bool(judged) and not problems_for(evidence.findings, families) \
        and not any(f.is_problem for f in evidence.places)


def settled_clear(evidence: Evidence) -> bool:
    """The checks judged what the question is about and found nothing wrong: its fault families
    (verdicts_clear) and, when it names places, those places themselves (a place looked at but
    given no verdict is not judged)."""
    return verdicts_clear(evidence) and (not evidence.looks or bool(evidence.places))


def unbacked_culprits(result: Mapping[str, Any], question: str, evidence: Evidence) -> tuple[str, ...]:
    """The culprit fields (culprit, process, pid) no verdict backs: where the checks judged the
    question's fault families and its places and found nothing wrong, a field that names something
    at fault names what no check found at fault ("kworker" beside "no CPU hog: the busiest process,
    kworker, uses 2 % of one core"), unless it names a problem the checks found elsewhere. A ranking
    question ("which process has the most threads?") asks for its top entry, fault or not: its
    process stays."""
    if not settled_clear(evidence):
        return ()
    keys = ("culprit",) if asks_ranking(question) else CULPRIT_FIELDS
    return tuple(k for k in keys if k in result and not names_a_problem(str(result[k]), evidence.findings))


_PID_STATED = re.compile(r"\bpid\W{0,3}\d+", re.I)


def answers_unasked_which(text: str, question: str, evidence: Evidence) -> bool:
    """"… If so, which?" asks which only if the answer is yes. Where the checks settled it no, a
    sentence that names a process the verdicts rank ("cachehoard (pid 8134) uses the most, 30 MiB")
    or states a pid answers a which nobody asked, and reads as blame beside the no."""
    if not is_conditional(question) or not settled_clear(evidence) or claims_any_fault(text):
        return False
    return bool(_PID_STATED.search(text)) or any(names_process(text, name, None)
                                                 for name in named_processes(evidence.findings))


def settled_no(answer: str, question: str, evidence: Evidence) -> str | None:
    """"Is any process hogging the CPU? If so, which one?" asks which only if the answer is yes.
    Where the checks judged the question's families (and places) and found nothing wrong, the
    answer is no: one that names the top of an ok ranking without saying no ("kworker uses 0 % of
    one core") or yes answers another question and goes back to say yes or no."""
    if not is_conditional(question) or not settled_clear(evidence):
        return None
    if begins_yes_or_no(answer) or denies_all(answer) or claims_any_fault(answer) \
            or names_a_problem(answer, evidence.findings):
        return None
    return SAY_YES_OR_NO


def place_problem_missed(answer: str, result: Mapping[str, Any], question: str, evidence: Evidence) -> str | None:
    """A question about the storage of a place it names ("writing to /srv/docs fails"), where the
    checks found the fault at that place (its filesystem read-only, full, out of inodes; one entry
    holding most of it): the answer names that place, its culprit or another problem the question
    asks about, not another filesystem ("/ is mounted read-write") nor nothing. Other places' problems (a log's errors) have rules of their
    own: a cause line is quoted, not its file named."""
    if not seeks_fault(question):
        return None
    at_place = [f for f in evidence.places if f.is_problem and f.family in STORAGE_FAMILIES and f.family in evidence.topics
                and (f.culprit or f.path)]
    if not at_place:
        return None
    # naming another problem the question asks about (the process holding the place's deleted files) answers it too
    return misses_culprit(answer, result, at_place + [f for f in evidence.asked_problems() if f not in at_place])


def claims_nothing(answer: str, question: str, evidence: Evidence) -> str | None:
    """A reason when the person asks what is wrong, the checks found nothing wrong in the
    question's fault families, and the answer neither says so nor claims any fault ("the network
    interfaces are up and running" for "is something slowing my computer down?"): it answers
    another question. A named place is left to the place rules; a ranking question ("which
    process has the most threads?") is answered by the top of the ranking, fault or not, and so is
    a which-question about a symptom the person reports ("something is opening tons of
    connections, what is it?") by naming the process the symptom's verdict ranks first."""
    if not seeks_fault(question) or asks_ranking(question) or evidence.looks or evidence.places \
            or not verdicts_clear(evidence):
        return None
    if question_form(question) == WHICH and not is_conditional(question) and evidence.topics \
            and names_first_ranked(answer, {}, evidence.findings, evidence.topics[0]):
        return None
    if denies_all(answer) or claims_problem(answer) or claims_any_fault(answer):
        return None
    if names_a_problem(answer, evidence.findings):
        return None  # it names a problem the checks found elsewhere
    return NOTHING_CLAIMED


def judge_answer(answer: str, result: Mapping[str, Any], ctx: AnswerContext) -> Verdict:
    """The answer check, then (when it passes) the answer's fit to the verdicts, to the
    appliance's own processes and to the question's form. A misfit is marked `invented`: it is
    never passed on as is."""
    # an all-clear names nothing at fault, and a question of fact asks for no culprit: the culprit
    # goes before the facts are checked, so a right "no errors" or "up 4 h 25 min" answer is not
    # refused for a culprit word it should not have written
    cleared = all_clear_drops(answer, result, ctx.evidence.findings, question_form(ctx.question) == WHICH) \
        or unasked_culprit(result, seeks_fault(ctx.question))
    cleared += tuple(k for k in unbacked_culprits(result, ctx.question, ctx.evidence) if k not in cleared)
    result = {k: v for k, v in result.items() if k not in cleared}
    verdict = check_answer(answer, result, list(ctx.bodies), tools_worked=ctx.tools_worked, looked=ctx.looked,
                           copied_texts=ctx.copy_guard, rejected=ctx.rejected)
    verdict = replace(verdict, dropped=cleared + verdict.dropped)
    if verdict.problem == NO_FACT and seeks_fault(ctx.question) and denies_all(answer) \
            and verdicts_clear(ctx.evidence):
        # "nothing is wrong" answers "what is wrong?" on the verdicts themselves; a question of
        # fact ("is anything listening on 4242?") still needs the fact
        verdict = replace(verdict, problem=None)
    if verdict.problem is not None:
        return verdict
    kept = verdict.result
    evidence = ctx.evidence
    if question_form(ctx.question) == YES_NO:
        topic = evidence.topics[0] if evidence.topics and not evidence.places else None
        problem, drop = yes_no_fit(answer, kept, evidence.findings, topic, ctx.question)
        problem = problem or place_fit(answer, ctx.question, evidence.places)
        if problem is not None:
            return replace(verdict, problem=problem, invented=True)
        if drop:  # a "no" keeps no culprit: the check found none
            kept = {k: v for k, v in kept.items() if k not in drop}
            verdict = replace(verdict, result=kept, dropped=verdict.dropped + drop)
    misfit = (names_self(answer, kept, ctx.self_pids, (), ctx.bodies)
              or port_fit(ctx.question, answer, kept, evidence.findings, named_ports(ctx.question))
              or unasked_port(answer, evidence.answerable_ports(ctx.question))
              or claims_nothing(answer, ctx.question, evidence)
              or check_agreement(answer, kept, evidence.findings, evidence.topics)
              or wrong_place(answer, kept, evidence.places, evidence.findings)
              # naming what an asked-about problem names (the process holding a named folder's
              # deleted files) answers the question, also when that is no entry under the place
              or (None if names_a_problem(" ".join([answer, *map(str, kept.values())]), evidence.asked_problems())
                  else outside_place(ctx.question, answer, kept, [look.path for look in evidence.looks], ctx.bodies))
              or (place_problem_missed(answer, kept, ctx.question, evidence) if evidence.looks
                  else None if not seeks_fault(ctx.question) else misses_culprit(answer, kept, evidence.main_problems()))
              or (not_verdicts_first(answer, kept, evidence.findings, evidence.topics[0])
                  if asks_ranking(ctx.question) and evidence.topics else None)
              or check_fit(ctx.question, answer, kept, list(ctx.bodies), log_bodies=ctx.log_bodies,
                           culprits=[str(f.culprit) for f in evidence.findings if f.is_problem and f.culprit],
                           causes=[str(f.culprit) for f in evidence.asked_problems() if f.family != LOGS and f.culprit])
              or yes_or_no(ctx.question, answer, evidence.findings, ctx.bodies)
              or settled_no(answer, ctx.question, evidence))
    if misfit is None:
        return verdict
    return replace(verdict, problem=misfit, invented=True)
