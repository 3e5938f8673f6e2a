"""The conversation a run sends the model, and its compaction when it nears the context length.

Why compaction keeps a map: every observation message is stored with its compact form (the one-line
summary of what it established, in the same place of the message), so shrinking the transcript
rewrites old messages without parsing them again.
"""

from __future__ import annotations

from typing import Iterable

from appliance.agent import events as ev
from appliance.agent.observe import summarize
from appliance.agent.outcome import Outcome
from appliance.agent.prompt import observation_message
from appliance.agent.stops import RunStop
from appliance.llm.base import ChatModel, Message


class Transcript:
    """The run's messages; compactable maps a message's index to its compact form."""

    def __init__(self, model: ChatModel, compact_at: float) -> None:
        self.model = model
        self.compact_at = compact_at
        self.messages: list[Message] = []
        self.compactable: dict[int, str] = {}

    def add(self, role: str, content: str) -> None:
        self.messages.append(Message(role, content))

    def add_observation(self, outcome: Outcome, notes: Iterable[str], steps_left: int,
                        reflect: str | None = None) -> None:
        """The observation the model reads next (with `reflect`, asking for a reflection)."""
        self.add_user(observation_message(outcome.text, notes=notes, steps_left=steps_left, reflect=reflect),
                      outcome)

    def add_user(self, content: str, outcome: Outcome) -> None:
        """A user message that carries the outcome's observation, kept with its compact form."""
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

    def fit(self, max_tokens: int) -> None:
        """Keep the transcript under the context length: when it nears the limit, old observations
        are replaced by the one-line summaries of what they established (all at once, so the KV
        cache is invalidated once, not at every step)."""
        limit = int(self.model.context_length * self.compact_at) - max_tokens
        if self.model.count_tokens(self.messages) <= limit:
            return
        recent = {i for i, m in enumerate(self.messages) if m.role == "user"}
        recent = set(sorted(recent)[-2:])
        for index, compact in list(self.compactable.items()):
            if index not in recent:
                self.messages[index] = Message("user", compact)
                del self.compactable[index]
        if self.model.count_tokens(self.messages) > self.model.context_length - max_tokens:
            raise RunStop(ev.BUDGET, "the conversation no longer fits in the model's context")
