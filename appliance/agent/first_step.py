"""Step 0: what the model is shown before its first step, without asking it.

Why before the model: the analyzers' verdicts, a look at every place the question names and (when
there are no verdicts) the machine snapshot often answer the question outright, and a small model
that starts from them calls fewer tools and invents less (docs/engine.md, "One step", 1.).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Generator, Mapping, Sequence

from appliance.agent import events as ev
from appliance.agent.question.question import Question
from appliance.agent.evidence import EvidenceSource
from appliance.agent.observe import summarize, wrap
from appliance.agent.outcome import render_with_headline, render_tool_result
from appliance.agent.run_memory import RunMemory, reads_log
from appliance.agent.facts import Entity, FactBook
from appliance.analyzers import ANALYZERS
from appliance.analyzers.base import Finding
from appliance.agent.settings import EngineSettings
from appliance.errors import one_line
from appliance.tools.base import ERROR, OK, Registry
from appliance.tools.procs import label_records

Snapshot = Callable[[frozenset], Mapping[str, Any]]
PAST_FAMILIES = frozenset(a.family for a in ANALYZERS if a.past)  # their verdicts are events, not states


def findings_text(findings: Sequence[Finding]) -> str:
    """The verdicts as observation lines."""
    return "\n".join(f.line() for f in findings)


@dataclass
class FirstEvidence:
    """Gathers step 0 for one run into its memory: sources are the analyzers and looks, snapshot
    the machine's processes and load, both read for the appliance's own pids."""

    settings: EngineSettings
    registry: Registry
    sources: EvidenceSource
    snapshot: Snapshot
    self_pids: frozenset[int]

    def gather(self, run_id: str, question: Question, memory: RunMemory) -> Generator[ev.Event, None, str | None]:
        """The snapshot, the verdicts and the looks as observations of step 0 (one recorded step);
        the text the question message carries, or None when the settings turn step 0 off."""
        if not self.settings.snapshot:
            return None
        started = time.perf_counter()
        parts = self._parts(question, memory)
        tool_ms = (time.perf_counter() - started) * 1000
        texts = []
        for status, source, body in parts:
            memory.remember_body(0, source, body)
            texts.append(wrap(source, status, body))
        shown = memory.evidence.shown()
        unshown = [f for f in memory.evidence.findings if f not in shown]
        if unshown:  # measured, not shown for room: a retry may still begin with one (steering reads them all)
            memory.bodies.append(findings_text(unshown))
        text = "\n".join(texts)
        status = parts[0][0]
        summary = summarize(" | ".join(body for _, _, body in parts[1:]) or parts[0][2])
        yield ev.ObservationMade(run_id, 0, "snapshot", status, text, summary, tool_ms, False)
        yield ev.StepRecorded(
            run_id=run_id, step=0, at=time.time(), thought="", action="snapshot",
            action_input={"question": question.labels()},
            observation_status=status, observation=text, observation_summary=summary, reflection=None,
            evaluation="machine snapshot, check verdicts and named places given before the first step",
            tool_ms=tool_ms,
        )
        return text

    def preview(self, question: str) -> str | None:
        """The text `gather` would give `question` now, from a check already begun, without taking
        that check or recording anything: None without such a check or without verdicts (the
        snapshot given instead is read afresh by the run, so reading it ahead would be wasted)."""
        peek = getattr(self.sources, "peek", None)
        if not self.settings.snapshot or peek is None:
            return None
        evidence = peek(question, self.self_pids)
        if evidence is None or not evidence.findings:
            return None
        memory = RunMemory(facts=FactBook(self.self_pids))
        memory.evidence = evidence
        return "\n".join(wrap(source, status, body) for status, source, body in self._parts_of(memory))

    def _parts(self, question: Question, memory: RunMemory) -> list[tuple[str, str, str]]:
        """(status, source, body) of each observation of step 0; the evidence lands in memory."""
        failed = []
        try:
            memory.evidence = self.sources.gather(question, self.self_pids)
        except Exception as exc:  # evidence is a help, never a reason to fail the run
            failed.append((ERROR, "check", f"error: the check failed: {one_line(exc)}"))
        return self._parts_of(memory, failed)

    def _parts_of(self, memory: RunMemory, failed: list[tuple[str, str, str]] | None = None) -> list[tuple[str, str, str]]:
        parts = list(failed or ())
        shown = memory.evidence.shown()
        if not memory.evidence.findings:
            # The verdicts carry what the snapshot shows (load, the busiest and biggest processes,
            # the fullest filesystem) and judge it; the snapshot is given only without them.
            status, source, body = self._snapshot_part()
            parts.insert(0, (status, source, memory.facts.number_body(source, body, status)))
        if shown:
            parts.append((OK, "check", memory.facts.number_findings(shown, PAST_FAMILIES)))
        for look in (*memory.evidence.looks, *memory.evidence.measured):
            status, body, _ = render_tool_result(look.result, self.self_pids, self.settings.observation_token_budget)
            if reads_log(self.registry, look.tool):
                memory.remember_log(status, body)
            context = [Entity("path", look.path)] if look.path.startswith("/") else []
            parts.append((status, look.tool, memory.facts.number_body(look.tool, body, status, context)))
        return parts

    def _snapshot_part(self) -> tuple[str, str, str]:
        try:
            data = label_records(dict(self.snapshot(self.self_pids)), self.self_pids)
            status, body, _ = render_with_headline({"status": OK, "data": data, "error": None},
                                                   self.settings.observation_token_budget)
        except Exception as exc:  # a snapshot is a help, never a reason to fail the run
            status, body = ERROR, f"error: snapshot failed: {one_line(exc)}"
        return status, "snapshot", body
