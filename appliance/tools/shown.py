"""How a command line (a cron job's, a timer's, a process's) is shown in a result: one line, redacted
before it is clipped, so no half secret shows.

One place on purpose: a word-by-word command-line redactor is coming; switching to it is one edit here.
"""

from __future__ import annotations

from appliance.tools import units
from appliance.tools.redact import redact

COMMAND_LIMIT = 160


def shown_command(text: str, limit: int = COMMAND_LIMIT) -> str:
    """`text` on one line, secrets redacted, clipped to `limit` characters."""
    return units.clip(redact(" ".join(text.split())), limit)
