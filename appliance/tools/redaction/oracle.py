"""Oracle's logins on a command line: `user/password@service` for Oracle's own tools, and
`userid=user/password@db` for any program."""

from __future__ import annotations

import re

from appliance.tools.redaction import MARKER_PREFIX, marker

KIND = "password"
_ORACLE_LOGIN = re.compile(r"^(?P<user>[\w$#.\"]+)/(?P<pw>[^@\s]+)(?P<rest>@\S+)?$")
_USERID = re.compile(r"(?i)^(?P<key>userid|user_id|connect|login)=(?P<user>[\w$#.\"]+)/(?P<pw>[^@\s]+)(?P<rest>@\S+)?$")


def _masked(value: str) -> bool:
    return value.startswith(MARKER_PREFIX)


def oracle_login(oracle_tool: bool, word: str) -> str:
    """`user/password@service` for Oracle's tools, and `userid=user/password@db` anywhere."""
    match = _USERID.match(word)
    if match:
        return f"{match.group('key')}={match.group('user')}/{marker(KIND)}{match.group('rest') or ''}"
    if oracle_tool:
        match = _ORACLE_LOGIN.match(word)
        if match and not word.startswith("/") and not _masked(match.group("pw")):
            return f"{match.group('user')}/{marker(KIND)}{match.group('rest') or ''}"
    return word
