"""The few general checks a claim must pass, each `(claim, situation) -> Retry | None`, in one tuple.

Why so few and so general: rules that read the answer's or the question's English fit the
phrasings they were written for and misfire on every other kind. These read only the claim's
parts and the typed facts it cites — their entities, quantities, severities and searches — and
the kind of question the reader labelled. None rewrites the model's text; a `Retry` says why in
one line and narrows what the next finish may choose (the model writes its own sentence again).

What a sentence states and which facts hold it is read by agent/claim_backing.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from appliance.agent.claim import Claim, Narrowing
from appliance.agent.claim_backing import completed, same_number, stated_numbers, unbacked
from appliance.agent.observe import IMPORTANT
from appliance.agent.facts import MACHINE, Entity, Fact, FactBook, Quantity
from appliance.agent.question.kinds import Asks

THINGS = frozenset({Asks.PROCESS, Asks.USER, Asks.FILE, Asks.FOLDER, Asks.FILESYSTEM, Asks.PORT, Asks.SERVICE})
NUMBERS = frozenset({Asks.COUNT, Asks.AMOUNT})
ZERO_WORDS = frozenset({"0", "none", "no", "zero", "nothing", "nobody"})
SOFT_CHECKS = frozenset({"form"})  # the checks of a claim's shape (Retry.soft)


@dataclass(frozen=True)
class Retry:
    """Why a claim goes back (one line the model reads), how its next finish is narrowed, and a
    tool to run first when the fact it lacked is one a tool shows."""

    check: str
    reason: str
    narrowing: Narrowing = field(default_factory=Narrowing)
    run: tuple[str, dict] | None = None

    @property
    def soft(self) -> bool:
        """A claim of the wrong shape, not a wrong one: everything it states stands in the facts.
        With its retries spent it stands as written, rather than no answer at all."""
        return self.check in SOFT_CHECKS


@dataclass(frozen=True)
class Situation:
    """What the checks read besides the claim: the question's labels and mentions, the facts shown,
    whether a tool has worked, and how the run can look further (`call_for`: the tool call that
    profiles one mention, or None)."""

    asks: Asks
    families: tuple[str, ...]
    mentions: tuple[str, ...]
    question_text: str
    book: FactBook
    tools_worked: bool = True
    retries: int = 0
    asks_known: bool = True  # the reader was sure what is asked (its words said it, or the model chose)
    call_for: Callable[[str], tuple[str, dict] | None] = lambda mention: None

    def cited(self, claim: Claim) -> list[Fact]:
        return [f for f in (self.book.get(c) for c in claim.cites) if f is not None]


FACT_ID = re.compile(r"\bF\d+\b")


def cites_shown(claim: Claim, s: Situation) -> Retry | None:
    """Every cited id was shown, the answer says something without the engine's fact ids, and the
    subject is an entity shown."""
    unknown = [c for c in claim.cites if s.book.get(c) is None]
    if unknown or not claim.cites:
        return Retry("cites", f"cite only facts shown above (F1 to F{len(s.book.facts)}); "
                              f"{', '.join(unknown) or 'none'} was not shown.")
    if not claim.answer:
        return Retry("cites", "write the answer for the person in one or two sentences.")
    if FACT_ID.search(claim.answer):  # the person reads the sentence; ids are the engine's labels
        return Retry("cites", "write the answer for the person without fact ids (F1, F2 …): the cites carry them.")
    if claim.subject and s.book.entity(claim.subject) is None:
        return Retry("cites", f"the subject must be one of the things the facts name; {claim.subject!r} is not.")
    return None


def not_the_appliance(claim: Claim, s: Situation) -> Retry | None:
    """The subject is never the appliance's own process (the prompt labels it)."""
    if claim.subject and any(f.own and any(e.label == claim.subject for e in f.entities) for f in s.book.facts):
        return Retry("self", f"{claim.subject} is this troubleshooting assistant itself; it is never the answer.",
                     Narrowing(drop_subjects=frozenset({claim.subject})))
    return None


def stated_facts_backed(claim: Claim, s: Situation) -> Retry | None:
    """Every number, path, address and name the sentence states stands in a cited fact or in the
    question. `completed` has already cited the shown facts that hold them, so what is refused here
    is what no fact shown holds: a number, a pid or a name the model made up."""
    missing = unbacked(claim, s)
    if missing:
        return Retry("backed", f"the answer states {missing[0]}, which no fact shown holds: state only what the "
                               "facts show.")
    return None


_LONG_WORD = re.compile(r"[a-z][a-z0-9_-]{4,}")
_DIGITS_TOKEN = re.compile(r"[\w.:-]*\d[\w.:-]*[\w]")


