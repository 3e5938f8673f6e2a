"""Does the final answer have the shape the question asks for?

Why: small models answer a different question than the one asked ("how long has it been up?" →
the top memory process) or give a claim without the number it rests on. The form of the question
("which …", "how many/much/long/full …", "is there …", "why …") decides the shape an answer must
have; this module reads that form and checks the shape, without judging the facts (the answer
check and the verdict agreement do that).

Forms:
- which: names a thing (process, file, folder, port, service) an observation shows; or says that
  nothing is wrong. A "biggest/most/busiest" question must name what the ranked observation put
  first, not another entry of its list.
- amount: a number with its unit that an observation shows.
- yes_no / why / open: no shape beyond the answer check; why and open answers about a log whose
  errors were shown must quote the cause, not describe the file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from appliance.agent.answer.misfit import Kind, Misfit
from appliance.agent.answer.quantities import number_forms
from appliance.agent.answer.said import (SAY_YES_OR_NO, affirms, begins_yes_or_no, claims_any_fault, denies_all,
                                         names_a_problem, says_whole)

from appliance.agent.question.kinds import Asks
from appliance.agent.question.question import (AMOUNT_FORM as AMOUNT, OPEN, WHICH, WHY, YES_NO_FORM as YES_NO,
                                            Question, as_question, asks_ranking, is_conditional, question_form,
                                            reports_trouble, seeks_fault)

__all__ = ["AMOUNT", "OPEN", "SAY_YES_OR_NO", "WHICH", "WHY", "YES_NO", "asks_ranking", "begins_yes_or_no",
           "is_conditional", "question_form", "reports_trouble", "seeks_fault"]


@dataclass(frozen=True)
class Ranked:
    """The first entry of a ranked observation (a tool's headline): its subject and the line."""

    subject: str
    line: str


_HEADLINE = re.compile(r"^headline:\s*(?:largest(?: file)?|top cpu|top memory|top \w+):\s*(.+)$", re.M)
_SUBJECT = re.compile(r"(/[^\s;,()]+)|name=([^\s;,]+)")


def ranked_firsts(bodies: Iterable[str]) -> list[Ranked]:
    """The first-ranked subjects that observations' headlines name (a path, or a process name)."""
    found = []
    for body in bodies:
        for match in _HEADLINE.finditer(body):
            line = match.group(0)
            subject = _SUBJECT.search(match.group(1))
            if subject:
                found.append(Ranked((subject.group(1) or subject.group(2)).rstrip("/.,"), line))
    return found


_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)\s*(%|[kmgtp]i?b\b|bytes?\b|b\b|s\b|sec\w*|min\w*|h\b|hours?|"
                     r"days?|d\b|weeks?|°c|c\b|rpm|files?|inodes?|process\w*|threads?|connections?|ports?|"
                     r"zombies?|errors?|lines?|times?|restarts?|children|fds?|cores?|mb\b|gb\b)", re.I)
# A number per unit of time, as observations and answers write it: "2.1 MiB/s", "80 KiB per second",
# "5 % an hour", "12 files every minute".
_RATE_NUMBER = re.compile(r"\d+(?:\.\d+)?\s*(?:[kmgtp]i?b\b|b\b|bytes?\b|%|[a-z]+\b)?\s*(?:/\s*|\bper\s+|\ba\s+|\ban\s+|"
                          r"\beach\s+|\bevery\s+)(?:s\b|sec\w*|min\w*|h\b|hours?\b|days?\b)", re.I)
_ANY_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")


def _rate_missed(question: "Question | str", stated: str, bodies: Iterable[str]) -> Misfit | None:
    """"How fast is it growing?" (or "which file, and how quickly?") answered without a rate where an
    observation shows one: the file's size is not how fast it grows."""
    if not as_question(question).rate or _RATE_NUMBER.search(stated):
        return None
    rates = [m.group(0) for body in bodies for m in _RATE_NUMBER.finditer(body) if re.search(r"[1-9]", m.group(0))]
    if not rates:
        return None
    return Misfit(Kind.NO_RATE, f"[no-rate: the question asks how fast; give the rate an observation shows, "
                                f"such as {rates[0]}]", own="[no-rate: the question asks how fast]")


def _numbers_in(text: str) -> set[str]:
    return {form for raw in _ANY_NUMBER.findall(text) for form in number_forms(raw)}


def _observed_number(answer_number: str, observed: set[str]) -> bool:
    return bool(number_forms(answer_number.replace(",", ".")) & observed)


def _quotes_line(text: str, line: str, run: int = 3) -> bool:
    words = re.findall(r"[a-z0-9]+", text.lower())
    target = " ".join(re.findall(r"[a-z0-9]+", line.lower()))
    return any(" ".join(words[i:i + run]) in target for i in range(len(words) - run + 1))


