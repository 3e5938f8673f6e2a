"""A share ("61 %", "302% of the CPU") an answer states must be one an observation shows.

Why: a small model writes a plausible percentage beside a right name, often another reading's
number with "%" added (a thread count of 302 said as "302% of the CPU"); the fact check accepts
it, since the number itself was observed. A share is read as a share: rounding is allowed, a
number seen only without "%" is not.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from appliance.agent.answer.misfit import Kind, Misfit
from appliance.analyzers.base import Finding

SHARE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(?:%|percent\b)", re.I)
# A share a tool gives as a value of its own key ("cpu_percent=99.0", "mem_pct": 4.2).
KEYED_SHARE = re.compile(r"\b\w*(?:percent|pct)\w*[\"']?\s*[=:]\s*[\"']?(\d+(?:\.\d+)?)", re.I)
# Shares an answer may state without an observation showing them: none of it, all of it.
_ALWAYS = (0.0, 100.0)


def shares_shown(texts: Iterable[str]) -> set[float]:
    """Every share the texts state."""
    return {float(m.group(1)) for text in texts for pattern in (SHARE, KEYED_SHARE) for m in pattern.finditer(text)}


def shown_in_run(question: str, bodies: Iterable[str], verdicts: Iterable[str]) -> set[float]:
    """The shares a run has seen: its observations, the checks' verdicts, the question itself."""
    return shares_shown([*bodies, *verdicts, question])


def unbacked_share(answer: str, shown: set[float]) -> str | None:
    """The first share of `answer` that no shown share is (within rounding: 1 point, or 5 % of
    itself for a large one), else None."""
    for match in SHARE.finditer(answer):
        value = float(match.group(1))
        if value in _ALWAYS:
            continue
        if not any(abs(value - seen) <= max(1.0, 0.05 * seen) for seen in shown):
            return match.group(0)
    return None


def share_misfit(stated: str, question: str, bodies: Iterable[str], findings: Iterable[Finding]) -> Misfit | None:
    """The rule `backed-shares`: a misfit for the first share the answer states that the run never saw."""
    share = unbacked_share(stated, shown_in_run(question, bodies, (f.verdict for f in findings)))
    if share is None:
        return None
    return Misfit(Kind.UNBACKED_SHARE, f"[share-not-in-any-observation: {share!r}; state only shares an observation "
                                       "shows]", own="[share-not-in-any-observation]")


def unbacked_share_fields(answer: str, result: Mapping[str, Any], question: str, bodies: Iterable[str],
                          findings: Iterable[Finding]) -> tuple[str, ...]:
    """Result fields stating a share the run never saw, where the answer's own words state none:
    such fields are dropped, not a reason to refuse a right answer (a field that copies the prompt's
    example, "12% charge"). An answer whose own words state an unseen share is still refused."""
    shown = shown_in_run(question, bodies, (f.verdict for f in findings))
    if unbacked_share(answer, shown) is not None:
        return ()
    return tuple(k for k, v in result.items() if unbacked_share(str(v), shown) is not None)
