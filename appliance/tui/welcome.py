"""The welcome text and its example questions, in one place so scripts/examples_check.py and
scripts/screenshot.py ask exactly what a new user is offered."""

from __future__ import annotations

EXAMPLES = (
    "why is my computer slow?",
    "what is filling my disk?",
    "is anything listening on port 22?",
)

WELCOME = (
    "Ask about this machine below and press Enter. For example:\n"
    + "".join(f"  • {example}\n" for example in EXAMPLES)
    + "\nEsc cancels a run · Ctrl+R history · Ctrl+T system · Ctrl+P commands"
)
