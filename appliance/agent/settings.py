"""The knobs of the ReAct loop, as one frozen value passed into the engine.

Why one dataclass: the store records `as_dict()` with every run, so any trajectory can be
compared with the settings that produced it, and the CLI/TUI/eval only ever build a new value
(`dataclasses.replace`) instead of mutating shared state.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


# The most steps a person may set (`appliance ask --max-steps`, the TUI's step limit): beyond it a
# small model only wanders, and a run would take many minutes.
MAX_STEPS_LIMIT = 50


@dataclass(frozen=True)
class EngineSettings:
    """Loop control and output bounds for one run.

    max_steps: action steps the model may take (the last one may only be `finish`).
    token_budget: prompt tokens evaluated + completion tokens over the whole run.
    time_budget_seconds: wall-clock limit for the run (checked between tokens too).
    temperature: sampling temperature for steps and reflections (0 = greedy, reproducible).
    retry_temperature: the temperature of the one step after a refused answer when the checks
        settled no opening for it (greedy decoding would repeat the refused answer); the sampler's
        fixed seed keeps it reproducible.
    max_tokens: the most tokens one step may generate when its schema has no length bound; a
      bounded schema (all of the engine's) gets the length of its longest valid reply instead, so
      a reply is never cut inside a string (actions.reply_budget).
    reflection_max_tokens: the same for a reflection.
    thought_max_chars / answer_max_chars / question_max_chars: string bounds in the step grammar.
    evidence_max_items / evidence_max_chars: bounds of the finish action's evidence list.
    result_max_chars: bound of each string field of the finish action's structured result.
    observation_token_budget: an observation is cut to about this many tokens, keeping ERROR /
        WARN / FAIL lines.
    snapshot: give the model a short snapshot of the machine as its first observation.
    no_progress_steps: this many steps in a row without new information force a final answer.
    repeat_reflect_at: the n-th identical call (same tool, same arguments) forces a reflection.
    reflection: reflect at failures, empty results, repeats and near the step limit.
    allow_ask: the model may ask the person one question at a time (needs an `ask` callback).
    answer_rejections: how many times the answer check may send a finish back for another step.
    compact_at: fraction of the context length at which old observations are compacted.
    """

    max_steps: int = 8
    token_budget: int = 60_000
    time_budget_seconds: float = 600.0
    temperature: float = 0.0
    retry_temperature: float = 0.7
    max_tokens: int = 320
    reflection_max_tokens: int = 160
    thought_max_chars: int = 160
    answer_max_chars: int = 240
    question_max_chars: int = 200
    evidence_max_items: int = 2
    evidence_max_chars: int = 100
    result_max_chars: int = 60
    observation_token_budget: int = 450
    snapshot: bool = True
    no_progress_steps: int = 3
    repeat_reflect_at: int = 3
    reflection: bool = True
    allow_ask: bool = True
    answer_rejections: int = 2
    compact_at: float = 0.8
    question_reader: str = "model"  # "model": the model labels the question (agent/question/classify.py); "words": the words alone

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        if self.no_progress_steps < 1:
            raise ValueError("no_progress_steps must be at least 1")
        if self.question_reader not in ("model", "words"):
            raise ValueError("question_reader must be 'model' or 'words'")
        if not 0.1 <= self.compact_at <= 1.0:
            raise ValueError("compact_at must be between 0.1 and 1.0")

    def as_dict(self) -> dict[str, Any]:
        """Plain values for the store and `--json` output."""
        return asdict(self)
