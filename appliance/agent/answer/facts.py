"""Does an answer to a question of fact name the value of each fact it asks for?

Why: "which kernel is this?" answered "Debian GNU/Linux 12" names an observed value, the wrong
one; the system overview measured before the first step holds the right one, so the retry is
told which value to name. Each facet says where the overview keeps it and what naming it means
(the whole kernel release; most words of a distribution's name; "container" for a container).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from appliance.agent.answer.misfit import Kind, Misfit
from appliance.agent.answer.quantities import duration, durations
from appliance.agent.evidence import Evidence

OVERVIEW = "system_overview"


def _words(value: str) -> list[str]:
    return [w for w in re.findall(r"[\w.+/-]+", value.lower()) if len(w) >= 2 and w not in _FILLER]


_FILLER = frozenset({"gnu/linux", "with", "cpu", "processor", "the", "of", "@", "(r)", "(tm)", "core(tm)"})


def _whole(answer: str, value: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(value.lower())}(?![\w-])", answer.lower()) is not None


def _most_words(answer: str, value: str) -> bool:
    """Half of the value's words at least ("Debian 12" for "Debian GNU/Linux 12 (bookworm)")."""
    words = _words(value)
    return bool(words) and 2 * sum(_whole(answer, w) for w in words) >= len(words)


def _zone(answer: str, value: str) -> bool:
    name, _, offset = value.partition(" (")
    return _whole(answer, name) or (bool(offset) and offset.rstrip(")").lower() in answer.lower())


def _virtualization(answer: str, value: str) -> bool:
    """What it names of the value: a container, a virtual machine, or bare metal."""
    text, value = answer.lower(), value.lower()
    says_container = re.search(r"\bcontainer|\bdocker|\bpodman|\blxc|\bkubernetes", text) is not None
    says_vm = re.search(r"\bvirtual\s+machine|\bvm\b|\bkvm|\bqemu|\bvmware|\bvirtualbox|\bhyper-?v|\bxen|\bhypervisor", text)
    says_metal = re.search(r"\bbare[\s-]+metal|\bphysical|\bnot\s+(?:a\s+)?(?:vm|virtual)|\bno\s+virtuali[sz]ation", text)
    if value.startswith("none"):
        return says_metal is not None
    if "container" in value:  # the box it runs in first; what hosts the container is a detail
        return says_container
    return says_vm is not None and says_metal is None


def _since_boot(answer: str, value: str) -> bool:
    """A duration within a tenth of the uptime (five minutes at least): "about 3 hours and 32
    minutes" names "3 h 31 min", measured a minute earlier."""
    measured = duration(value)
    return measured is not None and any(abs(stated - measured) <= max(300.0, measured / 10)
                                        for stated in durations(answer))


@dataclass(frozen=True)
class Facet:
    """label: how an answer says it; key: where the overview's data keeps it; named: whether an
    answer names the value."""

    label: str
    key: tuple[str, ...]
    named: Callable[[str, str], bool]


FACETS: dict[str, Facet] = {
    "kernel": Facet("kernel release", ("kernel",), _whole),
    "os": Facet("distribution", ("os",), _most_words),
    "hostname": Facet("hostname", ("hostname",), _whole),
    "cpu_model": Facet("CPU model", ("cpu", "model"), _most_words),
    "cores": Facet("number of CPU cores", ("cpu", "logical_cores"), _whole),
    "time_zone": Facet("time zone", ("time_zone",), _zone),
    "architecture": Facet("architecture", ("architecture",), _whole),
    "virtualization": Facet("virtualization", ("virtualization",), _virtualization),
    "uptime": Facet("time since the last boot", ("uptime",), _since_boot),
}


def overview(evidence: Evidence) -> Mapping[str, Any]:
    """The system overview's data measured before the first step ({} without one)."""
    for look in evidence.measured:
        if look.tool == OVERVIEW and look.result.get("status") == "ok":
            return look.result.get("data") or {}
    return {}


def _value(data: Mapping[str, Any], key: Sequence[str]) -> str | None:
    value: Any = data
    for part in key:
        value = value.get(part) if isinstance(value, Mapping) else None
    return None if value in (None, "") else str(value)


def facts_missed(answer: str, facets: Sequence[str], evidence: Evidence) -> list[tuple[Facet, str]]:
    """The facts asked whose measured value the answer does not name, with that value."""
    return [(facet, value) for facet, value in facts_asked(facets, evidence) if not facet.named(answer, value)]


def facts_asked(facets: Sequence[str], evidence: Evidence) -> list[tuple[Facet, str]]:
    """Every fact asked that the overview measured, with its value (a retry states them all: told
    only the one it missed, a small model drops the one it had right)."""
    data = overview(evidence)
    found = []
    for name in facets:
        facet = FACETS.get(name)
        value = _value(data, facet.key) if facet is not None else None
        if facet is not None and value is not None:
            found.append((facet, value))
    return found


def stating(missed: Sequence[tuple[Facet, str]]) -> str:
    """The facts in one plain sentence a retry begins with ("The kernel release is 6.1.0-18")."""
    text = "; ".join(f"the {facet.label} is {value}" for facet, value in missed)
    return text[:1].upper() + text[1:]


def fact_misfit(stated: str, facets: Sequence[str], evidence: Evidence) -> Misfit | None:
    """The facts asked that the answer does not state; the retry begins with all of them."""
    missed = facts_missed(stated, facets, evidence)
    if not missed:
        return None
    return Misfit(Kind.FACT_NOT_NAMED, f"[fact-not-named: the question asks for it; the system overview shows: "
                                       f"{stating(missed)}]", own="[fact-not-named]",
                  name=stating(facts_asked(facets, evidence)))
