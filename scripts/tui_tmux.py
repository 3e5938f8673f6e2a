"""The real TUI in a tmux pane, read and typed into as a person would (used by examples_check.py).

Only what a person has: the screen's text (`tmux capture-pane`) and keys. What the TUI shows is
parsed here in one place: its status bar (the first line) and its step cards.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from typing import Callable, Sequence

END_WORDS = ("finished", "stopped at the step limit", "stopped by the token/time budget", "cancelled", "failed")
PLACEHOLDERS = ("thinking…", "reading the prompt")  # the TUI's own words in a card before model text
STEP_TOP = re.compile(r"╭─ Step \d+")


class TmuxTui:
    """One tmux session running `command` at width x height; close() ends it."""

    def __init__(self, command: Sequence[str], *, env: dict[str, str], cwd: str, width: int, height: int) -> None:
        if shutil.which("tmux") is None:
            raise SystemExit("tmux is not installed (apt-get install -y tmux)")
        self.session = f"appliance-examples-{os.getpid()}"
        line = " ".join(_quoted(word) for word in command)
        exports = " ".join(f"{name}={_quoted(value)}" for name, value in env.items())
        subprocess.run(["tmux", "new-session", "-d", "-s", self.session, "-x", str(width), "-y", str(height),
                        f"cd {_quoted(cwd)} && exec env {exports} {line}"], check=True)

    def lines(self) -> list[str]:
        done = subprocess.run(["tmux", "capture-pane", "-p", "-t", self.session], capture_output=True, text=True)
        return done.stdout.splitlines()

    def status(self) -> str:
        """The status bar: model · phase · step · speed · … (the screen's first line)."""
        lines = self.lines()
        return lines[0] if lines else ""

    def type(self, text: str, per_key: float) -> None:
        """One key at a time, `per_key` seconds apart, as a person types."""
        for char in text:
            subprocess.run(["tmux", "send-keys", "-t", self.session, "-l", char], check=True)
            time.sleep(per_key)

    def press(self, key: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.session, key], check=True)

    def wait_for(self, holds: Callable[[list[str]], bool], timeout: float, poll: float = 0.1) -> float | None:
        """Poll the screen until `holds(lines)`; the monotonic time it was first seen, None on timeout."""
        limit = time.monotonic() + timeout
        while time.monotonic() < limit:
            seen = time.monotonic()
            if holds(self.lines()):
                return seen
            time.sleep(poll)
        return None

    def close(self) -> None:
        self.press("C-q")
        time.sleep(1.0)
        subprocess.run(["tmux", "kill-session", "-t", self.session], capture_output=True)


def ended(status: str) -> bool:
    return any(f"· {words} ·" in status or status.rstrip().endswith(f"· {words}") for words in END_WORDS)


def model_text_shown(lines: list[str]) -> bool:
    """A step card of the model's (Step 1, 2, …) shows text that is not the TUI's placeholder."""
    for index, line in enumerate(lines[:-1]):
        if STEP_TOP.search(line):
            inside = lines[index + 1][line.index("╭"):].split("│")
            text = inside[1].strip() if len(inside) > 2 else ""
            if text and not text.startswith(PLACEHOLDERS):
                return True
    return False


def _quoted(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"
