"""What an analyzer is: a deterministic check of one fault family over the machine's readings,
returning verdicts that say what is wrong *or* that nothing is, with the values they rest on.

Why this layer exists: a 1.5B model does not judge well whether 0.5 % CPU is a hog or 22 % used is
full. The analyzers make those calls with thresholds a person can read and defend (docs/analyzers.md);
the model chooses what to look at, reads and explains. The engine puts the verdicts in front of the
model and checks its answer against them; `appliance check` prints them without a model.

Rules every analyzer keeps:
- it returns at least one Finding, an `ok` one when nothing is wrong (a verdict that names the
  values: "no CPU hog: the busiest process, kdamond, uses 2 % of one core; load 0.3 on 2 cores");
- the appliance's own processes (and their descendants) never count as a culprit;
- it never raises for a missing reading: it says the reading is unavailable (severity `unknown`);
- it changes nothing on the machine (the same read-only rule as the tools).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

OK = "ok"
UNKNOWN = "unknown"  # the reading could not be taken here (no sensors, no journal, no permission)
WARNING = "warning"
CRITICAL = "critical"

# Order of severity for sorting and for `appliance check`'s exit status.
SEVERITY_RANK = {OK: 0, UNKNOWN: 0, WARNING: 1, CRITICAL: 2}


# A process stands out in its family's ranking when it holds at least this many times what the next
# one holds (and at least the family's own floor): docs/analyzers.md, "Standing out".
STANDOUT_RATIO = 3.0


@dataclass(frozen=True)
class Standout:
    """The process a family ranks first by far, though no threshold of a fault is crossed (300
    threads where the next process runs 20; 5 MiB/s of writes where nothing else writes). Why: a
    person who asks "which program is eating my memory?" means that one, fault or not, and where
    nothing stands out the honest answer is that none does."""

    name: str
    pid: int
    amount: float
    next_amount: float

    def lead(self) -> str:
        """How far ahead it is, in words: "9× the next", or "no other process has any"."""
        if self.next_amount <= 0:
            return "no other process has any"
        return f"{self.amount / self.next_amount:.0f}× the next"


def standout(name: str, pid: int, amount: float, rest: Iterable[float], floor: float,
             ratio: float = STANDOUT_RATIO) -> Standout | None:
    """The process a family already ranked first, when it stands out: at least `floor`, and at least
    `ratio` times the largest of `rest` (the other processes' amounts). Why the leader is given, not
    found: each family ranks its own way, and the standout must be the process its verdict names."""
    following = max(rest, default=0.0)
    if amount < floor or (following > 0 and amount < ratio * following):
        return None
    return Standout(name, pid, float(amount), float(following))


@dataclass(frozen=True)
class Finding:
    """One verdict of one analyzer.

    family: the fault family ("cpu", "filesystem_full", ...), the analyzer's name.
    severity: ok, unknown, warning or critical.
    verdict: one line a person reads, with the values it rests on ("/srv is 99 % full: 0.1 GiB free").
    values: those values as data (for --json, the answer check and tests).
    culprit: what is at fault, as an observation names it (a process name, a path, a port, a
        service); None when nothing is.
    pid / path: the culprit's pid or path when it has one.
    standout: on an ok verdict, the process its ranking puts far ahead of the rest (Standout).
    """

    family: str
    severity: str
    verdict: str
    values: Mapping[str, Any] = field(default_factory=dict)
    culprit: str | None = None
    pid: int | None = None
    path: str | None = None
    standout: Standout | None = None

    @property
    def is_problem(self) -> bool:
        return SEVERITY_RANK.get(self.severity, 0) > 0

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"family": self.family, "severity": self.severity, "verdict": self.verdict}
        for key in ("culprit", "pid", "path"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.standout is not None:
            out["standout"] = {"process": self.standout.name, "pid": self.standout.pid,
                               "amount": self.standout.amount, "next": self.standout.next_amount}
        out["values"] = dict(self.values)
        return out

    def line(self) -> str:
        """The finding as one observation line: `[warning] cpu: …`."""
        return f"[{self.severity}] {self.family}: {self.verdict}"


AnalyzerFunc = Callable[[Any], "list[Finding]"]  # takes a Readings (appliance.analyzers.readings)


@dataclass(frozen=True)
class Analyzer:
    """An analyzer as the runner sees it.

    family: its name (also the Finding.family it returns).
    topics: words a person uses for this family ("slow", "fan", "cpu"); the engine shows the
        verdicts of the families a question is about, beside every warning and critical finding.
    func: readings -> findings.
    past: its problems are events that happened (a kill, a logged error), not a state of the
        machine now; an answer about a part of the machine the event is not about may leave it out.
    judges: its verdicts say whether something is wrong; False for an inventory (the listening
        ports, the uptime, the scheduled jobs), whose ok verdict states a fact and backs no all-clear.
    """

    family: str
    topics: tuple[str, ...]
    func: AnalyzerFunc
    past: bool = False
    judges: bool = True


def beside(nouns: tuple[str, ...], words: tuple[str, ...]) -> tuple[str, ...]:
    """Topics of two words, each noun beside each word ("log ballooning", "port hangs"): the pair
    names a family where either word alone is too common to (a topic of several words matches when
    all its words appear, analyzers.runner.for_question)."""
    return tuple(f"{noun} {word}" for noun in nouns for word in words)


def worst(findings: list[Finding]) -> str:
    """The worst severity among findings (ok when there are none)."""
    best = OK
    for finding in findings:
        if SEVERITY_RANK.get(finding.severity, 0) > SEVERITY_RANK[best]:
            best = finding.severity
    return best


def exit_status(findings: list[Finding]) -> int:
    """0 ok, 1 warning, 2 critical: what `appliance check` exits with (for cron and monitoring)."""
    return SEVERITY_RANK[worst(findings)]


def by_severity(findings: list[Finding]) -> list[Finding]:
    """Worst first; within a severity, the analyzers' own order."""
    return sorted(findings, key=lambda f: -SEVERITY_RANK.get(f.severity, 0))


def problems_for(findings: Iterable[Finding], families: Iterable[str]) -> list[Finding]:
    """The warnings and criticals among the findings of these families."""
    wanted = set(families)
    return [f for f in findings if f.family in wanted and f.is_problem]
