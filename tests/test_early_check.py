"""The machine-wide check begun before the model loads (agent/early.py, MachineEvidence.prefetch):
the first step uses it, once, for the pids it was begun for; another run reads the machine again."""

from __future__ import annotations

import threading
import time

import pytest

from appliance.agent.early import Early
from appliance.agent.evidence import MachineEvidence
from appliance.analyzers.base import OK, Analyzer, Finding
from appliance.tools.registry import default_registry


def test_a_value_begun_early_is_waited_for_and_given_to_its_own_key_only():
    early = Early("q", lambda: (time.sleep(0.2), 42)[1])
    assert early.take("other", 30) is None
    started = time.monotonic()
    assert early.take("q", 30) == 42 and time.monotonic() - started < 1.0


def test_one_begun_too_long_ago_is_not_used_and_a_failure_is_raised_where_it_is_taken():
    assert Early("q", lambda: 1).take("q", max_age=-1.0) is None

    def broken() -> int:
        raise OSError("no /proc")

    with pytest.raises(OSError, match="no /proc"):
        Early("q", broken).take("q", 30)


class _Counting:
    """An analyzer that counts its runs."""

    def __init__(self) -> None:
        self.threads: list[str] = []

    def __call__(self, readings) -> list[Finding]:
        self.threads.append(threading.current_thread().name)
        time.sleep(0.3)  # a window that passes in the background
        return [Finding("cpu", OK, f"run {len(self.threads)}")]


def test_the_first_gather_uses_the_check_begun_early_and_the_next_reads_again():
    counting = _Counting()
    evidence = MachineEvidence(default_registry(), analyzers=[Analyzer("cpu", ("cpu",), counting)])
    pids = frozenset({1234})
    evidence.prefetch(pids)
    time.sleep(0.4)  # the model loading
    started = time.monotonic()
    first = evidence.gather("is the cpu busy?", pids)
    assert time.monotonic() - started < 0.25, "the first step waited for a check already done"
    assert [f.verdict for f in first.findings] == ["run 1"] and len(counting.threads) == 1
    second = evidence.gather("is the cpu busy?", pids)
    assert [f.verdict for f in second.findings] == ["run 2"]
    evidence.prefetch(pids)
    other = evidence.gather("is the cpu busy?", frozenset({99}))  # begun for other pids: not used
    assert [f.verdict for f in other.findings] in (["run 3"], ["run 4"])