def says_what_it_cites(claim: Claim, s: Situation) -> Retry | None:
    """The sentence states something of the facts it cites — a number, a thing they name, or their
    own words — so the person reads the evidence in the answer, not only a verdict's tone."""
    cited = s.cited(claim)
    if claim.stance == "cannot_tell" or (_claims_absence(claim) and any(f.search for f in cited)):
        return None
    answer = claim.answer.lower()
    held = [q for f in cited for q in f.quantities]
    if any(any(same_number(n, u, q) for q in held) for n, u in stated_numbers(claim.answer)):
        return None
    names = {e.name.lower() for f in cited for e in f.entities if e.kind != "machine" and len(e.name) >= 2}
    if any(mentioned(name, answer) for name in names):
        return None
    texts = " ".join(f.text.lower() for f in cited)
    if any(token in texts for token in _DIGITS_TOKEN.findall(answer)):  # a version, a time, an address
        return None
    shared = set(_LONG_WORD.findall(answer)) & set(_LONG_WORD.findall(texts))
    if len(shared) >= 2:
        return None
    ids = ", ".join(claim.cites)
    return Retry("unsaid", f"the answer says nothing the cited facts ({ids}) show: state what they show, with "
                           "its numbers and names.")


def _owned_by(q: Quantity, subject: Entity | None) -> bool:
    """The quantity is the subject's, or no one's in particular (a verdict's headline names no
    owner for its numbers, so only an owner that is another thing refutes the subject)."""
    if q.owner is None or q.owner.kind == "machine":
        return True
    if subject is None or subject.kind == "machine":
        return False
    return (q.owner == subject or (subject.pid is not None and q.owner.pid == subject.pid)
                                    or (q.owner.name == subject.name and subject.kind == q.owner.kind))


def _names(entity: Entity, mention: str) -> bool:
    """The question's mention is this entity (its path, its name, its pid)."""
    m = mention.rstrip("/").lower()
    return m in (entity.label.rstrip("/").lower(), entity.name.rstrip("/").lower()) or str(entity.pid) == m


def value_about_subject(claim: Claim, s: Situation) -> Retry | None:
    """The value stands in a cited fact, held there by the claim's subject (this machine when it
    names none): a top process's size is no answer to what the machine has."""
    if claim.stance != "value" or not claim.value or claim.value.lower() in ZERO_WORDS:
        return None
    cited = s.cited(claim)
    numbers = stated_numbers(claim.value)
    if not numbers and len(claim.value.split()) > 4:
        return None  # a sentence, not a value: the answer's own statements are judged by what they state
    if not numbers:
        if any(claim.value.lower() in f.text.lower() for f in cited):
            return None
        return Retry("value", f"the value {claim.value!r} is in none of the cited facts: give it as a cited fact shows it.")
    subject = s.book.entity(claim.subject) if claim.subject else None
    number, unit = numbers[0]
    holders = [(f, q) for f in cited for q in f.quantities if same_number(number, unit, q)]
    if not holders:
        return Retry("value", f"the value {claim.value!r} is in no fact shown: give the value as a fact shows it.")
    if any(_owned_by(q, subject) for _, q in holders):
        return None
    if subject is None and any(q.owner is not None and any(_names(q.owner, m) for m in s.mentions) for _, q in holders):
        return None  # no subject chosen: the thing the question names is what the value is about
    owner = holders[0][1].owner
    about = owner.label if owner is not None else MACHINE
    return Retry("value", f"in {holders[0][0].id}, {claim.value} belongs to {about}, not to "
                          f"{claim.subject or MACHINE}: give the value the facts show for what was asked.",
                 Narrowing(drop_subjects=frozenset()))


def mentioned(mention: str, text: str) -> bool:
    """The mention stands in the text as a whole token (port 22 is not in "2026-12-22")."""
    return re.search(rf"(?<![\w./:-]){re.escape(mention.lower())}(?![\w/-])", text.lower()) is not None


def _asked_part(s: Situation) -> list[Fact]:
    """The current problems about the part of the machine asked about: of its families, or about a
    thing it mentions; with neither known, every current problem shown."""
    problems = [f for f in s.book.facts if f.is_problem and not f.past]
    if not s.families and not s.mentions:
        return problems
    return [f for f in problems if f.family in s.families or any(mentioned(m, f.text) for m in s.mentions)]


def _within(subject: str, label: str) -> bool:
    """The subject is the entity, or a path under it (a folder of the full filesystem)."""
    return subject == label or (label.startswith("/") and subject.startswith(label.rstrip("/") + "/"))


def asked_problems_addressed(claim: Claim, s: Situation) -> Retry | None:
    """An all-clear may not pass over a warning or critical fact about the part asked about, and a
    problem claimed where the part asked about has problems of its own cites one of them."""
    if claim.stance not in ("no_problem", "problem"):
        return None
    if claim.stance == "problem" and not (s.families or s.mentions):
        return None
    found = _asked_part(s)
    cited = [f for f in found if f.id in claim.cites]
    if cited and claim.stance == "problem" and claim.subject and s.book.entity(claim.subject) is not None \
            and not any(_within(claim.subject, e.label) for f in cited for e in f.entities):
        return Retry("overlooked", f"{claim.subject} is not what {', '.join(f.id for f in cited)} is about: choose the "
                                   "subject those facts name.", Narrowing(drop_subjects=frozenset({claim.subject})))
    if not found or cited:
        return None
    ids = tuple(f.id for f in found[:4])
    return Retry("overlooked", f"{', '.join(ids)} show{'s' if len(ids) == 1 else ''} a problem about what was asked: "
                               "say what it is, or why it does not matter here.",
                 Narrowing(drop_stances=frozenset({"no_problem"}), first_cite=ids))


