"""What a retried answer must begin with, once the checks have sent the first one back.

Why: told why its answer was refused, a small model decoding greedily from nearly the same context
most often writes the same answer again, word for word, and the run ends in the engine's own
answer. The checks already know what the answer has to be about: the culprit the analyzers found
for the question's family, the entry an observation ranks first, the verdict that nothing is wrong
which the answer contradicted, the cause line of the log the question is about. The retry's grammar
makes the answer begin with one of those (and the culprit field choose among them); the model
writes the rest, and the whole answer is checked again like any other.

Steering follows the kind of misfit, never a guess: an answer refused for a fact no observation
shows, with no verdict to say what it should have named, is sent back without an opening.
"""

from __future__ import annotations

from appliance.agent.answer.misfit import NO_REAL_CULPRIT, Kind, Misfit
from appliance.agent.answer.openings import (MAX_OPENING, NO_PROBLEM, doer_clause, fine_opening, headline,
                                             problem_opening, quoted_cause, statement, top_clauses)
from appliance.agent.question.kinds import THINGS, Asks
from appliance.agent.question.question import Question, as_question

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from appliance.agent.answer.agreement import agreement_misfit
from appliance.agent.answer.repeats import copies
from appliance.agent.answer.said import QUOTED, claims_any_fault, denies_all, named_processes
from appliance.agent.answer.fit import (AMOUNT, WHICH, YES_NO, begins_yes_or_no, is_conditional,
                                        question_form, ranked_firsts, reports_trouble, seeks_fault)
from appliance.agent.question.question import named_ports
from appliance.agent.evidence import GENERAL_FAMILIES, PATH_ASK_FAMILIES, Evidence
from appliance.agent.answer.owed import standout_missed
from appliance.agent.answer.ports import port_opening
from appliance.agent.answer.settled import alongside, answers_unasked_which, fine_place, first_fine_place, settled_clear, verdicts_clear
from appliance.analyzers import INVENTORY_FAMILIES
from appliance.analyzers.base import OK, Finding, worst

MAX_OPENINGS = 4


@dataclass(frozen=True)
class Steer:
    """culprits: the finish's culprit must be one of them; openings: its answer begins with one."""

    culprits: tuple[str, ...] = ()
    openings: tuple[str, ...] = ()


def _names(findings: Iterable[Finding]) -> list[str]:
    return list(dict.fromkeys(str(f.culprit or f.path) for f in findings if f.culprit or f.path))


def topic_problems(evidence: Evidence) -> list[Finding]:
    """The problems the question asks about (Evidence.asked_problems) with something to name."""
    return [f for f in evidence.asked_problems() if f.culprit or f.path]


def _contradicted_ok(misfit: Misfit | None, evidence: Evidence) -> Finding | None:
    """The ok verdict of the question's place or one of its families that the refused answer
    contradicted (the place's own verdict first)."""
    if misfit is None or misfit.kind not in (Kind.CONTRADICTS, Kind.SAY_YES_OR_NO, Kind.LOOKUP_MISSED) or misfit.finding is None \
            or misfit.finding.severity != OK:
        return None
    family = misfit.finding.family
    at_place = [f for f in evidence.places if f.family == family and not f.is_problem]
    if at_place:
        return at_place[0]
    if family not in evidence.topics:
        return None
    return next((f for f in evidence.findings if f.family == family and not f.is_problem), None)


def _fine_topic(misfit: Misfit, question: "Question | str", evidence: Evidence) -> Finding | None:
    """For an answer that named no real culprit, asked what is wrong (or whether something is)
    where the checks found nothing wrong in the question's fault families: the first ok verdict of
    those families (the general ones when it names none); for a question about a place they judged
    fine, the place's own verdict (`first_fine_place`)."""
    # a yes/no question ("is some process held back by a CPU limit?") asks whether a fault is there,
    # whatever its words say of trouble
    asks_yes_no = question_form(question) == YES_NO
    if not (seeks_fault(question) or asks_yes_no):
        return None
    if evidence.places:  # "which program keeps /mnt/x busy?" where nothing holds it: that verdict
        settled = misfit.kind in NO_REAL_CULPRIT or misfit.kind is Kind.NAMES_NO_THING
        return first_fine_place(evidence) if settled and settled_clear(evidence) else None
    # a which-question about a fault at its last step: what the checks settled, like a refused one
    last_which = misfit.kind is Kind.LAST_STEP and question_form(question) == WHICH and as_question(question).fault
    if (misfit.kind not in NO_REAL_CULPRIT and not last_which) or evidence.looks or not verdicts_clear(evidence):
        return None
    return _first_ok(evidence, evidence.topics or GENERAL_FAMILIES)


