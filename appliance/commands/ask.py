"""`appliance ask "QUESTION"`: one question, headless, with the steps printed as they happen.

Why a plain consumer of the engine's events: the same stream feeds the store (every step committed
as it ends) and this printer, so what the person sees is what the database holds. The run answers
even when it cannot be recorded (a full disk, a locked database): the answer matters more than its
log, and the person is told. The first Ctrl+C cancels the run between two tokens and records it as
cancelled; a second one exits at once.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from dataclasses import replace
from typing import Any, Callable, TextIO

from appliance.agent import events as ev
from appliance.agent.settings import MAX_STEPS_LIMIT
from appliance.agent.timing import progress_line, timing_line
from appliance.commands.common import add_common_options, command_paths, readable_text
from appliance.errors import UsageError, terminal_json, terminal_safe


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="ask one question headless and print the steps and the answer",
        description="Run the troubleshooting agent on one question without the TUI. Prints each step "
                    "as it happens and the answer; with --json, one JSON object at the end. "
                    "Exit 0 when the run finished with an answer.",
    )
    add_common_options(parser)
    parser.add_argument("question", metavar="QUESTION", help="what to find out about this machine")
    parser.add_argument("--max-steps", type=int, default=None, metavar="N",
                        help="the most actions the model may take (default 8)")
    parser.add_argument("--allow-path", action="append", default=[], metavar="DIR",
                        help="also let the tools read under DIR (repeatable)")
    parser.add_argument("--no-ask", action="store_true",
                        help="never ask questions back (also implied when stdin is not a terminal)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object at the end instead of the live steps")
    parser.set_defaults(handler=run_ask)


def _check_args(args: argparse.Namespace) -> None:
    if not args.question.strip():
        raise UsageError("the question is empty")
    if not readable_text(args.question):
        raise UsageError("the question has no printable characters (only control characters or escape sequences)")
    if args.max_steps is not None and not 1 <= args.max_steps <= MAX_STEPS_LIMIT:
        raise UsageError(f"--max-steps must be between 1 and {MAX_STEPS_LIMIT}, not {args.max_steps}")
    for path in args.allow_path:
        if "\x00" in path or not os.path.isdir(os.path.expanduser(path)):
            raise UsageError(f"--allow-path {path!r} is not an existing directory")


def run_ask(args: argparse.Namespace) -> int:
    _check_args(args)
    from appliance.agent.settings import EngineSettings

    paths = command_paths(args)
    settings = EngineSettings()
    if args.max_steps is not None:
        settings = replace(settings, max_steps=args.max_steps)
    interactive = sys.stdin.isatty() and not args.no_ask
    settings = replace(settings, allow_ask=interactive)

    from appliance.wiring import prepare, wire

    prepared = prepare(args.allow_path)
    prepared.begin_check()  # its windows pass while the model loads
    model = _open_model(args, paths)
    from appliance.store import open_recorder

    recorder = open_recorder(paths.db)
    wired = wire(model, settings, registry=prepared.registry, evidence=prepared.evidence, recorder=recorder)
    cancel = threading.Event()
    printer = None if args.json else LivePrinter(sys.stdout)
    progress = ProgressPrinter(sys.stderr)
    ask = _terminal_ask(cancel) if interactive else None
    end: ev.RunEnded | None = None
    final: ev.FinalAnswer | None = None
    with _sigint_cancels(cancel):
        for event in wired.run(args.question, ask=ask, cancel=cancel):
            if isinstance(event, ev.FinalAnswer):
                final = event
            if isinstance(event, ev.RunEnded):
                end = event
            progress.show(event)
            if printer is not None:
                printer.show(event)
    recorder.close()
    if recorder.failure:
        print(terminal_safe(f"appliance: the run could not be recorded: {recorder.failure}"), file=sys.stderr)
    assert end is not None  # the engine always ends with RunEnded
    if end.status == ev.ERROR:  # the one line that says what went wrong, whatever stdout shows
        print(terminal_safe(f"appliance: run {end.run_id[:8]} ended with an error: {end.error}"), file=sys.stderr)
    if args.json:
        print(terminal_json(summary(end, final, model.info.name, recorded=recorder.failure is None)))
    return exit_code(end)


def summary(end: ev.RunEnded, final: ev.FinalAnswer | None, model_name: str, *, recorded: bool) -> dict[str, Any]:
    """The `--json` object."""
    return {
        "run_id": end.run_id,
        "status": end.status,
        "answer": end.answer,
        "result": dict(end.result),
        "evidence": list(final.evidence) if final else [],
        "forced": bool(final.forced) if final else False,
        "error": end.error,
        "steps": end.steps,
        "prompt_tokens": end.prompt_tokens,
        "prompt_tokens_reused": end.prompt_tokens_reused,
        "completion_tokens": end.completion_tokens,
        "seconds": end.seconds,
        "timing": dict(end.timing),
        "runtime": dict(end.runtime),
        "model": model_name,
        "recorded": recorded,
    }


def exit_code(end: ev.RunEnded) -> int:
    if end.status == ev.FINISHED and end.answer.strip():
        return 0
    if end.status == ev.CANCELLED:
        return 130
    return 1


def _open_model(args: argparse.Namespace, paths: Any) -> Any:
    from appliance.llm.runtime import open_chat_model  # loads llama.cpp: only when really asking

    if not args.json:
        print("loading the model…", file=sys.stderr, flush=True)
    return open_chat_model(getattr(args, "model", None), paths=paths, verbose=bool(getattr(args, "verbose", False)))


class _sigint_cancels:
    """While the run is going, the first Ctrl+C sets `cancel` (the engine stops between two tokens
    and the run is recorded as cancelled); a second one raises KeyboardInterrupt as usual."""

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel
        self.previous: Any = None

    def _handler(self, signum: int, frame: Any) -> None:
        if self.cancel.is_set():
            raise KeyboardInterrupt
        self.cancel.set()
        print("\nappliance: stopping… (Ctrl+C again to quit at once)", file=sys.stderr, flush=True)

    def __enter__(self) -> "_sigint_cancels":
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


def _terminal_ask(cancel: threading.Event) -> Callable[[str], str | None]:
    """Ask the person on the terminal; Ctrl+C while typing cancels the run."""

    def ask(question: str) -> str | None:
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            print(f"\nThe assistant asks: {terminal_safe(question)}", file=sys.stderr, flush=True)
            return input("your answer (empty to skip)> ").strip() or None
        except (KeyboardInterrupt, EOFError):
            cancel.set()
            return None
        finally:
            signal.signal(signal.SIGINT, previous)

    return ask


class LivePrinter:
    """Prints the events of a run as short lines, as they arrive."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def _print(self, text: str) -> None:
        print(terminal_safe(text), file=self.out, flush=True)  # events carry the machine's and the model's text

    def show(self, event: Any) -> None:
        if isinstance(event, ev.RunStarted):
            self._print(f"model {event.model.name}, run {event.run_id[:8]}")
        elif isinstance(event, ev.ObservationMade) and event.step == 0:
            self._print(f"snapshot: {event.summary}")
        elif isinstance(event, ev.StepStarted):
            self._print(f"\nstep {event.step}/{event.max_steps}")
        elif isinstance(event, ev.ThoughtMade) and event.thought:
            self._print(f"  thought: {event.thought}")
        elif isinstance(event, ev.ActionChosen):
            if event.action != "finish":
                args = terminal_json(dict(event.action_input))
                self._print(f"  action:  {event.action} {args}")
        elif isinstance(event, ev.ObservationMade):
            cached = " (earlier result)" if event.cached else ""
            self._print(f"  result:  {event.status}{cached}: {event.summary}")
        elif isinstance(event, ev.Reflected):
            verdict = "continue" if event.should_continue else "stop"
            self._print(f"  reflect: ({event.trigger}) {verdict}: {event.reason} / plan: {event.next_plan}")
        elif isinstance(event, ev.AnswerRejected):
            self._print(f"  answer rejected: {event.reason}")
        elif isinstance(event, ev.AskedUser):
            self._print(f"  asks you: {event.question}")
        elif isinstance(event, ev.FinalAnswer):
            marker = " (written by the appliance from what it found, not by the model)" if event.forced else ""
            self._print(f"\nAnswer{marker}:\n  {event.answer}")
            if event.evidence:
                self._print("Evidence:")
            for line in event.evidence:
                self._print(f"  - {line}")
        elif isinstance(event, ev.RunEnded):
            tail = f": {event.error}" if event.error else ""
            if event.timing:
                self._print(f"\ntime {timing_line(event.timing)}")
            self._print(
                f"{'' if event.timing else chr(10)}{event.status}{tail} — {event.steps} steps, {event.prompt_tokens} prompt tokens "
                f"({event.prompt_tokens_reused} reused), {event.completion_tokens} generated, "
                f"{event.seconds:.1f} s, run {event.run_id}"
            )


