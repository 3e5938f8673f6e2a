"""The finish path: a claim judged by the general checks, then accepted, sent back, or — when its
retries are spent — answered plainly as not settled, with what was found.

Why the model's sentence is never rewritten: a sentence cut, prefixed or forced to begin with a
verdict's words is no longer the model's conclusion and often no longer true. A claim that fails a
check goes back with one line of why and narrower choices (agent/claim_checks.py); the model writes
its own sentence again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable, Generator, Iterator, Sequence

from appliance.agent import events as ev
from appliance.agent.actions import FINISH, Step, check_reserved
from appliance.agent.claim import Choices, Claim
from appliance.agent.claim_checks import Retry, Situation, error_line, judged, mentioned
from appliance.agent.control import LoopControl
from appliance.agent.facts import Fact
from appliance.agent.mention_looks import mention_call
from appliance.agent.observe import summarize, wrap
from appliance.agent.outcome import Outcome
from appliance.agent.question.question import Question
from appliance.agent.run_memory import RunMemory
from appliance.agent.settings import EngineSettings
from appliance.llm.base import GenerationStats
from appliance.tools.base import EMPTY, INVALID, OK, PARTIAL, ToolSpec

NOT_SETTLED = "I could not settle this question from what this machine shows."
MAX_EVIDENCE = 3


LONG = 160


def evidence_of(facts: Sequence[Fact], value: str = "") -> tuple[str, ...]:
    """What the person reads under the answer: the cited facts, in plain words; of a long reading,
    its subject and the parts that hold the value the answer gives."""
    return tuple(dict.fromkeys(_focused(f.plain, value) for f in facts if f.plain and not f.own))[:MAX_EVIDENCE]


def _focused(plain: str, value: str) -> str:
    if len(plain) <= LONG:
        return plain
    head, _, rest = plain.partition(": ") if ": " in plain[:60] else ("", "", plain)
    parts = [p for p in rest.split(", ") if value and mentioned(value, p)]
    if parts:
        return (f"{head}: " if head else "") + ", ".join(parts)
    return plain[:LONG - 1].rsplit(" ", 1)[0] + " …"


@dataclass
class Finisher:
    """Judges one run's finishes; `answer` is the final answer once there is one."""

    run_id: str
    question: Question
    settings: EngineSettings
    ctl: LoopControl
    memory: RunMemory
    self_pids: frozenset[int]
    answer: ev.FinalAnswer | None = None
    run_tool: Callable[[int, str, dict], Outcome] | None = None  # runs a tool a retry lacks
    specs: Sequence[ToolSpec] = ()
    last_claim: Claim | None = field(default=None)
    refused: Claim | None = field(default=None)  # the claim last sent back

    def situation(self) -> Situation:
        q = self.question
        mentions = tuple(dict.fromkeys([*mentions_of(q), *self.memory.evidence.named]))
        return Situation(asks=q.asks, families=tuple(self.memory.evidence.topics), mentions=mentions,
                         question_text=q.text, book=self.memory.facts, tools_worked=self.ctl.tools_worked,
                         retries=self.ctl.rejections, asks_known=q.sure or q.source == "model",
                         call_for=lambda m: mention_call(m, self.specs, self.memory.calls.tools))

    def choices(self, step: int) -> Choices:
        """What this step's finish may choose: the facts shown so far, the things they name, and
        the narrowing of the retries before it."""
        book = self.memory.facts
        return Choices(tuple(book.ids), tuple(book.subjects()), self.ctl.grammar(step).narrowing)

    def finish(self, step: int, parsed: Step, stats: GenerationStats) -> Generator[ev.Event, None, Outcome | None]:
        """Judge a finish: None when the run ended, else the outcome that sends it back."""
        problem = check_reserved(parsed, self.settings, self.choices(step))
        if problem is not None:
            return Outcome(INVALID, f"error: {problem}", FINISH, evaluation=f"invalid finish: {problem}")
        claim, retry = judged(Claim.from_input(parsed.action_input), self.situation())
        repeated = self.refused is not None and claim == self.refused
        self.last_claim = claim
        if retry is None:
            yield from self._accept(step, parsed, claim, stats, "answer accepted")
            return None
        self.refused = claim
        if repeated or not self.ctl.may_retry(step):  # the same claim again will not change on another try
            if retry.soft:
                yield from self._accept(step, parsed, claim, stats, f"answer accepted as written ({retry.check}: "
                                                                    f"{retry.reason})")
                return None
            yield from self._not_settled(step, parsed, claim, stats, retry)
            return None
        return (yield from self._send_back(step, retry))

    def _send_back(self, step: int, retry: Retry) -> Generator[ev.Event, None, Outcome]:
        """The claim goes back: the reason, the narrowed choices, and the reading a tool gives for
        the fact it lacked, numbered like every other."""
        self.ctl.rejected(replace(retry.narrowing, since=len(self.memory.facts.facts)), step=step)
        yield ev.AnswerRejected(self.run_id, step, retry.reason)
        message = f"Your answer was not accepted: {retry.reason} Use finish again."
        ran = ""
        if retry.run is not None and self.run_tool is not None:
            outcome = self.run_tool(step, *retry.run)
            if outcome.status in (OK, EMPTY, PARTIAL):
                ran = f" (ran {retry.run[0]})"
                message += f"\nThe appliance ran {retry.run[0]} for it:\n{outcome.body}"
        return Outcome("rejected", message, "answer_check", evaluation=f"answer rejected ({retry.check}): "
                                                                       f"{retry.reason}{ran}")

    def _accept(self, step: int, parsed: Step, claim: Claim, stats: GenerationStats, evaluation: str) -> Iterator[ev.Event]:
        cited = [f for f in (self.memory.facts.get(c) for c in claim.cites) if f is not None]
        self.answer = ev.FinalAnswer(self.run_id, step, claim.answer, claim.result(), evidence_of(cited, claim.value),
                                     forced=self.ctl.forced)
        yield self.answer
        yield self._record(step, parsed, stats, OK, wrap(FINISH, OK, claim.answer),
                           evaluation + (" (forced: no new information)" if self.ctl.forced else ""))

    def _not_settled(self, step: int, parsed: Step, claim: Claim, stats: GenerationStats,
                     retry: Retry) -> Iterator[ev.Event]:
        """Retries spent: the person is told plainly that the question was not settled, and what was
        found (the problems first, then what the claim cited)."""
        yield from self.forced_from_evidence("", step, claim)
        yield self._record(step, parsed, stats, "rejected", wrap("answer_check", "rejected", retry.reason),
                           f"answer not settled ({retry.check}): {retry.reason}")

    def _record(self, step: int, parsed: Step, stats: GenerationStats, status: str, text: str,
                evaluation: str) -> ev.StepRecorded:
        return ev.StepRecorded(
            run_id=self.run_id, step=step, at=time.time(), thought=parsed.thought, action=FINISH,
            action_input=dict(parsed.action_input), observation_status=status, observation=text,
            observation_summary=summarize(text), reflection=None, evaluation=evaluation, stats=stats,
            steered=bool(self.ctl.narrowing.first_cite or self.ctl.narrowing.drop_stances))

    def forced_from_evidence(self, reason: str, step: int, claim: Claim | None = None) -> Iterator[ev.Event]:
        """The engine's own answer, without the model: not settled (and why, when the run stopped:
        `reason`, in plain words), then what the facts show."""
        book = self.memory.facts
        problems = [f for f in book.facts if f.is_problem and not f.past]
        topics = set(self.memory.evidence.topics)
        asked = [f for f in book.facts if f.source == "check" and f.family in topics]
        claimed = [f for f in (book.get(c) for c in (claim or self.last_claim or Claim("", (), "")).cites) if f]
        read = [f for f in book.facts if f.source not in ("check", "snapshot") and not f.own]
        shown = list(dict.fromkeys(claimed + problems + asked)) or \
            list(dict.fromkeys([f for f in read if error_line(f)] + read[-2:]))
        evidence = evidence_of(shown)
        head = NOT_SETTLED[:-1] + f" ({reason})." if reason else NOT_SETTLED
        text = head + (" What it shows: " + " ".join(_sentence(e) for e in evidence) if evidence else "")
        self.answer = ev.FinalAnswer(self.run_id, step, text, {"stance": "cannot_tell", "cites": [f.id for f in shown[:3]]},
                                     evidence, forced=True)
        yield self.answer


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def mentions_of(question: Question) -> tuple[str, ...]:
    """What the question names exactly: paths, pids, ports and names, as written."""
    return (*question.paths, *(str(p) for p in question.pids), *(str(p) for p in question.ports), *question.names)


__all__ = ["Finisher", "NOT_SETTLED", "evidence_of", "mentions_of", "replace"]
