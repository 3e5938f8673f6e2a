"""The ReAct loop: a generator of events that drives a small model to an answer backed by evidence.

Why a generator of plain events: the CLI, the TUI and the store consume the same stream, the engine
never prints or imports a UI, and every recoverable problem (unknown tool, bad arguments, a tool
crash or timeout, a rejected answer) is an event the model reads as an observation, not an
exception. Only three things end a run early: cancel, a budget, and a model failure; each still
ends with `RunEnded`, always the last event.

Why the loop control: small models fail in known ways (docs/engine.md, "Helping small models"):
they repeat one call, and they find the culprit and then wander. So: the grammar allows only valid calls,
repeats are answered from memory with a note (and force a reflection when they persist), steps
without new information force a final answer, the model always sees its remaining budget, the last
step may only finish, and a final answer must mention what the observations showed.

This module keeps the loop and the step; its parts live beside it: the model call and the budgets
(`model_call`), the transcript and its compaction (`transcript`), step 0 (`first_step`), a tool call
(`tool_call`), the finish path (`finishing`), what the run has seen (`run_memory`), an action's
outcome (`outcome`) and the system prompt's warm-up beside step 0 (`warm_beside`).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from dataclasses import replace
from typing import Any, Callable, Generator, Iterator

from appliance import __version__
from appliance.agent import events as ev
from appliance.agent.actions import (ASK_USER, FINISH, Reflection, Step, StepError, parse_reflection, parse_step,
                                     reflection_schema, reply_budget, step_schema)
from appliance.agent.question.classify import read_by_model
from appliance.agent.question.question import Question, read_question
from appliance.agent.control import LoopControl
from appliance.agent.evidence import EvidenceSource, MachineEvidence, NoEvidence
from appliance.agent.facts import FactBook
from appliance.agent.finishing import Finisher
from appliance.agent.first_step import FirstEvidence, Snapshot
from appliance.agent.model_call import ModelCaller
from appliance.agent.observe import redact, render_result, summarize
from appliance.agent.outcome import Outcome, add_stats
from appliance.agent.prompt import (after_reflection_message, QUESTION_LINE, question_message, snapshot_covers,
                                    suggested_tools, system_prompt)
from appliance.agent.run_memory import RunMemory
from appliance.agent.settings import EngineSettings
from appliance.agent.snapshot import take_snapshot
from appliance.agent.stops import ModelFailed, RunStop
from appliance.agent.tool_call import ToolCaller
from appliance.agent.transcript import Transcript
from appliance.agent.warm_beside import WarmBeside
from appliance.errors import one_line
from appliance.llm.base import ChatModel, Generation, GenerationStats, Message
from appliance.tools.base import DENIED, EMPTY, INVALID, OK, Registry

Ask = Callable[[str], "str | None"]


class Engine:
    """Runs questions against one model and one tool registry with fixed settings.

    self_pids: the appliance's own processes (labelled in the snapshot and in tool data).
    snapshot: the function that takes the first snapshot (tests pass a fixed one).
    evidence: the analyzers' verdicts and the looks at named places before the first step
        (default: this machine's, unless a fixed snapshot is given).
    """

    def __init__(
        self,
        model: ChatModel,
        registry: Registry,
        settings: EngineSettings | None = None,
        *,
        self_pids: frozenset[int] | None = None,
        snapshot: Snapshot | None = None,
        evidence: EvidenceSource | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model = model
        self.registry = registry
        self.settings = settings or EngineSettings()
        self.self_pids = frozenset({os.getpid()}) if self_pids is None else frozenset(self_pids)
        # A test that fixes the snapshot gets no analyzers unless it asks: its loop must not depend
        # on this machine's state.
        self.evidence = evidence or (NoEvidence() if snapshot else MachineEvidence(registry))
        self.snapshot = snapshot or (lambda pids: take_snapshot(pids))
        self.clock = clock

    def warm(self, *, should_stop: Callable[[], bool] | None = None,
             on_progress: Callable[[int, int, float], None] | None = None) -> Any:
        """Bring the system prompt a run would use into the model's context ahead of a question
        (the TUI does it as soon as it opens). The model's report, or None for a model without
        `warm` (the ChatModel protocol's optional method)."""
        warm = getattr(self.model, "warm", None)
        if warm is None:
            return None
        return warm([self._system_message()], should_stop=should_stop, on_progress=on_progress)

    def read_ahead(self, question: str, *, should_stop: Callable[[], bool] | None = None,
                   outdated: Callable[[], bool] | None = None) -> Any:
        """Evaluate now the part of `question`'s first prompt that comes before the question line
        (the system prompt and the first step's evidence), from a machine check already begun
        (`MachineEvidence.prefetch`) and left for the run; the run then evaluates little more
        than its question. The TUI does it while the person types. The model's report, or None
        when there is nothing to read ahead (no check begun, no model support, the model busy).
        `outdated` (the draft now asks for other evidence) stops it between chunks only."""
        read = getattr(self.model, "read_ahead", None)
        if read is None:
            return None
        evidence = self.first_evidence().preview(redact(question))
        if evidence is None:
            return None
        message = question_message(question, evidence, self.settings.max_steps)
        return read([self._system_message(), Message("user", message)], upto=QUESTION_LINE,
                    should_stop=should_stop, outdated=outdated)

    def first_evidence(self) -> FirstEvidence:
        """Step 0's gatherer over this engine's tools, evidence source and snapshot."""
        return FirstEvidence(self.settings, self.registry, self.evidence, self.snapshot, self.self_pids)

    def _system_message(self) -> Message:
        """The system prompt every run starts with, whoever asks (whether the person can be asked
        is said in the question message)."""
        return Message("system", system_prompt(self.registry.specs, self.settings))

    def read_ahead_key(self, question: str) -> Any:
        """What in `question` decides the text `read_ahead` evaluates (None: not known): a front
        end stops a read-ahead whose draft's key changed, and reads the new draft instead."""
        key = getattr(self.evidence, "question_key", None)
        return key(redact(question)) if key is not None else None

    def run(
        self,
        question: str,
        *,
        ask: Ask | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[ev.Event]:
        """Yield the events of one run; the last is always `RunEnded`."""
        return _Run(self, question, ask, cancel or threading.Event()).events()


class _Run:
    """The state of one run (one question)."""

    def __init__(self, engine: Engine, question: str, ask: Ask | None, cancel: threading.Event) -> None:
        self.e = engine
        self.s = engine.settings
        self.model = engine.model
        self.registry = engine.registry
        self.question = redact(question)  # a secret typed in the question reaches neither the model nor the store
        self.q: Question = read_question(self.question, getattr(engine.evidence, "analyzers", None))
        self.ask = ask
        self.can_ask = ask is not None and self.s.allow_ask
        self.cancel = cancel
        self.run_id = uuid.uuid4().hex
        self.started = engine.clock()
        self.caller = ModelCaller(self.model, self.s, self.run_id, cancel, engine.clock, self.started)
        self.transcript = Transcript(self.model, self.s.compact_at)
        self.memory = RunMemory(facts=FactBook(engine.self_pids))
        self.tool_seconds = 0.0
        self.steps = 0
        self.ctl = LoopControl(self.s, can_ask=self.can_ask,
                               finish_early=snapshot_covers(self.q))  # the snapshot may answer it
        self.finisher = Finisher(self.run_id, self.q, self.s, self.ctl, self.memory, engine.self_pids)
        self.tools = ToolCaller(self.registry, self.s, self.ctl, self.memory, engine.self_pids, engine.clock, cancel)
        self.finisher.run_tool, self.finisher.specs = self.tools.act, self.registry.specs  # recovery by a tool
        self.first = engine.first_evidence()
        self.warming: WarmBeside | None = None

    def events(self) -> Iterator[ev.Event]:
        yield ev.RunStarted(
            run_id=self.run_id,
            question=self.question,
            model=self.model.info,
            settings=self.s.as_dict(),
            started_at=time.time(),
            version=__version__,
        )
        status, error = ev.FINISHED, ""
        try:
            yield from self._accounted(self._loop())
            if self.finisher.answer is None:
                status = ev.MAX_STEPS
                yield from self.finisher.forced_from_evidence(f"the step limit of {self.s.max_steps} was reached",
                                                              self.steps)
        except RunStop as stop:
            status, error = stop.status, stop.reason
            if stop.status == ev.BUDGET:
                yield from self.finisher.forced_from_evidence(stop.reason, self.steps)
        except ModelFailed as exc:
            status, error = ev.ERROR, str(exc)
        except Exception as exc:  # a bug must still end the run visibly, with one line
            status, error = ev.ERROR, one_line(exc)
        if self.warming is not None:
            self.caller.count_warm(*self.warming.end())
        yield self._ended(status, error)

    def _ended(self, status: str, error: str) -> ev.RunEnded:
        answer, c = self.finisher.answer, self.caller
        return ev.RunEnded(
            run_id=self.run_id,
            status=status,
            answer=answer.answer if answer else "",
            result=dict(answer.result) if answer else {},
            error=error,
            steps=self.steps,
            prompt_tokens=c.prompt_tokens,
            prompt_tokens_reused=c.prompt_reused,
            completion_tokens=c.completion_tokens,
            seconds=round(self.e.clock() - self.started, 3),
            ended_at=time.time(),
            timing=self._timing(),
            runtime=self._runtime(),
        )

    def _accounted(self, events: Iterator[ev.Event]) -> Iterator[ev.Event]:
        """The events, with the tools' time added up on the engine's clock (like `total`, so a
        test's fixed clock fixes it too): from an action chosen (or the start, for the snapshot)
        to its observation."""
        mark = self.e.clock()
        for event in events:
            if isinstance(event, ev.ActionChosen):
                mark = self.e.clock()
            elif isinstance(event, ev.ObservationMade):
                self.tool_seconds += max(0.0, self.e.clock() - mark)
            yield event

    def _timing(self) -> dict[str, float]:
        """Where the run's seconds went; `engine` is the rest (prompt building, checks, the store's
        commits between steps, the consumer), and model_load the load this run waited for."""
        total = self.e.clock() - self.started
        parts = {"prompt": self.caller.prompt_seconds, "generation": self.caller.generation_seconds,
                 "tools": self.tool_seconds}
        take_load = getattr(self.model, "take_load_seconds", None)
        timing = {"model_load": float(take_load()) if take_load is not None else 0.0, **parts,
                  "engine": max(0.0, total - sum(parts.values())), "total": total}
        if self.caller.first_token is not None:
            timing["first_token"] = self.caller.first_token
        return {name: round(value, 3) for name, value in timing.items()}

    def _runtime(self) -> dict[str, Any]:
        """The model's report of how it ran (llama.cpp settings, the system prompt's arrival)."""
        report = getattr(self.model, "runtime_report", None)
        try:
            return dict(report()) if report is not None else {}
        except Exception as exc:  # a report is a help, never a reason to fail the run
            return {"error": one_line(exc)}

    def _loop(self) -> Iterator[ev.Event]:
        """The system prompt, step 0, the question, then the steps until a final answer or the limit."""
        specs = self.registry.specs
        begin_run = getattr(self.model, "begin_run", None)  # optional in the ChatModel protocol
        if begin_run is not None:
            begin_run()
        # The system prompt never depends on the question, so a model kept loaded between runs (the TUI,
        # `appliance eval`) reuses it from the KV cache; the tools that fit this question are named in
        # the question message instead.
        system = self.e._system_message()
        self.transcript.add("system", system.content)
        if self.s.question_reader == "model":
            yield from self._read_question(system)  # brings the system prompt into the context too
        else:
            self.warming = WarmBeside(self.model, system, self.caller.out_of_time)
        first_text = yield from self.first.gather(self.run_id, self.q, self.memory)
        evidence = self.memory.evidence
        if evidence.topics or evidence.looks or evidence.measured:
            self.ctl.finish_early = True  # the verdicts of its topic, a look or a reading may answer it
        suggested = suggested_tools(self.q, specs, families=evidence.topics)
        self.transcript.add("user", question_message(self.question, first_text, self.s.max_steps,
                                                     suggested, snapshot_answers=self.ctl.finish_early,
                                                     can_ask=self.can_ask))
        for step in range(1, self.s.max_steps + 1):
            self.steps = step
            self.caller.check_limits()
            yield ev.StepStarted(self.run_id, step, self.s.max_steps, time.time())
            done = yield from self._step(step)
            if done:
                return

    def _read_question(self, system: Message) -> Generator[ev.Event, None, None]:
        """The model labels the question where the words left it open, the check going on beside."""
        prefetch = getattr(self.e.evidence, "prefetch_once", None)
        if prefetch is not None:
            prefetch(self.e.self_pids)
        self.q = yield from read_by_model(self.q, self.caller, system, getattr(self.e.evidence, "families", ()))
        self.finisher.question = self.q
        self.ctl.finish_early = snapshot_covers(self.q)

    # ---- one step -------------------------------------------------------------------------------

    def _generate(self, step: int, schema: dict, max_tokens: int, kind: str,
                  temperature: float | None = None) -> Generator[ev.Event, None, Generation]:
        """One model call on the transcript, made to fit the context first."""
        self.transcript.fit(max_tokens)
        return (yield from self.caller.generate(step, self.transcript.messages, schema, max_tokens, kind, temperature))

    def _step(self, step: int) -> Generator[ev.Event, None, bool]:
        """One step: the model's reply, its action, the observation, maybe a reflection. True when
        the run has its final answer."""
        grammar = self.ctl.grammar(step)
        schema = step_schema(self.registry.specs, self.s, tools=grammar.tools, ask=grammar.ask,
                             finish=grammar.finish, exclude=grammar.exclude, choices=self.finisher.choices(step))
        heat = self.s.retry_temperature if self.ctl.samples(step) else None
        gen = yield from self._generate(step, schema, reply_budget(schema, self.s.max_tokens), "step", heat)
        self.transcript.add("assistant", gen.text)
        try:
            parsed = parse_step(gen.text)
        except StepError as exc:
            outcome = Outcome(INVALID, f"error: {exc}. Reply with one JSON object in the output format.",
                              "step", evaluation=f"unparsable step: {exc}", unparsable=True)
            yield from self._observed(step, None, {}, outcome, gen.stats)
            return False
        action, action_input = parsed.action, dict(parsed.action_input)
        yield ev.ThoughtMade(self.run_id, step, parsed.thought)
        yield ev.ActionChosen(self.run_id, step, action, action_input)
        if action == FINISH:
            sent_back = yield from self.finisher.finish(step, parsed, gen.stats)
            if sent_back is None:
                return True
            outcome = sent_back
        elif action == ASK_USER:
            outcome = yield from self._ask_user(step, parsed)
        else:
            outcome = self.tools.act(step, action, action_input)
        yield from self._observed(step, parsed, action_input, outcome, gen.stats)
        return False

    def _observed(self, step: int, parsed: Step | None, action_input: dict, outcome: Outcome,
                  stats: GenerationStats) -> Iterator[ev.Event]:
        """The end of a step: its observation, the loop control's verdict on it, a reflection when
        that asks for one (else the observation goes to the model as it is), and the step's record."""
        action = parsed.action if parsed else ""
        yield ev.ObservationMade(self.run_id, step, action or "step", outcome.status, outcome.text,
                                 summarize(outcome.body), outcome.tool_ms, outcome.cached)
        after = self.ctl.observed(step, action=action, status=outcome.status, new_info=outcome.new_info,
                                  repeats=outcome.repeats, is_tool=bool(parsed) and action not in (FINISH, ASK_USER))
        notes = list(outcome.notes) + list(after.notes)
        steps_left = self.ctl.steps_left(step)
        reflection = None
        if after.trigger:
            reflection, rstats = yield from self._reflect(step, outcome, notes, steps_left, after.trigger)
            stats = add_stats(stats, rstats)
            self.ctl.reflected(reflection.should_continue)
        else:
            self.transcript.add_observation(outcome, notes, steps_left)
        yield ev.StepRecorded(
            run_id=self.run_id, step=step, at=time.time(), thought=parsed.thought if parsed else "", action=action,
            action_input=action_input, observation_status=outcome.status, observation=outcome.text,
            observation_summary=summarize(outcome.body),
            reflection=reflection.as_dict() | {"trigger": after.trigger} if reflection else None,
            evaluation=outcome.evaluation, stats=stats, tool_ms=outcome.tool_ms, repeat_of=outcome.repeat_of,
            unparsable=outcome.unparsable,
        )

    def _ask_user(self, step: int, parsed: Step) -> Generator[ev.Event, None, Outcome]:
        """The model's question to the person (through `ask`), the reply an observation; refused
        when nobody can answer, so the model goes back to the tools."""
        question = str(parsed.action_input.get("question", "")).strip()
        ask = self.ask if self.can_ask else None
        if ask is None:
            return Outcome(DENIED, "Nobody can answer questions in this run. Do not ask again; use the tools "
                           "and finish.", ASK_USER, evaluation="ask_user refused: nobody can answer")
        yield ev.AskedUser(self.run_id, step, question)
        try:
            reply = ask(question)
        except Exception:
            reply = None
        if self.cancel.is_set():
            raise RunStop(ev.CANCELLED, "cancelled while waiting for the person")
        yield ev.UserReplied(self.run_id, step, reply)
        if reply is None or not str(reply).strip():
            return Outcome(EMPTY, "The person gave no answer. Continue with the tools.", ASK_USER,
                           evaluation="the person did not answer")
        self.ctl.looked = True
        status, body = render_result({"status": OK, "data": str(reply), "error": None},
                                     self.s.observation_token_budget)
        new_info = self.memory.remember_body(step, "person", body)
        body = self.memory.facts.number_body("person", body, status)
        return Outcome(status, body, "person", new_info=new_info, evaluation="the person answered")

    def _reflect(self, step: int, outcome: Outcome, notes: list[str], steps_left: int,
                 trigger: str) -> Generator[ev.Event, None, tuple[Reflection, GenerationStats]]:
        """A short grammar-constrained judgement whose plan the next step is told to follow."""
        self.transcript.add_observation(outcome, notes, steps_left, reflect=trigger)
        schema = reflection_schema(self.s)
        gen = yield from self._generate(step, schema, reply_budget(schema, self.s.reflection_max_tokens), "reflection")
        self.transcript.add("assistant", gen.text)
        try:
            reflection = parse_reflection(gen.text)
        except StepError:
            reflection = Reflection(True, "the reflection was not valid JSON", "")
        plan = reflection.next_plan.strip() or "choose a different tool, or finish if the evidence is enough"
        reflection = replace(reflection, next_plan=plan)
        yield ev.Reflected(self.run_id, step, trigger, reflection.should_continue, reflection.reason, plan)
        self.transcript.add("user", after_reflection_message(
            should_continue=reflection.should_continue or not self.ctl.tools_worked, plan=plan, steps_left=steps_left))
        return reflection, gen.stats