class ProgressPrinter:
    """Prompt evaluation progress and prompt-cache notes on stderr, so stdout (and --json) stay clean.

    On a terminal one line is rewritten in place; otherwise a line is printed at each quarter."""

    def __init__(self, err: TextIO) -> None:
        self.err = err
        self.tty = bool(getattr(err, "isatty", lambda: False)())
        self._quarter = -1
        self._open = False

    SHORT = 200  # prompts of fewer new tokens take about a second: no progress line for them

    def show(self, event: Any) -> None:
        if isinstance(event, ev.PromptProgress) and event.total >= self.SHORT:
            self._progress(event)
        elif isinstance(event, (ev.TextDelta, ev.RunEnded)) and self._open:
            print(file=self.err, flush=True)
            self._open = False
        if isinstance(event, ev.RunEnded):
            note = (event.runtime.get("system_prompt") or {}).get("note") if event.runtime else None
            if note:
                print(terminal_safe(f"appliance: {note}"), file=self.err, flush=True)

    def _progress(self, event: ev.PromptProgress) -> None:
        line = progress_line(event.done, event.total, event.seconds_left)
        if self.tty:
            print(f"\r\x1b[2K{line}", end="", file=self.err, flush=True)
            self._open = True
            return
        quarter = 4 * event.done // max(1, event.total)
        if quarter != self._quarter:
            self._quarter = quarter
            print(line, file=self.err, flush=True)
        if event.done >= event.total:
            self._quarter = -1
