"""The messages of the TUI: what workers report (past tense) and what screens ask for (requests).

Workers never touch widgets: they post one of these (`post_message` is thread-safe) and the
handlers of the screen or app that started them update the widgets on the event loop. That keeps
every widget change on one thread and makes each flow testable by looking at which messages arrive.

Screens never call the app's methods: a screen that wants something done beyond its own widgets
(start a run, export, copy, pull) posts a request (`...Requested`, `QuestionAsked`); it bubbles
from the screen to the app, which decides what to do with it (the model may not be loaded, a run
may be going). A screen that produces one value for its caller returns it with `dismiss`.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message
from textual.worker import Worker, WorkerState

from appliance.errors import one_line

if TYPE_CHECKING:
    from appliance.agent.events import Event
    from appliance.llm.base import ChatModel


@dataclass
class EngineEmitted(Message):
    """One event of the running engine."""

    event: "Event"


@dataclass
class RunCrashed(Message):
    """The engine raised instead of ending with RunEnded (a bug or an unexpected model failure)."""

    error: str


@dataclass
class UserAsked(Message):
    """The agent asked the person a question; the worker waits for a reply on `replies`."""

    question: str
    replies: "queue.Queue[str | None]"


@dataclass
class WarmProgressed(Message):
    """The warm-up evaluated `done` of the system prompt's `total` tokens."""

    done: int
    total: int
    seconds_left: float


@dataclass
class WarmFinished(Message):
    """The warm-up ended: how the system prompt got into the context (PrefixReport.as_dict()),
    or None with `error` when it could not."""

    report: dict | None
    error: str


@dataclass
class ModelLoaded(Message):
    model: "ChatModel"
    spec: str | None


@dataclass
class ModelMissing(Message):
    """The default model file is not on disk: offer to pull it or explain how to import one."""

    name: str
    size: int
    detail: str
    spec: str | None


@dataclass
class ModelLoadFailed(Message):
    """The model could not be loaded (corrupt, wrong format, not enough memory...)."""

    error: str
    spec: str | None


@dataclass
class PullProgressed(Message):
    done: int
    total: int


@dataclass
class PullFinished(Message):
    path: str


@dataclass
class PullFailed(Message):
    error: str


@dataclass
class SystemSampled(Message):
    sample: Any  # appliance.tui.system_sampler.SystemSample


@dataclass
class ChecksDone(Message):
    findings: list  # appliance.analyzers.Finding, in the analyzers' order


@dataclass
class HistoryListed(Message):
    runs: list
    query: str


@dataclass
class RunLoaded(Message):
    run: Any  # appliance.tui.history_source.RunReplay or None
    run_id: str


@dataclass
class RunExported(Message):
    path: str


@dataclass
class BackgroundFailed(Message):
    """Something beside the run failed (the run's recorder); shown as a notification."""

    what: str
    error: str


# ----- requests from screens to the app (they bubble up from the screen that posts them) ---------
@dataclass
class QuestionAsked(Message):
    """The person submitted a question on the run screen; the app starts a run when it can."""

    question: str


@dataclass
class QuestionTyped(Message):
    """The person is typing a question (no run active), `draft` so far: the app may begin the
    machine check the run's first step will use, so its windows pass while they type, and read
    the first prompt ahead."""

    draft: str = ""


@dataclass
class ReplayRequested(Message):
    """Open a stored run (the history's Enter)."""

    run_id: str


@dataclass
class ExportRequested(Message):
    """Write a stored run to a Markdown file (history Ctrl+S, replay `x`)."""

    run_id: str


@dataclass
class CopyRequested(Message):
    """Copy an answer to the clipboard (replay `c`)."""

    text: str


@dataclass
class PullRequested(Message):
    """Download a missing catalog model (the missing-model screen's `p`)."""

    name: str


def worker_failure(event: Worker.StateChanged) -> str | None:
    """`what: the one-line error` when a worker raised (its group names what it was doing).

    Background workers (history, replay, export, sampling, checks) run with exit_on_error=False
    and do not catch: a failure ends the worker in the ERROR state, and the node that started it
    shows this line as a notification instead of a traceback.
    """
    if event.state is not WorkerState.ERROR:
        return None
    error = event.worker.error
    return f"{event.worker.group}: {one_line(error) if error is not None else 'failed'}"
