"""How a command written as text (a cron job's, a timer's) is shown in a result: split into words the
way the shell would, redacted word by word (redaction.cmdline, as every process's command line),
then clipped on one line, so no half secret shows. Text the shell could not split (an open quote)
goes through the text redactor whole."""

from __future__ import annotations

import shlex

from appliance.tools import units
from appliance.tools.redact import redact
from appliance.tools.redaction.cmdline import show_argv

COMMAND_LIMIT = 160


def shown_command(text: str, limit: int = COMMAND_LIMIT) -> str:
    """`text` on one line, secrets redacted, clipped to `limit` characters."""
    try:
        words = shlex.split(text, comments=False, posix=True)
    except ValueError:
        return units.clip(redact(" ".join(text.split())), limit)
    return units.clip(redact(show_argv(words)), limit)
