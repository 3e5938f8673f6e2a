"""A run brings its system prompt into the context while step 0 is gathered (a scripted model): the
warm-up runs beside the machine check, the run is charged with its seconds and tokens, a prompt
already in place costs nothing, and a run stopped before its first model call stops the warm-up."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from appliance.agent import events as ev
from appliance.agent.engine import Engine
from appliance.agent.evidence import Evidence
from appliance.agent.settings import EngineSettings
from support.tui import STEP_FINISH, STEP_TOOL, FixedStatsModel, registry


@dataclass
class Report:
    status: str
    seconds: float = 0.0
    evaluated: int = 0


SCRIPT = [STEP_TOOL, STEP_FINISH]  # two calls of the scripted model, 0.2 s and 100 tokens of prompt each


class WarmingModel(FixedStatsModel):
    """A scripted model whose warm-up signals that it began, then waits until told to end (or
    stopped) and reports `report`."""

    def __init__(self, *args, report: Report, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.report = report
        self.began = threading.Event()
        self.release = threading.Event()
        self.stopped = False
        self.warmed: list[str] = []

    def warm(self, messages, *, should_stop=None, on_progress=None):
        self.warmed.append(messages[0].role)
        self.began.set()
        while not self.release.wait(0.01):
            if should_stop is not None and should_stop():
                self.stopped = True
                return Report("stopped")
        return self.report


class CheckWaitingForTheWarmUp:
    """An evidence source whose check ends only once the model's warm-up has begun: a run that
    warmed after gathering would never get past step 0 (the check gives up after 5 s)."""

    def __init__(self, model: WarmingModel, *, then=None) -> None:
        self.model = model
        self.then = then or model.release.set
        self.overlapped = False

    def gather(self, question, self_pids):
        self.overlapped = self.model.began.wait(5.0)
        self.then()
        return Evidence()


def run(model: WarmingModel, source, cancel: threading.Event | None = None) -> list[ev.Event]:
    engine = Engine(model, registry(), EngineSettings(max_steps=6, question_reader="words"), evidence=source)  # the warm-up serves the words reader
    return list(engine.run("how busy is the cpu?", cancel=cancel))


def test_the_system_prompt_is_warmed_while_the_check_runs_and_the_run_is_charged_for_it():
    model = WarmingModel(SCRIPT, report=Report("loaded", seconds=0.4, evaluated=0))
    source = CheckWaitingForTheWarmUp(model)
    events = run(model, source)
    end = events[-1]
    assert isinstance(end, ev.RunEnded) and end.status == ev.FINISHED
    assert source.overlapped and model.warmed == ["system"]
    # the scripted calls' own 0.4 s and the warm-up's 0.4 s
    assert end.timing["prompt"] == 0.8
    assert end.prompt_tokens == 200


def test_an_evaluated_system_prompt_counts_its_tokens_and_one_already_in_place_costs_nothing():
    evaluated = WarmingModel(SCRIPT, report=Report("evaluated", seconds=30.0, evaluated=2600))
    end = run(evaluated, CheckWaitingForTheWarmUp(evaluated))[-1]
    assert end.prompt_tokens == 2800 and end.timing["prompt"] == 30.4
    present = WarmingModel(SCRIPT, report=Report("present", seconds=0.0))
    end = run(present, CheckWaitingForTheWarmUp(present))[-1]
    assert end.prompt_tokens == 200 and end.timing["prompt"] == 0.4


def test_a_run_cancelled_before_its_first_model_call_stops_the_warm_up():
    model = WarmingModel(SCRIPT, report=Report("loaded", seconds=0.4))
    cancel = threading.Event()
    source = CheckWaitingForTheWarmUp(model, then=cancel.set)  # cancelled while the warm-up still runs
    end = run(model, source, cancel)[-1]
    assert isinstance(end, ev.RunEnded) and end.status == ev.CANCELLED
    assert model.stopped and end.timing["prompt"] == 0.0
