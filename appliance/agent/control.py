"""The loop's control policy in one object: what each step may do, and what happens after it.

Why one object: the rules that turn a small model into a useful agent (a repeated tool leaves the
grammar, steps without new information force an answer, a rejected answer gets one more step, the
model reflects at failures and near the limit, the last step may only finish) interact. Kept as
small methods over one state they can be read, changed and unit-tested without a scripted run;
the engine only asks them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from appliance.agent.claim import Narrowing
from appliance.agent.settings import EngineSettings
from appliance.tools.base import DENIED, EMPTY, ERROR, INVALID, PARTIAL, TIMEOUT

FAILED_STATUSES = {ERROR: "the tool failed", TIMEOUT: "the tool timed out", DENIED: "the request was refused"}
REFLECT_TRIGGERS = {
    **FAILED_STATUSES,
    INVALID: "the action was invalid",
    EMPTY: "the tool found nothing",
    PARTIAL: "the result was incomplete",
}
# How many steps back a repeated tool stays out of the grammar: long enough that neither one
# repeat nor an A, B, A, B alternation can go on.
EXCLUDE_STEPS = 2


@dataclass(frozen=True)
class Grammar:
    """What one step's grammar admits."""

    tools: bool
    ask: bool
    finish: bool
    exclude: frozenset[str]
    narrowing: Narrowing = field(default_factory=Narrowing)  # what a retried claim may still choose


@dataclass(frozen=True)
class AfterStep:
    """What the engine does after an observation: a reflection (its trigger) or not, and notes to
    add to the next message."""

    trigger: str | None
    notes: tuple[str, ...] = ()


@dataclass
class LoopControl:
    """The control state of one run.

    looked: a tool (or the person) was asked something beyond the first evidence.
    finish_early: the first evidence may answer the question, so finish is allowed before a tool.
    tools_worked: some tool returned a usable result (a refusal is then not accepted).
    """

    settings: EngineSettings
    can_ask: bool = False
    finish_early: bool = False
    looked: bool = False
    tools_worked: bool = False
    finish_only: bool = False
    forced: bool = False
    rejections: int = 0
    no_new: int = 0
    limit_reflected: bool = False
    repeated_at: dict[str, int] = field(default_factory=dict)
    narrowing: Narrowing = field(default_factory=Narrowing)
    rejected_at: int | None = None
    invalid_at: int | None = None  # the last step whose output was refused as invalid

    # -- before a step ----------------------------------------------------------------------------

    def is_last(self, step: int) -> bool:
        """The step may only finish: the last one, or after the loop decided the run must end."""
        return step >= self.settings.max_steps or self.finish_only

    def grammar(self, step: int) -> Grammar:
        last = self.is_last(step)
        return Grammar(
            tools=not last,
            ask=self.can_ask and not last,
            finish=self.looked or self.finish_early,
            exclude=frozenset(self.excluded(step)),
            narrowing=self.narrowing,
        )

    def excluded(self, step: int) -> set[str]:
        """Tools left out of this step's grammar: those repeated in the last steps."""
        return {name for name, at in self.repeated_at.items() if step - at <= EXCLUDE_STEPS}

    def samples(self, step: int) -> bool:
        """The step right after a rejection, and the one right after an invalid output, are
        sampled, not greedy: from nearly the same context, greedy decoding writes the refused
        output again word for word."""
        after_rejection = self.rejected_at is not None and step == self.rejected_at + 1
        return after_rejection or (self.invalid_at is not None and step == self.invalid_at + 1)

    def steps_left(self, step: int) -> int:
        return self.settings.max_steps - step

    # -- a finish -------------------------------------------------------------------------------------

    def may_retry(self, step: int) -> bool:
        """A rejected answer may be sent back for another step: not at the last step, not when the
        loop forced the answer, and only `answer_rejections` times. A finish-only step after the
        model's own "stop" still leaves room to fix it."""
        return not (step >= self.settings.max_steps or self.forced
                    or self.rejections >= self.settings.answer_rejections)

    def rejected(self, narrowing: Narrowing = Narrowing(), *, step: int | None = None) -> None:
        """One more rejection; what the next finish may still choose narrows by `narrowing`."""
        self.rejections += 1
        self.rejected_at = step
        self.narrowing = self.narrowing.merged(narrowing)

    # -- after an observation ---------------------------------------------------------------------

    def observed(self, step: int, *, action: str, status: str, new_info: bool, repeats: int,
                 is_tool: bool) -> AfterStep:
        """Update the state from one observation and say whether to reflect.

        Order matters: no progress (a forced finish) wins over every reflection, then persistent
        repeats, then a failed or empty result, then the one reflection when two steps are left."""
        self.no_new = 0 if new_info else self.no_new + 1
        if status == INVALID:
            self.invalid_at = step
        if repeats and is_tool:
            self.repeated_at[action] = step  # it has this result: the next steps pick something else
        steps_left = self.steps_left(step)
        if self.no_new >= self.settings.no_progress_steps and steps_left >= 1:
            self.finish_only = self.forced = True
            return AfterStep(None, (f"You got no new information in the last {self.no_new} steps. "
                                    "Use finish now with the evidence you have.",))
        if not self.settings.reflection or steps_left < 2:
            return AfterStep(None)
        if repeats >= self.settings.repeat_reflect_at:
            return AfterStep(f"you made the same call {repeats} times")
        if status in REFLECT_TRIGGERS:
            return AfterStep(REFLECT_TRIGGERS[status])
        if steps_left == 2 and not self.limit_reflected:
            self.limit_reflected = True
            return AfterStep("only 2 steps are left")
        return AfterStep(None)

    def reflected(self, should_continue: bool) -> None:
        """A model may stop itself only once a tool has shown something."""
        if not should_continue and self.tools_worked:
            self.finish_only = True
