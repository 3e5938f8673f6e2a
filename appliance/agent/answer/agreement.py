"""Does the final answer agree with the analyzers' verdicts, and does it leave the appliance out?

Why: the analyzers judge each fault family with thresholds a person can defend; a small model's
"the disk is full" at 22 % used, or "nothing is wrong" beside a critical finding, contradicts them.
Such an answer goes back to the model once with the verdict it contradicts; the model explains,
the verdicts judge. The appliance itself (the model runs in it, so it is always among the busiest
processes) is never an answer.

A claim of a family's fault is read from the answer with that family's own words (a few general
phrases per family, below); a claim is contradicted only when that family's verdict is `ok`.
"""

from __future__ import annotations

from appliance.agent.answer.misfit import Kind, Misfit
from appliance.agent.question.question import Question, as_question

import re
from typing import Any, Iterable, Mapping, Sequence

from appliance.agent.answer.said import (_SELF_WORDS, _YES, FAULT_CLAIMS, NAMED_PROCESS, SELF_MARKERS, affirms, claims,
                                         claims_any_fault, claims_fault, clauses, denies_all, first_ranked,
                                         names_a_problem, names_any, named_standout, names_process, names_ranked,
                                         problems_for)
from appliance.analyzers.base import OK, Finding
from appliance.analyzers.folder_sizes import FAMILY as FOLDER

def yes_no_fit(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
               family: str | None, question: "Question | str | None" = None) -> tuple[str | None, tuple[str, ...]]:
    """`yes_no_misfit` with its reason as the model reads it."""
    misfit, drop = yes_no_misfit(answer, result, findings, family, question)
    return (misfit.reason if misfit is not None else None), drop


def yes_no_misfit(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
                  family: str | None, question: "Question | str | None" = None) -> tuple[Misfit | None, tuple[str, ...]]:
    """For "is any … ?" about a family the checks judge: (a reason, fields to drop). A claim of the
    family's fault while its verdict is ok goes back, and so does a "yes" when the question itself
    claims that fault ("is the disk full?"; not "does one folder take more space?", whose yes is
    about folders); an answer that says no (or claims nothing) keeps no culprit: the check found none."""
    if family is None or family not in FAULT_CLAIMS:
        return None, ()
    verdicts = [f for f in findings if f.family == family]
    if not verdicts or any(f.is_problem for f in verdicts):
        return None, ()
    stated = " ".join([answer, *(str(v) for v in result.values())])
    asked = None if question is None else as_question(question).text
    says_yes = _YES.search(answer) and (asked is None or claims_fault(asked, family))
    # "yes, NAME runs far too many threads" where the ranking puts NAME far ahead says what they found
    if named_standout(stated, verdicts) is not None:
        return None, ()
    if says_yes or claims_fault(stated, family):
        return _contradicts(verdicts[0], 200), ()
    if asked is not None and claims_fault(asked, family) and not denies_all(answer) \
            and not names_a_problem(stated, findings):
        # neither yes nor no ("the top process is python, 42.9 MiB" for "is any process using an
        # unusual amount of memory?"): the verdict says no, so must the answer (unless it names a
        # problem the checks found in another family)
        return Misfit(Kind.SAY_YES_OR_NO, f"[say-yes-or-no: {verdicts[0].line()[:200]}]", verdicts[0],
                      own="[say-yes-or-no]"), ()
    return None, tuple(k for k in ("culprit", "process", "pid") if k in result)


def unasked_culprit(result: Mapping[str, Any], seeks_fault: bool) -> tuple[str, ...]:
    """The culprit field of an answer to a question that asks for no culprit ("how long has this
    machine been up?" answered with culprit "system"): it claims nothing the person asked, so it
    goes rather than sending a right answer back. The process a question asks for is kept."""
    return () if seeks_fault or "culprit" not in result else ("culprit",)


def all_clear_drops(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
                    asks_which: bool) -> tuple[str, ...]:
    """The fields an answer that says nothing is wrong cannot keep: a culprit ("the daily reports
    run without errors" with the writing program as culprit), and any field that claims the fault
    the answer denies ("No problem found: …" with value "logs contain errors", the refused answer's field
    kept through a retry). An all-clear names nothing at fault, unless the field names a problem
    the checks found. The process a which-question asks for stays: there it is the thing asked
    about, not a culprit."""
    if not denies_all(answer) or claims_any_fault(answer):
        return ()
    keys = ("culprit",) if asks_which else ("culprit", "process", "pid")
    culprits = [k for k in keys if k in result and not names_a_problem(str(result[k]), findings)]
    claims = [k for k, v in result.items() if k not in keys and isinstance(v, str) and claims_any_fault(v)
              and not names_a_problem(v, findings)]
    return tuple(culprits + claims)


def place_fit(answer: str, question: "Question | str", places: Sequence[Finding]) -> Misfit | None:
    """For a yes/no question about a place the checks judged fine: a "yes" contradicts them."""
    fine = [f for f in places if not f.is_problem]
    if not fine or any(f.is_problem for f in places) or not affirms(answer, as_question(question).text):
        return None
    return _contradicts(fine[0], 200)


def _contradicts(finding: Finding, room: int) -> Misfit:
    """The answer says what `finding`, a verdict of the checks, denies (or denies what it found)."""
    return Misfit(Kind.CONTRADICTS, f"[contradicts-check: {finding.line()[:room]}]", finding, own="[contradicts-check]")


def check_agreement(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
                    topics: Sequence[str]) -> str | None:
    """`agreement_misfit` as the model reads it."""
    misfit = agreement_misfit(answer, result, findings, topics)
    return misfit.reason if misfit is not None else None


