"""Private key blocks: PEM and OpenSSH (`-----BEGIN ... PRIVATE KEY-----`), SSH2 (`---- BEGIN SSH2
ENCRYPTED PRIVATE KEY ----`), PGP private key blocks and PuTTY key files.

A block is masked from BEGIN to END; a BEGIN with no END masks to the end of the text (the cut of a
file or window fell inside the key); an END with no BEGIN (a log window that starts inside a block)
masks the key body lines above it. The body lines of a key never look like a secret on their own
to a line-by-line rule, so this works on the whole text before any line is looked at alone.
"""

from __future__ import annotations

import re

from appliance.tools.redaction import marker

_NAME = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?"
_BEGIN = rf"-{{4,5}} ?BEGIN {_NAME} ?-{{4,5}}"
_END = rf"-{{4,5}} ?END {_NAME} ?-{{4,5}}"
_PUTTY_BEGIN = r"PuTTY-User-Key-File-\d+:"
_PUTTY_END = r"Private-MAC: *[0-9a-fA-F]+"

_BLOCK = re.compile(rf"(?:{_BEGIN}.*?(?:{_END}|\Z)|{_PUTTY_BEGIN}.*?(?:{_PUTTY_END}|\Z))", re.S)
_ORPHAN_END = re.compile(rf"{_END}|{_PUTTY_END}")
# A line of a key's body or headers, as found above an END whose BEGIN is missing.
_BODY_LINE = re.compile(
    r"^(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment|Encryption|Public-Lines|Private-Lines|"
    r"x-[a-z-]+):.*|[A-Za-z0-9+/=\"\\]{2,}\\?)$"
)
_TAIL_BODY = re.compile(r"[A-Za-z0-9+/=\\]*$")  # body characters (and JSON's \n) just before END
NEEDLES = ("PRIVATE KEY", "PuTTY-User-Key", "Private-MAC")
KIND = "private-key"


def redact_key_blocks(text: str) -> str:
    """Every private key block in `text` replaced by one marker."""
    if not any(needle in text for needle in NEEDLES):
        return text
    text = _BLOCK.sub(marker(KIND), text)
    match = _ORPHAN_END.search(text)
    while match:
        start = _body_start(text, match.start())
        text = text[:start] + marker(KIND) + text[match.end():]
        match = _ORPHAN_END.search(text, start + len(marker(KIND)))
    return text


def _body_start(text: str, end_at: int) -> int:
    """Where the key body above an orphan END line begins."""
    line_start = text.rfind("\n", 0, end_at) + 1
    head = text[line_start:end_at]
    match = _TAIL_BODY.search(head)  # the pattern ends in `*$`: it always matches
    tail = len(match.group(0)) if match else 0
    if tail and end_at - tail > line_start:
        return end_at - tail  # one line holds text, then the body (a JSON string with \n escapes)
    while line_start > 0:
        previous = text.rfind("\n", 0, line_start - 1) + 1
        if not _BODY_LINE.match(text[previous:line_start - 1].strip()):
            break
        line_start = previous
    return line_start
