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
"""

from __future__ import annotations

import os
import queue
import re
import threading
import time
import uuid
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable, Iterator, Mapping

from appliance import __version__
from appliance.agent import events as ev
from appliance.agent.actions import (
    ASK_USER,
    FINISH,
    Reflection,
    Step,
    StepError,
    check_reserved,
    parse_reflection,
    parse_step,
    reflection_schema,
    reply_budget,
    step_schema,
)
from appliance.agent.calls import CachedObservation, CallLog, call_key
from appliance.agent.answer_fit import log_error_lines
from appliance.agent.checks import Verdict, normalized
from appliance.agent.judge import AnswerContext, judge_answer
from appliance.agent.steering import Steer, steer
from appliance.agent.control import LoopControl
from appliance.agent.evidence import Evidence, EvidenceSource, MachineEvidence, NoEvidence, finding_fields, findings_text
from appliance.agent.observe import clean, redact, render_result, summarize, wrap
from appliance.agent.prompt import (
    EXAMPLE_TEXTS,
    after_reflection_message,
    finish_nudge,
    repeat_note,
    observation_message,
    question_message,
    snapshot_covers,
    suggested_tools,
    system_prompt,
)
from appliance.agent.settings import EngineSettings
from appliance.agent.snapshot import take_snapshot
from appliance.errors import one_line
from appliance.llm.base import ChatModel, Generation, GenerationStats, Message
from appliance.tools.base import DENIED, EMPTY, ERROR, INVALID, OK, PARTIAL, Registry
from appliance.tools.procs import label_records

Ask = Callable[[str], "str | None"]
Snapshot = Callable[[frozenset], Mapping[str, Any]]

REPEAT = "repeat"
_ABOUT_LOGS = re.compile(r"\blogs?\b|\.log\b|/|\berror|\bfail|\bcrash|\bwrong|\bbroken|can'?t|cannot|won'?t|doesn'?t", re.I)


def rejection_message(problem: str, evidence: list[str] | None = None, openings: tuple[str, ...] = ()) -> str:
    """What the model reads when its finish is sent back: a label and an instruction, never a
    sentence that reads like an answer (SmolLM2 answered with the earlier prose reason, word for
    word); an answer that copies it is refused anyway. The evidence gathered so far comes last,
    because small models copy the last lines they read (Qwen 0.5B copied the message itself)."""
    text = (f"answer_check: finish sent back {problem}. Next: finish again with a new answer in your own "
            "words that names a process, path, number or error line copied from an observation, or use a tool.")
    lines = [line for line in (evidence or []) if not line.startswith("step 0 ")][-3:] or (evidence or [])[-2:]
    if lines:
        text += "\nWhat the observations showed:\n" + "\n".join(lines)
    if openings:
        text += "\nThe new answer begins with " + " or ".join(repr(o) for o in openings) + "."
    return text


# Where a rejection label starts quoting the machine (a verdict, a log line, a ranked entry):
# an answer may repeat those words, only the engine's own must not be copied.
_QUOTED = re.compile(r"(?:\[(?:ok|warning|critical|unknown)\] \w+:|the log shows:|ranks first:|the question is about)"
                     r".*$")


def own_words(problem: str) -> str:
    """A rejection label without what it quotes from the machine."""
    return _QUOTED.sub("", problem)


class _Stop(Exception):
    """Ends the loop early with a run status (cancelled, budget) and a reason."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class _ModelFailed(Exception):
    pass


def add_stats(a: GenerationStats, b: GenerationStats) -> GenerationStats:
    """Two model calls of one step (the action and its reflection) as one record."""
    values = {}
    for f in fields(GenerationStats):
        x, y = getattr(a, f.name), getattr(b, f.name)
        values[f.name] = (x if y is None else y) if f.name.startswith("threads") else x + y
    return GenerationStats(**values)


_ERROR_LINE = re.compile(r"\b(ERROR|FATAL|CRITICAL|PANIC)\b")


def split_headline(result: Any) -> tuple[Any, str | None]:
    """A ranked tool's one-line answer (`data["headline"]`) taken out of its data, so the engine
    shows it as the observation's first line, on its own, before the list it sums up."""
    if isinstance(result, dict) and isinstance(result.get("data"), dict) and "headline" in result["data"]:
        data = dict(result["data"])
        headline = str(data.pop("headline"))
        return dict(result, data=data), headline
    return result, None