def agreement_misfit(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
                     topics: Sequence[str]) -> Misfit | None:
    """None when the answer agrees with the verdicts, else the verdict it contradicts.

    findings: every verdict of the run's first check; topics: the families the question is about."""
    if not findings:
        return None
    stated = " ".join([answer, *(str(v) for v in result.values())])
    if denies_all(answer) and not answer_has_culprit(result):
        problems = list(problems_for(findings, topics))
        # an answer that names what a problem names states it, in the verdict's own negative words
        # ("nothing listens on tcp port 54161: … is down"), and denies nothing: also a problem of
        # another family than the question's (a log's errors explained by the port that is down)
        if problems and not names_a_problem(stated, findings):
            return _contradicts(problems[0], 160)
    by_family: dict[str, list[Finding]] = {}
    for finding in findings:
        by_family.setdefault(finding.family, []).append(finding)
    # a process the checks rank far ahead (Finding.standout), said to hog or to run too many of
    # something, is what they found: its clauses claim nothing they deny, nor does its family
    standing = [f for f in findings if f.standout]
    named = named_standout(stated, standing)
    claimed = " ".join(c for c in clauses(stated) if named_standout(c, standing) is None) if named else stated
    for family in FAULT_CLAIMS:
        verdicts = by_family.get(family)
        if not verdicts or (named is not None and family == named.family) or not claims_fault(claimed, family):
            continue
        if all(v.severity == OK for v in verdicts):
            return _contradicts(verdicts[0], 160)
    return None


def contradicting_fields(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
                         topics: Sequence[str]) -> tuple[str, ...]:
    """The result fields that claim a fault the checks deny while the answer's own words agree with
    them ("NAME is mounted read-only" with value "root filesystem is full", a refused answer's field
    kept through a retry): the field goes and the answer stands. Words that contradict the checks
    are still judged by them."""
    if agreement_misfit(answer, {}, findings, topics) is not None:
        return ()
    return tuple(k for k, v in result.items()
                 if isinstance(v, str) and not denies_all(v) and agreement_misfit(v, {}, findings, topics) is not None)


def answer_has_culprit(result: Mapping[str, Any]) -> bool:
    """The answer's own fields name a culprit (an all-clear that names one is no all-clear)."""
    return any(str(result.get(k) or "").strip() for k in ("culprit", "process", "pid"))


_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
_OTHER_RESOURCE = re.compile(r"\b(?:cpu|cores?|processors?|memory|ram|swap|load|threads?|connections?|inodes?)\b", re.I)


def not_verdicts_first(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
                       topic: str | None) -> str | None:
    """For "which process has the most …?": an answer that names neither the process the
    question's own family ranks first nor its pid answers from another ranking (the top CPU user
    for a question about threads)."""
    first = first_ranked(findings, topic)
    if first is None or names_ranked(answer, result, first):
        return None
    return f"[not-the-first: the check ranks first: {first[0].line()[:160]}]"


def wrong_place(answer: str, result: Mapping[str, Any], places: Sequence[Finding],
                findings: Sequence[Finding] = ()) -> str | None:
    """A reason when the question names a place and the answer gives a share of space that is not
    the share of the filesystem holding that place, without naming that filesystem ("/ is 23 %
    used" for "is /data/incoming about to fill up?"). A share a folder verdict among `findings`
    states (an entry's part of its folder: "ENTRY holds 96.2 % of …/FOLDER") is the
    answer to what fills the place, not another filesystem's use."""
    spaces = [f for f in places if f.family == "filesystem_full" and "used_percent" in f.values]
    if not spaces:
        return None
    stated = " ".join([answer, *(str(v) for v in result.values())])
    in_folders = {float(f.values[key]) for f in findings if f.family == FOLDER
                  for key in ("largest_percent", "next_percent") if key in f.values}
    # a share of CPU, memory or inodes is no share of space
    shares = [float(m) for c in clauses(stated) if not _OTHER_RESOURCE.search(c) for m in _PERCENT.findall(c)
              if not any(abs(float(m) - part) <= 1.0 for part in in_folders)]
    if not shares:
        return None
    for place in spaces:
        pct = float(place.values["used_percent"])
        mount = str(place.values.get("mount") or "")
        if any(abs(share - pct) <= 1.0 for share in shares) or (mount and mount != "/" and mount in stated):
            return None
    return f"[another-place: the question is about {spaces[0].line()[:200]}]"


def names_self(answer: str, result: Mapping[str, Any], self_pids: Iterable[int], self_names: Iterable[str],
               bodies: Iterable[str]) -> str | None:
    """A reason when the answer blames the appliance: its pid, a process name the observations
    label as the appliance, or the label itself in the answer (unless the answer is all clear)."""
    pids = {int(p) for p in self_pids}
    pid = result.get("pid")
    if isinstance(pid, int) and pid in pids or str(pid).isdigit() and int(str(pid)) in pids:
        return "[names-the-appliance-itself: that pid is the assistant, never a culprit]"
    names = {n.lower() for n in self_names if n}
    for body in bodies:
        for line in body.splitlines():
            if any(marker in line.lower() for marker in SELF_MARKERS):
                match = re.search(r"name=([^\s;,]+)", line)
                if match:
                    names.add(match.group(1).replace("(appliance", "").lower())
    for key in ("process", "culprit"):
        value = str(result.get(key) or "").lower().strip()
        if value and (value in names or any(m in value for m in SELF_MARKERS)):
            return "[names-the-appliance-itself: that process is the assistant, never a culprit]"
    lowered = answer.lower()
    if claims(lowered, _SELF_WORDS):
        return "[names-the-appliance-itself: the assistant is never the answer]"
    return None