def problem_is_shown(claim: Claim, s: Situation) -> Retry | None:
    """A problem stance cites a fact that shows a problem (a warning, a critical, an error line).
    Only where the checks ran: without verdicts nothing on the machine was judged, and the claim
    rests on the readings it cites."""
    if claim.stance != "problem" or not any(f.source == "check" for f in s.book.facts):
        return None
    cited = s.cited(claim)
    if any(f.is_problem or error_line(f) for f in cited):
        return None
    shown = [f for f in s.book.facts if (f.is_problem and not f.past) or error_line(f)]
    if not shown:
        return Retry("unshown", "no fact shown is a problem: say what the facts show instead.",
                     Narrowing(drop_stances=frozenset({"problem"})))
    ids = tuple(f.id for f in shown[:6])
    return Retry("unshown", f"the cited facts show no problem; the facts that do are {', '.join(ids)}.",
                 Narrowing(first_cite=ids))


def error_line(fact: Fact) -> bool:
    """A reading's line that reports an error (a log's, a tool's), as the renderer keeps them first."""
    return fact.source != "check" and bool(IMPORTANT.search(fact.text))


def _claims_absence(claim: Claim) -> bool:
    return claim.stance == "no" or (claim.stance == "value" and claim.value.lower() in ZERO_WORDS)


def absence_was_searched(claim: Claim, s: Situation) -> Retry | None:
    """A no or a none about something the question mentions cites a fact about that thing, or a
    search that found nothing; when no reading looked for it, the retry runs one first."""
    if not _claims_absence(claim) or not s.mentions:
        return None
    cited = s.cited(claim)
    if any(f.search or any(mentioned(m, f.text) for m in s.mentions) for f in cited):
        return None
    about = [f for f in s.book.facts if any(mentioned(m, f.text) for m in s.mentions) or f.search]
    if about:
        ids = tuple(f.id for f in about[:6])
        return Retry("absence", f"a no must rest on a reading of {s.mentions[0]}: cite {', '.join(ids)}.",
                     Narrowing(first_cite=ids))
    call = next((c for c in map(s.call_for, s.mentions) if c is not None), None)
    return Retry("absence", f"no reading has looked for {s.mentions[0]} yet; the appliance looks now.", run=call)


def form_fits(claim: Claim, s: Situation) -> Retry | None:
    """The claim has the form of what is asked: a number for how many or how much, a thing for
    which or who, a plain value for a fact about the machine."""
    if claim.stance == "cannot_tell" or not s.asks_known:
        return None
    if s.asks in NUMBERS and claim.stance not in ("no_problem",) and not any(c.isdigit() for c in claim.value) \
            and claim.value.lower() not in ZERO_WORDS and not stated_numbers(claim.answer):
        return Retry("form", "the question asks how many or how much: put the number a fact shows, with its unit, "
                             "in value.", Narrowing(drop_stances=frozenset({"yes", "no"}), need_value=True))
    if s.asks in THINGS and claim.stance in ("problem", "value") and not claim.subject:
        return Retry("form", "the question asks which one: choose it as the subject, from what the facts name.",
                     Narrowing(need_subject=True))
    if s.asks is Asks.EXPLANATION and claim.stance not in ("problem", "no_problem"):
        return Retry("form", "the question asks why: say what is wrong (problem, citing the facts that show it) "
                             "or that nothing is (no_problem, citing the facts that show it is fine).",
                     Narrowing(drop_stances=frozenset({"yes", "no", "value"})))
    if s.asks is Asks.SYSTEM_FACT and claim.stance == "value" and not claim.value:
        return Retry("form", "the question asks for a fact: put it in value as a cited fact shows it.",
                     Narrowing(need_value=True))
    return None


def looked_before_giving_up(claim: Claim, s: Situation) -> Retry | None:
    """Cannot-tell stands for a question not about this machine, or after a retry; otherwise the
    tools are there to look first."""
    if claim.stance != "cannot_tell" or s.asks is Asks.OUT_OF_SCOPE or s.retries:
        return None
    call = next((c for c in map(s.call_for, s.mentions) if c is not None), None)
    return Retry("gave_up", "the tools can read this machine: look with one before saying it cannot be told.", run=call)


Check = Callable[[Claim, Situation], "Retry | None"]
CHECKS: tuple[Check, ...] = (
    cites_shown,
    not_the_appliance,
    stated_facts_backed,
    value_about_subject,
    asked_problems_addressed,
    problem_is_shown,
    absence_was_searched,
    form_fits,
    says_what_it_cites,
    looked_before_giving_up,
)


def judged(claim: Claim, situation: Situation) -> tuple[Claim, Retry | None]:
    """The claim with its cites completed, and the first check it then fails (None: it stands)."""
    claim = completed(claim, situation)
    return claim, next((r for r in (check(claim, situation) for check in CHECKS) if r is not None), None)


def judge(claim: Claim, situation: Situation) -> Retry | None:
    """The first check the claim fails, or None when it stands; judged with its cites completed."""
    return judged(claim, situation)[1]
