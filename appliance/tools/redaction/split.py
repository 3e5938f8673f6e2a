"""A token split across two lines (a terminal or a log wrapped it, a person pasted it in two pieces):
each half alone may be too short for any rule, so the two halves around each line break are joined
and judged together; when the whole is a token (a known shape, or random-looking) and both halves
look like parts of one, both are masked."""

from __future__ import annotations

import re

from appliance.tools.redaction import MARKER_PREFIX
from appliance.tools.redaction.tokens import bare_secret, mask_spans, redact_tokens

_JUNCTION = re.compile(
    r"(?<![A-Za-z0-9_\-+/=])(?<!(?i:sha1)[:\-=])(?<!(?i:md5)[:\-=])(?<!(?i:sha256|sha384|sha512)[:\-=])"
    r"(?P<a>[A-Za-z0-9_\-+/]{6,})[ \t]*\\?\r?\n[ \t>#*|]*(?P<b>[A-Za-z0-9_\-+/]{6,}={0,2})(?![A-Za-z0-9_\-+/=:])")
KIND = "split-token"


def _shaped(part: str) -> bool:
    """A piece of a generated token: at least two kinds of character, not a number or a date."""
    classes = sum((any(c.islower() for c in part), any(c.isupper() for c in part), any(c.isdigit() for c in part)))
    return classes >= 2 and not re.match(r"^[\d\-:T.]+Z?$", part)


def redact_split(text: str) -> str:
    if "\n" not in text:
        return text
    spans = []
    for match in _JUNCTION.finditer(text):
        a, b = match.group("a"), match.group("b")
        if MARKER_PREFIX in text[max(0, match.start() - 10):match.end()] or not (_shaped(a) and _shaped(b)):
            continue
        joined = a + b
        if bare_secret(a) or bare_secret(b) or redact_tokens(a) != a or redact_tokens(b) != b:
            continue  # a half that is a secret on its own is masked by the other passes
        if redact_tokens(joined) != joined or bare_secret(joined):
            spans += [(*match.span("a"), KIND), (*match.span("b"), KIND)]
    return mask_spans(text, spans)
