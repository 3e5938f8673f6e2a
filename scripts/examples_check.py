"""The TUI's welcome examples, asked in the real TUI (tmux) as a person would, on this machine as it
is and then with a matching fault planted (a busy loop, a large file, a listener on the port asked
about). Each question is typed at a person's pace and timed from Enter: the first model text shown
in the pane, and the finished answer. A measurement to run and report, not a test.

    .venv/bin/python scripts/examples_check.py [--model NAME] [--per-key 0.1] [--size 120x40]

The runs stay in the database it names at the end (`appliance runs show ID --db DB`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from appliance.agent.timing import timing_line  # noqa: E402
from appliance.store import open_store  # noqa: E402
from appliance.tui.welcome import EXAMPLES  # noqa: E402
from tui_tmux import TmuxTui, ended, model_text_shown  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ANSWER_TARGET = 20.0  # seconds from Enter
FIRST_TOKEN_TARGET = 3.0


@contextlib.contextmanager
def busy_loop() -> Iterator[None]:
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(2)
        yield
    finally:
        hog.kill()
        hog.wait()


@contextlib.contextmanager
def large_file() -> Iterator[None]:
    folder = Path(tempfile.mkdtemp(prefix="examples-", dir="/var/tmp"))
    try:
        with open(folder / "render-cache.bin", "wb") as out:
            block = os.urandom(1 << 20)
            for _ in range(3 << 10):  # 3 GiB, real blocks
                out.write(block)
            out.flush()
            os.fsync(out.fileno())  # on disk before the question: the fault is the space, not the writing
        yield
    finally:
        for child in folder.iterdir():
            child.unlink()
        folder.rmdir()


@contextlib.contextmanager
def listener(port: int) -> Iterator[None]:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        server.bind(("0.0.0.0", port))
    except OSError as exc:
        print(f"(port {port} is taken already: {exc}; the planted case asks about it as it is)")
        server.close()
        yield
        return
    server.listen()
    try:
        yield
    finally:
        server.close()


def plant_for(question: str) -> tuple[str, Callable[[], ContextManager[None]]] | None:
    """The fault that matches what the question asks about, or None when none is known."""
    port = re.search(r"\bport (\d+)", question)
    if port:
        return f"a listener on port {port.group(1)}", lambda: listener(int(port.group(1)))
    if re.search(r"\b(disk|space|full|storage)\b", question):
        return "a 3 GiB file in /var/tmp", large_file
    if re.search(r"\b(slow|cpu|busy|hot|fan|sluggish)\b", question):
        return "a busy loop on one core", busy_loop
    return None


@dataclass
class Measured:
    question: str
    condition: str
    first_token: float | None  # seconds from Enter to the first model text in the pane
    answer_seconds: float | None  # seconds from Enter to the end of the run on the status bar
    run: Any  # the run as the TUI recorded it (appliance.store RunRecord)

    def verdict(self) -> str:
        first = self.first_token is not None and self.first_token <= FIRST_TOKEN_TARGET
        answer = self.answer_seconds is not None and self.answer_seconds <= ANSWER_TARGET
        return ("met" if first and answer else "MISSED") + f" (first token <= {FIRST_TOKEN_TARGET:.0f} s: " \
            + f"{'yes' if first else 'no'}, answer <= {ANSWER_TARGET:.0f} s: {'yes' if answer else 'no'})"


def ask(tui: TmuxTui, db: Path, question: str, condition: str, per_key: float, timeout: float) -> Measured:
    """Type the question, press Enter, and watch the pane (ten looks a second) until the status bar
    says the run ended; the run itself is then read from the database the TUI wrote."""
    tui.type(question, per_key)
    tui.press("Enter")
    pressed = time.monotonic()
    first_seen: list[float] = []

    def running(lines: list[str]) -> bool:  # the status bar can show the last run's end for a frame
        return bool(lines) and "· running" in lines[0]

    def done(lines: list[str]) -> bool:
        if not first_seen and model_text_shown(lines):
            first_seen.append(time.monotonic())
        return bool(lines) and ended(lines[0])

    started = tui.wait_for(running, 30)  # by then the last run's cards are gone (start_run)
    finished = tui.wait_for(done, timeout) if started is not None else None
    if started is not None and finished is None:  # over time: cancel it, or the next question is typed into a run
        tui.press("Escape")
        tui.wait_for(lambda lines: bool(lines) and ended(lines[0]), 30)
    first = first_seen[0] - pressed if first_seen and (finished is None or first_seen[0] <= finished) else None
    return Measured(question, condition, first, finished - pressed if finished else None, newest_run(db, question))


def newest_run(db: Path, question: str) -> Any:
    with open_store(db, readonly=True) as store:
        runs = [run for run in store.list_runs(limit=5) if run.question == question]
        return store.get_run(runs[0].id) if runs else None


def report(measured: Measured) -> str:
    run = measured.run
    first = f"{measured.first_token:.1f} s" if measured.first_token is not None else "none shown"
    answer = f"{measured.answer_seconds:.1f} s" if measured.answer_seconds is not None else "no answer"
    lines = [f"## {measured.question}  ({measured.condition})",
             f"first token {first} · answer {answer} · {measured.verdict()}"]
    if run is not None:
        lines.append(f"run {run.id} · {run.status} · {run.step_count} steps · model {run.model_name}")
        lines.append(f"answer: {run.answer or run.error or '(none)'}")
        lines += [f"  • {line}" for line in (run.evidence or ())]
        if run.timing:
            lines.append(f"time (as the engine counts it): {timing_line(run.timing)}")
    return "\n".join(lines) + "\n"


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a catalog name or a .gguf path (default: the default model)")
    parser.add_argument("--per-key", type=float, default=0.1, help="seconds between keys (default 0.1)")
    parser.add_argument("--size", default="120x40", help="the terminal, COLUMNSxROWS (default 120x40)")
    parser.add_argument("--home", help="the data directory (default: a new temporary one)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for one answer")
    args = parser.parse_args()
    width, height = (int(part) for part in args.size.lower().split("x"))
    home = Path(args.home or tempfile.mkdtemp(prefix="examples-home-"))
    db = home / "runs.db"
    command = [sys.executable, "-m", "appliance.cli", "--db", str(db)] + (["--model", args.model] if args.model else [])
    env = {"APPLIANCE_HOME": str(home), "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT)),
           "TERM": os.environ.get("TERM", "xterm-256color")}
    print(f"load before: {load()}\n")
    tui = TmuxTui(command, env=env, cwd=str(ROOT), width=width, height=height)
    results: list[Measured] = []
    try:
        # the person waits for the model and for its prompt to be read ("ready (prompt …)")
        if tui.wait_for(lambda lines: bool(lines) and "ready (" in lines[0], 300) is None:
            print(f"(the TUI never said it was ready; its status bar: {tui.status()!r})")
        for question in EXAMPLES:
            plant = plant_for(question)
            conditions: list[tuple[str, Callable[[], ContextManager[None]]]] = [
                ("as the machine is", contextlib.nullcontext)]
            if plant is not None:
                conditions.append((f"with {plant[0]} planted", plant[1]))
            for condition, planted in conditions:
                with planted():
                    measured = ask(tui, db, question, condition, args.per_key, args.timeout)
                results.append(measured)
                print(report(measured), flush=True)
                time.sleep(2)  # a person reads the answer before the next question
    finally:
        tui.close()
    print(f"load after: {load()}")
    print(f"runs: {db}  (appliance runs show ID --db {db})\n")
    for measured in results:
        first = f"{measured.first_token:5.1f}" if measured.first_token is not None else "    -"
        answer = f"{measured.answer_seconds:5.1f}" if measured.answer_seconds is not None else "    -"
        print(f"{first} s first token  {answer} s answer  {measured.verdict()[:6]}  {measured.question} — {measured.condition}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
