"""The answer the engine puts together itself, when the model gave none that holds: in plain words,
what was asked about, what the checks found and what they found fine, said to be the appliance's.

Why plain words: a person reads this answer like any other; a label such as "[claims-no-fault: …]"
or "[warning] cpu:" tells them nothing and reads like a failure of the tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from appliance.agent.question.kinds import Asks, Resource
from appliance.agent.question.question import Question
from appliance.agent.answer.facts import facts_asked, stating
from appliance.agent.answer.settled import by_topic
from appliance.agent.answer.users import USER_FAMILY
from appliance.agent.evidence import GENERAL_FAMILIES, Evidence
from appliance.analyzers.base import Finding

SHOWN = 3
FACTS_SHOWN = 8  # the plain facts of a reading without a headline (a system overview)
# What a question about each resource is about, as a person would say it.
_ABOUT: dict[Resource, str] = {
    Resource.CPU: "the processor", Resource.MEMORY: "memory", Resource.DISK_SPACE: "disk space",
    Resource.DISK_IO: "disk activity", Resource.NETWORK: "the network", Resource.FILES: "open files",
    Resource.PROCESSES: "processes", Resource.TIME: "the clock and uptime", Resource.LOGS: "the logs",
    Resource.CONFIG: "the settings", Resource.NONE: "this machine",
}


def finding_fields(finding: Finding) -> dict[str, Any]:
    """A problem finding as result fields of a forced answer."""
    out: dict[str, Any] = {}
    if finding.culprit:
        out["culprit"] = finding.culprit
    if finding.pid is not None:
        out["pid"] = finding.pid
    if finding.path:
        out["path"] = finding.path
    return out


@dataclass(frozen=True)
class Assembled:
    text: str
    result: dict[str, Any]
    evidence: tuple[str, ...]


def _measured(result: Mapping[str, Any]) -> str:
    """A reading in a line: its headline, or its first plain facts ("kernel: 6.1.0, hostname: web1")."""
    data = result.get("data")
    if not isinstance(data, dict):
        return ""
    if data.get("headline"):
        return str(data["headline"])
    facts = [f"{key.replace('_', ' ')}: {value}" for key, value in data.items() if isinstance(value, (str, int, float))]
    return ", ".join(facts[:FACTS_SHOWN])


def _plain(line: str) -> str:
    """A tool's summary as a person reads it: its headline alone ("headline: fullest: / 28 % used |
    note=…" → "fullest: / 28 % used"); other lines as they are."""
    if line.startswith("headline: "):
        return line[len("headline: "):].split(" | ", 1)[0]
    return line


def _sentences(verdicts: list[str]) -> str:
    return "; ".join(v.rstrip(". ") for v in verdicts) + "."


def assemble(question: Question, evidence: Evidence, reason: str, read: Sequence[str] = ()) -> Assembled:
    """What the checks found about the part of the machine asked about, problems first, then what
    they judged fine there, then the problems elsewhere (a question about the disk is not answered
    with an OOM kill of an hour ago, nor does it hide it), then what the looks before the first step
    measured and the last things the steps' tools showed (`read`), by their headlines; `reason`:
    why the model's answer is not given (plain words). The culprit is one of the part asked about,
    or none."""
    if question.asks is Asks.OUT_OF_SCOPE:
        text = ("This question is not about this computer, so the appliance cannot answer it from what the machine "
                f"shows (answer put together by the appliance: {reason}).")
        return Assembled(text, {}, ())
    asked_facts = stating(facts_asked(question.facts, evidence)) if question.asks is Asks.SYSTEM_FACT else ""
    shown = evidence.shown()
    problems = [f for f in shown if f.is_problem]
    ours = [f for f in evidence.part_problems() if f in problems]
    if question.asks is Asks.USER:  # "whose account is it?": the per-user verdict leads, its user the culprit
        ours.sort(key=lambda f: f.family != USER_FAMILY)
    elsewhere = [f for f in problems if f not in ours][:SHOWN]
    ours = ours[:SHOWN]
    asked = evidence.topics or GENERAL_FAMILIES
    fine = by_topic(evidence, [f for f in shown if not f.is_problem and (f.family in asked or f in evidence.places)])
    fine = fine[:SHOWN]
    parts = [f"{asked_facts}."] if asked_facts else []  # a question of fact: the facts asked, first
    if ours:
        parts.append(f"The appliance's checks found a problem: {_sentences([f.verdict for f in ours])}")
    if fine:
        lead = "They found nothing wrong here" if ours else f"The checks of {_ABOUT[question.resource]} found nothing wrong"
        if not ours and any(f.standout for f in fine):  # no fault, yet one process far ahead of the rest
            lead = f"The checks of {_ABOUT[question.resource]} found no fault, but one process stands far ahead"
        parts.append(f"{lead}: {_sentences([f.verdict for f in fine])}")
    if elsewhere:
        parts.append(f"Elsewhere on this machine they found: {_sentences([f.verdict for f in elsewhere])}")
    measured = [m for m in (_measured(look.result) for look in (*evidence.looks, *evidence.measured)) if m]
    if measured:
        parts.append(f"What the appliance measured: {_sentences(measured[:SHOWN])}")
    if read:
        parts.append(f"What the appliance read on the way: {_sentences([_plain(line) for line in read[-SHOWN:]])}")
    if not parts:
        parts.append(f"The appliance has no check that answers this about {_ABOUT[question.resource]}, and the "
                     "model gave no answer that this machine's readings back.")
    parts.append(f"(Answer put together by the appliance from its checks: {reason}.)")
    lines = tuple(f.verdict for f in ours + fine + elsewhere)
    return Assembled(" ".join(parts), finding_fields(ours[0]) if ours else {}, lines)
