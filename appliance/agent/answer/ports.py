"""Answers about a port the question names, judged against that port's own verdict.

The first step's evidence holds, for every port a question names, who listens there or that
nothing does (`evidence.named_ports`, `analyzers.network.port_finding`). A small model that then
filters the socket table by a state or port of its own ("no established connections on port
44307") answers about what it filtered, not about the port: so an answer to "which process is
it?" must name the owner the verdict shows, an answer that calls the port free or in use must
agree with it, and a denial about a port the question never named answers another question.
"""

from __future__ import annotations

from appliance.agent.answer.misfit import Kind, Misfit
from appliance.agent.question.question import Question

import re
from typing import Any, Mapping, Sequence

from appliance.agent.answer.said import clauses, denies_all, names_process
from appliance.agent.question.question import WHICH, question_form
from appliance.agent.evidence import LISTENING, PORT_NAMED
from appliance.analyzers.base import Finding

PORT_VERDICT = "[port-verdict"
UNASKED_PORT = "[unasked-port"

_NOT_FREE = re.compile(r"\b(?:not|isn'?t|is\s+not)\s+(?:free|available|unused)\b", re.I)
_FREE = re.compile(r"\b(?:free|available|unused|nothing\s+(?:is\s+)?listen\w*|no\s+(?:process|program|service|one)\s+"
                   r"(?:is\s+)?(?:listen\w*|us\w*)|not\s+(?:in\s+use|used|taken))\b", re.I)
_IN_USE = re.compile(r"\b(?:in\s+use|taken|occupied|used\s+by|listened\s+on|listens|listening|bound|owned\s+by)\b", re.I)
_NEGATION = re.compile(r"\b(?:no|not|none|nothing|never|nobody)\b|n't\b", re.I)


def port_verdicts(findings: Sequence[Finding], ports: Sequence[int]) -> list[Finding]:
    """The verdicts on the named ports, in the question's order."""
    by_port = {f.values.get("port"): f for f in findings if f.family == LISTENING and "port" in f.values}
    return [by_port[p] for p in ports if p in by_port]


def port_claim(answer: str) -> str | None:
    """What the answer says of the port: "free", "in use", or None when it says neither."""
    for clause in clauses(answer):
        if _NOT_FREE.search(clause):
            return "in use"
        if _FREE.search(clause):
            return "free"
        if _IN_USE.search(clause) and not _NEGATION.search(clause):
            return "in use"
    return None


def _names_owner(stated: str, verdict: Finding) -> bool:
    owner = str(verdict.values.get("owner") or "").split(" (")[0]
    return names_process(stated, owner, verdict.values.get("owner_pid"))


def port_fit(question: "Question | str", answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
             ports: Sequence[int]) -> str | None:
    """A reason quoting the port's verdict when the answer calls a listened-on port free, a free
    one in use, or answers "which process?" without the owner the verdict names (or, where
    nothing listens, without saying so)."""
    verdicts = port_verdicts(findings, ports)
    if not verdicts:
        return None
    verdict = verdicts[0]
    claim = port_claim(answer)
    stated = " ".join([answer, *(str(v) for v in result.values())])
    which = question_form(question) == WHICH
    if verdict.values.get("listening"):
        wrong = claim == "free" or (which and not _names_owner(stated, verdict))
    else:
        wrong = claim == "in use" or (which and claim != "free" and not denies_all(answer))
    return f"{PORT_VERDICT}: {verdict.line()[:200]}]" if wrong else None


def unasked_port(answer: str, ports: Sequence[int]) -> str | None:
    """A reason when the answer denies something at a port that neither the question nor a
    verdict names (`ports`, from `asked_ports`; "there are no established connections on port 443"
    for "does any process hold many connections?"): it reports what the model filtered the socket
    table by, not what the question asks."""
    for clause in clauses(answer):
        if not _NEGATION.search(clause):
            continue
        for match in PORT_NAMED.finditer(clause):
            if int(match.group(1)) not in ports:
                return (f"{UNASKED_PORT}: the answer is about port {match.group(1)}, which the question does not "
                        "name; answer what it asks]")
    return None


def port_opening(misfit: Misfit, findings: Sequence[Finding], ports: Sequence[int]) -> tuple[tuple[str, ...], str] | None:
    """For an answer refused with the port's verdict: (the culprits the retry may name, the
    opening it begins with: the verdict's own statement)."""
    if misfit.kind is not Kind.PORT_VERDICT:
        return None
    verdicts = port_verdicts(findings, ports)
    if not verdicts:
        return None
    verdict = verdicts[0]
    owner = str(verdict.values.get("owner") or "")
    return ((owner,) if owner else ()), verdict.verdict
