"""Model, tool registry, engine and recorder put together in one place, for `appliance ask`, the TUI
and the evaluation.

Why one place: the three front ends used to build the registry and the engine each in their own
way, so a change to how a run is wired (a new path root, a different policy, a recorder) had to be
made three times. This module sits above the store and below the front ends: it may import tools,
llm, agent and store, and the CLI, the TUI and `appliance.eval` import it. Its imports of the engine
and the tools are at call time, so importing it (for its Protocols) loads neither.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator, Protocol, Sequence

if TYPE_CHECKING:
    from appliance.agent.engine import Engine
    from appliance.agent.events import Event
    from appliance.agent.evidence import EvidenceSource, MachineEvidence, ReadingsFactory
    from appliance.agent.settings import EngineSettings
    from appliance.llm.base import ChatModel
    from appliance.tools.base import Registry


class Recorder(Protocol):
    """What records a run's events (`appliance.store.SafeRecorder`)."""

    def record(self, event: Event) -> None: ...


class EngineFactory(Protocol):
    """Builds the engine of a run from the loaded model and the settings of the moment (the TUI
    calls it for every question, so a changed step limit takes effect on the next run)."""

    def __call__(self, model: ChatModel, settings: EngineSettings) -> Engine: ...


class _NotRecorded:
    def record(self, event: Event) -> None:
        pass


@dataclass(frozen=True)
class Wired:
    """One engine with its recorder: `run` yields the engine's events, each recorded first."""

    engine: Engine
    recorder: Recorder

    def run(self, question: str, *, ask: Callable[[str], str | None] | None = None,
            cancel: threading.Event | None = None) -> Iterator[Event]:
        for event in self.engine.run(question, ask=ask, cancel=cancel):
            self.recorder.record(event)
            yield event


def wire(model: ChatModel, settings: EngineSettings, *, registry: Registry | None = None,
         extra_roots: Sequence[str | os.PathLike] = (), recorder: Recorder | None = None,
         readings: ReadingsFactory | None = None, evidence: EvidenceSource | None = None) -> Wired:
    """The engine over `model` with the real tools under the default path policy plus
    `extra_roots` (`--allow-path`), or `registry` (an evaluation's, its sandbox readable),
    recording through `recorder` (by default nothing is recorded). `readings`: how the analyzers
    read the machine before the first step (by default `Readings` with the product's windows);
    `evidence`: the first step's evidence, perhaps already under way (`Prepared.begin_check`)."""
    from appliance.agent.engine import Engine
    from appliance.agent.evidence import MachineEvidence
    from appliance.tools.registry import default_registry

    tools = registry if registry is not None else default_registry(extra_roots)
    if evidence is None and readings is not None:
        evidence = MachineEvidence(tools, readings=readings)
    engine = Engine(model, tools, settings, evidence=evidence)
    return Wired(engine, recorder if recorder is not None else _NotRecorded())


@dataclass(frozen=True)
class Prepared:
    """The real tools and the first step's machine check, ready before a model is: a front end
    that knows a question is coming begins the check (`begin_check`) so its windows pass while the
    model loads or the person types; the next run's first step uses it (MachineEvidence.prefetch)."""

    registry: Registry
    evidence: MachineEvidence

    def begin_check(self) -> None:
        self.evidence.prefetch(frozenset({os.getpid()}))  # the engine's own pids, by default

    def engine(self, model: ChatModel, settings: EngineSettings) -> Engine:
        """An `EngineFactory` over these tools and this check."""
        return wire(model, settings, registry=self.registry, evidence=self.evidence).engine


def prepare(extra_roots: Sequence[str | os.PathLike] = ()) -> Prepared:
    """The real tools under the default path policy plus `extra_roots`, and their machine check."""
    from appliance.agent.evidence import MachineEvidence
    from appliance.tools.registry import default_registry

    tools = default_registry(extra_roots)
    return Prepared(tools, MachineEvidence(tools))
