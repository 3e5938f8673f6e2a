"""Run every analyzer (or some) over one shared reading, in parallel, within a time limit.

An analyzer that raises or overruns gives an `unknown` finding that says so: a check is a help and
never a reason to fail a run. Which families a question is about is decided by the analyzers'
declared topics (words a person uses), never by the model.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Iterable, Sequence

from appliance.analyzers.base import UNKNOWN, Analyzer, Finding
from appliance.analyzers.readings import ReadingUnavailable, Readings
from appliance.analyzers.families import FAMILIES

ANALYZERS: tuple[Analyzer, ...] = FAMILIES
# The families whose problems are past events (Analyzer.past).
PAST_FAMILIES = frozenset(a.family for a in ANALYZERS if a.past)
INVENTORY_FAMILIES = frozenset(a.family for a in ANALYZERS if not a.judges)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def _safe(analyzer: Analyzer, readings: Readings) -> list[Finding]:
    try:
        found = list(analyzer.func(readings))
    except ReadingUnavailable as exc:
        return [Finding(analyzer.family, UNKNOWN, f"not available here: {_one_line(exc)}")]
    except Exception as exc:  # an analyzer bug is reported, never raised
        return [Finding(analyzer.family, UNKNOWN, f"the check failed: {type(exc).__name__}: {_one_line(exc)}")]
    return found or [Finding(analyzer.family, UNKNOWN, "the check returned no verdict")]


def run_all(readings: Readings | None = None, *, families: Iterable[str] | None = None,
            analyzers: Sequence[Analyzer] = ANALYZERS, timeout: float = 3.0) -> list[Finding]:
    """The findings of the chosen analyzers (all by default), in the analyzers' order."""
    readings = readings or Readings()
    wanted = set(families) if families is not None else None
    chosen = [a for a in analyzers if wanted is None or a.family in wanted]
    if not chosen:
        return []
    # One thread per analyzer: most of them wait on the shared 0.5 s sample or an interval of their
    # own, so a smaller pool would queue the interval readings behind the sample and double the time.
    pool = ThreadPoolExecutor(max_workers=min(32, len(chosen)), thread_name_prefix="analyzer")
    futures = [pool.submit(_safe, a, readings) for a in chosen]
    deadline = time.monotonic() + timeout
    wait(futures, timeout=max(0.0, deadline - time.monotonic()))
    pool.shutdown(wait=False, cancel_futures=True)
    findings: list[Finding] = []
    for analyzer, future in zip(chosen, futures):
        if future.done():
            findings.extend(future.result())
        else:
            findings.append(Finding(analyzer.family, UNKNOWN, f"the check did not finish within {timeout:g} s"))
    return findings


_WORD = re.compile(r"[a-z0-9]+")


def for_question(question: str, analyzers: Sequence[Analyzer] = ANALYZERS) -> list[str]:
    """The families whose topics the question names, most topic words matched first (ties in the
    analyzers' order). A topic of several words ("time sync") matches when all its words appear.
    "which process is writing the most to disk" names disk_io twice (disk, writing) and the space
    families once (disk), so disk_io comes first."""
    words = set(_WORD.findall(question.lower()))
    stems = {w.rstrip("s") for w in words} | {w[:-2] for w in words if w.endswith("sses")} | words  # processes
    scored = []
    for index, analyzer in enumerate(analyzers):
        score = 0
        for topic in analyzer.topics:
            parts = _WORD.findall(topic.lower())
            if parts and all(p in stems or p.rstrip("s") in stems for p in parts):
                score += len(parts)
        if score:
            scored.append((-score, index, analyzer.family))
    return [family for _, _, family in sorted(scored)]
