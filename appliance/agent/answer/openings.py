"""What a steered retry begins with: the clause of a verdict that states what the checks found
(its culprit, its headline, the fact a which-question asks about), short enough to leave the
model room for its own words (appliance.agent.answer.steer decides which verdict)."""

from __future__ import annotations

import re

from appliance.agent.answer.said import NAMED_PROCESS, QUOTED
from appliance.agent.question.kinds import AMOUNT_FORM, KIND_FAMILIES, THINGS
from appliance.agent.question.question import Question, as_question, question_form
from appliance.analyzers.base import Finding

NO_PROBLEM = "No problem found: "
LOG_CAUSE = "The log shows: "

# A retry's opening leaves the answer room for the model's own words (answer_max_chars is 300).
MAX_OPENING = 180
# A verdict's head clause short enough to be its headline ("permission denied", "socket leak").
MAX_HEADLINE = 40


def top_clauses(text: str, marks: str = ";:") -> list[str]:
    """`text` cut at "; " and ": " (or at the `marks` given) outside parentheses ("(drwxr-xr-x
    root:root: only root may …)" stays whole)."""
    out, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char in marks and text[i + 1:i + 2] == " ":
            out.append(text[start:i].strip())
            start = i + 2
    out.append(text[start:].strip())
    return [c for c in out if c]


def statement(finding: Finding) -> str:
    """What a retry about a problem begins with: the clause of its verdict that names its culprit
    ("NAME (pid N) uses 99 % of one core (threshold 75 %)", "/data/shared (tmpfs) is mounted
    read-only"), so the answer goes on from what the check established about it rather than from
    a bare name the model may pin another fault on; the name alone when no clause holds it or the
    clause is too long to leave room."""
    name = str(finding.culprit or finding.path)
    clauses = top_clauses(finding.verdict)
    # the clause that names it as itself first ("/srv/app/current is a link to …"), not one naming a
    # path below it ("/srv/app/current/config.yml does not exist")
    whole = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|/[\w.])")
    clause = next((c for c in clauses if whole.search(c)), None) or next((c for c in clauses if name in c), name)
    later = clause in clauses[1:]
    if len(clause) > MAX_OPENING:  # without its closing aside "(… has no entry …)", when that fits,
        # also one cut short where the evidence was shortened ("(… has no entry 20… [26 more chars]")
        clause = re.sub(r"\s*\([^()]*\)?$", "", clause)
    if later:
        # a later clause says who or where, the head clause what is wrong: a clause that is the
        # name alone ("…: NAME (pid N)") says nothing of the fault ("X is throttled by its CPU
        # quota"), and "NAME may not create files in DIR" leaves out the "permission denied" a
        # person looks for; the head goes first when the clause does not say it already
        bare = not _WORDS.findall(whole.sub(" ", clause).lower().replace("pid", " "))
        head = clauses[0]
        joined = f"{head}: {clause}"
        if (bare or (len(head) <= MAX_HEADLINE and head.lower() not in clause.lower())) and len(joined) <= MAX_OPENING:
            clause = joined
    return clause if len(clause) <= MAX_OPENING else name


def headline(finding: Finding) -> str:
    """The verdict's statement before its values: "no CPU hog" of "no CPU hog: the busiest …";
    of a verdict on a place ("/srv/app.log: no error lines (398 lines scanned)") the place and its
    statement, since the place alone states nothing. It ends at the first ";" too: "3 cron jobs in
    2 tables, every program found; periodic scripts: 4" states its finding before the ";"."""
    head, _, rest = finding.verdict.partition(":")
    head = head.split(";", 1)[0].strip()
    if head.startswith(("/", "~")) and rest.strip():
        return f"{head}: {re.split(r'[(;:]', rest, maxsplit=1)[0].strip()}"
    return head


_WORDS = re.compile(r"[a-z]{3,}")


def _clause_asked(finding: Finding, question: str, least: int = 1) -> str | None:
    """The clause of an ok verdict that shares the most words with a which-question (the
    every-minute jobs of the scheduled-jobs verdict for "which job runs every minute?"), when one
    shares at least `least` and fits an opening."""
    asked = set(_WORDS.findall(question.lower()))
    parts = top_clauses(finding.verdict, marks=";")  # "label: value" kept whole
    scored = [(len(asked & set(_WORDS.findall(c.lower()))), c) for c in parts]
    best = max(scored, default=(0, ""), key=lambda pair: pair[0])
    return best[1] if best[0] >= max(least, 1) and len(best[1]) <= MAX_OPENING else None


