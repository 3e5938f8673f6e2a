"""What one run has seen so far: the calls, the observations, the verdicts, the texts an answer must
not copy.

Why one object: the first evidence, every step and the finish path all add to it or judge by it,
and they must see the same lists; each gets this object, not a copy of its parts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from appliance.agent.calls import CallLog
from appliance.agent.evidence import Evidence
from appliance.agent.facts import FactBook
from appliance.agent.observe import summarize
from appliance.tools.base import OK, PARTIAL, Registry


@dataclass
class RunMemory:
    """calls: every tool call and its latest observation; evidence: the verdicts and looks before
    the first step; bodies: every observation body (for the answer check); evidence_log: "step N
    tool: summary" lines (for rejections and forced answers); log_bodies: the observations that read
    a log; facts: every line shown, numbered (what a claim cites)."""

    calls: CallLog = field(default_factory=CallLog)
    facts: FactBook = field(default_factory=FactBook)
    evidence: Evidence = field(default_factory=Evidence)
    bodies: list[str] = field(default_factory=list)
    evidence_log: list[str] = field(default_factory=list)
    log_bodies: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)  # what the steps' tools showed that was new, in short

    def remember_body(self, step: int, source: str, body: str) -> bool:
        """Keep an observation body; True when the run had not seen it (new information)."""
        self.bodies.append(body)
        new = self.calls.is_new(body)
        if new:
            self.evidence_log.append(f"step {step} {source}: {summarize(body, 200)}")
            if step > 0:
                self.read.append(summarize(body, 200))
        return new

    def remember_log(self, status: str, body: str) -> None:
        """Keep the observation of a tool that read a log: its error lines are what a why-answer
        quotes. A refusal or an error of the tool ("… is a binary file") is no line of the log."""
        if status in (OK, PARTIAL):
            self.log_bodies.append(body)


def reads_log(registry: Registry, tool: str) -> bool:
    """The tool declares it reads a log (its observations are what a why-answer quotes)."""
    spec = registry.get(tool)
    return spec is not None and spec.reads == "log"
