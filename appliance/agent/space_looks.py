"""What a question about disk space that names no place gets measured before the first step.

Why: "what is filling my disk?" names no folder, and a small model rarely thinks to look before it
answers; the fullest filesystem's largest folders and files in front of it are what it names.
"""

from __future__ import annotations

from appliance.agent.question.kinds import Asks, Resource
from appliance.agent.question.question import Question

# For a question about disk space that names no place, what is measured on the fullest filesystem
# before the first step, by what it asks: its largest folders and its largest files ("what is filling
# my disk?" had no folder to name until the model thought to look, and it rarely did).
SPACE_LOOKS: dict[Asks, tuple[str, ...]] = {
    Asks.FOLDER: ("dir_sizes", "largest_files"),
    Asks.EXPLANATION: ("dir_sizes", "largest_files"),
    Asks.FILE: ("largest_files",),
}


def space_looks(question: Question) -> tuple[str, ...]:
    """The tools that measure the fullest filesystem for this question (none when it names a place
    or is not about disk space)."""
    if question.paths or question.resource is not Resource.DISK_SPACE:
        return ()
    return SPACE_LOOKS.get(question.asks, ())


def space_call(tool: str, mount: str) -> dict:
    """The arguments of a space look at a mount point: one level of folders, the files of 100 MiB or more."""
    if tool == "dir_sizes":
        return {"path": mount, "depth": 1, "top": 8}
    return {"path": mount, "top": 5, "min_size_mb": 100}
