"""The one place that wires a model, the tools, the engine and a recorder (`appliance.wiring`), used
by `appliance ask`, the TUI and the evaluation."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from support.claims import claim
from appliance.agent import events as ev
from appliance.agent.settings import EngineSettings
from appliance.llm.fake import ScriptedModel
from appliance.tools.registry import TOOL_FUNCTIONS
from appliance.wiring import EngineFactory, prepare, wire


class ListRecorder:
    def __init__(self) -> None:
        self.events: list[ev.Event] = []

    def record(self, event: ev.Event) -> None:
        self.events.append(event)


def replies(path: Path) -> list[dict]:
    return [{"thought": "read it", "action": "read_file", "action_input": {"path": str(path)}},
            claim("The relay listens on port 8080.", value="port = 8080")]


def test_wire_lets_the_tools_read_the_extra_roots_and_records_every_event_in_order():
    root = Path(tempfile.mkdtemp(dir="/dev/shm", prefix="appliance-wiring-"))  # outside the default read roots
    try:
        conf = root / "relay.conf"
        conf.write_text("port = 8080\n")
        settings = EngineSettings(snapshot=False)
        denied = list(wire(ScriptedModel(replies(conf)), settings).run("Which port does the relay use?"))
        assert [o.status for o in denied if isinstance(o, ev.ObservationMade)][0] == "denied"
        recorder = ListRecorder()
        wired = wire(ScriptedModel(replies(conf)), settings, extra_roots=[root], recorder=recorder)
        events = list(wired.run("Which port does the relay use?"))
        assert [o.status for o in events if isinstance(o, ev.ObservationMade)][0] == "ok"
        assert recorder.events == events and isinstance(events[-1], ev.RunEnded)
    finally:
        shutil.rmtree(root)


def test_the_prepared_engine_factory_has_every_real_tool_and_one_machine_check_for_all_its_engines():
    prepared = prepare()
    factory: EngineFactory = prepared.engine
    engine = factory(ScriptedModel([]), EngineSettings(max_steps=3))
    assert engine.registry.names() == [f.__tool__.name for f in TOOL_FUNCTIONS]
    assert engine.settings.max_steps == 3
    again = factory(ScriptedModel([]), EngineSettings())
    assert engine.evidence is again.evidence is prepared.evidence and engine.registry is prepared.registry


def test_importing_the_wiring_loads_neither_the_engine_nor_the_ui():
    code = "import sys, appliance.wiring; print('\\n'.join(sys.modules))"
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    assert "appliance.agent.engine" not in loaded and "textual" not in loaded and "appliance.tools.registry" not in loaded
