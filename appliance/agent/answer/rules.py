"""The rules a final answer must pass, as values: each one function `(answer, question, context)
-> Misfit | None` that declares the kinds of question it judges, in one ordered list.

Why declared kinds: a rule written for one kind of question fires wrongly on others ("which user
uses the most CPU?" sent back for not naming the busiest process); here a rule never sees a question
of a kind it does not name, and its tests ask it questions of the kinds it must not judge. Why an
order: an answer that invents a fact is refused for that first. The table is in docs/engine.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from appliance.agent.answer.agreement import (agreement_misfit, all_clear_drops, contradicting_fields, names_self,
                                              not_verdicts_first, place_fit, unasked_culprit, wrong_place, yes_no_misfit)
from appliance.agent.answer.checks import Verdict, check_answer
from appliance.agent.answer.facts import fact_misfit
from appliance.agent.answer.fit import YES_NO, fit_misfit, names_a_process, outside_place, yes_or_no
from appliance.agent.answer.misfit import Kind, Misfit
from appliance.agent.answer.owed import (claims_nothing, doer_missed, lookup_missed, place_problem_missed, settled_no,
                                         STANDOUT_KINDS, standout_missed, unbacked_culprits)
from appliance.agent.answer.ports import port_fit, port_verdicts, unasked_port
from appliance.agent.answer.repeats import restates
from appliance.agent.answer.shares import share_misfit, unbacked_share_fields
from appliance.agent.answer.said import (NAMED_PROCESS, addresses, denies_all, first_ranked, misses_culprit, names_a_problem,
                                         names_cause, names_process)
from appliance.agent.answer.settled import PID_STATED, first_fine_place, settled_clear, verdicts_clear
from appliance.agent.answer.users import names_a_user, observed_users, user_verdict
from appliance.agent.evidence import LOGS, PATH_ASK_FAMILIES, Evidence
from appliance.agent.question.kinds import ANSWERABLE, THINGS, Asks
from appliance.agent.question.question import Question, as_question
from appliance.agent.question.words import paths_in
from appliance.analyzers import PAST_FAMILIES
from appliance.analyzers.base import Finding


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
    topic = ctx.evidence.topics[0] if ctx.evidence.topics and not ctx.evidence.places else None
    misfit, _ = yes_no_misfit(a.text, a.result, ctx.evidence.findings, topic, q)
    return misfit or place_fit(a.text, q, ctx.evidence.places)


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


def _misses_doer(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    found = doer_missed(a.text, a.stated, q, ctx.evidence)
    return None if found is None else Misfit(Kind.NAMES_NO_DOER, "[names-no-doer: the question also asks which "
                                             f"process does it; the check names: {found.line()[:160]}]", found,
                                             own="[names-no-doer: the question also asks which process does it]")


def _misses_standout(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    found = standout_missed(a.stated, q, ctx.evidence)
    return None if found is None or found.standout is None else Misfit(
        Kind.NAMES_NO_STANDOUT, f"[names-no-standout: one process stands far ahead: {found.line()[:160]}]", found,
        own="[names-no-standout]", name=found.standout.name)


def _no_thing_at_place(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    """"Which program keeps /mnt/x busy?" ("which log under /x keeps growing?") where the checks
    judged the place it names and found nothing wrong there: the answer says so or names a problem
    they found; one that names a process (for a file or folder asked, a path below the place while
    what the words asked of it — growth, holders, counts — found nothing) pins on it what no check
    found. Without this, a process seen in another reading ("bash (pid N)" beside two deleted
    files) was named as the place's holder, and the largest file as the one that grows."""
    evidence = ctx.evidence
    if q.ranking or not q.seeks_fault or not evidence.places or not settled_clear(evidence):
        return None
    if denies_all(a.text) or names_a_problem(a.stated, evidence.findings) or not _names_a_thing(a, q, ctx):
        return None
    # a holder the place's verdict names as a fact ("held by nginx (pid 5)") answers "which has it open?"
    if any(names_process(a.stated, m.group(1), m.group(2)) for f in evidence.places
           for m in NAMED_PROCESS.finditer(f.verdict)):
        return None
    fine = first_fine_place(evidence)
    if fine is None:
        return None
    return Misfit(Kind.CONTRADICTS, f"[contradicts-check: {fine.line()[:160]}]", fine, own="[contradicts-check]")