def _path_asked(evidence: Evidence) -> Finding | None:
    """The ok verdict of what the words asked of a named path (its lookup, who holds it, its
    growth, its counts), when it leads the topics: a refused answer that contradicted another ok
    verdict ("/ is full" for "www-data has trouble with X") is retried from what was asked."""
    lead = evidence.topics[0] if evidence.topics else None
    if lead not in PATH_ASK_FAMILIES:
        return None
    return next((f for f in evidence.places if f.family == lead and f.severity == OK), None)


def _first_ok(evidence: Evidence, families: Sequence[str]) -> Finding | None:
    """The first ok verdict of `families`, in their order."""
    return next((f for family in families for f in evidence.findings
                 if f.family == family and f.severity == OK), None)


def _ranked(misfit: Misfit, question: "Question | str", evidence: Evidence, bodies: Sequence[str]) -> list[str]:
    """For a which-question: the processes the verdicts of the question's own families name (the
    threads verdict names the process with the most threads; a CPU ranking would not), else the
    first-ranked subjects of the observations."""
    if question_form(question) != WHICH and misfit.kind not in (Kind.NOT_FIRST, Kind.NAMES_NO_THING):
        return []
    if is_conditional(question) and verdicts_clear(evidence):
        return []  # "If so, which?" where the checks found none: the answer is no, not the top entry
    asked = as_question(question)
    if asked.fault and not asked.ranking and not evidence.places and verdicts_clear(evidence):
        return []  # "which program has gone haywire?" where nothing has: none, not another family's top entry
    if evidence.places and settled_clear(evidence):  # who the place's own verdicts name, or none
        return named_processes([f for f in evidence.places if f.family in evidence.topics])
    topical = [f for family in evidence.topics for f in evidence.findings if f.family == family]
    named = named_processes(topical)
    if named:
        return named
    return list(dict.fromkeys(r.subject for r in ranked_firsts(bodies)))


def _ranking_clause(name: str, evidence: Evidence) -> str:
    """What a which-retry begins with: the clause of the question's own verdict that ranks `name`
    ("the most, 302, in NAME (pid N)"), so the answer goes on from the check's number
    rather than pinning a fault on a bare name; the name alone where no short clause holds it."""
    for family in evidence.topics:
        for finding in (f for f in evidence.findings if f.family == family):
            clause = next((c for c in top_clauses(finding.verdict) if re.search(rf"(?<![\w.-]){re.escape(name)} \(pid", c)), None)
            if clause and len(clause) <= MAX_OPENING:
                return clause
    return name


# Misfits whose retry would otherwise rest on the checks' all-clear.
_TO_ALL_CLEAR = NO_REAL_CULPRIT | {Kind.SAY_YES_OR_NO, Kind.LAST_STEP}


def _standout_owed(misfit: Misfit, question: "Question | str", evidence: Evidence) -> Finding | None:
    """Where a retry would be steered to "nothing is wrong" but the part asked about has a process
    far ahead in its ranking (the rule names-the-standout would refuse that all-clear): its verdict."""
    # a contradicted ok verdict is an all-clear too: its "No problem found: …" would be refused
    contradicted_ok = misfit.kind is Kind.CONTRADICTS and misfit.finding is not None and not misfit.finding.is_problem
    if misfit.kind not in _TO_ALL_CLEAR and not contradicted_ok:
        return None
    return standout_missed("", as_question(question), evidence)


