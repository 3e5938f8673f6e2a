"""How one engine event of a live run shows on the run screen: which card part, which status field.

Kept apart from RunScreen, which owns the run's state (running, cancelled, the final answer);
these functions only draw, so the mapping from events to widgets reads in one place.
"""

from __future__ import annotations

from typing import Any, Sequence

from appliance.agent import events as ev
from appliance.agent.timing import progress_line, timing_line
from appliance.tui.render import answer_markdown
from appliance.tui.widgets import StatusBar, Transcript


def show_event(transcript: Transcript, status: StatusBar, event: Any) -> None:
    """Draw one event of the running engine (those that change neither the run's state nor its end)."""
    if isinstance(event, ev.RunStarted):
        status.change(model=event.model.name or status.state.model)
    elif isinstance(event, ev.StepStarted):
        transcript.card(event.step, event.max_steps)
        status.change(step=event.step, max_steps=event.max_steps)
    elif isinstance(event, ev.TextDelta):
        transcript.card(event.step).add_delta(event.text, event.kind)
    elif isinstance(event, ev.PromptProgress):
        transcript.card(event.step).set_waiting(progress_line(event.done, event.total, event.seconds_left))
    elif isinstance(event, ev.ThoughtMade):
        transcript.card(event.step).set_thought(event.thought)
    elif isinstance(event, ev.ActionChosen):
        transcript.card(event.step).set_action(event.action, event.action_input)
    elif isinstance(event, ev.ObservationMade):
        transcript.card(event.step).add_observation(event.status, event.summary, event.text, event.cached)
    elif isinstance(event, ev.Reflected):
        transcript.card(event.step).add_reflection(event.should_continue, event.reason, event.next_plan, event.trigger)
    elif isinstance(event, (ev.AskedUser, ev.UserReplied, ev.AnswerRejected)):
        note, kind = _note(event)
        transcript.card(event.step).add_note(note, kind)
    elif isinstance(event, ev.StepRecorded) and event.stats.completion_tokens:
        _show_stats(transcript, status, event)


def _note(event: Any) -> tuple[str, str]:
    if isinstance(event, ev.AskedUser):
        return f"asked you: {event.question}", "ask"
    if isinstance(event, ev.UserReplied):
        return f"you replied: {event.reply if event.reply is not None else '(no reply)'}", "reply"
    return f"answer rejected: {event.reason}", "rejected"


def _show_stats(transcript: Transcript, status: StatusBar, event: ev.StepRecorded) -> None:
    stats = event.stats
    transcript.card(event.step).set_stats(stats.tokens_per_second, stats.threads, stats.threads_batch)
    status.change(
        tokens_per_second=stats.tokens_per_second,
        prompt_tokens=stats.prompt_tokens_reused + stats.prompt_tokens_evaluated,
        prompt_tokens_reused=stats.prompt_tokens_reused,
        threads=stats.threads,
        threads_batch=stats.threads_batch,
    )


RAW_KEY = "ctrl+o"  # shows the answer's evidence as the tools returned it, and back (app.py binds it)


def ended_answer(ended: ev.RunEnded, final: ev.FinalAnswer | None,
                 as_read: Sequence[str] | None = None) -> tuple[str, str]:
    """The answer box's Markdown for a run that ended, and the plain answer (for copying); as_read:
    the cited facts as read, shown in place of the evidence in words."""
    answer = ended.answer or (final.answer if final else "")
    markdown = answer_markdown(
        answer=answer,
        evidence=tuple(final.evidence) if final else (),
        result=ended.result or (final.result if final else {}),
        status=ended.status,
        error=ended.error,
        forced=bool(final.forced) if final else False,
        heading=False,
        raw_key=RAW_KEY if final and final.evidence else "",
        as_read=as_read,
    )
    if ended.timing:
        markdown += f"\n\n*Time {timing_line(ended.timing)}*"
    return markdown, answer
