"""The text the model reads when its finish is sent back, and the part of it an answer must not copy."""

from __future__ import annotations

import re


def rejection_message(problem: str, evidence: list[str] | None = None, openings: tuple[str, ...] = ()) -> str:
    """What the model reads when its finish is sent back: a label and an instruction, never a
    sentence that reads like an answer (small models repeat such a sentence word for word, see
    docs/engine.md); an answer that copies it is refused anyway. The evidence gathered so far comes
    last, because small models copy the last lines they read."""
    text = (f"answer_check: finish sent back {problem}. Next: finish again with a new answer in your own "
            "words that names a process, path, number or error line copied from an observation, or use a tool.")
    lines = [line for line in (evidence or []) if not line.startswith("step 0 ")][-3:] or (evidence or [])[-2:]
    if lines:
        text += "\nWhat the observations showed:\n" + "\n".join(lines)
    if openings:
        text += "\nThe new answer begins with " + " or ".join(repr(o) for o in openings) + "."
    return text


# Where a rejection label starts quoting the machine (a verdict, a log line, a ranked entry):
# an answer may repeat those words, only the engine's own must not be copied.
_QUOTED = re.compile(r"(?:\[(?:ok|warning|critical|unknown)\] \w+:|the log shows:|ranks first:|the question is about)"
                     r".*$")


# What a label quotes of the answer or the machine inside it: a quoted value ('…'), a path.
_QUOTED_VALUE = re.compile(r"'[^']*'|\"[^\"]*\"|(?<![\w.])/[^\s\]]+")


def own_words(problem: str) -> str:
    """A rejection label without what it quotes from the machine (a verdict, a log line) or from
    the refused answer (a value, a path): "[answer-path '/srv/x' not-in-any-observation]" leaves
    the engine's words only, so a retry that names a real path under /srv is no copy of it."""
    return _QUOTED_VALUE.sub(" ", _QUOTED.sub("", problem))
