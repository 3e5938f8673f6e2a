"""Which plain facts about the system a question asks for ("which kernel is this, and is it a
VM?" asks for two), read from its words once.

Why: a question of fact is answered by one value of the system overview; an answer that names
another observed value (the distribution for the kernel) names an observed fact and passes every
check that asks only for one. The answer rule of facts (agent/answer/facts.py) needs to know which.
"""

from __future__ import annotations

import re

from appliance.analyzers.families import MACHINE_SUBJECTS

# Facet name → the words that ask for it. The names are the keys agent/answer/facts.py reads.
FACET_WORDS: dict[str, re.Pattern] = {name: re.compile(pattern, re.I) for name, pattern in {
    "kernel": r"\bkernel\b|\buname\b",
    "os": r"\bdistro\b|\bdistribution\b|\boperating\s+system\b|\bos\b|\b(?:which|what)\s+(?:version\s+of\s+)?"
          r"(?:linux|ubuntu|debian|fedora|centos|rhel)\b(?!\s+kernel)",
    "hostname": r"\bhost\s*name\b|\bmachine(?:'s)?\s+name\b|\bname\s+of\s+(?:this|the|my)\s+(?:machine|box|computer|"
                r"server|host|laptop)\b|\b(?:machine|box|computer|server|laptop)\s+(?:is\s+)?called\b",
    "cpu_model": r"\b(?:cpu|processor)\s+(?:model|type|kind)\b|\b(?:which|what)\s+(?:kind\s+of\s+|type\s+of\s+|model\s+of\s+)?"
                 r"(?:cpu|processor)\b",
    "cores": r"\bhow\s+many\s+(?:cpus?|cores|processors|vcpus?)\b|\b(?:cpu|core)\s+count\b|\bnumber\s+of\s+(?:cpus?|cores)\b",
    "time_zone": r"\btime\s*zone\b",
    "architecture": r"\barch(?:itecture)?\b|\b(?:32|64)[\s-]?bits?\b",
    "virtualization": r"\bvms?\b|\bvirtual\w*\b|\bcontaineri[sz]ed\b|\bcontainer\b|\bbare[\s-]+metal\b|\bhypervisor\b"
                      r"|\bphysical\s+(?:machine|box|server|hardware)\b|\bdocker\b",
    # the machine's own restart, not a program's: its subject, or a boot said outright. "server" too:
    # asked as a fact of the system it is the machine (as a check's topic it may be a program's)
    "uptime": r"\buptime\b|\bbeen\s+up\b|\b(?:re)?boot\w*|\b(?:" + "|".join((*MACHINE_SUBJECTS, "server")) + r")"
              r"\s+(?:has\s+)?(?:last\s+)?(?:been\s+(?:running|on)|(?:re)?start(?:ed)?)\b",
}.items()}


# Facts whose value is itself an amount (a time since boot, a number of cores): "how long since the
# last reboot?" and "how many cores does this box have?" ask an amount that is one of them, while
# "how much memory does the vm use?" names a fact (a VM) without asking for it.
AMOUNT_FACETS = frozenset({"uptime", "cores"})


def facets_in(text: str) -> tuple[str, ...]:
    """The facts the words ask for, in the table's order."""
    return tuple(name for name, words in FACET_WORDS.items() if words.search(text))
