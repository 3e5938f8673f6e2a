"""Evidence gathered before the model's first step: the analyzers' verdicts and a look at every
place the question names.

Why: a small model that starts from the right evidence answers in one or two steps; one that
starts from a blank page picks a tool by the question's words and often looks at the wrong
thing ("what is filling my disk?" answered from disk_usage alone). Every warning and critical
finding is shown, beside the verdicts of the families the question is about; a named log is read,
a named folder measured, a named file opened, all through the registry (so the path policy and the
redactor apply as to any tool call).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from appliance.agent.question.question import Question, as_question, named_paths, named_ports
from appliance.agent.early import Early
from appliance.agent.kind_looks import kind_looks
from appliance.agent.machine_names import machine_names
from appliance.agent.mention_looks import profile_calls
from appliance.agent.place_looks import (LOGS, Look, folder_verdicts, is_storage_question, place_topics, place_verdicts,
                                         plan_look)
from appliance.agent.space_looks import space_call, space_looks
from appliance.agent.current_problems import with_current_problems
from appliance.analyzers import ANALYZERS, Finding, Readings, by_severity, run_all
from appliance.analyzers.app_folder import folder_logs
from appliance.analyzers.base import Analyzer
from appliance.analyzers.host_pins import FAMILY as NAMES
from appliance.analyzers.host_pins import pin_findings
from appliance.analyzers.named_path import mounts_in_the_way, path_findings
from appliance.analyzers.network import port_finding
from appliance.analyzers.reach import ANALYZER as REACH
from appliance.analyzers.reach import reach_finding
from appliance.analyzers.storage import fullest_mount
from appliance.tools.base import Registry
from appliance.tools.paths import PathPolicy
from appliance.tools.shared_walk import walks_shared

# Families whose verdicts answer "is this machine healthy?" when a question names no topic.
GENERAL_FAMILIES = ("cpu", "memory", "filesystem_full")
# Families about a place's storage: a folder a question about them names is measured, not read.
MAX_SHOWN = 8
LISTENING = "listening"


def asked_ports(question_ports: Sequence[int], findings: Sequence[Finding]) -> list[int]:
    """The ports an answer may deny things about: the ones the question names, and the ones the
    checks' verdicts are about (a log's refused dependency: the port nothing listens on), read from
    the verdicts' values rather than their words."""
    ports = list(question_ports)
    for finding in findings:
        port = finding.values.get("port")
        if isinstance(port, int) and not isinstance(port, bool):
            ports.append(port)
    return ports


# A check started ahead (MachineEvidence.prefetch) stands for the machine this long: a model load
# takes seconds; a check older than this is read again.
PREFETCH_MAX_AGE = 30.0


