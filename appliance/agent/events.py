"""The events a run produces, as frozen dataclasses: the only thing the engine hands to the
outside world.

The TUI, the CLI and the store consume the same stream. Fine-grained events (`TextDelta`,
`ThoughtMade`, `ActionChosen`, `ObservationMade`, ...) drive live displays; `StepRecorded` carries the
complete step once it is over, and is what the store commits (one transaction per step), so a
consumer never has to reassemble a step from pieces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from appliance.llm.base import GenerationStats, ModelInfo

# Run statuses, shared by the engine, the store, the CLI (`--json`) and the TUI.
FINISHED = "finished"
MAX_STEPS = "max_steps"
BUDGET = "budget"
CANCELLED = "cancelled"
ERROR = "error"
INTERRUPTED = "interrupted"  # set by the store for runs found unfinished at start-up
RUNNING = "running"
RUN_STATUSES = (RUNNING, FINISHED, MAX_STEPS, BUDGET, CANCELLED, ERROR, INTERRUPTED)


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    question: str
    model: ModelInfo
    settings: Mapping[str, Any]
    started_at: float
    version: str


@dataclass(frozen=True)
class StepStarted:
    run_id: str
    step: int
    max_steps: int
    at: float


@dataclass(frozen=True)
class TextDelta:
    """A piece of the model's raw output as it is generated (kind: 'step' or 'reflection')."""

    run_id: str
    step: int
    text: str
    kind: str = "step"


@dataclass(frozen=True)
class PromptProgress:
    """Prompt evaluation under way before a step's first token: `done` of `total` tokens, and the
    seconds it should still take (a long first prompt is tens of seconds on two cores)."""

    run_id: str
    step: int
    done: int
    total: int
    seconds_left: float


@dataclass(frozen=True)
class ThoughtMade:
    run_id: str
    step: int
    thought: str


@dataclass(frozen=True)
class ActionChosen:
    run_id: str
    step: int
    action: str
    action_input: Mapping[str, Any]


@dataclass(frozen=True)
class ObservationMade:
    """What the tool returned, as the model sees it (rendered, redacted, truncated).

    status: the tool's status ('ok', 'error', 'denied', ...), or 'repeat' when the same call was
    answered from an earlier step, 'invalid' for an unknown tool or bad arguments, 'timeout'.
    """

    run_id: str
    step: int
    action: str
    status: str
    text: str
    summary: str
    tool_ms: float = 0.0
    cached: bool = False


@dataclass(frozen=True)
class Reflected:
    run_id: str
    step: int
    trigger: str
    should_continue: bool
    reason: str
    next_plan: str


@dataclass(frozen=True)
class AskedUser:
    run_id: str
    step: int
    question: str


@dataclass(frozen=True)
class UserReplied:
    run_id: str
    step: int
    reply: str | None


@dataclass(frozen=True)
class AnswerRejected:
    """The finish action failed the answer check; the model gets one more step with the reason."""

    run_id: str
    step: int
    reason: str


@dataclass(frozen=True)
class StepRecorded:
    """One complete step, emitted when it is over: the unit the store commits."""

    run_id: str
    step: int
    at: float
    thought: str
    action: str
    action_input: Mapping[str, Any]
    observation_status: str
    observation: str
    observation_summary: str
    reflection: Mapping[str, Any] | None
    evaluation: str
    stats: GenerationStats = field(default_factory=GenerationStats)
    tool_ms: float = 0.0
    # what `evaluation` says in words, as values a counter reads (never parsed back from the words):
    # the call repeats step N; the model's reply was no step at all; a finish was a steered retry
    repeat_of: int | None = None
    unparsable: bool = False
    steered: bool = False


@dataclass(frozen=True)
class FinalAnswer:
    """forced: True when the loop control made the answer from the evidence gathered."""

    run_id: str
    step: int
    answer: str
    result: Mapping[str, Any]
    evidence: tuple[str, ...]
    forced: bool = False


@dataclass(frozen=True)
class RunEnded:
    """The last event of every run, whatever happened (status is one of RUN_STATUSES).

    timing: seconds by part (model_load, prompt, generation, tools, engine, total); runtime: the
    llama.cpp settings and how the system prompt got into the context (see LlamaChatModel)."""

    run_id: str
    status: str
    answer: str
    result: Mapping[str, Any]
    error: str
    steps: int
    prompt_tokens: int
    prompt_tokens_reused: int
    completion_tokens: int
    seconds: float
    ended_at: float
    timing: Mapping[str, float] = field(default_factory=dict)
    runtime: Mapping[str, Any] = field(default_factory=dict)


Event = (
    RunStarted
    | StepStarted
    | TextDelta
    | PromptProgress
    | ThoughtMade
    | ActionChosen
    | ObservationMade
    | Reflected
    | AskedUser
    | UserReplied
    | AnswerRejected
    | StepRecorded
    | FinalAnswer
    | RunEnded
)
