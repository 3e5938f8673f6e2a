"""The person's question, read once into a typed value before step 0.

Why one reading: a question re-read by regular expressions at every turn fits only the phrasings
those expressions were written for. Here the words are read once — by the lexical reader below,
and, in a real run, by the model choosing among a few labels (`question/classify.py`) with the
lexical reading as its prior. The evidence, the prompt, the answer rules, the steering and the
engine's own answer read this value, never the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Sequence

from appliance.analyzers.named_path import PathAsk, path_ask
from appliance.agent.question.facts import AMOUNT_FACETS, facets_in
from appliance.agent.question.informal import as_typed
from appliance.agent.question.kinds import (AMOUNT_FORM, NUMBERS, OPEN, THINGS, WHICH, WHY,
                                         YES_NO_FORM, Asks, Resource, led_by_kind, with_resource)
from appliance.agent.question.words import (conditional_in, failure_in, fault_in, fault_label_in, form_in, lexical_asks, lexical_resource,
                                         named_pids, named_things, paths_in, ports_in, ranking_in, superlative_in,
                                         trouble_in)

if TYPE_CHECKING:
    from appliance.analyzers.base import Analyzer


@dataclass(frozen=True)
class Question:
    """What the person asked, read once.

    asks / resource / fault: the labels (the model's, or the lexical reader's alone);
    paths, ports, pids, names: what it mentions, as written;
    families: the analyzer families it is about (its words first, then its resource's);
    form, ranking, conditional, trouble, udp: how it is put, for the rules about an answer's shape;
    source: who chose the labels ("words" or "model")."""

    text: str
    asks: Asks
    resource: Resource
    fault: bool
    paths: tuple[str, ...] = ()
    ports: tuple[int, ...] = ()
    pids: tuple[int, ...] = ()
    names: tuple[str, ...] = ()
    families: tuple[str, ...] = ()
    form: str = OPEN
    ranking: bool = False
    conditional: bool = False
    trouble: bool = False
    udp: bool = False
    failure: bool = False  # the words report a failure or an error ("failed", "can't", "broken")
    superlative: bool = False  # "biggest", "most", "top" …
    says_which: bool = False  # the word "which" itself ("… If so, which?")
    sure: bool = False  # the words said what is asked (the reader did not fall back to its default)
    path_ask: PathAsk = field(default_factory=PathAsk)  # what it asks about a path it names (analyzers.named_path)
    facts: tuple[str, ...] = ()  # the plain facts it asks for ("kernel", "virtualization"; question.facts)
    rate: bool = False  # "how fast …?", "at what rate …?": the amount asked is per unit of time
    doer: bool = False  # "…, and which process writes it?": the process doing it is asked as well
    source: str = "words"
    prior: tuple[str, str, bool] | None = field(default=None, compare=False)  # the words' labels, when the model chose

    @property
    def seeks_fault(self) -> bool:
        """An answer must name what the checks found at fault (or say nothing is)."""
        looks = self.fault or self.trouble or self.form == WHICH
        return looks and self.asks not in (Asks.OUT_OF_SCOPE, Asks.SYSTEM_FACT)

    @property
    def resource_in_words(self) -> bool:
        """The words named the resource; the model did not choose it for them."""
        return (self.prior[1] if self.prior else self.resource.value) != Resource.NONE.value

    @property
    def facts_owed(self) -> tuple[str, ...]:
        """The plain facts the answer must state: each one a question of fact asks; of a how-much or
        how-many question, those that are amounts themselves ("how long since the last reboot?")."""
        if self.asks is Asks.SYSTEM_FACT:
            return self.facts
        if self.asks in (Asks.AMOUNT, Asks.COUNT) and not self.fault:  # "how long has it been slow?" asks of a symptom
            return tuple(f for f in self.facts if f in AMOUNT_FACETS)
        return ()

    @property
    def asks_which(self) -> bool:
        return self.asks in THINGS

    @property
    def asks_number(self) -> bool:
        return self.asks in NUMBERS

    # What the words left open, each for the model to fill (`relabelled`) and asked of it only
    # then (`open_labels`): what is asked when no word said it (a which-question's thing, or what a
    # statement such as "whats taking all the space on my computer" is after), the resource when
    # none was named, a fault in a complaint whose words report none.
    @property
    def thing_open(self) -> bool:
        return not self.sure and self.form in (WHICH, OPEN)

    def _fills_thing(self, asks: Asks) -> bool:
        """The model's kind fills the open one: a thing for a which-question; a thing or a plain fact
        for a statement (never a why: "why is my laptop slow?" asks for the explanation, whatever
        the model picks). A statement reporting a failure ("I can't save files in /srv/docs
        anymore") asks what is wrong, not for a file or folder the model picks (the largest file
        there is no cause); a port or a program it may ask for ("it says port busy")."""
        if self.form == OPEN and self.failure and asks in (Asks.FILE, Asks.FOLDER):
            return False
        return self.thing_open and (asks in THINGS or (self.form == OPEN and asks is Asks.SYSTEM_FACT))

    @property
    def resource_open(self) -> bool:
        return self.resource is Resource.NONE

    @property
    def fault_open(self) -> bool:
        return self.asks is Asks.EXPLANATION and not self.trouble and not self.fault

    @property
    def open_labels(self) -> bool:
        """The words left a label open that the model may fill."""
        return self.thing_open or self.resource_open or self.fault_open

    def labels(self) -> dict[str, object]:
        """The reading as plain values (recorded with step 0)."""
        return {"asks": self.asks.value, "resource": self.resource.value, "fault": self.fault,
                "paths": list(self.paths), "ports": list(self.ports), "pids": list(self.pids),
                "names": list(self.names), "families": list(self.families), "by": self.source}

    def relabelled(self, asks: Asks, resource: Resource, fault: bool, known: Sequence[str] = ()) -> "Question":
        """The same question with the labels the model chose where the words left them open: what
        is asked when no word said it (`_fills_thing`), the resource when they named none,
        a fault in a complaint whose words report none. Elsewhere the words stand: on the labelled
        questions (tests/data/questions, docs/engine.md) Qwen 1.5B moved explanations to "process"
        and plain facts to faults far more often than the words were wrong.
        The resource's families join the families its words name (`known`: those that exist)."""
        asks = asks if self._fills_thing(asks) else self.asks
        resource = resource if self.resource_open else self.resource
        fault = (self.fault or (fault and self.fault_open)) and asks not in (Asks.OUT_OF_SCOPE, Asks.SYSTEM_FACT)
        families = led_by_kind(with_resource(self.families, resource, known), asks, known)
        return replace(self, asks=asks, resource=resource, fault=fault, families=families, source="model",
                       form=form_of(asks, self.form), ranking=self.ranking and asks in THINGS,
                       prior=(self.asks.value, self.resource.value, self.fault))


# How an answer must be shaped, by what is asked; kinds with no shape of their own keep the words'.
_FORM_OF: dict[Asks, str] = {**{kind: WHICH for kind in THINGS}, Asks.COUNT: AMOUNT_FORM, Asks.AMOUNT: AMOUNT_FORM,
                             Asks.YES_NO: YES_NO_FORM, Asks.SYSTEM_FACT: OPEN, Asks.OUT_OF_SCOPE: OPEN}


def form_of(asks: Asks, words_form: str) -> str:
    """The answer's shape for a kind of question; an explanation or a log's cause keeps how the
    words put it (why, open)."""
    if asks in (Asks.EXPLANATION, Asks.LOG_CAUSE):
        return words_form if words_form in (WHY, OPEN) else WHY
    return _FORM_OF[asks]


# What the rules below the reader ask of a question, for a value (a run) or for text (a test or a
# tool holding only text, read by its words). A run never passes text.
def question_form(question: "Question | str") -> str:
    """which, amount, why, yes_no or open."""
    return question.form if isinstance(question, Question) else form_in(question)


def is_conditional(question: "Question | str") -> bool:
    """"Is any process …? If so, which?": a which that asks only when the answer to the yes/no is yes."""
    return question.conditional if isinstance(question, Question) else bool(conditional_in(question))


def asks_ranking(question: "Question | str") -> bool:
    """"Which process has the most threads?": the top of a ranking, not a conditional which."""
    return question.ranking if isinstance(question, Question) else ranking_in(question)


def reports_trouble(question: "Question | str") -> bool:
    """The words report or ask about trouble ("slow", "can't", "refused", "anything")."""
    return question.trouble if isinstance(question, Question) else bool(trouble_in(question))


def seeks_fault(question: "Question | str") -> bool:
    """The person reports trouble or asks what is at fault, not a plain fact: only then must an
    answer name what the checks found at fault (or say nothing is)."""
    return question.seeks_fault if isinstance(question, Question) else fault_in(question)


def named_paths(question: "Question | str") -> list[str]:
    """Absolute (or ~) paths the question names, in order."""
    return list(question.paths) if isinstance(question, Question) else paths_in(question)


def named_ports(question: "Question | str") -> list[int]:
    """The ports the question names ("port 8080", "localhost:5432"), in order."""
    return list(question.ports) if isinstance(question, Question) else ports_in(question)


def read_question(text: str, analyzers: "Sequence[Analyzer] | None" = None) -> Question:
    """The question read by its words alone; its families are those of `analyzers` (all of them
    by default) whose topic words it uses, else those of its resource."""
    from appliance.analyzers.runner import ANALYZERS, for_question
    chosen = ANALYZERS if analyzers is None else analyzers
    paths = tuple(paths_in(text))  # what it mentions, as written
    words = as_typed(text)  # its labels, from its words spelled out ("whats wrong" → "what's wrong")
    asks, sure = lexical_asks(words, paths)
    resource = lexical_resource(words)
    families = tuple(for_question(words, chosen))
    if not families and chosen:
        families = with_resource((), resource, [a.family for a in chosen])
    if chosen:
        families = led_by_kind(families, asks, [a.family for a in chosen])
    return Question(
        text=text, asks=asks, resource=resource,
        fault=fault_label_in(words) and asks not in (Asks.OUT_OF_SCOPE, Asks.SYSTEM_FACT),
        paths=paths, ports=tuple(ports_in(text)), pids=tuple(named_pids(text)), names=tuple(named_things(text)),
        families=families, form=form_in(words), ranking=ranking_in(words), conditional=conditional_in(words),
        trouble=trouble_in(words), udp=bool(re.search(r"\budp\b", text, re.I)),
        superlative=superlative_in(words), says_which=bool(re.search(r"\bwhich\b", text, re.I)),
        sure=sure, failure=failure_in(words), path_ask=path_ask(words),
        facts=facets_in(words), rate=bool(_RATE.search(words)), doer=bool(_DOER.search(words)),
    )


# An amount asked per unit of time: its answer carries a rate ("2.1 MiB/s"), not a size or a count.
# "Every minute" says when a symptom comes, not what is asked ("which job runs every minute?").
_RATE = re.compile(r"\bhow (?:fast|quickly)\b|\bat what (?:rate|speed|pace)\b|\bwhat(?:'s| is)? (?:the |its )?(?:growth )?"
                   r"(?:rate|speed|pace)\b|\bhow (?:many|much)\b[^?.,;]*\b(?:per|a|an|each|every) (?:second|minute|hour)\b",
                   re.I)


# The process doing what is asked about, asked for beside it ("what is growing, and who writes it?",
# "how many … and what starts them?"); "what is filling my disk?" asks for the files, not a doer.
_DOER = re.compile(r"\bwho(?:'s|\s+is)?\s+(?:\w+ing|writes|starts|spawns|launches|opens|holds|creates|runs|keeps)\b"
                   r"|\b(?:which|what)\s+(?:process(?:es)?|programs?|apps?|applications?|daemons?)\b"
                   r"|\bwhat(?:'s|\s+is)?\s+(?:writes|writing|starts|starting|spawns|spawning|launches|launching|creates|"
                   r"creating)\b|\b(?:written|created|started|spawned|launched|held|opened)\s+by\s+(?:what|whom|which)\b",
                   re.I)


def as_question(question: "Question | str") -> Question:
    """A question value from a value or from text (read by its words alone; tests and tools that
    hold only text). A run reads its question once and passes the value."""
    return question if isinstance(question, Question) else read_question(question)
