"""The rules a final answer must pass, as values: each one function `(answer, question, context)
-> Misfit | None` that declares the kinds of question it judges, in one ordered list.

Why declared kinds: a rule written for one kind of question fires wrongly on others ("which user
uses the most CPU?" sent back for not naming the busiest process); here a rule never sees a
question of a kind it does not name, and its tests ask it questions of the kinds it must not
judge. Why an order: an answer that invents a fact is refused for that before anything else is
asked of it. The table of rules and kinds is in docs/engine.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from appliance.agent.answer.agreement import (agreement_misfit, all_clear_drops, first_ranked, misses_culprit,
                                              names_first_ranked, names_self, not_verdicts_first, place_fit,
                                              unasked_culprit, wrong_place, yes_no_misfit)
from appliance.agent.answer.checks import Verdict, check_answer
from appliance.agent.answer.fit import (SAY_YES_OR_NO, WHICH, YES_NO, asks_ranking, begins_yes_or_no, fit_misfit,
                                        is_conditional, outside_place, question_form, seeks_fault, yes_or_no)
from appliance.agent.answer.misfit import Kind, Misfit
from appliance.agent.answer.ports import port_fit, port_verdicts, unasked_port
from appliance.agent.answer.said import (CULPRIT_FIELDS, claims_any_fault, claims_problem, denies_all, names_a_problem,
                                         names_any, names_cause, quotes_a_verdict)
from appliance.agent.answer.settled import settled_clear, verdicts_clear
from appliance.agent.answer.users import names_a_user, observed_users, user_verdict
from appliance.agent.evidence import LOGS, STORAGE_FAMILIES, Evidence
from appliance.agent.question.kinds import ANSWERABLE, THINGS, Asks
from appliance.agent.question.question import Question, as_question
from appliance.analyzers import PAST_FAMILIES
from appliance.analyzers.base import Finding

NO_FACT = "[no-observed-fact-named]"
NOTHING_CLAIMED = "[claims-no-fault: the question asks what is wrong and the checks found nothing wrong; say so with their values, or name what an observation shows at fault]"


@dataclass(frozen=True)
class AnswerContext:
    """What the run knows when a finish arrives.

    bodies: every observation body; log_bodies: those that read a log the question is about;
    looked: a tool ran beyond the first evidence (or the evidence may answer alone);
    copy_guard: texts an answer must not repeat; rejected: answers already sent back (normalized)."""

    question: "Question | str"
    evidence: Evidence
    bodies: Sequence[str]
    log_bodies: Sequence[str] = ()
    self_pids: frozenset[int] = frozenset()
    tools_worked: bool = False
    looked: bool = True
    copy_guard: Sequence[str] = ()
    rejected: Iterable[str] = ()


def unbacked_culprits(result: Mapping[str, Any], question: "Question | str", evidence: Evidence) -> tuple[str, ...]:
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


def settled_no(answer: str, question: "Question | str", evidence: Evidence) -> str | None:
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
    # naming another problem the question asks about (the process holding the place's deleted files) answers it too
    return misses_culprit(answer, result, at_place + [f for f in evidence.asked_problems() if f not in at_place])


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
    connections, what is it?") by naming the process the symptom's verdict ranks first."""
    if_so_which = is_conditional(question) and as_question(question).says_which  # the settled-no rule's
    if not seeks_fault(question) or asks_ranking(question) or if_so_which or evidence.looks \
            or evidence.places or not verdicts_clear(evidence):
        return None
    if question_form(question) == WHICH and not is_conditional(question) and evidence.topics \
            and (names_first_ranked(answer, {}, evidence.findings, evidence.topics[0])
                 or quotes_a_verdict(answer, [f for f in evidence.findings if f.family in evidence.topics])):
        return None
    # "kworker uses 0 % of one core" claims nothing; only a claim of a family's fault answers it
    if denies_all(answer) or claims_any_fault(answer) or (claims_problem(answer) and not _small_share(answer)):
        return None
    if names_a_problem(answer, evidence.findings):
        return None  # it names a problem the checks found elsewhere
    return NOTHING_CLAIMED


@dataclass(frozen=True)
class Answer:
    """A finish as the rules see it: its prose and its result fields (unbacked ones already gone)."""

    text: str
    result: Mapping[str, Any]

    @property
    def stated(self) -> str:
        return " ".join([self.text, *map(str, self.result.values())])