def steer(misfit: Misfit, question: "Question | str", evidence: Evidence, bodies: Sequence[str],
          log_errors: Sequence[str] = (), answer: str = "", result: Mapping[str, Any] | None = None) -> Steer:
    """The culprits and openings for the retry of an answer refused with `misfit`.

    log_errors: the error lines of the log the question is about (a refused answer that did not
    quote them begins with the log's words). answer/result: the refused answer, asked whether it
    also contradicts a verdict when it was refused for another reason first."""
    if misfit.kind is Kind.NAMES_NO_USER and misfit.name:  # the user, not the busiest process
        found = misfit.finding
        opening = statement(found) if found is not None and found.is_problem else f"The user {misfit.name}"
        return Steer(culprits=(misfit.name,), openings=(opening[:MAX_OPENING],))
    if misfit.kind is Kind.NAMES_NO_DOER and misfit.finding is not None:  # the thing was named; now who does it
        return Steer(openings=(doer_clause(misfit.finding),))
    lead = misfit.finding if misfit.kind is Kind.NAMES_NO_STANDOUT else _standout_owed(misfit, question, evidence)
    if lead is not None and lead.standout is not None:  # the ranking's clause that puts it far ahead
        yes = "Yes: " if question_form(question) == YES_NO or as_question(question).asks is Asks.YES_NO else ""
        name = lead.standout.name
        return Steer(culprits=(name,), openings=((yes + _ranking_clause(name, evidence))[:MAX_OPENING],))
    if misfit.kind is Kind.FACT_NOT_NAMED and misfit.name:  # the measured facts, whatever else was found
        return Steer(openings=(misfit.name[:MAX_OPENING],))
    if misfit.kind is Kind.LOG_NOT_QUOTED and log_errors:
        return Steer(openings=(log_cause(evidence, log_errors),))
    if misfit.kind is Kind.SAY_YES_OR_NO and misfit.finding is None:
        fine = None if claims_any_fault(answer) else _all_fine(question, evidence)
        if fine is not None:  # the checks answered it: what they found at the place, or in the topic
            return Steer(openings=(fine_opening(fine, question),))
        return _yes_or_no_openings(inventory_fact(question, evidence))  # the form is settled, not the answer
    at_port = port_opening(misfit, evidence.findings, named_ports(question))
    if at_port is not None:
        culprits, opening = at_port
        return Steer(culprits=culprits, openings=(opening[:MAX_OPENING],))
    problems = topic_problems(evidence)
    if problems and misfit.kind not in (Kind.NOT_FIRST, Kind.NAMES_NO_THING):
        names = tuple(_names(problems)[:MAX_OPENINGS])
        # the worst problems only: offered a critical and a warning, the model wrote both joined by
        # "or"; choices among equals (two hogs) stay choices
        gravest = worst(problems)
        openings = tuple(dict.fromkeys(problem_opening(f) for f in problems if f.severity == gravest))[:MAX_OPENINGS]
        return Steer(culprits=names, openings=openings)
    ranked = _ranked(misfit, question, evidence, bodies)
    if ranked:
        names = tuple(ranked[:MAX_OPENINGS])
        return Steer(culprits=names, openings=tuple(_ranking_clause(name, evidence) for name in names))
    fine = _contradicted_ok(misfit, evidence) or _fine_topic(misfit, question, evidence)
    if fine is None and answer:
        fine = _contradicted_ok(agreement_misfit(answer, result or {}, evidence.findings, evidence.topics), evidence)
    if fine is None and not problems:
        fine = fine_place(question, evidence)
    if fine is not None and not problems:
        fine = _path_asked(evidence) or fine
        return Steer(openings=tuple(dict.fromkeys(fine_opening(f, question) for f in (fine, *alongside(fine, evidence)))))
    fact = None if problems else topic_fact(question, evidence)
    if fact is not None:
        return Steer(openings=(fact,))
    return _by_form(question, answer, evidence)


_EXAMPLE = re.compile(r'example="([^"]+)"?')


def log_cause(evidence: Evidence, log_errors: Sequence[str]) -> str:
    """What the retry of an answer that did not quote its log begins with: "The log shows: «…»",
    the cause line the log's verdict quotes (else the first error line an observation showed),
    without its timestamp. Given only "The log shows: ", a small model goes on to describe the
    file ("24 errors related to the database") instead of quoting it."""
    quoted = next((m.group(1) for f in evidence.places if f.family == "log_errors" and f.is_problem
                   for m in [QUOTED.search(f.verdict)] if m), None)
    if quoted is None:
        example = _EXAMPLE.search(log_errors[0])
        quoted = example.group(1) if example else log_errors[0]
    return quoted_cause(quoted)


LAST_STEP = Misfit(Kind.LAST_STEP, "[last-step]", invented=False)


