"""A file that is mostly secrets is refused whole, whatever its name.

The deny-list (paths.py) knows files by name; a credentials file under another name (a copy of
`chap-secrets` called `peers.txt`, an application's `auth.conf`) is only known by what it holds.
When most of its meaningful lines come back from the redactor masked, showing the rest (user
names, hosts, the layout of the secrets) helps nobody troubleshoot and tells an attacker a lot,
so the whole file is refused, with the reason.
"""

from __future__ import annotations

from appliance.tools.redaction import MARKER_PREFIX

MIN_LINES = 3  # a short file with one password line is a configuration file, shown redacted
SHARE = 0.5  # more than this share of the meaningful lines masked: a secrets file


def mostly_secrets(redacted: str) -> str | None:
    """Why a file whose redacted text is `redacted` must be refused whole, or None to show it.
    Comments and blank lines do not count."""
    lines = [line for line in redacted.splitlines() if line.strip() and not line.lstrip().startswith(("#", ";", "//"))]
    if len(lines) < MIN_LINES:
        return None
    masked = sum(MARKER_PREFIX in line for line in lines)
    if masked / len(lines) <= SHARE:
        return None
    return (f"{masked} of its {len(lines)} lines are secrets (passwords, keys or tokens): it is a credentials file, "
            f"refused whole")