# A complaint's which-question shares this many words with a later clause of an ok verdict before
# that clause is carried: "every minute my machine crawls, what runs then?" and the every-minute jobs.
COMPLAINT_SHARED_WORDS = 2


def fine_opening(fine: Finding, question: "Question | str") -> str:
    """What a retry resting on an ok verdict begins with: "No problem found: " and the verdict's
    headline, and for a how-much question also the verdict's first clause with a number ("…: no
    filesystem is full: the fullest, / (ext4) is 26 % used, …"): the form check asks such an
    answer for a number, and a headline alone would steer the retry into that refusal.
    A which-question asks for a thing: a plain one gets the verdict's clause about it instead of
    the all-clear; a complaint gets both, when a later clause shares its words (the verdict found
    no fault, and states the fact the complaint is about: the job started every minute); "if so,
    which?" where the checks found none gets the all-clear."""
    asked = as_question(question)
    fact = None
    # "which job runs every minute?": the fact, not an all-clear; "is any …? if so, which?" asks
    # which only on a yes, and the top of an ok ranking would read as the culprit beside the no
    if asked.asks in THINGS and not asked.conditional:
        fact = _clause_asked(fine, asked.text, least=COMPLAINT_SHARED_WORDS if asked.fault else 1)
        if fact is not None and not asked.fault:
            return fact
    head = headline(fine)
    opening = NO_PROBLEM + head
    if fact is None and fine.family in KIND_FAMILIES.get(asked.asks, ()):
        # the verdict that lists the kind asked for ("2 listening ports: tcp 2024 …; tcp 8080 NAME
        # (pid N)"): its list is the answer, not just its count
        return _listed(fine.verdict, opening)
    if fact is not None and not fact.startswith(head) and fact not in opening \
            and len(opening) + 2 + len(fact) <= MAX_OPENING:
        return f"{opening}; {fact}"
    if question_form(question) != AMOUNT_FORM or re.search(r"\d", opening):
        return opening
    numbered = next((c for c in top_clauses(fine.verdict)[1:] if re.search(r"\d", c)), None)
    if numbered is None or len(opening) + 2 + len(numbered) > MAX_OPENING:
        return opening
    return f"{opening}: {numbered}"


def _listed(verdict: str, short: str) -> str:
    """"No problem found: " and as much of `verdict` as fits an opening, cut after a whole "; "
    entry; `short` when not even its first entry fits."""
    entries = top_clauses(verdict, marks=";")  # a ";" inside parentheses stays in its entry
    for n in range(len(entries), 0, -1):
        opening = NO_PROBLEM + "; ".join(entries[:n])
        if len(opening) <= MAX_OPENING:
            return opening
    return short


def doer_clause(finding: Finding) -> str:
    """What a retry owing the process that does it begins with: the verdict's clause naming that
    process ("… grew from 23.8 MiB to 26.0 MiB in 1.2 s (1.9 MiB/s), written by NAME (pid N)"), or
    "NAME (pid N)" alone when that clause leaves the answer no room."""
    for clause in top_clauses(finding.verdict):
        named = NAMED_PROCESS.search(clause)
        if named is not None:
            return clause if len(clause) <= MAX_OPENING else named.group(0)
    return str(finding.culprit or finding.path)


# A log line's leading timestamp: an opening quotes what the line says, not when.
_STAMP = re.compile(r"^\W*\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)?\W*")


def quoted_cause(quoted: str, lead: str = LOG_CAUSE) -> str:
    """"The log shows: «…»" (or `lead` «…») of a quoted line, without its timestamp, cut to fit an opening."""
    line = _STAMP.sub("", quoted).strip()
    room = MAX_OPENING - len(lead) - 2
    if len(line) > room:
        line = line[:room].rsplit(" ", 1)[0]
    return f"{lead}«{line}»" if line else lead


def problem_opening(finding: Finding) -> str:
    """What a retry about a problem begins with: the clause of its verdict that names it, or, where
    that clause is the name alone and the verdict quotes the line it rests on (a log's cause), the
    name and that line. Why: begun with a bare log path, a small model describes the file instead of
    quoting it."""
    said = statement(finding)
    quoted = QUOTED.search(finding.verdict)
    if quoted is None or said != str(finding.culprit or finding.path):
        return said
    lead = f"{said} shows: "
    return quoted_cause(quoted.group(1), lead if len(lead) <= MAX_OPENING // 2 else LOG_CAUSE)