def steer_last(question: "Question | str", evidence: Evidence, bodies: Sequence[str], log_errors: Sequence[str] = ()) -> Steer:
    """What a step that may only finish (the step limit, no progress, the model's own stop) must
    begin with, when no refusal settled it already: what the checks settled for the question,
    as a refused answer's retry would be steered, and for a yes/no question the checks judged
    clear, their verdict. Why: such a step ends the run; an answer refused there is replaced by
    the engine's own, and it is where a small model, out of ideas, claims what it saw last."""
    steering = steer(LAST_STEP, question, evidence, bodies, log_errors=log_errors)
    if steering.openings or (question_form(question) != YES_NO and not is_conditional(question)):
        return steering
    fine = _all_fine(question, evidence)
    return Steer(openings=(fine_opening(fine, question),)) if fine is not None else steering


def topic_fact(question: "Question | str", evidence: Evidence) -> str | None:
    """For "how long / how many / how full …?": the ok verdict of the question's first family that
    has one states the amount ("up 16 h 9 min since 2026-12-01 10:29; …"), so a refused answer's
    retry begins with it; cut to its first clause with a number when it is too long to leave room."""
    if question_form(question) != AMOUNT:
        return None
    verdict = next((f.verdict for family in evidence.topics for f in evidence.findings
                    if f.family == family and f.severity == OK), None)
    if verdict is None or len(verdict) <= MAX_OPENING:
        return verdict
    return _numbered_clause(verdict, MAX_OPENING)


def _numbered_clause(verdict: str, room: int) -> str | None:
    return next((c for c in top_clauses(verdict) if re.search(r"\d", c) and len(c) <= room), None)


def inventory_fact(question: "Question | str", evidence: Evidence) -> str | None:
    """The measured fact a yes/no question is about when its lead family only states facts and
    judges none (how long the machine is up, what listens): that verdict's first clause with a
    number ("up 3 h 6 min since 2026-12-06 18:41"). Why: such a family has no all-clear to steer
    to, and a retry steered to "Yes"/"No" alone says nothing the checks saw. Not for a question
    naming a port or a place: their own verdicts answer it, not the machine's list."""
    lead = evidence.topics[0] if evidence.topics else None
    if lead not in INVENTORY_FAMILIES or named_ports(question) or evidence.places:
        return None
    verdict = next((f.verdict for f in evidence.findings if f.family == lead and f.severity == OK), None)
    return None if verdict is None else _numbered_clause(verdict, MAX_OPENING - len("Yes: "))


def _yes_or_no_openings(fact: str | None) -> Steer:
    """"Yes" or "No", each followed by the fact the question is about where an inventory states it."""
    return Steer(openings=(f"Yes: {fact}", f"No: {fact}") if fact else ("Yes", "No"))


# Where the sentence an opening begins goes on in a clause of the model's own: ", which is why …",
# ", so …", ", but …".
_CLAUSE_AFTER_OPENING = re.compile(r"(,\s+|;\s+|\s+-\s+)(?=(?:which|so|and|but|because|meaning|causing|hence|thus)\b)",
                                   re.I)


def kept_after_opening(answer: str, openings: Sequence[str], copy_guard: Iterable[str],
                       refused: Callable[[str], bool] = lambda text: False,
                       observed: Callable[[str], bool] = lambda text: True) -> str:
    """A steered retry rests on the verdict its opening states. What the model writes after the
    opening goes, clause by clause in the opening's own sentence and sentence by sentence after
    it, when it copies the engine's own instructions, when it would be refused on its own
    (`refused`: "…, which is why the root filesystem is full" where that check found none),
    or, after "No problem found", when it claims any fault again (most often the refused answer,
    word for word) or names nothing an observation shows (`observed`: "This is unusual and could
    indicate a spawn.", the question asked back). Where the opening's own sentence goes on into such a claim ("the most, 80, in
    NAME (pid N) is opening tons of connections" where the check found them normal), the
    sentence ends at the opening. The rest stays."""
    opening = next((o for o in openings if o and answer.startswith(o)), None)
    if opening is None:
        return answer
    cleared = opening.startswith(NO_PROBLEM)

    def goes(part: str) -> bool:
        return copies(part, copy_guard) or refused(part) or (cleared and (claims_any_fault(part) or not observed(part)))

    def continued_into(piece: str) -> bool:
        """The opening's sentence continued into what goes: a fault the check denies ("… is
        opening tons of …"), what was refused ("No problem found: connections are normal on port
        2048", the unasked port again), text copied from elsewhere. The opening alone is the
        engine's and is judged only for what it claims (an all-clear names nothing observed by design)."""
        judged = copies(opening, copy_guard) or refused(opening) or (cleared and claims_any_fault(opening))
        return goes(opening + piece) and not judged

    tail = answer[len(opening):]
    first, *rest = re.split(r"(?<=[.;!?])\s+", tail)
    pieces = _CLAUSE_AFTER_OPENING.split(first)  # [text, separator, clause, separator, clause, …]
    if pieces[0].strip(" .") and continued_into(pieces[0]):
        head = ""  # the opening's sentence, continued into what the check denies or what was refused
    else:
        head = pieces[0] + "".join(sep + clause for sep, clause in zip(pieces[1::2], pieces[2::2]) if not goes(clause))
    if head != first and first.rstrip().endswith((".", "!", "?")) and not head.rstrip().endswith((".", "!", "?")):
        head = head.rstrip() + first.rstrip()[-1]
    kept = [p for p in rest if p and not goes(p)]
    return (opening + " ".join([head, *kept]) if kept else opening + head).strip()


