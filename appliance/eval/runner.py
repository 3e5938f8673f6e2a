"""Running scenarios through the engine, headless, and recording what happened.

Each case: plant the fault, build the tool registry with the sandbox allowed, run the engine with
nobody to ask (`ask=None`), record every event through the store (so each eval case links to a
real run and its steps), look for canaries in the answer and the database, score, tear down.
A failing case (even an engine crash) is a recorded failure, not the end of the evaluation; an
interrupt (Ctrl-C, SIGTERM) tears the current sandbox down, marks the eval as interrupted and
stops.

The engine, tools and store are imported lazily: this module is importable (and its pieces
testable) before they exist, and the CLI's `--help` never loads llama.cpp.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from appliance import __version__
from appliance.eval import records
from appliance.eval.metrics import RunTally, format_report, grouped, summarise_by_scenario
from appliance.eval.quiet import QuietCheck
from appliance.eval.sandbox import SandboxError, raise_on_termination, sweep_stale
from appliance.eval.scenarios import Fault, Scenario
from appliance.eval.scoring import Outcome, dump_result

if TYPE_CHECKING:
    from appliance.agent.evidence import ReadingsFactory
    from appliance.tools.base import Registry

RegistryFactory = Callable[[Fault], "Registry"]


@dataclass(frozen=True)
class CaseResult:
    scenario: str
    family: str
    kind: str
    phrasing: str
    repeat_index: int
    run_id: str | None
    success: bool
    reason: str
    answer: str
    metrics: Mapping[str, Any]
    split: str = ""  # dev | dev2 | dev3 | sealed | unnamed
    asks: str = ""  # what the question asks for (an `Asks` value); "" when not labeled

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "family": self.family,
            "kind": self.kind,
            "phrasing": self.phrasing,
            "split": self.split,
            "asks": self.asks,
            "repeat_index": self.repeat_index,
            "run_id": self.run_id,
            "success": self.success,
            "reason": self.reason,
            "answer": self.answer,
            "metrics": dict(self.metrics),
        }


@dataclass
class EvalReport:
    eval_id: int | None
    model: str
    suite: str
    repeat: int
    cases: list[CaseResult] = field(default_factory=list)
    interrupted: bool = False

    def by_scenario(self) -> dict[str, dict[str, Any]]:
        return summarise_by_scenario(c.as_dict() for c in self.cases)

    def views(self) -> dict[str, Any]:
        """Per scenario, family, kind (precise / vague / control), split, kind of question; the headline."""
        return grouped([c.as_dict() for c in self.cases])

    def table(self) -> str:
        title = f"eval {self.eval_id} · model {self.model} · suite {self.suite} · K={self.repeat}"
        if self.interrupted:
            title += " · INTERRUPTED"
        return format_report([c.as_dict() for c in self.cases], title=title)

    def as_dict(self) -> dict[str, Any]:
        return {
            "eval_id": self.eval_id,
            "model": self.model,
            "suite": self.suite,
            "repeat": self.repeat,
            "interrupted": self.interrupted,
            **self.views(),
            "cases": [c.as_dict() for c in self.cases],
        }


def default_registry(fault: Fault) -> Registry:
    """The real tools, with the sandbox added to the readable paths."""
    from appliance.tools.registry import default_registry as real_tools

    return real_tools(fault.roots)


def run_case(
    model: Any,
    scenario: Scenario,
    repeat_index: int,
    *,
    settings: Any,
    recorder: Any,
    db_path: Path | None,
    registry_factory: RegistryFactory = default_registry,
    cancel: threading.Event | None = None,
    quiet_check: QuietCheck | None = None,
    readings: ReadingsFactory | None = None,
) -> CaseResult:
    """Plant, ask, score, tear down (always). A fault that cannot be planted here (no root for a
    mount, a process that never became ready) fails its case, not the evaluation; a case whose
    families already have a problem on the machine (`quiet_check`) is void. Only
    KeyboardInterrupt escapes."""
    tally = RunTally()
    started = time.monotonic()
    noise = quiet_check(scenario) if quiet_check is not None else None
    if noise is not None:
        return _case(scenario, repeat_index, tally, False, f"void: the machine was not quiet: {noise.line()[:200]}",
                     {"void": True, "seconds": round(time.monotonic() - started, 2)})
    try:
        with scenario.setup() as fault:
            crash = _ask(model, fault, tally, settings, recorder, registry_factory, cancel, readings)
            leaks = _leaks(fault, tally, db_path)
            outcome = Outcome(
                status=tally.status or ("error" if crash else ""), answer=tally.answer, result=tally.result,
                error=crash or tally.error, leaks=tuple(leaks), model_answered=tally.model_answered,
            )
            verdict = fault.score(outcome)
            truth = {k: v for k, v in fault.truth.items() if k != "injection"}
    except (SandboxError, OSError) as exc:
        return _case(scenario, repeat_index, tally, False, f"could not plant the fault here: {exc}",
                     {"error": str(exc), "seconds": round(time.monotonic() - started, 2)})
    metrics = {"canary_leaks": len(leaks), "truth": truth, "error": outcome.error, "answer": tally.answer[:400],
               "question": fault.question}
    if not tally.ended:
        metrics["seconds"] = round(time.monotonic() - started, 2)
    reason = verdict.reason if not crash else f"{verdict.reason}; engine crashed: {crash}"
    return _case(scenario, repeat_index, tally, verdict.success and not crash, reason, metrics)


def _ask(model: Any, fault: Fault, tally: RunTally, settings: Any, recorder: Any,
         registry_factory: RegistryFactory, cancel: threading.Event | None,
         readings: ReadingsFactory | None = None) -> str:
    """Run the engine on the fault's question, recording and tallying every event; '' or the crash."""
    from appliance.wiring import wire

    try:
        wired = wire(model, settings, registry=registry_factory(fault), recorder=recorder, readings=readings)
        for event in wired.run(fault.question, ask=None, cancel=cancel):
            tally.add(event)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # an engine or tool bug fails this case, not the evaluation
        return f"{type(exc).__name__}: {exc}"
    return ""


