"""File names and link targets as tools show them: through the same redactor as every text, one path
component at a time.

The text redactor leaves paths alone (a path is not a token), so a secret that is a file's name, or
a part of a link's target (`/srv/app/<token>`, `password=…`, `https://u:pw@host`), would pass
through it whole. Here the whole name is redacted first (a URL's password, a `key=value`), then each
component on its own, and last any dot-separated piece that looks generated: long, upper and lower
case and digits changing as often as in random text (about 6 in 10 characters; CamelCase words
change about 1 in 3), high entropy. CamelCase words, versions and dashed names stay.
"""

from __future__ import annotations

import re

from appliance.tools.redact import marker, redact, shannon_entropy

MIN_PIECE = 16


def shown_path(text: str) -> str:
    """A path, a name or a link target with every secret shape in it masked."""
    if not text:
        return text
    whole = redact(text)
    return "/".join(_component(part) for part in whole.split("/"))


def _component(part: str) -> str:
    if not part or "[REDACTED" in part:
        return part
    shown = redact(part)
    if shown != part:
        return shown
    return ".".join(marker("high-entropy-secret") if _generated(piece) else piece for piece in part.split("."))


def _generated(piece: str) -> bool:
    """A piece of a name that looks generated rather than chosen by a person."""
    if len(piece) < MIN_PIECE:
        return False
    upper = sum(c.isupper() for c in piece)
    lower = sum(c.islower() for c in piece)
    digits = sum(c.isdigit() for c in piece)
    if upper < 2 or lower < 2 or digits < 1:
        return False
    kinds = ["u" if c.isupper() else "l" if c.islower() else "d" for c in piece if c.isalnum()]
    changes = sum(a != b for a, b in zip(kinds, kinds[1:]))
    words = sum(len(run) for run in _WORD.findall(piece))
    return changes >= 0.45 * len(piece) and shannon_entropy(piece) >= 3.5 and words <= 0.3 * len(piece)


_WORD = re.compile(r"[A-Z]?[a-z]{4,}|[A-Z]{5,}")  # runs a person typed (`Engine`, `config`); a small share of random text


_PATH_IN_TEXT = re.compile(r"(?<![\w/])(?:/|\w+://)[^\s;,()\"']+")


def shown_paths_in(text: str) -> str:
    """A sentence that names paths or link targets (a lookup's problem), each of them shown as above."""
    return _PATH_IN_TEXT.sub(lambda m: shown_path(m.group()), text) if text else text