def _by_form(question: "Question | str", answer: str, evidence: Evidence) -> Steer:
    """Nothing the checks settled says what the retry should name, but the question's form says
    how it begins: a yes/no question's answer begins "Yes" or "No" (the form settled, not the
    answer), with the fact an inventory states. A refused answer that began so gets no opening
    unless that fact is there to add: it would be the same again."""
    if question_form(question) != YES_NO or not answer:
        return Steer()
    fact = inventory_fact(question, evidence)
    return _yes_or_no_openings(fact) if fact or not begins_yes_or_no(answer) else Steer()


def _all_fine(question: "Question | str", evidence: Evidence) -> Finding | None:
    """For a yes/no question whose places (or, naming none, whose fault families) the checks all
    judged fine: the verdict a "no" rests on; None when any of them found a problem. A question
    whose words name no family but some trouble ("is something odd going on?") is about the
    machine: its "no" rests on the general verdicts, and only when no check found a problem anywhere."""
    if evidence.places:
        return fine_place(question, evidence)
    if evidence.looks or not verdicts_clear(evidence):
        return None
    if not evidence.topics and (not reports_trouble(question) or any(f.is_problem for f in evidence.findings)):
        return None
    return _first_ok(evidence, evidence.topics or GENERAL_FAMILIES)


def backed_no(question: "Question | str", answer: str, evidence: Evidence) -> str:
    """An accepted answer to a yes/no question (or "… If so, which?") that denies every fault without saying "no" ("There
    are no crash-looping processes", "X is asleep, not a CPU hog") begins with the verdict the
    denial rests on, "No problem found: <verdict>. ", when the checks judged every place (or the
    topic) fine: the question asked yes or no, and the reader gets it with what backs it. Any other
    answer is returned as it is (the form is not forced onto an answer the checks do not back)."""
    if (question_form(question) != YES_NO and not is_conditional(question)) or begins_yes_or_no(answer) \
            or answer.startswith(NO_PROBLEM) \
            or claims_any_fault(answer) or not denies_all(answer):
        return answer
    fine = _all_fine(question, evidence)
    if fine is None:
        return answer
    return f"{NO_PROBLEM}{headline(fine).rstrip('.')}. {answer}"


def without_unasked_which(question: "Question | str", answer: str, evidence: Evidence) -> str:
    """An accepted "no" to "… If so, which?" whose later sentences go on to name the top of an ok
    ranking (`judge.answers_unasked_which`) keeps its first sentence and its other ones: the no is
    the answer, and the name beside it reads as the culprit the checks found none of."""
    first, *rest = re.split(r"(?<=[.;!?])\s+", answer.strip())
    if not (re.match(r"no\b", first, re.I) or denies_all(first)) or claims_any_fault(first):
        return answer
    first = _without_unasked_clause(first, question, evidence)
    kept = [part for part in rest if not answers_unasked_which(part, question, evidence)]
    return " ".join([first, *kept])


def _without_unasked_clause(sentence: str, question: "Question | str", evidence: Evidence) -> str:
    """The no's own sentence, without a trailing clause that names the top of an ok ranking ("no
    process is near its limit, with 57 open files held by NAME (pid 1)"): the same blame beside the
    no as a sentence of its own. A head of a word or two ("No, …") is no sentence to keep."""
    for comma in re.finditer(r",\s+", sentence):
        head, tail = sentence[:comma.start()], sentence[comma.end():]
        if len(head.split()) >= 3 and not answers_unasked_which(head, question, evidence) \
                and answers_unasked_which(tail, question, evidence):
            return head.rstrip(" .;:") + "."
    return sentence