@dataclass(frozen=True)
class Evidence:
    """findings: every verdict of the check; topics: the families the question is about;
    looks: the places the question names, looked at; measured: the readings that answer its kind
    (a plain fact, the users' totals), which are about no place."""

    findings: tuple[Finding, ...] = ()
    topics: tuple[str, ...] = ()
    looks: tuple[Look, ...] = ()
    places: tuple[Finding, ...] = ()  # the verdicts of the filesystems holding the places named
    measured: tuple[Look, ...] = ()
    named: tuple[str, ...] = ()  # the things the question names that this machine has (agent/machine_names.py)

    def shown(self) -> list[Finding]:
        """What the model is shown, problems first (a small model reads the first lines): those at
        the places the question names, of its families, every other one; then the ok verdicts of
        its places and of its families (the general ones when it names none); each thing once, at
        most MAX_SHOWN. Past that bound the problems the question does not ask about give way
        first: on a machine with many of them, the verdict of the port or the disk asked about
        (often an ok one, the answer itself) is still shown."""
        wanted = self.topics or GENERAL_FAMILIES
        problems = [f for f in by_severity(list(self.findings)) if f.is_problem]
        at_places = [f for f in self.places if f.is_problem]
        ours = [f for f in problems if f.family in wanted]
        others = [f for f in problems if f.family not in wanted]
        places_fine = [f for f in self.places if not f.is_problem]
        topical = [f for f in self.findings if f.family in wanted and not f.is_problem]
        ordered = _distinct(at_places + ours + others + places_fine + topical)
        asked = [f for f in _distinct(at_places + ours + places_fine + topical) if f in ordered]
        kept = asked[:MAX_SHOWN] + [f for f in ordered if f not in asked][:max(0, MAX_SHOWN - len(asked))]
        return [f for f in ordered if f in kept]

    def asked_problems(self) -> list[Finding]:
        """The problems the question asks about: those at the places it names, causes before the
        log summaries that show their symptom (a folder the log's writer may not write, then the
        log), then those of its families."""
        found = sorted((f for f in self.places if f.is_problem), key=lambda f: f.family == LOGS)
        return found + [f for f in self.findings if f.family in self.topics and f.is_problem and f not in found]

    def part_problems(self) -> list[Finding]:
        """The problems of the part of the machine the question is about (`asked_problems`); when it
        names no part (no family, no place: "something is off"), every problem shown."""
        if self.topics or self.places:
            return self.asked_problems()
        return [f for f in self.shown() if f.is_problem]

    def answerable_ports(self, question: "Question | str") -> list[int]:
        """The ports an answer may deny things about: those the question names and those the
        verdicts name (port_fit.asked_ports)."""
        return asked_ports(named_ports(question), self.findings)

    def main_problems(self) -> list[Finding]:
        """The problems with a culprit of the family the question is most about that has any (the
        first such topic: "a process won't die and the load climbs, which one is stuck?" is read as
        about the CPU first, and its answer is the stuck task the next family found)."""
        for topic in self.topics:
            found = [f for f in self.findings if f.family == topic and f.is_problem and f.culprit]
            if found:
                return found
        return []


def _distinct(findings: list[Finding]) -> list[Finding]:
    """Each finding once, and one problem per family and culprit (a read-only place is found by
    the place's own check and by the machine's, in words that differ)."""
    out: list[Finding] = []
    seen: set[tuple] = set()
    for finding in findings:
        key = (finding.family, finding.culprit or finding.path) if finding.is_problem and (finding.culprit or finding.path) \
            else (finding.family, finding.verdict)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return out


class EvidenceSource(Protocol):
    def gather(self, question: Question, self_pids: frozenset[int]) -> Evidence: ...


class NoEvidence:
    """No analyzers, no looks (tests of the loop's logic, and `--no-check`)."""

    def gather(self, question: Question, self_pids: frozenset[int]) -> Evidence:
        return Evidence()


def port_asking(question: Question) -> tuple[str, bool]:
    """How the question asks about its ports: the protocol, and whether it reports trouble there."""
    return ("udp" if question.udp else "tcp"), question.fault


def port_verdicts_for(question: Question, readings: Readings) -> list[Finding]:
    """Who listens on each port the question names. Nothing listening is a warning only when the
    person reports trouble there ("can't connect to localhost:5432"); asked "is port 8080 free?",
    it is the plain fact that the port is free."""
    proto, trouble = port_asking(question)
    return [port_finding(port, readings, proto=proto, expect_listener=trouble) for port in named_ports(question)]


def reach_verdicts_for(question: "Question | str", topics: Sequence[str], readings: Readings) -> list[Finding]:
    """For a question about reaching a service from other machines, whether each port it names can
    be reached: a warning when it listens on loopback only (or not at all)."""
    question = as_question(question)
    # the words ask about reaching it ("from other machines"), not just the part (a question whose
    # words name no family gets its resource's, and the network's include reach)
    if REACH.family not in topics or REACH.family not in question.worded:
        return []
    proto = port_asking(question)[0]
    return [reach_finding(port, readings, proto=proto) for port in named_ports(question)]