def _quotes_value(value: str, line: str) -> bool:
    """A result value that is a phrase of the line, word for word (six letters at least):
    result.error "quota exceeded" from "ERROR disk quota exceeded for user7"."""
    phrase = " ".join(re.findall(r"[a-z0-9]+", value.lower()))
    target = " " + " ".join(re.findall(r"[a-z0-9]+", line.lower())) + " "
    return len(phrase.replace(" ", "")) >= 6 and f" {phrase} " in target


_ERROR_LINE = re.compile(r"^.*\b(?:ERROR|FATAL|CRITICAL|PANIC|error|failed|refused|denied)\b.*$", re.M)


def log_error_lines(bodies: Iterable[str]) -> list[str]:
    """Lines of read_log observations (or the first evidence) that state an error."""
    lines: list[str] = []
    for body in bodies:
        if "level" in body or "error" in body.lower():
            lines.extend(m.group(0).strip() for m in _ERROR_LINE.finditer(body) if len(m.group(0)) > 20)
    return lines


def check_fit(question: "Question | str", answer: str, result: dict, bodies: list[str], *,
              log_bodies: Iterable[str] = (), culprits: Iterable[str] = (), causes: Iterable[str] = ()) -> str | None:
    """The reason `fit_misfit` gives, as the model reads it."""
    misfit = fit_misfit(question, answer, result, bodies, log_bodies=log_bodies, culprits=culprits, causes=causes)
    return misfit.reason if misfit is not None else None


def fit_misfit(question: "Question | str", answer: str, result: dict, bodies: list[str], *,
               log_bodies: Iterable[str] = (), culprits: Iterable[str] = (), causes: Iterable[str] = ()) -> Misfit | None:
    """None when the answer has the shape its question asks for, else why not.

    log_bodies: the observations that read a log (a why/open answer must quote their cause).
    culprits: what the checks' verdicts name at fault (a verdict names a process in prose).
    causes: what the problems the question asks about name, other than its logs ("tcp port 41833"
    where nothing listens): an answer that names one states a checked cause and need not quote
    the log that shows its symptom."""
    form = question_form(question)
    stated = " ".join([answer, *(str(v) for v in result.values())])
    all_clear = denies_all(answer)
    if form == AMOUNT:
        observed = set()
        for body in bodies:
            observed |= _numbers_in(body)
        numbers = [m.group(1) for m in _NUMBER.finditer(stated)]
        if not numbers and all_clear and is_conditional(question):
            return None  # "is anything filling X? if so, how fast?": the amount is owed only on a yes
        if not numbers:
            return Misfit(Kind.NO_NUMBER, "[no-number: the question asks how much, how many or how long; give the number "
                                          "and unit an observation shows]")
        if not any(_observed_number(n, observed) for n in numbers):
            return Misfit(Kind.NO_NUMBER, f"[number {numbers[0]!r} not-in-any-observation]",
                          own="[number not-in-any-observation]")
        return None if all_clear else _rate_missed(question, stated, bodies)
    named_culprit = any(re.search(rf"(?<![\w/.-]){re.escape(c.lower())}(?![\w-])", stated.lower())
                        for c in culprits if len(c) >= 3)
    if form == WHICH and not all_clear and not named_culprit:
        if not names_entity(stated, bodies):
            return Misfit(Kind.NAMES_NO_THING, "[names-no-thing: the question asks which process, file, folder or "
                                               "port; name one that an observation shows, or use a tool that lists them]")
        if as_question(question).asks is Asks.PROCESS and not names_a_process(stated, bodies):
            return Misfit(Kind.NAMES_NO_THING, "[names-no-thing: the question asks which process; name one that an "
                                               "observation shows, with its pid, or say that none does]")
    if form == WHICH and not all_clear and as_question(question).superlative:
        firsts = ranked_firsts(bodies)
        if firsts and not any(r.subject.lower() in stated.lower() for r in firsts):
            named_other = any(p.lower() in stated.lower() for p in _other_subjects(bodies, firsts))
            if named_other:
                return Misfit(Kind.NOT_FIRST, f"[not-the-first: the observation ranks first: {firsts[-1].line[:120]}]",
                              own="[not-the-first: the observation ranks first]")
    if not all_clear and (missed := _rate_missed(question, stated, bodies)) is not None:
        return missed
    if form in (WHY, OPEN, YES_NO):
        errors = log_error_lines(log_bodies)
        values = [str(v) for v in result.values() if isinstance(v, str)]
        named_cause = any(says_whole(stated.lower(), c.lower()) for c in causes if len(c) >= 3)
        if errors and not named_cause and not any(_quotes_line(stated, line) or any(_quotes_value(v, line) for v in values)
                                                  for line in errors):
            return Misfit(Kind.LOG_NOT_QUOTED, f"[log-errors-not-quoted: the log shows: {errors[0][:120]}]",
                          own="[log-errors-not-quoted: the log shows]")
    return None


