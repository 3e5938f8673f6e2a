"""Which user an answer names, for the questions that ask "which user …?".

Why a rule of its own: the busiest process is not an answer to "whose account is hogging the
server?"; the user that runs it is. The user names come from what the observations showed (the
`user=` of a process or a user's totals, the per-user verdict), never from the answer's words.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

from appliance.agent.answer.said import says_whole
from appliance.analyzers.base import Finding

USER_FAMILY = "user_load"
_USER = re.compile(r"(?<![\w.-])user=\"?([A-Za-z_][\w.-]{0,31})")


def observed_users(bodies: Iterable[str], findings: Sequence[Finding]) -> list[str]:
    """The user names the per-user verdict and the observations show, the verdict's first, then in
    the order the readings list them (their rankings put the busiest first)."""
    names = [str(f.culprit) for f in findings if f.family == USER_FAMILY and f.culprit]
    for body in bodies:
        names.extend(_USER.findall(body))
    return list(dict.fromkeys(names))


def names_a_user(answer: str, result: Mapping[str, Any], users: Sequence[str]) -> bool:
    text = " ".join([answer, *(str(v) for v in result.values())])
    return any(says_whole(text, user) for user in users)


def user_verdict(findings: Sequence[Finding]) -> Finding | None:
    """The per-user verdict a retry rests on: a problem first, else the one that ranks the users."""
    ours = [f for f in findings if f.family == USER_FAMILY]
    return next((f for f in ours if f.is_problem), ours[0] if ours else None)