Check = Callable[[Answer, Question, AnswerContext], "Misfit | None"]


@dataclass(frozen=True)
class Rule:
    """name: for the record; kinds: the kinds of question it judges (never any other);
    serves: the class of questions it was written for, in words; check: the rule itself."""

    name: str
    kinds: frozenset[Asks]
    serves: str
    check: Check

    def judge(self, answer: Answer, question: Question, ctx: AnswerContext) -> Misfit | None:
        if question.asks not in self.kinds:
            return None
        misfit = self.check(answer, question, ctx)
        return replace(misfit, rule=self.name) if misfit is not None else None


def _labelled(kind: Kind, reason: str | None, finding: Finding | None = None) -> Misfit | None:
    """A rule whose predicate gives one kind of reason, as a misfit quoting `finding`."""
    if reason is None:
        return None
    return Misfit(kind, reason, finding, own=f"[{kind.value}]" if finding is not None else "")


def _self(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    return _labelled(Kind.SELF, names_self(a.text, a.result, ctx.self_pids, (), ctx.bodies))


def _answered_yes_or_no(q: Question) -> bool:
    """Asked yes or no: a yes/no question, or "is any …? if so, which?" (a thing, if yes)."""
    return q.asks is Asks.YES_NO or (q.conditional and q.form == YES_NO)


def _yes_no(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    if not _answered_yes_or_no(q):
        return None
    evidence = ctx.evidence
    topic = evidence.topics[0] if evidence.topics and not evidence.places else None
    misfit, _ = yes_no_misfit(a.text, a.result, evidence.findings, topic, q)
    return misfit or place_fit(a.text, q, evidence.places)


def _port(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    verdicts = port_verdicts(ctx.evidence.findings, q.ports)
    reason = port_fit(q, a.text, a.result, ctx.evidence.findings, q.ports)
    return _labelled(Kind.PORT_VERDICT, reason, verdicts[0] if verdicts else None)


def _unasked_port(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    return _labelled(Kind.UNASKED_PORT, unasked_port(a.text, ctx.evidence.answerable_ports(q)))


def _claims_nothing(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    return _labelled(Kind.CLAIMS_NO_FAULT, claims_nothing(a.text, q, ctx.evidence))


def _agreement(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    return agreement_misfit(a.text, a.result, ctx.evidence.findings, ctx.evidence.topics)


def _wrong_place(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    evidence = ctx.evidence
    spaces = [f for f in evidence.places if f.family == "filesystem_full"]
    return _labelled(Kind.WRONG_PLACE, wrong_place(a.text, a.result, evidence.places, evidence.findings),
                     spaces[0] if spaces else None)


def _outside_place(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    # naming what an asked-about problem names (the process holding a named folder's deleted
    # files) answers the question, also when that is no entry under the place
    if names_a_problem(a.stated, ctx.evidence.asked_problems()):
        return None
    places = [look.path for look in ctx.evidence.looks]
    return _labelled(Kind.OUTSIDE_PLACE, outside_place(q, a.text, a.result, places, ctx.bodies))


def _misses_culprit(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    evidence = ctx.evidence
    if names_cause(a.stated, evidence.asked_problems(), q.paths):
        return None
    if evidence.looks:
        reason = place_problem_missed(a.text, a.result, q, evidence)
        problems = [f for f in evidence.places if f.is_problem] or evidence.asked_problems()
    elif q.seeks_fault:
        problems = evidence.main_problems()
        reason = misses_culprit(a.text, a.result, problems)
    else:
        return None
    return _labelled(Kind.MISSES_CULPRIT, reason, problems[0] if problems else None)


def _not_first(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    evidence = ctx.evidence
    if not (q.ranking and evidence.topics):
        return None
    first = first_ranked(evidence.findings, evidence.topics[0])
    reason = not_verdicts_first(a.text, a.result, evidence.findings, evidence.topics[0])
    return _labelled(Kind.NOT_FIRST, reason, first[0] if first else None)


def _names_user(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    if q.paths:  # who owns a named place: the place's own readings answer it
        return None
    users = observed_users(ctx.bodies, ctx.evidence.findings)
    if not users or names_a_user(a.text, a.result, users):
        return None
    return Misfit(Kind.NAMES_NO_USER, f"[names-no-user: the question asks which user; name the user an observation "
                  f"shows, such as {users[0]}]", user_verdict(ctx.evidence.findings), own="[names-no-user]",
                  name=users[0])


def _form(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    evidence = ctx.evidence
    return fit_misfit(q, a.text, dict(a.result), list(ctx.bodies), log_bodies=ctx.log_bodies,
                      culprits=[str(f.culprit) for f in evidence.findings if f.is_problem and f.culprit],
                      causes=[str(f.culprit) for f in evidence.asked_problems() if f.family != LOGS and f.culprit])


def _yes_or_no(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    if not _answered_yes_or_no(q):
        return None
    return _labelled(Kind.SAY_YES_OR_NO, yes_or_no(q, a.text, ctx.evidence.findings, ctx.bodies))


def _settled_no(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    return _labelled(Kind.SAY_YES_OR_NO, settled_no(a.text, q, ctx.evidence))


def _in_question(evidence: Evidence, q: Question) -> list[Finding]:
    """The problems an answer must address: with no part of the machine named ("something is
    off"), every problem shown; else those of the part asked about (its families and the places
    it names), and for an open complaint about no named place also every other problem of the
    machine now. A past event of another part (an OOM kill minutes ago, asked whether the CPU is
    slow) is context the answer may leave out, and so is all else to a yes/no question or one
    about a named place."""
    asked = evidence.part_problems()
    if q.asks is Asks.YES_NO or evidence.places:
        return asked
    return asked + [f for f in evidence.shown() if f.is_problem and f not in asked and f.family not in PAST_FAMILIES]


_UNRELATED = re.compile(r"\b(?:unrelated|not\s+related|no\s+relation|not\s+(?:the\s+)?(?:cause|reason|why)|"
                        r"does\s+not\s+explain|doesn'?t\s+explain|cannot\s+explain|can'?t\s+explain)\b", re.I)


def _addresses_finding(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    """A complaint or a question that looks for a fault, with a warning or a critical finding in
    front of the model: the answer names it (its culprit, path or another problem the checks found) or says
    why it is unrelated. Without this a complaint in words no family lists was answered with
    whatever the model looked at last while a CPU hog stood in the evidence."""
    if q.asks is Asks.YES_NO and not q.seeks_fault:
        return None  # a yes/no question of fact ("is port 8080 free?") asks about nothing wrong
    problems = [f for f in _in_question(ctx.evidence, q) if f.culprit or f.path]
    if not problems or names_a_problem(a.stated, problems) or _UNRELATED.search(a.text):
        return None
    first = problems[0]
    return Misfit(Kind.UNADDRESSED, f"[finding-not-addressed: the checks found: {first.line()[:200]}; name it, "
                                    "or say why it is unrelated]", first, own="[finding-not-addressed]")


_ALL = frozenset(Asks)
_ANSWERABLE = frozenset(ANSWERABLE)
_FAULT_KINDS = frozenset({Asks.PROCESS, Asks.FILE, Asks.FOLDER, Asks.FILESYSTEM, Asks.SERVICE, Asks.LOG_CAUSE,
                          Asks.EXPLANATION, Asks.YES_NO})
_PLACE_KINDS = frozenset({Asks.FILE, Asks.FOLDER, Asks.FILESYSTEM, Asks.AMOUNT, Asks.COUNT, Asks.YES_NO,
                          Asks.EXPLANATION, Asks.LOG_CAUSE})

# The order matters: each misfit is the first that holds.
RULES: tuple[Rule, ...] = (
    Rule("yes-no-verdict", THINGS | {Asks.YES_NO}, "is/are/does … ? (if so, which?) about what the checks judged",
         _yes_no),
    Rule("not-the-appliance", _ALL, "every question: the appliance itself is never the culprit", _self),
    Rule("port-verdict", frozenset({Asks.PORT, Asks.PROCESS, Asks.SERVICE, Asks.YES_NO, Asks.EXPLANATION}),
         "questions that name a port: the answer agrees with who listens there", _port),
    Rule("unasked-port", _ANSWERABLE, "answers about a port nobody asked about", _unasked_port),
    Rule("claims-no-fault", _FAULT_KINDS, "what is wrong? where the checks found nothing wrong", _claims_nothing),
    Rule("agrees-with-checks", _ANSWERABLE, "any claim of a family's fault the checks judged, or a denial of one",
         _agreement),
    Rule("right-place", _PLACE_KINDS, "questions about a named place's space", _wrong_place),
    Rule("under-the-place", frozenset({Asks.FILE, Asks.FOLDER, Asks.PROCESS, Asks.FILESYSTEM}),
         "which … under a folder it names", _outside_place),
    Rule("names-the-culprit", _FAULT_KINDS, "what is wrong? where the checks found the culprit", _misses_culprit),
    Rule("verdicts-first", frozenset({Asks.PROCESS}), "which process has the most …? (a family's own ranking)",
         _not_first),
    Rule("names-a-user", frozenset({Asks.USER}), "which user …? (an account, not its process)", _names_user),
    Rule("shape", _ANSWERABLE - {Asks.USER, Asks.SYSTEM_FACT},
         "the answer's shape: a number for how much/many, a thing for which, a log's line for why", _form),
    Rule("yes-or-no", THINGS | {Asks.YES_NO}, "questions answered yes or no (if so, which?)", _yes_or_no),
    Rule("settled-no", THINGS | {Asks.YES_NO, Asks.COUNT, Asks.AMOUNT},
         "is any …? if so, which (how many, how much)? where the checks found none", _settled_no),
    Rule("addresses-finding", frozenset({Asks.EXPLANATION, Asks.YES_NO}),
         "complaints and what-is-wrong questions with a warning or critical finding in the evidence",
         _addresses_finding),
)


def _basic(answer: str, result: Mapping[str, Any], question: Question, ctx: AnswerContext) -> Verdict:
    """The answer check (agent/answer/checks.py), after the fields an answer must not carry are gone. An
    out-of-scope question is answered honestly by saying this machine cannot tell: that is no
    refusal, and it needs no observed fact."""
    # an all-clear names nothing at fault, and a question of fact asks for no culprit: the culprit
    # goes before the facts are checked, so a right "no errors" or "up 4 h 25 min" answer is not
    # refused for a culprit word it should not have written
    cleared = all_clear_drops(answer, result, ctx.evidence.findings, question.asks_which) \
        or unasked_culprit(result, question.seeks_fault)
    cleared += tuple(k for k in unbacked_culprits(result, question, ctx.evidence) if k not in cleared)
    result = {k: v for k, v in result.items() if k not in cleared}
    verdict = check_answer(answer, result, list(ctx.bodies), tools_worked=ctx.tools_worked, looked=ctx.looked,
                           copied_texts=ctx.copy_guard, rejected=ctx.rejected)
    verdict = replace(verdict, dropped=cleared + verdict.dropped)
    honest = question.asks is Asks.OUT_OF_SCOPE and verdict.kind in (Kind.REFUSAL, Kind.NO_FACT, Kind.NO_TOOL_YET)
    # "nothing is wrong" answers "what is wrong?" on the verdicts themselves; a question of fact
    # ("is anything listening on 4242?") still needs the fact
    cleared_by_checks = verdict.kind is Kind.NO_FACT and question.seeks_fault and denies_all(answer) \
        and verdicts_clear(ctx.evidence)
    if honest or cleared_by_checks:
        return replace(verdict, problem=None, kind=None, own="")
    return verdict


def judge_answer(answer: str, result: Mapping[str, Any], ctx: AnswerContext) -> Verdict:
    """The answer check, then the rules of the question's kind in order. A misfit is marked
    `invented`: it is never passed on as is."""
    question = as_question(ctx.question)
    verdict = _basic(answer, result, question, ctx)
    if verdict.problem is not None:
        return verdict
    kept = verdict.result
    if _answered_yes_or_no(question):
        topic = ctx.evidence.topics[0] if ctx.evidence.topics and not ctx.evidence.places else None
        _, drop = yes_no_misfit(answer, kept, ctx.evidence.findings, topic, question)
        if drop:  # a "no" keeps no culprit: the check found none
            kept = {k: v for k, v in kept.items() if k not in drop}
            verdict = replace(verdict, result=kept, dropped=verdict.dropped + drop)
    said = Answer(answer, kept)
    for rule in RULES:
        misfit = rule.judge(said, question, ctx)
        if misfit is not None:
            return replace(verdict, problem=misfit.reason, kind=misfit.kind, own=misfit.own_words,
                           finding=misfit.finding, invented=True, rule=rule.name, name=misfit.name)
    return verdict
