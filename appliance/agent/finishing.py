"""The finish path: a final answer judged, then accepted, sent back once, or replaced by the evidence.

Why a misfit is never passed on as is: a small model's answer may name facts no observation shows
or copy the engine's own words; it gets one more step with a message that says what was wrong, and
after that the engine answers from the evidence itself, marked forced (docs/engine.md, "One
step", 4. Finish).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Generator, Iterator, Mapping, Sequence

from appliance.agent import events as ev
from appliance.agent.answer.assemble import assemble
from appliance.agent.answer.misfit import LACKS_FACT, Misfit
from appliance.agent.question.question import Asks, Question, Resource
from appliance.agent.actions import FINISH, Step, check_reserved
from appliance.agent.answer.fit import log_error_lines, names_entity
from appliance.agent.answer.agreement import check_agreement, names_self, wrong_place
from appliance.agent.answer.checks import Verdict, normalized, unobserved_path
from appliance.agent.control import LoopControl
from appliance.agent.answer.rules import AnswerContext, judge_answer
from appliance.agent.observe import summarize, wrap
from appliance.agent.outcome import Outcome
from appliance.agent.prompt import kind_call
from appliance.agent.answer.ports import unasked_port
from appliance.agent.answer.shares import share_misfit
from appliance.agent.rejection import rejection_message
from appliance.agent.run_memory import RunMemory
from appliance.agent.settings import EngineSettings
from appliance.agent.answer.steer import (NO_PROBLEM, Steer, backed_no, kept_after_opening, steer, steer_last,
                                      without_unasked_which)
from appliance.llm.base import GenerationStats
from appliance.tools.base import INVALID, OK, ToolSpec



CUT = "…"
# How a retry is told of the reading run for it: the engine's words, never part of an answer.
RECOVERED = "for the fact the answer lacked"


def without_cut_word(parsed: Step, max_chars: int) -> Step:
    """An answer the grammar cut at its length bound ends in a word the model did not finish (a
    path cut to "/data/exports/da"): that word is not a claim, so it goes before the answer is
    judged or shown, and the answer ends with "…"."""
    answer = str(parsed.action_input.get("answer", ""))
    if len(answer) < max_chars or " " not in answer.strip():
        return parsed
    kept = answer[:answer.rstrip().rfind(" ")].rstrip(" ,;:'\"(") + CUT
    return replace(parsed, action_input={**parsed.action_input, "answer": kept})


@dataclass
class Finisher:
    """Judges one run's finishes against what the run has seen; `answer` is the final answer once
    there is one (the model's, accepted, or the engine's own, forced)."""

    run_id: str
    question: Question
    settings: EngineSettings
    ctl: LoopControl
    memory: RunMemory
    self_pids: frozenset[int]
    answer: ev.FinalAnswer | None = None
    run_tool: Callable[[int, str, dict], Outcome] | None = None  # runs a tool for a retry that lacked a fact
    specs: Sequence[ToolSpec] = ()  # the tools the run has (the kind's tool is one of them)

    def finish(self, step: int, parsed: Step, stats: GenerationStats) -> Generator[ev.Event, None, Outcome | None]:
        """Judge a finish: None when the run ended (accepted, or replaced by the engine's own
        answer), else the outcome that sends it back to the model."""
        problem = check_reserved(parsed, self.settings, self.ctl.grammar(step).culprits)
        if problem is not None:
            return Outcome(INVALID, f"error: {problem}", FINISH, evaluation=f"invalid finish: {problem}")
        parsed = without_cut_word(parsed, self.settings.answer_max_chars)
        said = str(parsed.action_input.get("answer", ""))
        cleared = kept_after_opening(said, self.ctl.openings, self.memory.copy_guard, self._refused_alone,
                                     lambda text: names_entity(text, self.memory.bodies))
        parsed = replace(parsed, action_input={**parsed.action_input, "answer": cleared})
        action_input = parsed.action_input
        answer, result = cleared, dict(action_input.get("result") or {})
        stale = self._stale_fields(answer, result)
        cut = ("the answer's words after the opening",) if cleared != said else ()
        verdict = self._judge(answer, {k: v for k, v in result.items() if k not in stale})
        verdict = replace(verdict, dropped=stale + cut + verdict.dropped)
        misfit = verdict.misfit
        may_retry = self.ctl.may_retry(step)
        if misfit is not None and not may_retry and (verdict.invented or verdict.copied):
            yield from self._replace_invented(step, parsed, stats, misfit)
            return None
        if misfit is None or not may_retry:
            evaluation = self._accepted(verdict)
            if misfit is None:
                parsed, evaluation = self._with_backing(parsed, evaluation)
            yield from self._accept(step, parsed, verdict.result, stats, evaluation, forced=self.ctl.forced)
            return None
        return (yield from self._send_back(step, misfit, action_input))

    def _accepted(self, verdict: Verdict) -> str:
        """The accepted answer's evaluation: checked or not, steered or not, fields dropped."""
        problem = verdict.problem
        evaluation = "answer accepted" if problem is None else f"answer accepted unchecked: {problem}"
        if self.ctl.openings:
            evaluation += f" (steered: it had to begin with one of {list(self.ctl.openings)})"
        if verdict.dropped:
            evaluation += (" (dropped result fields that are unbacked or contradict the answer: "
                           f"{', '.join(verdict.dropped)})")
        return evaluation

    def _with_backing(self, parsed: Step, evaluation: str) -> tuple[Step, str]:
        """An accepted denial to a yes/no question, begun with the verdict that backs it (`backed_no`)."""
        answer = str(parsed.action_input.get("answer", ""))
        backed = backed_no(self.question, answer, self.memory.evidence)
        if backed != answer:
            evaluation += " (the checks' verdict put before the model's denial)"
        trimmed = without_unasked_which(self.question, backed, self.memory.evidence)
        if trimmed != backed:
            evaluation += " (the sentences naming the top of an ok ranking after the no left out)"
        if trimmed == answer:
            return parsed, evaluation
        return replace(parsed, action_input={**parsed.action_input, "answer": trimmed}), evaluation

    def _send_back(self, step: int, misfit: Misfit,
                   action_input: Mapping[str, Any]) -> Generator[ev.Event, None, Outcome]:
        """The refusal of a finish with its retry left: what the retry must name and begin with,
        and, when the answer lacked a fact that a tool of the question's kind shows, that tool's
        reading (recovery by a tool: told only "not in any observation", a small model repeats itself)."""
        answer = str(action_input.get("answer", ""))
        steering = self._steer(misfit, answer, action_input.get("result") or {})
        self.ctl.rejected(steering.culprits, steering.openings, step=step)
        yield ev.AnswerRejected(self.run_id, step, misfit.reason)
        message = rejection_message(misfit.reason, self.memory.evidence_lines(), steering.openings)
        recovered = self._recover(step, misfit)
        if recovered is not None:
            ran = f"The appliance ran {recovered.source} {RECOVERED}"
            message += f"\n{ran}:\n{recovered.text}"
            self.memory.copy_guard.append(ran)
        self.memory.rejected_answers.append(normalized(answer))
        self.memory.copy_guard.append(rejection_message(misfit.own_words))  # its words, not the evidence it quotes
        evaluation = f"answer rejected: {misfit.reason}" + (f" (ran {recovered.source})" if recovered else "")
        return Outcome("rejected", message, "answer_check", evaluation=evaluation)

    def _recover(self, step: int, misfit: Misfit) -> Outcome | None:
        """The tool of the question's kind (prompt.KIND_TOOLS) the run has not called yet, run now,
        when the answer lacked a fact; None when there is none to run."""
        if misfit.kind not in LACKS_FACT or self.run_tool is None:
            return None
        measured = [look.tool for look in self.memory.evidence.measured]
        call = kind_call(self.question, self.specs, [*self.memory.calls.tools, *measured])
        if call is None:
            return None
        outcome = self.run_tool(step, *call)
        return outcome if outcome.status in (OK, "empty", "partial") else None

    def _refused_alone(self, text: str) -> bool:
        """A piece of an answer that would be refused again on its own: it claims a fault of a
        family whose verdicts all found none, blames the appliance, gives the share of another
        filesystem than the one holding the place asked about, denies something at a port the
        question never named, states a share no observation shows, or names a path none shows."""
        evidence = self.memory.evidence
        return (unobserved_path(text, "\n".join(self.memory.bodies).lower()) is not None
                or check_agreement(text, {}, evidence.findings, ()) is not None
                or names_self(text, {}, self.self_pids, (), self.memory.bodies) is not None
                or wrong_place(text, {}, evidence.places, evidence.findings) is not None
                or unasked_port(text, evidence.answerable_ports(self.question)) is not None
                or share_misfit(text, self.question.text, self.memory.bodies, evidence.findings) is not None)

    def _stale_fields(self, answer: str, result: Mapping[str, Any]) -> tuple[str, ...]:
        """A retry steered to "No problem found: <verdict>" rests on that verdict; the result
        fields it carries are the refused answer's, written before the refusal (its culprit, the
        share of another place), and go."""
        steered_clear = bool(self.ctl.openings) and all(o.startswith(NO_PROBLEM) for o in self.ctl.openings)
        return tuple(result) if steered_clear and answer.startswith(NO_PROBLEM) else ()

    def _judge(self, answer: str, result: Mapping[str, Any]) -> Verdict:
        """The answer judged against the run so far."""
        m = self.memory
        ctx = AnswerContext(
            question=self.question, evidence=m.evidence, bodies=m.bodies, log_bodies=self._log_bodies(),
            self_pids=self.self_pids, tools_worked=self.ctl.tools_worked,
            looked=self.ctl.looked or self.ctl.finish_early, copy_guard=m.copy_guard,
            rejected=m.rejected_answers)
        return judge_answer(answer, result, ctx)

    def steer_last(self) -> Steer:
        """What a finish-only step must begin with, when no refusal settled it (`steering.steer_last`)."""
        return steer_last(self.question, self.memory.evidence, self.memory.bodies,
                          log_errors=log_error_lines(self._log_bodies()))

    def _steer(self, misfit: Misfit, answer: str, result: Mapping[str, Any]) -> Steer:
        """What the retry of a refused answer must name and begin with."""
        return steer(misfit, self.question, self.memory.evidence, self.memory.bodies,
                     log_errors=log_error_lines(self._log_bodies()), answer=answer, result=result)

    def _log_bodies(self) -> list[str]:
        """The observations that read a log the question is about (a why answer quotes their cause)."""
        q = self.question
        if not (q.paths or q.failure or q.resource is Resource.LOGS or q.asks is Asks.LOG_CAUSE):
            return []
        return list(self.memory.log_bodies)

    def _accept(self, step: int, parsed: Step, result: Mapping[str, Any], stats: GenerationStats,
                evaluation: str, *, forced: bool) -> Iterator[ev.Event]:
        data = parsed.action_input
        result = {k: v for k, v in dict(result).items() if v not in (None, "")}
        answer = ev.FinalAnswer(self.run_id, step, str(data.get("answer", "")).strip(), result,
                                tuple(str(x) for x in data.get("evidence") or ()), forced=forced)
        self.answer = answer
        yield answer
        text = wrap(FINISH, OK, answer.answer)
        yield ev.StepRecorded(
            run_id=self.run_id, step=step, at=time.time(), thought=parsed.thought, action=FINISH,
            action_input=dict(data), observation_status=OK, observation=text,
            observation_summary=summarize(answer.answer), reflection=None,
            evaluation=evaluation + (" (forced: no new information)" if forced else ""), stats=stats,
            steered=bool(self.ctl.openings),
        )

    def _replace_invented(self, step: int, parsed: Step, stats: GenerationStats, misfit: Misfit) -> Iterator[ev.Event]:
        """A final answer that still names facts no observation shows, after its one more step, is
        not passed on: the engine answers from the evidence instead, marked forced."""
        yield from self.forced_from_evidence("the model's answer did not match what this machine shows", step)
        problem = misfit.reason
        yield ev.StepRecorded(
            run_id=self.run_id, step=step, at=time.time(), thought=parsed.thought, action=FINISH,
            action_input=dict(parsed.action_input), observation_status="rejected",
            observation=wrap("answer_check", "rejected", problem), observation_summary=summarize(problem),
            reflection=None, evaluation=f"answer replaced by the evidence: {problem}", stats=stats,
        )

    def forced_from_evidence(self, reason: str, step: int) -> Iterator[ev.Event]:
        """A final answer made by the engine, without the model, from what the checks found; marked
        forced so nobody mistakes it for the model's conclusion (agent/answer/assemble.py)."""
        assembled = assemble(self.question, self.memory.evidence, reason, self.memory.read)
        self.answer = ev.FinalAnswer(self.run_id, step, assembled.text, assembled.result, assembled.evidence,
                                     forced=True)
        yield self.answer
