"""Bring the first prompt into the model's context while the person is still typing.

Why: the first question of a fresh process would otherwise start by evaluating the whole system
prompt (tens of seconds on two cores without the prompt cache, a fraction of a second with it),
and every question by evaluating the first step's evidence (hundreds of tokens, seconds). The
warm-up posts past-tense messages only; a question asked meanwhile waits for the warm-up in the
model (and is shown its progress there), it never evaluates the prompt twice. The read-ahead
evaluates the evidence for the question typed so far; a run that starts stops it at once.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable

from textual.message import Message
from textual.worker import NoActiveWorker, get_current_worker

from appliance.tui import messages as msg
from appliance.errors import one_line

if TYPE_CHECKING:
    from appliance.agent.engine import Engine


def warm_model(post: Callable[[Message], object], engine: Engine, should_stop: Callable[[], bool]) -> None:
    """The worker: `engine.warm(...)` with its progress and its outcome posted as messages."""
    warm = getattr(engine, "warm", None)
    if warm is None:
        return

    def progress(done: int, total: int, seconds_left: float) -> None:
        post(msg.WarmProgressed(done, total, seconds_left))

    try:
        report = warm(should_stop=should_stop, on_progress=progress)
    except Exception as exc:  # a warm-up is a help: the first question evaluates the prompt instead
        post(msg.WarmFinished(None, one_line(exc)))
        return
    post(msg.WarmFinished(report.as_dict() if report is not None else None, ""))


READ_AHEAD_POLL = 0.3  # seconds between two looks at the draft
READ_AHEAD_RETRY = 1.0  # seconds before trying a draft again that could not be read ahead
# Seconds between two machine checks begun while a question is typed. Each new check changes the
# evidence the first prompt is read ahead with (its numbers move), so checks are begun seldom enough
# for one to be read ahead before Enter; the run takes a check at most 30 s old (PREFETCH_MAX_AGE).
CHECK_WHILE_TYPING = 15.0


class TypingAhead:
    """What the app does while a question is typed: begins the first step's machine check at most
    every CHECK_WHILE_TYPING seconds (so the one the run takes is that young) and says when a
    read-ahead worker should start (with the first check, one until a run starts)."""

    def __init__(self, begin_check: Callable[[], None] | None, clock: Callable[[], float], *,
                 read_ahead: bool = True) -> None:
        self.begin_check = begin_check
        self.clock = clock
        self.read_ahead = read_ahead
        self.draft = ""
        self.begun: float | None = None
        self.reading = False

    def typed(self, draft: str, *, can_read_ahead: bool) -> bool:
        """The draft so far; True when a read-ahead worker should start now."""
        self.draft = draft
        now = self.clock()
        if self.begin_check is None or self.begun is not None and now - self.begun < CHECK_WHILE_TYPING:
            return False
        self.begun = now
        self.begin_check()
        if not (self.read_ahead and can_read_ahead) or self.reading:
            return False
        self.reading = True
        return True

    def run_started(self) -> None:
        """The run takes the check begun so far (the next question begins another); the read-ahead stops."""
        self.begun = None
        self.reading = False


def read_ahead(engine: Engine, draft: Callable[[], str], should_stop: Callable[[], bool]) -> None:
    """The worker: `engine.read_ahead(...)` for the draft question whenever it changed, until
    `should_stop`; a draft that could not be read ahead (no check done yet, the model still
    warming up) is tried again. Reading the same prompt again costs one token. A draft that brings
    other verdicts (another topic, a named place: `Engine.read_ahead_key`) stops the read-ahead in
    progress after its current chunk, and the new one re-evaluates from where the prompt differs."""
    if getattr(engine, "read_ahead", None) is None:
        return
    try:
        worker = get_current_worker()
    except NoActiveWorker:
        worker = None

    def stopped() -> bool:  # also when a newer read-ahead replaced this worker
        return should_stop() or (worker is not None and worker.is_cancelled)

    key_of = getattr(engine, "read_ahead_key", None)
    read_for = None
    while not stopped():
        question = draft()
        if question and question != read_for:
            key = key_of(question) if key_of is not None else None

            def outdated() -> bool:  # the draft now asks for other evidence: read that instead
                return key_of is not None and key_of(draft()) != key

            try:
                report = engine.read_ahead(question, should_stop=stopped, outdated=outdated)
            except Exception:  # a read-ahead is a help: the run evaluates its prompt instead
                return
            if report is None:  # no check ready yet, or the model busy (the warm-up): try again in a moment
                time.sleep(READ_AHEAD_RETRY)
            elif not getattr(report, "stopped", False):
                read_for = question
        else:
            time.sleep(READ_AHEAD_POLL)