def named_things_of(question: Question) -> list[str]:
    """The names a question gives (its reader's) and the words of it this machine knows as names."""
    return list(dict.fromkeys([*question.names, *machine_names(question.tokens)]))


ReadingsFactory = Callable[[frozenset[int]], Readings]
"""The reading of one check from the appliance's own pids (its windows are the factory's to choose)."""


class MachineEvidence:
    """The analyzers over one fresh reading, and the registry's tools for the named places."""

    def __init__(self, registry: Registry, *, policy: PathPolicy | None = None,
                 analyzers: Sequence[Analyzer] = ANALYZERS, timeout: float = 3.0, max_looks: int = 3,
                 readings: ReadingsFactory | None = None) -> None:
        self.registry = registry
        self.policy = policy or PathPolicy.default()
        self.analyzers = tuple(analyzers)
        self.timeout = timeout
        self.max_looks = max_looks
        self.readings = readings or (lambda pids: Readings(self_pids=pids, policy=self.policy))
        self._early: Early[tuple[Readings, list[Finding]]] | None = None

    @property
    def families(self) -> tuple[str, ...]:
        """The families this source checks, in the analyzers' order."""
        return tuple(a.family for a in self.analyzers)

    def prefetch_once(self, self_pids: frozenset[int]) -> None:
        """Start the check now unless one for these pids is already under way (a run that asks the
        model about its question first lets the check's windows pass beside that call)."""
        if self._early is None:
            self.prefetch(self_pids)

    def prefetch(self, self_pids: frozenset[int]) -> None:
        """Start the machine-wide check now, in the background; the next `gather` for these pids
        uses it when it began at most PREFETCH_MAX_AGE seconds before (a front end that knows a
        question is coming calls this before it loads the model)."""
        self._early = Early(self_pids, lambda: self._check(self_pids))

    def _check(self, self_pids: frozenset[int]) -> tuple[Readings, list[Finding]]:
        readings = self.readings(self_pids)
        return readings, run_all(readings, analyzers=self.analyzers, timeout=self.timeout)

    def gather(self, question: "Question | str", self_pids: frozenset[int]) -> Evidence:
        early, self._early = self._early, None
        checked = early.take(self_pids, PREFETCH_MAX_AGE) if early is not None else None
        readings, findings = checked if checked is not None else self._check(self_pids)
        return self._evidence(as_question(question), readings, findings)

    def peek(self, question: "Question | str", self_pids: frozenset[int]) -> Evidence | None:
        """What `gather` would give now from the check begun ahead (waiting for it), leaving that
        check for the run: None when none is under way for these pids or it is too old. A front
        end reads the first step's prompt ahead with it while the question is typed."""
        early = self._early
        checked = early.take(self_pids, PREFETCH_MAX_AGE) if early is not None else None
        if checked is None:
            return None
        readings, findings = checked
        return self._evidence(as_question(question), readings, findings)

    def question_key(self, question: "Question | str") -> tuple:
        """What in a question decides the evidence `gather` gives it from one check: its topics,
        the places and ports it names, and how it asks about a port. Two drafts with the same key
        get the same text (a read-ahead for one serves the other)."""
        question = as_question(question)
        return (self._topics(question), question.paths, question.ports,
                port_asking(question) if question.ports else (), space_looks(question),
                tuple(tool for tool, _ in kind_looks(question)), question.pids, tuple(named_things_of(question)))

    def _topics(self, question: Question) -> tuple[str, ...]:
        """The question's families among those this source checks."""
        known = {a.family for a in self.analyzers}
        return tuple(f for f in question.families if f in known)

    def _evidence(self, question: Question, readings: Readings, findings: list[Finding]) -> Evidence:
        topics = self._topics(question)
        ports = port_verdicts_for(question, readings) if self.analyzers else []
        if ports:  # first among the listening verdicts: the answer to the question's own port
            findings = ports + [f for f in findings if f not in ports]
            topics = topics if LISTENING in topics else (*topics, LISTENING)
        reach = reach_verdicts_for(question, topics, readings) if self.analyzers else []
        if reach:  # first of all: "works here but not from other machines" is answered by the address
            findings = reach + [f for f in findings if f not in reach]
        pins = pin_findings(list(question.hosts)) if NAMES in self.families else []
        if pins:  # where /etc/hosts sends a host the question names, before anything else
            findings = pins + [f for f in findings if f not in pins]
            rest = tuple(t for t in topics if t != NAMES)
            # a host named without a port is what the question is about; beside a port, only if pinned
            topics = (NAMES, *rest) if any(f.is_problem for f in pins) or not question.ports else (*rest, NAMES)
        storage = is_storage_question(topics)
        places: list[Finding] = []
        with walks_shared():  # the fullest filesystem's folders and files, measured in one walk
            looks = tuple(self._looks(question, readings, storage))
        if self.analyzers:
            for path in named_paths(question) or mounts_in_the_way(question.path_ask, readings):
                places.extend(f for f in place_verdicts(path, readings, storage=storage) + path_findings(
                    path, question.path_ask, readings, storage=storage and question.resource_in_words) if f not in places)
            places.extend(f for f in folder_verdicts(looks) if f not in places)
        named = [os.path.realpath(os.path.expanduser(p)) for p in named_paths(question)]
        topics = place_topics(topics, places, named)
        named = named_things_of(question)
        looks += tuple(self._profiles(question, named, looks))
        return Evidence(tuple(findings) + tuple(places), with_current_problems(question, topics, findings, places),
                        looks, tuple(places), self._measured(question), tuple(named))

    def _profiles(self, question: Question, named: Sequence[str], looks: Sequence[Look]) -> list[Look]:
        """A profile of each pid and name the question mentions (and of each path, where a profile
        tool exists), before the first step: the model answers about the thing itself."""
        paths = [p for p in named_paths(question) if self.registry.get("inspect_path") is not None]
        done = {(look.tool, json.dumps(look.arguments, sort_keys=True)) for look in looks}
        found = []
        for mention, tool, args in profile_calls(paths, question.pids, (), named, self.registry.specs):
            if (tool, json.dumps(args, sort_keys=True)) not in done:
                found.append(Look(mention, tool, args, self.registry.call(tool, args)))
        return found

    def _measured(self, question: Question) -> tuple[Look, ...]:
        return tuple(Look("this machine", tool, args, self.registry.call(tool, args))
                     for tool, args in kind_looks(question) if self.registry.get(tool) is not None)

    def _looks(self, question: Question, readings: Readings, storage: bool) -> list[Look]:
        looks: list[Look] = []
        tools = space_looks(question)
        mount = fullest_mount(readings) if tools else None
        if mount is not None:
            for tool in tools:
                if self.registry.get(tool) is not None and len(looks) < self.max_looks:
                    args = space_call(tool, mount)
                    looks.append(Look(mount, tool, args, self.registry.call(tool, args)))
        for path in named_paths(question):
            expanded = os.path.expanduser(path)
            listing = None
            if os.path.isdir(expanded):
                listed = self.registry.call("list_dir", {"path": expanded, "n": 40})
                if listed.get("status") != "ok":
                    looks.append(Look(path, "list_dir", {"path": expanded}, listed))
                    continue
                listing = listed.get("data") or {}
            inner = folder_logs(expanded, readings) if listing is not None and not storage else []
            for tool, args in plan_look(expanded, listing, inner, storage=storage):
                if self.registry.get(tool) is None or len(looks) >= self.max_looks:
                    continue
                looks.append(Look(path, tool, args, self.registry.call(tool, args)))
            if len(looks) >= self.max_looks:
                break
        return looks


__all__ = ["Evidence", "EvidenceSource", "Look", "MachineEvidence", "NoEvidence", "ReadingsFactory", "named_paths", "plan_look"]