def render_with_headline(result: Any, budget: int) -> tuple[str, str, bool]:
    """render_result with the headline (if any) as the first line: (status, body, has_headline)."""
    result, headline = split_headline(result)
    status, body = render_result(result, budget)
    if headline:
        body = f"headline: {clean(headline)}\n{body}"
    return status, body, headline is not None


@dataclass
class _Outcome:
    """What one action produced, before it becomes events."""

    status: str
    body: str
    source: str
    notes: list[str] = field(default_factory=list)
    tool_ms: float = 0.0
    cached: bool = False
    new_info: bool = False
    evaluation: str = ""
    repeats: int = 0

    @property
    def text(self) -> str:
        return wrap(self.source, self.status, self.body)


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

    def warm(self, *, can_ask: bool = True, should_stop: Callable[[], bool] | None = None,
             on_progress: Callable[[int, int, float], None] | None = None) -> Any:
        """Bring the system prompt a run would use into the model's context ahead of a question
        (the TUI does it as soon as it opens). The model's report, or None for a model without
        `warm` (the ChatModel protocol's optional method)."""
        warm = getattr(self.model, "warm", None)
        if warm is None:
            return None
        prompt = system_prompt(self.registry.specs, self.settings, can_ask=can_ask and self.settings.allow_ask)
        return warm([Message("system", prompt)], should_stop=should_stop, on_progress=on_progress)

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
        self.ask = ask
        self.can_ask = ask is not None and self.s.allow_ask
        self.cancel = cancel
        self.run_id = uuid.uuid4().hex
        self.started = engine.clock()
        self.deadline = self.started + self.s.time_budget_seconds
        self.messages: list[Message] = []
        self.compactable: dict[int, str] = {}  # message index -> its compact form
        self.calls = CallLog()
        self.bodies: list[str] = []  # observation bodies (for the answer check)
        self.evidence_log: list[str] = []  # "step N tool: summary" lines (for forced answers)
        self.evidence: Evidence = Evidence()  # the verdicts and looks before the first step
        self.log_bodies: list[str] = []  # observations that read a log
        self.prompt_tokens = 0
        self.prompt_reused = 0
        self.completion_tokens = 0
        self.prompt_seconds = 0.0  # model time, from each call's own measurement
        self.generation_seconds = 0.0
        self.tool_seconds = 0.0
        self.steps = 0
        self.ctl = LoopControl(self.s, can_ask=self.can_ask,
                               finish_early=snapshot_covers(question))  # the snapshot may answer it
        self.copy_guard: list[str] = list(EXAMPLE_TEXTS)  # texts an answer must not repeat
        self.rejected_answers: list[str] = []
        self.answer: ev.FinalAnswer | None = None

    # ---- events -------------------------------------------------------------------------------

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
            if self.answer is None:
                status = ev.MAX_STEPS
                yield from self._forced_from_evidence(f"the step limit of {self.s.max_steps} was reached")
        except _Stop as stop:
            status, error = stop.status, stop.reason
            if stop.status == ev.BUDGET:
                yield from self._forced_from_evidence(stop.reason)
        except _ModelFailed as exc:
            status, error = ev.ERROR, str(exc)
        except Exception as exc:  # a bug must still end the run visibly, with one line
            status, error = ev.ERROR, one_line(exc)
        answer = self.answer
        yield ev.RunEnded(
            run_id=self.run_id,
            status=status,
            answer=answer.answer if answer else "",
            result=dict(answer.result) if answer else {},
            error=error,
            steps=self.steps,
            prompt_tokens=self.prompt_tokens,
            prompt_tokens_reused=self.prompt_reused,
            completion_tokens=self.completion_tokens,
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
        parts = {"prompt": self.prompt_seconds, "generation": self.generation_seconds, "tools": self.tool_seconds}
        take_load = getattr(self.model, "take_load_seconds", None)
        timing = {"model_load": float(take_load()) if take_load is not None else 0.0, **parts,
                  "engine": max(0.0, total - sum(parts.values())), "total": total}
        return {name: round(value, 3) for name, value in timing.items()}

    def _runtime(self) -> dict[str, Any]:
        report = getattr(self.model, "runtime_report", None)
        try:
            return dict(report()) if report is not None else {}
        except Exception as exc:  # a report is a help, never a reason to fail the run
            return {"error": one_line(exc)}

    def _loop(self) -> Iterator[ev.Event]:
        specs = self.registry.specs
        begin_run = getattr(self.model, "begin_run", None)  # optional in the ChatModel protocol
        if begin_run is not None:
            begin_run()
        # The system prompt never depends on the question, so a model kept loaded between runs (the TUI,
        # `appliance eval`) reuses it from the KV cache; the tools that fit this question are named in
        # the question message instead.
        self.messages.append(Message("system", system_prompt(specs, self.s, can_ask=self.can_ask)))
        first_text = yield from self._first_evidence()
        if self.evidence.topics or self.evidence.looks:
            self.ctl.finish_early = True  # the verdicts of its topic or the look may answer it
        suggested = suggested_tools(self.question, specs, families=self.evidence.topics)
        self.messages.append(Message("user", question_message(self.question, first_text, self.s.max_steps,
                                                              suggested, snapshot_answers=self.ctl.finish_early)))
        for step in range(1, self.s.max_steps + 1):
            self.steps = step
            self._check_limits()
            yield ev.StepStarted(self.run_id, step, self.s.max_steps, time.time())
            done = yield from self._step(step)
            if done:
                return

    def _step(self, step: int) -> Iterator[ev.Event]:
        """One step: the model's reply, its action, the observation, maybe a reflection. True when
        the run has its final answer."""
        grammar = self.ctl.grammar(step)
        schema = step_schema(self.registry.specs, self.s, tools=grammar.tools, ask=grammar.ask,
                             finish=grammar.finish, exclude=grammar.exclude, culprits=grammar.culprits,
                             openings=grammar.openings)
        gen = yield from self._generate(step, schema, reply_budget(schema, self.s.max_tokens), "step")
        stats = gen.stats
        self.messages.append(Message("assistant", gen.text))
        try:
            parsed: Step | None = parse_step(gen.text)
        except StepError as exc:
            parsed = None
            outcome = _Outcome(INVALID, f"error: {exc}. Reply with one JSON object in the output format.",
                               "step", evaluation=f"unparsable step: {exc}")
        thought = parsed.thought if parsed else ""
        action = parsed.action if parsed else ""
        action_input = dict(parsed.action_input) if parsed else {}
        if parsed:
            yield ev.ThoughtMade(self.run_id, step, thought)
            yield ev.ActionChosen(self.run_id, step, action, action_input)
        if parsed and action == FINISH:
            outcome = yield from self._finish(step, parsed, stats)
            if outcome is None:
                return True
        elif parsed and action == ASK_USER:
            outcome = yield from self._ask_user(step, parsed)
        elif parsed:
            outcome = self._act(step, action, action_input)
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
            self._append_observation(outcome, notes, steps_left)
        yield ev.StepRecorded(
            run_id=self.run_id, step=step, at=time.time(), thought=thought, action=action,
            action_input=action_input, observation_status=outcome.status, observation=outcome.text,
            observation_summary=summarize(outcome.body),
            reflection=reflection.as_dict() | {"trigger": after.trigger} if reflection else None,
            evaluation=outcome.evaluation, stats=stats, tool_ms=outcome.tool_ms,
        )
        return False

    def _finish(self, step: int, parsed: Step, stats: GenerationStats) -> Iterator[ev.Event]:
        """Judge a finish: None when the run ended (accepted, or replaced by the engine's own
        answer), else the outcome that sends it back to the model."""
        problem = check_reserved(parsed, self.s)
        if problem is not None:
            return _Outcome(INVALID, f"error: {problem}", FINISH, evaluation=f"invalid finish: {problem}")
        action_input = parsed.action_input
        verdict = self._judge(str(action_input.get("answer", "")), action_input.get("result") or {})
        problem = verdict.problem
        may_retry = self.ctl.may_retry(step)
        if problem is not None and not may_retry and (verdict.invented or verdict.copied):
            yield from self._replace_invented(step, parsed, stats, problem)
            return None
        if problem is None or not may_retry:
            evaluation = "answer accepted" if problem is None else f"answer accepted unchecked: {problem}"
            if self.ctl.openings:
                evaluation += f" (steered: it had to begin with one of {list(self.ctl.openings)})"
            if verdict.dropped:
                evaluation += (" (dropped result fields that are unbacked or contradict the answer: "
                               f"{', '.join(verdict.dropped)})")
            yield from self._accept(step, parsed, verdict.result, stats, evaluation, forced=self.ctl.forced)
            return None
        steering = self._steer(problem, str(action_input.get("answer", "")), action_input.get("result") or {})
        self.ctl.rejected(steering.culprits, steering.openings)
        yield ev.AnswerRejected(self.run_id, step, problem)
        message = rejection_message(problem, self.evidence_lines(), steering.openings)
        self.rejected_answers.append(normalized(str(action_input.get("answer", ""))))
        self.copy_guard.append(rejection_message(own_words(problem)))  # its words, not the evidence it quotes
        return _Outcome("rejected", message, "answer_check", evaluation=f"answer rejected: {problem}")

    def _judge(self, answer: str, result: Mapping[str, Any]) -> Verdict:
        """The answer judged against the run so far. A misfit is never passed on as is: after its
        one more step it is replaced by the engine's own answer (marked forced)."""
        ctx = AnswerContext(
            question=self.question, evidence=self.evidence, bodies=self.bodies, log_bodies=self._log_bodies(),
            self_pids=self.e.self_pids, tools_worked=self.ctl.tools_worked,
            looked=self.ctl.looked or self.ctl.finish_early, copy_guard=self.copy_guard,
            rejected=self.rejected_answers)
        return judge_answer(answer, result, ctx)

    def _steer(self, problem: str, answer: str, result: Mapping[str, Any]) -> Steer:
        """What the retry of a refused answer must name and begin with."""
        return steer(problem, self.question, self.evidence, self.bodies,
                     log_errors=log_error_lines(self._log_bodies()), answer=answer, result=result)

    def _log_bodies(self) -> list[str]:
        """The observations that read a log the question is about (a why answer quotes their cause)."""
        if not _ABOUT_LOGS.search(self.question):
            return []
        return list(self.log_bodies)

    def evidence_lines(self) -> list[str]:
        """The problem verdicts first, then what the steps showed: what a rejection quotes."""
        problems = [f.line() for f in self.evidence.shown() if f.is_problem and f.family in self.evidence.topics]
        return problems[:2] + self.evidence_log

    # ---- the parts of a step --------------------------------------------------------------------

    def _first_evidence(self) -> Iterator[ev.Event]:
        """Step 0: the machine snapshot, the analyzers' verdicts and a look at every place the
        question names, as observations before the model's first step (one recorded step)."""
        if not self.s.snapshot:
            return None
        started = time.perf_counter()
        parts = []
        try:
            self.evidence = self.e.evidence.gather(self.question, self.e.self_pids)
        except Exception as exc:  # evidence is a help, never a reason to fail the run
            parts.append((ERROR, "check", f"error: the check failed: {one_line(exc)}"))
        shown = self.evidence.shown()
        if not self.evidence.findings:
            # The verdicts carry what the snapshot shows (load, the busiest and biggest processes,
            # the fullest filesystem) and judge it; the snapshot is given only without them.
            parts.insert(0, self._snapshot_part())
        if shown:
            parts.append((OK, "check", findings_text(shown)))
        for look in self.evidence.looks:
            result = look.result
            if isinstance(result, dict) and "data" in result:
                result = dict(result, data=label_records(result["data"], self.e.self_pids))
            status, body, _ = render_with_headline(result, self.s.observation_token_budget)
            parts.append((status, look.tool, body))
            if self._reads_log(look.tool):
                self.log_bodies.append(body)
        tool_ms = (time.perf_counter() - started) * 1000
        texts = []
        for status, source, body in parts:
            self._remember_body(0, source, status, body)
            texts.append(wrap(source, status, body))
        text = "\n".join(texts)
        status = parts[0][0]
        summary = summarize(" | ".join(body for _, _, body in parts[1:]) or parts[0][2])
        yield ev.ObservationMade(self.run_id, 0, "snapshot", status, text, summary, tool_ms, False)
        yield ev.StepRecorded(
            run_id=self.run_id, step=0, at=time.time(), thought="", action="snapshot", action_input={},
            observation_status=status, observation=text, observation_summary=summary, reflection=None,
            evaluation="machine snapshot, check verdicts and named places given before the first step",
            tool_ms=tool_ms,
        )
        return text

    def _snapshot_part(self) -> tuple[str, str, str]:
        try:
            data = label_records(dict(self.e.snapshot(self.e.self_pids)), self.e.self_pids)
            status, body, _ = render_with_headline({"status": OK, "data": data, "error": None},
                                                   self.s.observation_token_budget)
        except Exception as exc:  # a snapshot is a help, never a reason to fail the run
            status, body = ERROR, f"error: snapshot failed: {one_line(exc)}"
        return status, "snapshot", body

    def _act(self, step: int, action: str, action_input: dict) -> _Outcome:
        """Run one tool call (or answer it from the run's memory) and describe what it showed."""
        refused = self.registry.check(action, action_input)
        if refused is not None:
            status, body = render_result(refused, self.s.observation_token_budget)
            return _Outcome(status, body, action, evaluation=f"invalid call: {refused['error']}")
        self.ctl.looked = True
        key = call_key(action, action_input)
        count = self.calls.note_call(key)
        previous = self.calls.previous(key)
        spec = self.registry.get(action)
        now = self.e.clock()
        cached = self.calls.fresh(key, spec.ttl if spec else 0, now)
        if cached is not None:
            note = repeat_note(cached.step)
            self.copy_guard.append(note)
            return _Outcome(REPEAT, cached.body, action, [note], cached=True, repeats=count,
                            evaluation=f"repeat of step {cached.step} (answered from memory)")
        started = time.perf_counter()
        result = self._call_tool(action, action_input)
        tool_ms = (time.perf_counter() - started) * 1000
        if isinstance(result, dict) and "data" in result:
            result = dict(result, data=label_records(result["data"], self.e.self_pids))
        status, body, ranked = render_with_headline(result, self.s.observation_token_budget)
        if status in (OK, EMPTY, PARTIAL):
            self.ctl.tools_worked = True
        new_info = self._remember_body(step, action, status, body)
        self.calls.remember(key, CachedObservation(step, now, status, body, summarize(body)))
        if self._reads_log(action):
            self.log_bodies.append(body)
        notes = []
        evaluation = "new information" if new_info else "no new information"
        if previous is not None:
            new_info = False  # a fresh reading of a call already made is not progress
            evaluation = "no new information"
            notes.append(repeat_note(previous.step))
            evaluation = f"repeat of step {previous.step} (fresh reading, {evaluation})"
        elif status == OK and self._reads_log(action) and _ERROR_LINE.search(body):
            notes.append(finish_nudge("errors"))
        elif status == OK and ranked:
            notes.append(finish_nudge("ranked"))
        self.copy_guard.extend(notes)
        return _Outcome(status, body, action, notes, tool_ms=tool_ms, new_info=new_info,
                        evaluation=evaluation, repeats=count if previous is not None else 0)

    def _reads_log(self, tool: str) -> bool:
        spec = self.registry.get(tool)
        return spec is not None and spec.reads == "log"

    def _call_tool(self, action: str, action_input: dict) -> dict:
        """registry.call in a worker, so a cancel does not wait for a slow tool."""
        box: list[dict] = []
        worker = threading.Thread(target=lambda: box.append(self.registry.call(action, action_input)),
                                  name=f"engine-tool-{action}", daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.05)
            if self.cancel.is_set():
                raise _Stop(ev.CANCELLED, "cancelled while a tool was running")
        return box[0] if box else {"status": ERROR, "data": None, "error": "the tool returned nothing"}

    def _ask_user(self, step: int, parsed: Step) -> Iterator[ev.Event]:
        question = str(parsed.action_input.get("question", "")).strip()
        if not self.can_ask:
            return _Outcome(DENIED, "Nobody can answer questions in this run. Do not ask again; use the tools "
                            "and finish.", ASK_USER, evaluation="ask_user refused: nobody can answer")
        yield ev.AskedUser(self.run_id, step, question)
        try:
            reply = self.ask(question)  # type: ignore[misc]
        except Exception:
            reply = None
        if self.cancel.is_set():
            raise _Stop(ev.CANCELLED, "cancelled while waiting for the person")
        yield ev.UserReplied(self.run_id, step, reply)
        if reply is None or not str(reply).strip():
            return _Outcome(EMPTY, "The person gave no answer. Continue with the tools.", ASK_USER,
                            evaluation="the person did not answer")
        self.ctl.looked = True
        status, body = render_result({"status": OK, "data": str(reply), "error": None},
                                     self.s.observation_token_budget)
        new_info = self._remember_body(step, "person", status, body)
        return _Outcome(status, body, "person", new_info=new_info, evaluation="the person answered")

    def _reflect(self, step: int, outcome: _Outcome, notes: list[str], steps_left: int,
                 trigger: str) -> Iterator[ev.Event]:
        """A short grammar-constrained judgement whose plan the next step is told to follow."""
        self._append_user(observation_message(outcome.text, notes=notes, steps_left=steps_left, reflect=trigger),
                          outcome)
        schema = reflection_schema(self.s)
        gen = yield from self._generate(step, schema, reply_budget(schema, self.s.reflection_max_tokens), "reflection")
        self.messages.append(Message("assistant", gen.text))
        try:
            reflection = parse_reflection(gen.text)
        except StepError:
            reflection = Reflection(True, "the reflection was not valid JSON", "")
        plan = reflection.next_plan.strip() or "choose a different tool, or finish if the evidence is enough"
        reflection = replace(reflection, next_plan=plan)
        yield ev.Reflected(self.run_id, step, trigger, reflection.should_continue, reflection.reason, plan)
        self.messages.append(Message("user", after_reflection_message(
            should_continue=reflection.should_continue or not self.ctl.tools_worked, plan=plan, steps_left=steps_left)))
        return reflection, gen.stats

    def _accept(self, step: int, parsed: Step, result: Mapping[str, Any], stats: GenerationStats,
                evaluation: str, *, forced: bool) -> Iterator[ev.Event]:
        data = parsed.action_input
        result = {k: v for k, v in dict(result).items() if v not in (None, "")}
        self.answer = ev.FinalAnswer(self.run_id, step, str(data.get("answer", "")).strip(), result,
                                     tuple(str(x) for x in data.get("evidence") or ()), forced=forced)
        yield self.answer
        text = wrap(FINISH, OK, self.answer.answer)
        yield ev.StepRecorded(
            run_id=self.run_id, step=step, at=time.time(), thought=parsed.thought, action=FINISH,
            action_input=dict(data), observation_status=OK, observation=text,
            observation_summary=summarize(self.answer.answer), reflection=None,
            evaluation=evaluation + (" (forced: no new information)" if forced else ""), stats=stats,
        )

    def _replace_invented(self, step: int, parsed: Step, stats: GenerationStats, problem: str) -> Iterator[ev.Event]:
        """A final answer that still names facts no observation shows, after its one more step, is
        not passed on: the engine answers from the evidence instead, marked forced."""
        yield from self._forced_from_evidence(f"its answer did not hold after one more step: {problem}")
        yield ev.StepRecorded(
            run_id=self.run_id, step=step, at=time.time(), thought=parsed.thought, action=FINISH,
            action_input=dict(parsed.action_input), observation_status="rejected",
            observation=wrap("answer_check", "rejected", problem), observation_summary=summarize(problem),
            reflection=None, evaluation=f"answer replaced by the evidence: {problem}", stats=stats,
        )

    def _forced_from_evidence(self, reason: str) -> Iterator[ev.Event]:
        """A final answer made by the engine, without the model, from what the observations showed;
        marked forced so nobody mistakes it for the model's conclusion."""
        problems = [f for f in self.evidence.shown() if f.is_problem]
        lines = [f.line() for f in problems[:3]] + self.evidence_log[-5:]
        gathered = "; ".join(lines) or "nothing"
        answer = f"No final answer from the model ({reason}). What the checks and observations showed: {gathered}"
        result = finding_fields(problems[0]) if problems else {}
        self.answer = ev.FinalAnswer(self.run_id, self.steps, answer, result, tuple(lines[:5]), forced=True)
        yield self.answer

    # ---- the model call -------------------------------------------------------------------------

    def _generate(self, step: int, schema: dict, max_tokens: int, kind: str) -> Iterator[ev.Event]:
        """One model call, streamed as TextDelta events while it runs (in a worker thread, so the
        consumer sees tokens live), stopped between tokens by cancel or the time budget."""
        self._fit_context(max_tokens)
        pieces: queue.Queue = queue.Queue()
        done = object()
        box: dict[str, Any] = {}
        stop = threading.Event()

        def should_stop() -> bool:
            return stop.is_set() or self.cancel.is_set() or self.e.clock() > self.deadline

        def progress(done: int, total: int, seconds_left: float) -> None:
            pieces.put(ev.PromptProgress(self.run_id, step, done, total, round(seconds_left, 1)))

        def work() -> None:
            try:
                box["gen"] = self.model.generate(
                    list(self.messages), schema, max_tokens=max_tokens, temperature=self.s.temperature,
                    on_text=pieces.put, should_stop=should_stop, on_progress=progress,
                )
            except BaseException as exc:  # handed to the engine's thread below
                box["error"] = exc
            finally:
                pieces.put(done)

        worker = threading.Thread(target=work, name="engine-generate", daemon=True)
        worker.start()
        try:
            while (piece := pieces.get()) is not done:
                yield ev.TextDelta(self.run_id, step, piece, kind) if isinstance(piece, str) else piece
        finally:
            stop.set()
            worker.join()
        if "error" in box:
            error = box["error"]
            raise _ModelFailed(f"the model failed: {one_line(error)}")
        gen: Generation = box["gen"]
        self.prompt_tokens += gen.stats.prompt_tokens_evaluated
        self.prompt_reused += gen.stats.prompt_tokens_reused
        self.completion_tokens += gen.stats.completion_tokens
        self.prompt_seconds += gen.stats.prompt_ms / 1000.0
        self.generation_seconds += gen.stats.generation_ms / 1000.0
        if gen.finish_reason == "cancelled" or self.cancel.is_set():
            if self.cancel.is_set():
                raise _Stop(ev.CANCELLED, "cancelled")
            raise _Stop(ev.BUDGET, f"the time budget of {self.s.time_budget_seconds:g} s was used up")
        return gen

    def _check_limits(self) -> None:
        if self.cancel.is_set():
            raise _Stop(ev.CANCELLED, "cancelled")
        if self.e.clock() > self.deadline:
            raise _Stop(ev.BUDGET, f"the time budget of {self.s.time_budget_seconds:g} s was used up")
        used = self.prompt_tokens + self.completion_tokens
        if used >= self.s.token_budget:
            raise _Stop(ev.BUDGET, f"the token budget of {self.s.token_budget} tokens was used up ({used})")

    def _fit_context(self, max_tokens: int) -> None:
        """Keep the transcript under the context length: when it nears the limit, old observations
        are replaced by the one-line summaries of what they established (all at once, so the KV
        cache is invalidated once, not at every step)."""
        limit = int(self.model.context_length * self.s.compact_at) - max_tokens
        if self.model.count_tokens(self.messages) <= limit:
            return
        recent = {i for i, m in enumerate(self.messages) if m.role == "user"}
        recent = set(sorted(recent)[-2:])
        for index, compact in list(self.compactable.items()):
            if index not in recent:
                self.messages[index] = Message("user", compact)
                del self.compactable[index]
        if self.model.count_tokens(self.messages) > self.model.context_length - max_tokens:
            raise _Stop(ev.BUDGET, "the conversation no longer fits in the model's context")

    # ---- transcript -----------------------------------------------------------------------------

    def _append_observation(self, outcome: _Outcome, notes: list[str], steps_left: int) -> None:
        self._append_user(observation_message(outcome.text, notes=notes, steps_left=steps_left), outcome)

    def _append_user(self, content: str, outcome: _Outcome) -> None:
        index = len(self.messages)
        self.messages.append(Message("user", content))
        compact = f'<observation tool="{outcome.source}" status="{outcome.status}" compacted="yes">\n' \
                  f"{summarize(outcome.body)}\n</observation>"
        if content.startswith(outcome.text):
            self.compactable[index] = compact + content[len(outcome.text):]
        elif content.endswith(outcome.text):
            self.compactable[index] = content[: len(content) - len(outcome.text)] + compact
        else:
            self.compactable[index] = compact

    def _remember_body(self, step: int, source: str, status: str, body: str) -> bool:
        self.bodies.append(body)
        new = self.calls.is_new(body)
        if new:
            self.evidence_log.append(f"step {step} {source}: {summarize(body, 200)}")
        return new