def _leaks(fault: Fault, tally: RunTally, db_path: Path | None) -> list[str]:
    """The canaries found in the answer and result, then anywhere in the database."""
    leaks = records.leaked_in_text(fault.canaries, f"{tally.answer}\n{dump_result(tally.result)}")
    if db_path is not None and fault.canaries:
        leaks += [c for c in records.leaked_in_database(fault.canaries, db_path) if c not in leaks]
    return leaks


def _case(scenario: Scenario, repeat_index: int, tally: RunTally, success: bool, reason: str,
          extra: dict[str, Any]) -> CaseResult:
    metrics = tally.metrics()
    metrics.update(extra)
    # Kept in the metrics too, which the database stores as they are: `eval show` and `eval compare`
    # read a recorded evaluation per split and per kind of question without a column of their own.
    metrics.update(split=scenario.split, asks=scenario.asks)
    return CaseResult(
        scenario=scenario.name, family=scenario.family, kind=scenario.kind, phrasing=scenario.phrasing,
        repeat_index=repeat_index, run_id=tally.run_id, success=success, reason=reason, answer=tally.answer,
        metrics=metrics, split=scenario.split, asks=scenario.asks,
    )


def run_eval(
    model: Any,
    scenarios: Sequence[Scenario],
    *,
    suite: str,
    repeat: int = 1,
    settings: Any = None,
    store: Any = None,
    registry_factory: RegistryFactory = default_registry,
    on_case: Callable[[int, int, CaseResult], None] | None = None,
    quiet_check: QuietCheck | None = None,
    readings: ReadingsFactory | None = None,
) -> EvalReport:
    """Run every scenario `repeat` times; record each run and the eval rows beside them through
    `store` (an `appliance.store.Store`); return the report. Without a store nothing is written.
    quiet_check: voids a case whose families already have a problem on the machine (the CLI
    passes `machine_noise`). readings: how the engine's analyzers read the machine (by default the
    product's windows; a test of the runner passes shorter ones)."""
    from appliance.store import SafeRecorder

    if settings is None:
        from appliance.agent.settings import EngineSettings

        settings = EngineSettings()
    if repeat < 1:
        from appliance.errors import UsageError

        raise UsageError("--repeat must be at least 1")
    sweep_stale()
    db_path = Path(store.path) if store is not None else None
    model_name = getattr(getattr(model, "info", None), "name", "") or "unknown"
    report = EvalReport(eval_id=None, model=model_name, suite=suite, repeat=repeat)
    if store is not None:
        report.eval_id = store.start_eval(
            model=model_name, suite=suite, repeat=repeat, settings=_settings_dict(settings), version=__version__
        )
    total = len(scenarios) * repeat
    try:
        with raise_on_termination():
            for repeat_index in range(repeat):
                for scenario in scenarios:
                    # A fresh recorder per case: one run that cannot be recorded (size cap) must
                    # not silence the recording of the others.
                    case = run_case(
                        model, scenario, repeat_index, settings=settings, recorder=SafeRecorder(store),
                        db_path=db_path, registry_factory=registry_factory, quiet_check=quiet_check,
                        readings=readings,
                    )
                    report.cases.append(case)
                    _store_case(store, report.eval_id, case)
                    if on_case is not None:
                        on_case(len(report.cases), total, case)
    except KeyboardInterrupt:
        report.interrupted = True
        raise
    finally:
        if store is not None and report.eval_id is not None:
            store.end_eval(report.eval_id, summary=_summary(report))
    return report


def _store_case(store: Any, eval_id: int | None, case: CaseResult) -> None:
    """The case's row beside its run (nothing without a store)."""
    if store is None:
        return
    store.add_eval_case(
        eval_id, scenario=case.scenario, repeat_index=case.repeat_index, run_id=case.run_id,
        success=case.success, reason=case.reason, metrics=case.metrics, family=case.family, kind=case.kind,
        phrasing=case.phrasing,
    )


def _summary(report: EvalReport) -> dict[str, Any]:
    """The eval row's summary: the per-scenario rows at the top level (where older readers find
    "overall"), then by_family, by_kind, headline and whether it was interrupted."""
    views = report.views()
    summary: dict[str, Any] = dict(views.pop("by_scenario"))
    summary.update(views, interrupted=report.interrupted)
    return summary


def _settings_dict(settings: Any) -> dict[str, Any]:
    as_dict = getattr(settings, "as_dict", None)
    return as_dict() if callable(as_dict) else dict(vars(settings))


def print_progress(done: int, total: int, case: CaseResult) -> None:
    """One line per case on stderr, so a long evaluation shows it is alive."""
    m = case.metrics
    verdict = "ok  " if case.success else ("VOID" if case.metrics.get("void") else "FAIL")
    print(
        f"[{done}/{total}] {verdict} {case.scenario} ({case.kind}) #{case.repeat_index}: {m.get('steps', 0)} steps, "
        f"{m.get('seconds', 0):.1f} s, {m.get('status', '')} — {case.reason}",
        file=sys.stderr,
        flush=True,
    )
