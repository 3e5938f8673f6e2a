"""What an answer owes the verdicts the checks settled for its question: no culprit where they
found none at fault, a "no" to "if so, which?" they settled no, the fault they found at a named
place, and some claim (or an all-clear) to "what is wrong?".

Why apart from the rule table (rules.py): these are the predicates; the table says which kinds
of question each one judges.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from appliance.agent.answer.clear import settled_clear, verdicts_clear
from appliance.agent.answer.said import (CULPRIT_FIELDS, NAMED_PROCESS, SAY_YES_OR_NO, begins_yes_or_no,
                                         claims_any_fault, claims_problem, denies_all, names_a_problem, names_cause,
                                         named_standout, names_first_ranked, names_process, quotes_a_verdict)
from appliance.agent.evidence import LOGS, STORAGE_FAMILIES, Evidence
from appliance.agent.question.kinds import RESOURCE_FAMILIES, Asks
from appliance.agent.question.question import (WHICH, Question, as_question, asks_ranking, is_conditional, question_form,
                                            seeks_fault)
from appliance.analyzers.base import Finding
from appliance.analyzers.named_path import LOOKUP

NOTHING_CLAIMED = "[claims-no-fault: the question asks what is wrong and the checks found nothing wrong; say so with their values, or name what an observation shows at fault]"


def unbacked_culprits(result: Mapping[str, Any], question: "Question | str", evidence: Evidence) -> tuple[str, ...]:
    """The culprit fields (culprit, process, pid) no verdict backs: where the checks judged the
    question's fault families and its places and found nothing wrong, a field that names something
    at fault names what no check found at fault ("kworker" beside "no CPU hog: the busiest process,
    kworker, uses 2 % of one core"), unless it names a problem the checks found elsewhere or the
    process a ranking puts far ahead (Finding.standout). A ranking
    question ("which process has the most threads?") asks for its top entry, fault or not: its
    process stays."""
    if not settled_clear(evidence):
        return ()
    keys = ("culprit",) if asks_ranking(question) else CULPRIT_FIELDS
    return tuple(k for k in keys if k in result and not names_a_problem(str(result[k]), evidence.findings)
                 and named_standout(str(result[k]), evidence.findings) is None)


def settled_no(answer: str, question: "Question | str", evidence: Evidence) -> str | None:
    """"Is any process hogging the CPU? If so, which one?" asks which only if the answer is yes.
    Where the checks judged the question's families (and places) and found nothing wrong, the
    answer is no: one that names the top of an ok ranking without saying no ("kworker uses 0 % of
    one core") or yes answers another question and goes back to say yes or no."""
    if not is_conditional(question) or not settled_clear(evidence):
        return None
    if standout_missed("", as_question(question), evidence) is not None:
        return None  # one process stands far ahead: not settled no (names-the-standout judges it)
    if begins_yes_or_no(answer) or denies_all(answer) or claims_any_fault(answer) \
            or names_a_problem(answer, evidence.findings):
        return None
    return SAY_YES_OR_NO


def place_problem_missed(answer: str, result: Mapping[str, Any], question: "Question | str", evidence: Evidence) -> str | None:
    """A question about the storage of a place it names ("writing to /srv/docs fails"), where the
    checks found the fault at that place (its filesystem read-only, full, out of inodes; one entry
    holding most of it): the answer names that place, its culprit or another problem the question
    asks about, not another filesystem ("/ is mounted read-write") nor nothing. Other places' problems (a log's errors) have rules of their
    own: a cause line is quoted, not its file named."""
    if not seeks_fault(question):
        return None
    # the lookup, permission or holders of the named path itself: the cause the verdict found (the
    # dangling link, the closed folder), named as itself, not the path that fails restated
    on_path = [f for f in evidence.places if f.is_problem and f.family not in STORAGE_FAMILIES and f.family != LOGS
               and (f.culprit or f.path)]
    stated = " ".join([answer, *(str(v) for v in result.values())])
    if on_path and not names_cause(stated, on_path, as_question(question).paths):
        return f"[misses-the-check: {on_path[0].line()[:200]}]"
    at_place = [f for f in evidence.places if f.is_problem and f.family in STORAGE_FAMILIES and f.family in evidence.topics
                and (f.culprit or f.path)]
    if not at_place:
        return None
    # naming another problem the question asks about (the process holding the place's deleted files) answers it too;
    # the place the question named answers it only with what was found there ("… is mounted read-only")
    problems = at_place + [f for f in evidence.asked_problems() if f not in at_place]
    if names_cause(stated, problems, as_question(question).paths, whole_paths=False):
        return None
    return f"[misses-the-check: {problems[0].line()[:200]}]"


# "X is using 0 % of one core", "Y uses 2 %": the top of an ok ranking, stated, is no claim of a fault.
_SMALL_SHARE = re.compile(r"\b(?:us(?:es|ing)|takes?|taking)\s+(?:only\s+|just\s+)?(?:0|[0-9](?:\.\d+)?)\s?%", re.I)


def _small_share(answer: str) -> bool:
    return bool(_SMALL_SHARE.search(answer))


def claims_nothing(answer: str, question: "Question | str", evidence: Evidence) -> str | None:
    """A reason when the person asks what is wrong, the checks found nothing wrong in the
    question's fault families, and the answer neither says so nor claims any fault ("the network
    interfaces are up and running" for "is something slowing my computer down?"): it answers
    another question. A named place is left to the place rules; a ranking question ("which
    process has the most threads?") is answered by the top of the ranking, fault or not, and so is
    a which-question about a symptom the person reports ("something is opening tons of
    connections, what is it?") by naming the process that ranking puts far ahead (Finding.standout),
    or what an ok verdict lists ("what job runs every minute?"); the top of a ranking where none
    stands out ("python, 35 MiB" for "which app is hogging all the memory?") claims nothing."""
    if_so_which = is_conditional(question) and as_question(question).says_which  # the settled-no rule's
    if not seeks_fault(question) or asks_ranking(question) or if_so_which or evidence.looks \
            or evidence.places or not verdicts_clear(evidence):
        return None
    if question_form(question) == WHICH and not is_conditional(question) and evidence.topics:
        standing = named_standout(answer, evidence.findings) is not None
        top_only = names_first_ranked(answer, {}, evidence.findings, evidence.topics[0]) and not standing
        if standing or (not top_only and quotes_a_verdict(answer, [f for f in evidence.findings
                                                                   if f.family in evidence.topics])):
            return None
    # "kworker uses 0 % of one core" claims nothing; only a claim of a family's fault answers it
    if denies_all(answer) or claims_any_fault(answer) or (claims_problem(answer) and not _small_share(answer)):
        return None
    if names_a_problem(answer, evidence.findings) or named_standout(answer, evidence.findings) is not None:
        return None  # it names a problem the checks found elsewhere, or the process a ranking puts far ahead
    return NOTHING_CLAIMED


# What an answer about a path's lookup speaks of: whether it is there and who gets through to it.
_ACCESS = re.compile(r"\b(?:read\w*|access\w*|reach\w*|open\w*|pass\w*|exist\w*|permission\w*|allow\w*|denied|"
                     r"blocked|missing|found|can see|get (?:at|to))\b", re.I)
# A denial of access: "www-data cannot read it", "no permission to open", "permission denied".
_NO_ACCESS = re.compile(r"\b(?:cannot|can'?t|can not|could\s*n[o']?t|unable to|not able to|may not|must not|"
                        r"(?:is|are)\s*n[o']?t allowed to|(?:does|do)\s*n[o']?t have (?:the )?(?:right|permission)s? to|"
                        r"lacks? (?:the )?(?:right|permission)s? to)\s+(?:\w+\s+){0,2}?(?:read|open|access|reach|pass|get)\b"
                        r"|\bpermission denied\b|\bno (?:read )?(?:access|permission) (?:to|for)\b", re.I)


def lookup_missed(answer: str, evidence: Evidence) -> Finding | None:
    """The ok lookup of a named path that leads the question's topics ("www-data has trouble with
    X", "is X fine?": it exists, and the reader named gets through), when the answer says nothing
    of whether it is there or can be reached ("the file is 24 bytes and was modified today"), or
    denies what the lookup found ("www-data cannot read it"). No other rule judges these answers:
    a path's lookup has no fault words of its own, and a named place is left out of claims-no-fault."""
    if not evidence.topics or evidence.topics[0] != LOOKUP or any(f.is_problem for f in evidence.places):
        return None
    lookup = next((f for f in evidence.places if f.family == LOOKUP), None)
    if lookup is None:
        return None
    # the lookup may itself say a folder is closed to others ("a user other than the owner may not pass")
    if _ACCESS.search(answer) and (not _NO_ACCESS.search(answer) or _NO_ACCESS.search(lookup.verdict)):
        return None
    return lookup


# The kinds a process far ahead answers: which program, how many (is anything running too many?),
# why, yes or no. Never a file, a folder or a user: the steering asks it for those too.
STANDOUT_KINDS = frozenset({Asks.PROCESS, Asks.COUNT, Asks.EXPLANATION, Asks.YES_NO})


def standout_missed(stated: str, question: Question, evidence: Evidence) -> Finding | None:
    """"Which program is eating my memory?", "something opened tons of connections, what?": the ok
    verdict of the part asked about whose ranking puts one process far ahead (Finding.standout),
    when the answer (`stated`: prose and fields) names no such process. Only the family the question
    is about first (its words' first, and the first of its resource's): "why is it slow?" is not
    sent after the largest memory user, nor "what keeps growing in memory?" after the largest one.
    Where the checks found a problem there, the culprit rules judge."""
    if question.asks not in STANDOUT_KINDS or question.paths or evidence.asked_problems():
        return None
    if question.asks is not Asks.PROCESS and not question.seeks_fault:
        return None
    part = RESOURCE_FAMILIES[question.resource]
    first_of_part = [f for f in question.families if f in part][:1] or ([] if question.families else list(part[:1]))
    own = set(question.families[:1]) | set(first_of_part)
    leading = [f for f in evidence.findings if f.standout is not None and not f.is_problem
               and f.family in evidence.topics and f.family in own]
    if not leading or named_standout(stated, leading) is not None:
        return None
    return leading[0]


def doer_missed(answer: str, stated: str, question: Question, evidence: Evidence) -> Finding | None:
    """"What is growing there, and which process writes it?": the problem verdict of the question's
    part that names a process (its writer, its parent, its holder) when the answer (`stated`: its
    prose and fields) names none of the processes those verdicts name; None when the question asks
    no doer or none was found."""
    if not question.doer or denies_all(answer):
        return None
    problems = [f for f in evidence.asked_problems() if NAMED_PROCESS.search(f.verdict)]
    if not problems or any(names_process(stated, m.group(1), m.group(2))
                           for f in problems for m in NAMED_PROCESS.finditer(f.verdict)):
        return None
    return problems[0]
