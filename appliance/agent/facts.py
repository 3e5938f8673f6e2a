"""Numbered evidence: every line the model is shown becomes a fact with an id (F1, F2, …).

Why: an answer that cites the facts it rests on can be judged by what those facts are — the thing
each is about, the values it holds, the severity an analyzer gave it, whether it records a search
that found nothing — instead of by reading the answer's English. The ids are stable within a run,
so a claim cites them, and the grammar of the finish action offers only ids that were shown.

A fact is typed where the reading says what it is about (a verdict's culprit, a record's `pid`,
`path`, `port`, `user` or `mount` key) and a plain line where it does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from appliance.agent.plain_words import EMPTY_PART, plain_reading
from appliance.analyzers.base import Finding
from appliance.tools.procs import SELF_LABEL

MACHINE = "this machine"
NOTHING_FOUND = ("(nothing found)", EMPTY_PART)  # the renderer's own words for an empty reading

# Token shapes, not English: a key=value pair as the renderer writes it, a path, a number.
_PAIR = re.compile(r'(?<![\w.])([a-z][a-z0-9_]*)=("[^"]*"|\S+)')
PATH = re.compile(r"(?<![\w.:/-])(~?/[\w.@+%:,-]+(?:/[\w.@+%:,-]*)*)")
NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)(?:\s?(%|[kKMGTP]i?B|B|bytes|s|ms|min|h|d|days))?(?![\w])")
_PID = re.compile(r"\bpid[ =](\d+)\b")

ENTITY_KEYS: tuple[tuple[str, str], ...] = (
    ("pid", "process"), ("path", "path"), ("mount", "filesystem"), ("mountpoint", "filesystem"),
    ("port", "port"), ("local_port", "port"), ("user", "user"), ("username", "user"),
    ("program", "program"), ("unit", "service"), ("interface", "interface"),
)


@dataclass(frozen=True)
class Entity:
    """What a fact is about: its kind (process, path, port, user, filesystem, program, service,
    interface, machine) and the name the evidence gives it; a process also has its pid."""

    kind: str
    name: str
    pid: int | None = None

    @property
    def label(self) -> str:
        """How a claim names it: a process with its pid, a port with the word, the rest by name."""
        if self.kind == "process" and self.pid is not None:
            return f"{self.name} (pid {self.pid})" if self.name else f"pid {self.pid}"
        if self.kind == "port":
            return f"port {self.name}"
        return self.name


@dataclass(frozen=True)
class Quantity:
    """A number a fact holds, with its unit as written and the entity it belongs to (the last one
    named before it on the line, else the line's own subject)."""

    number: float
    unit: str
    owner: Entity | None


@dataclass(frozen=True)
class Fact:
    """One numbered line of evidence.

    source: the tool (or "check") that produced it; text: the line as the model sees it;
    entities: what it is about, its subject first; quantities: the numbers it holds;
    severity: ok, warning or critical where an analyzer or a profile flag judged, else "";
    family: the analyzer family of a verdict; past: the verdict is of an event, not a state;
    search: the line records a reading that looked and found nothing (an empty listing);
    own: it is about the appliance's own process."""

    id: str
    source: str
    text: str
    entities: tuple[Entity, ...] = ()
    quantities: tuple[Quantity, ...] = ()
    severity: str = ""
    family: str = ""
    past: bool = False
    search: bool = False
    own: bool = False
    plain_text: str = ""

    @property
    def subject(self) -> Entity | None:
        return self.entities[0] if self.entities else None

    @property
    def is_problem(self) -> bool:
        return self.severity in ("warning", "critical")

    @property
    def plain(self) -> str:
        """The fact as a person reads it: a verdict's sentence, or the reading in words."""
        return self.plain_text or plain_reading(self.text)

    def numbered(self) -> str:
        return f"{self.id} {self.text}"


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def quantities_in(text: str, mentions: Sequence[tuple[int, Entity]], subject: Entity | None) -> tuple[Quantity, ...]:
    """The numbers of a line, each owned by the entity named last before it (else the subject)."""
    out = []
    for match in NUMBER.finditer(text):
        value = _number(match.group(1))
        if value is None:
            continue
        owner = subject
        for at, entity in mentions:
            if at <= match.start():
                owner = entity
        out.append(Quantity(value, match.group(2) or "", owner))
    return tuple(out)


def _pairs(text: str) -> dict[str, str]:
    return {k: v.strip('"') for k, v in _PAIR.findall(text)}


def record_entities(pairs: dict[str, str]) -> list[Entity]:
    """The entities a key=value record names, by its keys (a pid with its name is a process)."""
    found = []
    for key, kind in ENTITY_KEYS:
        value = pairs.get(key)
        if not value or value == "-":
            continue
        if kind == "process":
            pid = int(value) if value.isdigit() else None
            found.append(Entity("process", pairs.get("name") or pairs.get("process") or "", pid))
        else:
            found.append(Entity(kind, value))
    if not found and pairs.get("name") and ("cpu_percent" in pairs or "rss" in pairs or "threads" in pairs):
        found.append(Entity("process", pairs["name"]))
    return found


def finding_entities(finding: Finding) -> list[Entity]:
    """A verdict is about its culprit (with its pid or path) when it has one, else this machine."""
    found = []
    if finding.culprit and finding.pid is not None:
        found.append(Entity("process", finding.culprit, finding.pid))
    elif finding.culprit and finding.path:
        found.append(Entity("path", finding.path))
    elif finding.culprit:
        found.append(Entity("path" if finding.culprit.startswith("/") else "thing", finding.culprit))
    if finding.path and not any(e.name == finding.path for e in found):
        found.append(Entity("path", finding.path))
    if finding.standout is not None:
        found.append(Entity("process", finding.standout.name, finding.standout.pid))
    found += [e for e in path_entities(finding.verdict) + named_processes(finding.verdict) if e not in found]
    found.append(Entity("machine", MACHINE))
    return found


_NAMED_PID = re.compile(r"([\w.@:+-]+) \(pid (\d+)\)")


def named_processes(text: str) -> list[Entity]:
    """The processes a sentence names the way the tools and analyzers write them: "NAME (pid N)"."""
    return [Entity("process", name, int(pid)) for name, pid in dict.fromkeys(_NAMED_PID.findall(text))]


def path_entities(text: str) -> list[Entity]:
    """The paths a sentence names, as entities (a mount, a folder, a file)."""
    return [Entity("path", p.rstrip(".,;:)")) for p in dict.fromkeys(PATH.findall(text)) if len(p.rstrip(".,;:)")) > 0]


@dataclass
class FactBook:
    """The facts one run has shown, numbered in the order shown."""

    self_pids: frozenset[int] = frozenset()
    facts: list[Fact] = field(default_factory=list)
    known: dict[str, Entity] = field(default_factory=dict)  # every entity shown, by its label

    def get(self, fact_id: str) -> Fact | None:
        index = _index(fact_id)
        return self.facts[index - 1] if index is not None and 0 < index <= len(self.facts) else None

    @property
    def ids(self) -> list[str]:
        return [f.id for f in self.facts]

    def _next_id(self) -> str:
        return f"F{len(self.facts) + 1}"

    def _add(self, fact: Fact) -> Fact:
        self.facts.append(fact)
        for entity in fact.entities:
            if entity.kind != "machine" and entity.name:
                self.known.setdefault(entity.label, entity)
        return fact

    def _is_own(self, entities: Iterable[Entity], text: str) -> bool:
        return SELF_LABEL in text or any(e.kind == "process" and e.pid in self.self_pids for e in entities)

    def add_finding(self, finding: Finding, past: bool = False) -> Fact:
        """A verdict as a fact: its severity and family typed, its culprit its subject."""
        entities = finding_entities(finding)
        text = finding.line()
        mentions = self._mentions(text, entities)
        return self._add(Fact(self._next_id(), "check", text, tuple(entities),
                              quantities_in(text, mentions, entities[-1]), finding.severity, finding.family,
                              past, search=False, own=False, plain_text=finding.verdict))

    def add_line(self, source: str, line: str, status: str = "ok", context: Sequence[Entity] = ()) -> Fact:
        """A reading's line as a fact: a record's keys say what it is about; an empty reading is a
        search that found nothing. context: the entity the whole reading is about (its argument)."""
        pairs = _pairs(line)
        entities = record_entities(pairs)
        keyed = list(entities)  # a record's numbers are its keyed entity's, not a device's or an exe's path
        for match in _PID.finditer(line):
            if not any(e.pid == int(match.group(1)) for e in entities):
                entities.append(Entity("process", "", int(match.group(1))))
        entities += [e for e in context if e not in entities]
        entities += [e for e in path_entities(line) + named_processes(line) if e not in entities]
        if not entities:
            entities = [Entity("machine", MACHINE)]
        severity = ""
        flag = pairs.get("severity")
        if flag in ("warning", "critical"):
            severity = flag
        search = status == "empty" or any(line.rstrip().endswith(mark) for mark in NOTHING_FOUND)
        mentions = self._mentions(line, keyed or entities)
        return self._add(Fact(self._next_id(), source, line, tuple(entities),
                              quantities_in(line, mentions, entities[0]), severity, "", False, search,
                              self._is_own(entities, line)))

    def _mentions(self, text: str, entities: Sequence[Entity]) -> list[tuple[int, Entity]]:
        """Where on the line each entity is named (a process by its name or pid, a path as written)."""
        found = []
        for entity in entities:
            if entity.kind == "machine":
                continue
            for needle in filter(None, (entity.name, f"pid {entity.pid}" if entity.pid else "",
                                        f"pid={entity.pid}" if entity.pid else "")):
                at = text.find(needle)
                if at >= 0:
                    found.append((at, entity))
                    break
        return sorted(found, key=lambda pair: pair[0])

    def number_findings(self, findings: Sequence[Finding], past_families: Iterable[str] = ()) -> str:
        """The verdicts as numbered lines."""
        past = set(past_families)
        return "\n".join(self.add_finding(f, f.family in past).numbered() for f in findings)

    def number_body(self, source: str, body: str, status: str = "ok", context: Sequence[Entity] = ()) -> str:
        """A reading's body with every line numbered, but for the renderer's own markers (a cut) and
        headers that name a part ("entries:"), which hold no fact of their own. A line an earlier
        reading showed word for word (two scans' shared counts) is left out with any header left
        with nothing under it: its fact stands under its first id. A body of nothing but such lines
        is shown whole, so a reading never looks empty."""
        shown = {f.text for f in self.facts}
        rows: list[tuple[str, str]] = []  # (kind, text): "fact", "repeat" or "plain"
        for line in body.splitlines():
            stripped = line.strip()
            if not stripped or stripped.startswith("…") or (stripped.endswith(":") and " " not in stripped):
                rows.append(("plain", line))
            else:
                rows.append(("repeat" if stripped in shown else "fact", stripped))
        fresh = any(kind == "fact" for kind, _ in rows)
        lines = []
        for index, (kind, text) in enumerate(rows):
            if kind == "repeat" and fresh:
                continue
            if kind == "plain" and fresh and text.strip().endswith(":") and not _has_fact_below(rows, index):
                continue
            lines.append(text if kind == "plain" else self.add_line(source, text, status, context).numbered())
        return "\n".join(lines)

    def subjects(self, limit: int = 48) -> list[str]:
        """The labels a claim may name as its subject: every entity shown but the appliance's own,
        the most recently shown first when there are more than `limit`."""
        own = {e.label for f in self.facts if f.own for e in f.entities if e.kind == "process"}
        labels = [label for label, e in self.known.items()
                  if label not in own and not (e.kind == "process" and e.pid in self.self_pids)]
        labels.append(MACHINE)
        return labels[-limit:]

    def entity(self, label: str) -> Entity | None:
        if label == MACHINE:
            return Entity("machine", MACHINE)
        return self.known.get(label)


def _has_fact_below(rows: Sequence[tuple[str, str]], index: int) -> bool:
    """A header keeps its place when a fresh fact follows it before a header at its own depth or above."""
    depth = len(rows[index][1]) - len(rows[index][1].lstrip())
    for kind, text in rows[index + 1:]:
        if kind == "fact":
            return True
        if kind == "plain" and text.strip().endswith(":") and len(text) - len(text.lstrip()) <= depth:
            return False
    return False


def _index(fact_id: str) -> int | None:
    text = fact_id.strip().upper()
    return int(text[1:]) if text.startswith("F") and text[1:].isdigit() else None
