"""The text the model reads when its finish is sent back."""

from __future__ import annotations


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