def _names_a_thing(a: Answer, q: Question, ctx: AnswerContext) -> bool:
    """The answer names a thing of the kind asked: a process (by pid or a name an observation
    shows); a file or folder below the place, where the place's leading verdict answers what the
    words asked of it (a size's ranking names the largest entry rightly)."""
    if q.asks is Asks.PROCESS:
        return bool(PID_STATED.search(a.stated) or names_a_process(a.stated, ctx.bodies))
    leading = first_fine_place(ctx.evidence)
    if leading is None or leading.family not in PATH_ASK_FAMILIES:
        return False
    places = {p.rstrip("/") for p in q.paths}
    return any(p.rstrip("/") not in places and any(p.startswith(f"{place}/") for place in places)
               for p in paths_in(a.stated))


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
    verdict = user_verdict(ctx.evidence.findings)
    # "whose account is hogging the CPU?" where the per-user check found none: "no account is" answers it
    if verdict is not None and not verdict.is_problem and q.seeks_fault and not q.ranking and denies_all(a.text):
        return None
    return Misfit(Kind.NAMES_NO_USER, f"[names-no-user: the question asks which user; name the user an observation "
                  f"shows, such as {users[0]}]", verdict, own="[names-no-user]",
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
    front of the model: the answer names it (its culprit, path, another problem, the line it quotes)
    or says why it is unrelated. Without this a complaint in words no family lists was answered with
    whatever the model looked at last while a CPU hog stood in the evidence."""
    if q.asks is Asks.YES_NO and not q.seeks_fault:
        return None  # a yes/no question of fact ("is port 8080 free?") asks about nothing wrong
    problems = [f for f in _in_question(ctx.evidence, q) if f.culprit or f.path]
    if not problems or addresses(a.stated, problems) or _UNRELATED.search(a.text):
        return None
    first = problems[0]
    return Misfit(Kind.UNADDRESSED, f"[finding-not-addressed: the checks found: {first.line()[:200]}; name it, "
                                    "or say why it is unrelated]", first, own="[finding-not-addressed]")


def _lookup_missed(a: Answer, q: Question, ctx: AnswerContext) -> Misfit | None:
    lookup = lookup_missed(a.text, ctx.evidence)
    if lookup is None:
        return None
    return Misfit(Kind.LOOKUP_MISSED, f"[lookup-not-answered: the check of the path found: {lookup.verdict[:200]}; "
                                      "say what it found]", lookup, own="[lookup-not-answered]")


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
    Rule("answers-the-lookup", frozenset({Asks.EXPLANATION, Asks.YES_NO}),
         "complaints and yes/no questions about a named path whose lookup leads and was judged fine", _lookup_missed),
    Rule("under-the-place", frozenset({Asks.FILE, Asks.FOLDER, Asks.PROCESS, Asks.FILESYSTEM}),
         "which … under a folder it names", _outside_place),
    Rule("names-the-culprit", _FAULT_KINDS, "what is wrong? where the checks found the culprit", _misses_culprit),
    Rule("names-the-standout", STANDOUT_KINDS,
         "which program is eating X? (is anything running too many X?) where one process stands far ahead in X's ranking",
         _misses_standout),
    Rule("names-the-doer", frozenset({Asks.FILE, Asks.FOLDER, Asks.FILESYSTEM, Asks.AMOUNT, Asks.COUNT, Asks.EXPLANATION}),
         "what grows (how many …), and which process does it? where the checks name it", _misses_doer),
    Rule("none-at-the-place", frozenset({Asks.PROCESS, Asks.FILE, Asks.FOLDER}),
         "which process (file, folder) … at a place it names, where the checks found nothing wrong there",
         _no_thing_at_place),
    Rule("verdicts-first", frozenset({Asks.PROCESS}), "which process has the most …? (a family's own ranking)",
         _not_first),
    Rule("names-a-user", frozenset({Asks.USER}), "which user …? (an account, not its process)", _names_user),
    Rule("names-the-fact", frozenset({Asks.SYSTEM_FACT, Asks.AMOUNT, Asks.COUNT}),
         "which kernel (distribution, hostname …) is this? how long since the last boot? the measured value of each "
         "fact asked", lambda a, q, ctx: fact_misfit(a.stated, q.facts_owed, ctx.evidence)),
    Rule("backed-shares", _ANSWERABLE, "any answer stating a share (a percentage): one an observation shows",
         lambda a, q, ctx: share_misfit(a.stated, q.text, ctx.bodies, ctx.evidence.findings)),
    Rule("shape", _ANSWERABLE - {Asks.USER, Asks.SYSTEM_FACT},
         "the answer's shape: a number for how much/many (a rate for how fast; none after a no to "
         "\"is …? if so, how much?\"), a thing for which, a log's line for why", _form),
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
    # fields a right answer is not refused for go first: a culprit beside an all-clear ("no errors") or a fact ("up
    # 4 h 25 min"), a culprit no observation backs, a field contradicting the answer, a share only a field states
    cleared = tuple(dict.fromkeys((all_clear_drops(answer, result, ctx.evidence.findings, question.asks_which)
                                   or unasked_culprit(result, question.seeks_fault))
                                  + unbacked_culprits(result, question, ctx.evidence)
                                  + contradicting_fields(answer, result, ctx.evidence.findings, ctx.evidence.topics)
                                  + unbacked_share_fields(answer, result, question.text, ctx.bodies, ctx.evidence.findings)))
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
    if verdict.problem is None and question.asks is not Asks.YES_NO and restates(answer, question.text):
        return replace(verdict, problem="[no-observed-fact-named: the answer restates the question]",
                       kind=Kind.NO_FACT, own="[no-observed-fact-named]")
    return verdict


def judge_answer(answer: str, result: Mapping[str, Any], ctx: AnswerContext) -> Verdict:
    """The answer check, then the rules of the question's kind in order. A misfit is marked
    `invented`: it is never passed on as is."""
    question = as_question(ctx.question)
    verdict = _basic(answer, result, question, ctx)
    if verdict.problem is not None:  # no observed fact, to a question of fact: the facts it asks, measured
        fact = fact_misfit(Answer(answer, result).stated, question.facts, ctx.evidence) \
            if verdict.kind is Kind.NO_FACT and question.asks is Asks.SYSTEM_FACT else None
        return verdict if fact is None else _misfit(verdict, fact, "names-the-fact")
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
            return _misfit(verdict, misfit, rule.name)
    return verdict


def _misfit(verdict: Verdict, misfit: Misfit, rule: str) -> Verdict:
    return replace(verdict, problem=misfit.reason, kind=misfit.kind, own=misfit.own_words, finding=misfit.finding,
                   invented=True, rule=rule, name=misfit.name)
