"""Errors that end a command with one clear line and a non-zero exit.

Anything the user can cause (a bad path, a corrupt model, a locked database) is raised as an
`ApplianceError` whose message is already the one line to print; the CLI prints it and exits with
`exit_code`, never a traceback. Recoverable problems inside a run are events, not exceptions.
"""

from __future__ import annotations

import json
import re
from typing import Any


class ApplianceError(Exception):
    """A problem to report to the person in one line, with an exit code."""

    exit_code = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.__class__.__name__


class ModelError(ApplianceError):
    """A model file is missing, corrupt, of the wrong format, or refused by llama.cpp."""

    exit_code = 3


class StoreError(ApplianceError):
    """The trajectory database cannot be opened or written (locked, read-only, full, corrupt)."""

    exit_code = 4


class UsageError(ApplianceError):
    """The command line asked for something that does not exist or is not allowed."""

    exit_code = 2


def one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception as the one line a person reads (the CLI, the TUI, a run's error). An
    ApplianceError's message is already that line (a model server that is down, a refused key);
    anything else is named by its type, so a bug says what it was. Whitespace, line breaks
    included, is squeezed to single spaces."""
    if isinstance(exc, ApplianceError):
        return (" ".join(terminal_safe(exc.message).split()) or type(exc).__name__)[:limit]
    text = " ".join(terminal_safe(str(exc)).split())
    return (f"{type(exc).__name__}: {text}" if text else type(exc).__name__)[:limit]


# What a terminal would act on rather than show: escape sequences (CSI `ESC [ ... m`, OSC `ESC ] ... BEL`
# that sets titles or writes hyperlinks and the clipboard, DCS/APC/PM/SOS strings, two-character
# escapes, the 8-bit CSI), every other C0 and C1 control but newline and tab, and the Unicode
# direction overrides that make text read differently from what it is.
_TERMINAL_CONTROL = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"
    r"|\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]?"
    r"|\x1b[ -/]*[0-~]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
)


def terminal_safe(text: str) -> str:
    """`text` from the machine, a model server or the database, as it may be printed to a terminal:
    every control sequence and control character removed (newlines and tabs kept), so a stored
    question or a file name cannot move the cursor, retitle the window or rewrite what was shown."""
    if not text or text.isprintable():
        return text
    return _TERMINAL_CONTROL.sub("", text)


_UNESCAPED = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_json(value: object, **options: Any) -> str:
    """`json.dumps(value)` for a terminal: characters JSON itself leaves raw (DEL, the 8-bit C1
    controls, direction overrides) written as \\u escapes, so the data stays whole and nothing in it
    acts on the terminal."""
    text = json.dumps(value, ensure_ascii=False, **options)
    return _UNESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
