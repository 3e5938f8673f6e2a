"""The person's question, read once into a typed value before step 0.

Why one reading: a question re-read by regular expressions at every turn fits only the phrasings
those expressions were written for. Here the words are read once — by the lexical reader below,
and, in a real run, by the model choosing among a few labels (`question/classify.py`) with the
lexical reading as its prior. The evidence, the prompt and the claim checks read this value,
never the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Sequence

from appliance.analyzers.named_path import PathAsk, path_ask
from appliance.agent.question.kinds import RESOURCE_FAMILIES, Asks, Resource, led_by_kind, with_resource
from appliance.agent.question.mentions import hosts_in, names_in, paths_in, pids_in, ports_in, tokens_in, udp_in
from appliance.agent.question.words import fault_in, lexical_asks

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
    worded: tuple[str, ...] = ()  # the families its topic words name (before its resource's join)
    udp: bool = False
    hosts: tuple[str, ...] = ()  # host names it names ("db.internal")
    tokens: tuple[str, ...] = ()  # its plain words: the machine says which name a thing it has
    sure: bool = False  # the structural words said what is asked (the reader did not fall back)
    path_ask: PathAsk = field(default_factory=PathAsk)  # what it asks about a path it names (analyzers.named_path)
    source: str = "words"
    prior: tuple[str, str, bool] | None = field(default=None, compare=False)  # the words' labels, when the model chose

    @property
    def resource_in_words(self) -> bool:
        """The words name a family of the part the model chose ("is the disk that holds X full?"),
        not only the model ("is X fine?" labelled disk space)."""
        return any(f in RESOURCE_FAMILIES[self.resource] for f in self.worded)

    def labels(self) -> dict[str, object]:
        """The reading as plain values (recorded with step 0)."""
        return {"asks": self.asks.value, "resource": self.resource.value, "fault": self.fault,
                "paths": list(self.paths), "ports": list(self.ports), "pids": list(self.pids),
                "names": list(self.names), "families": list(self.families), "by": self.source}

    def relabelled(self, asks: Asks, resource: Resource, fault: bool, known: Sequence[str] = ()) -> "Question":
        """The question with the model's labels: its resource, its fault, and what is asked unless
        the structural words said it ("how many", "which file", a question opened by "is"), which
        the small models mislabel more often than those words mislead. A question the model finds
        not about this machine is out of scope whatever the words said.
        The resource's families join the families its words name (`known`: those that exist)."""
        if asks is not Asks.OUT_OF_SCOPE and self.sure:
            asks = self.asks
        fault = (self.fault or fault) and asks not in (Asks.OUT_OF_SCOPE, Asks.SYSTEM_FACT)
        families = led_by_kind(with_resource(self.families, resource, known), asks, known)
        return replace(self, asks=asks, resource=resource, fault=fault, families=families, source="model",
                       prior=(self.asks.value, self.resource.value, self.fault))


def named_paths(question: "Question | str") -> list[str]:
    """Absolute (or ~) paths the question names, in order."""
    return list(question.paths) if isinstance(question, Question) else paths_in(question)


def named_ports(question: "Question | str") -> list[int]:
    """The ports the question names ("port 8080", "localhost:5432"), in order."""
    return list(question.ports) if isinstance(question, Question) else ports_in(question)


def read_question(text: str, analyzers: "Sequence[Analyzer] | None" = None) -> Question:
    """The question read by its words alone: what it names exactly, its form where the structural
    words say it, and the families of `analyzers` (all by default) whose topic words it uses."""
    from appliance.analyzers.runner import ANALYZERS, for_question
    chosen = ANALYZERS if analyzers is None else analyzers
    paths, ports = tuple(paths_in(text)), tuple(ports_in(text))
    asks, sure = lexical_asks(text, paths, ports)
    families = tuple(for_question(text, chosen))
    if chosen:
        families = led_by_kind(families, asks, [a.family for a in chosen])
    return Question(
        text=text, asks=asks, resource=Resource.NONE, fault=fault_in(text),
        paths=paths, ports=ports, pids=tuple(pids_in(text)), names=tuple(names_in(text)),
        families=families, worded=families, udp=udp_in(text), hosts=hosts_in(text), tokens=tokens_in(text),
        sure=sure, path_ask=path_ask(text),
    )


def as_question(question: "Question | str") -> Question:
    """A question value from a value or from text (read by its words alone; tests and tools that
    hold only text). A run reads its question once and passes the value."""
    return question if isinstance(question, Question) else read_question(question)