_ENTITY_VALUE = re.compile(r"(?:name|process|command|path|mount|unit|port|pid)=\"?([^\s\";,]+)")
# A process as observations name it: its name, command or pid field ("NAME (pid N)" is read apart).
_PROCESS_VALUE = re.compile(r"(?:name|process|command|pid)=\"?([^\s\";,]+)")
_PATH_TOKEN = re.compile(r"(?<![\w])/[\w.@+\-/]*[\w]")
# A command a verdict quotes ("every minute: '/usr/bin/tar -czf …'"): the program a scheduled job
# starts is the process of "what runs every minute?" though no process list shows it between runs.
_QUOTED_PROGRAM = re.compile(r"'(/[\w.@+\-/]*[\w])(?:\s[^']*)?'")


def entities(bodies: Iterable[str], *, processes_only: bool = False) -> set[str]:
    """The things observations name: process names, paths, mounts, units, ports and pids (with
    `processes_only`, their names and pids alone)."""
    fields = _PROCESS_VALUE if processes_only else _ENTITY_VALUE
    found: set[str] = set()
    for body in bodies:
        found.update(m.group(1).strip("()").lower() for m in fields.finditer(body))
        if not processes_only:
            found.update(m.group(0).lower() for m in _PATH_TOKEN.finditer(body) if len(m.group(0)) > 1)
        found.update(m.group(1).lower() for m in re.finditer(r"([\w.\-]{3,}) \(pid (\d+)\)", body))
        found.update(m.group(1) for m in re.finditer(r"\(pid (\d+)\)", body))
        for program in _QUOTED_PROGRAM.finditer(body):
            base = os.path.basename(program.group(1))
            found.update({program.group(1).lower(), *([base.lower()] if len(base) >= 3 else [])})
    return {e for e in found if len(e) >= 2}


def names_a_process(stated: str, bodies: Iterable[str]) -> bool:
    """True when the answer names a process an observation shows (its name or pid)."""
    return names_entity(stated, bodies, processes_only=True)


def names_entity(stated: str, bodies: Iterable[str], *, processes_only: bool = False) -> bool:
    """True when the answer names a thing an observation shows (as a whole word or path)."""
    lowered = stated.lower()
    for entity in entities(bodies, processes_only=processes_only):
        if re.search(rf"(?<![\w/.-]){re.escape(entity)}(?![\w-]|\.\d)", lowered):
            return True
    return False


def _other_subjects(bodies: Iterable[str], firsts: list[Ranked]) -> set[str]:
    """Paths and process names the ranked observations list after their first entry."""
    tops = {r.subject for r in firsts}
    others = set()
    for body in bodies:
        if "headline:" not in body:
            continue
        for match in _SUBJECT.finditer(body):
            subject = (match.group(1) or match.group(2)).rstrip("/.,")
            if subject not in tops and len(subject) > 2 and not any(subject in t or t in subject for t in tops):
                others.add(subject)
    return others


def outside_place(question: "Question | str", answer: str, result: Mapping[str, Any], places: Sequence[str],
                  bodies: Iterable[str]) -> str | None:
    """A which-question about a folder it names ("which folder under /srv/projects …?") is answered
    with the folder or an entry under it that an observation shows (its full path or its name), or
    with a no; "/ is the fullest filesystem" answers another question."""
    asks_which = question_form(question) == WHICH or as_question(question).says_which
    if not asks_which or not places or denies_all(answer):
        return None
    roots = [p.rstrip("/").lower() for p in places]  # "" for the root folder: every absolute path is under it
    stated = " ".join([answer, *(str(v) for v in result.values())]).lower()
    under = {t.lower().rstrip("/") for body in bodies for t in _PATH_TOKEN.findall(body)
             if any(t.lower().startswith(root + "/") or t.lower() == root for root in roots)}
    for path in under | {root for root in roots if root}:
        name = path.rsplit("/", 1)[-1]
        if re.search(rf"{re.escape(path)}(?![\w.-])", stated) or \
                (len(name) >= 3 and says_whole(stated, name)):
            return None
    return (f"[not-under-the-place: the question asks about {places[0]}; name the entry under it that an "
            "observation shows]")


def yes_or_no(question: "Question | str", answer: str, findings: Sequence[Any], bodies: Iterable[str] = ()) -> str | None:
    """A yes/no question is answered yes or no: in words, by saying nothing is wrong, by repeating
    the question's claim, by naming a fault (a claim of a family's fault, a problem the checks
    found), or, when it also asks "if so, which?", by naming the thing; "the process API is
    sleeping" to "is any process close to its open-file limit?" is none of these."""
    if question_form(question) != YES_NO or begins_yes_or_no(answer) or denies_all(answer):
        return None
    if as_question(question).says_which and names_entity(answer, bodies):
        return None
    if affirms(answer, as_question(question).text) or claims_any_fault(answer):
        return None
    if names_a_problem(answer, findings):
        return None
    return SAY_YES_OR_NO
