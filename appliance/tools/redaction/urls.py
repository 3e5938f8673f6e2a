"""Passwords inside URLs (`scheme://user:password@host/...`), found by parsing the URL.

A regex that stops the password at the first `@` or `/` leaks the rest of `p@ss/word`: here the
credentials end at the LAST `@` of the URL's token, and what follows it must parse as a host
(`urllib.parse`), so `https://host/a?mail=x@example.org` is left alone. Query parameters that name
a secret (`?token=...`) are `keys`' business.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from appliance.tools.redaction import MARKER_PREFIX, marker

_URL = re.compile(r"(?i)\b(?P<scheme>[a-z][a-z0-9+.\-]{1,20})://(?P<rest>[^\s\"'<>`]+)")
_PORT_THEN_PATH = re.compile(r"^\d{1,5}/[^@]*[?#=]")  # host:8080/x?mail=a@b: a port, not a password
KIND = "url-password"


_TOKEN_USER = re.compile(r"^[A-Za-z0-9_\-.~]{20,}$")


def _token_user(user: str) -> bool:
    """A URL's user that is a token (`https://<40 hex>@github.com/...`), not a name."""
    if not _TOKEN_USER.match(user) or user.startswith(MARKER_PREFIX):
        return False
    digits = sum(c.isdigit() for c in user)
    upper = sum(c.isupper() for c in user)
    lower = sum(c.islower() for c in user)
    hexadecimal = all(c in "0123456789abcdefABCDEF" for c in user)
    return (upper >= 2 and lower >= 2 and digits >= 1) or (hexadecimal and len(user) >= 32)


def _credentials_end(scheme: str, rest: str) -> int:
    """Where the user:password part of `rest` (after `scheme://`) ends (its last `@`), or -1."""
    at = rest.rfind("@")
    if at <= 0:
        return -1
    user, colon, password = rest[:at].partition(":")
    if not colon and _token_user(user) and not any(c in user for c in "/?#"):
        try:
            return at if urlsplit(f"{scheme}://{rest[at + 1:]}").hostname else -1
        except ValueError:
            return -1
    if not colon or not password or any(c in user for c in "/?#") or password.startswith(MARKER_PREFIX):
        return -1
    if _PORT_THEN_PATH.match(password):
        return -1
    try:
        host = urlsplit(f"{scheme}://{rest[at + 1:]}").hostname
    except ValueError:
        return -1
    return at if host else -1


def redact_urls(text: str) -> str:
    if "://" not in text:
        return text
    out, done = [], 0
    for match in _URL.finditer(text):
        rest = match.group("rest")
        at = _credentials_end(match.group("scheme"), rest)
        if at < 0:
            continue
        colon = rest.find(":", 0, at)
        start = match.start("rest") + (colon + 1 if colon >= 0 else 0)
        out += [text[done:start], marker(KIND)]
        done = match.start("rest") + at
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)
