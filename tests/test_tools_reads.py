"""Tools declare what they read and which check families they serve; the prompt and the engine ask
the declaration, never a tool's name, so a renamed tool keeps its place."""

from __future__ import annotations

from dataclasses import replace

from support.claims import claim
from appliance.agent import events as ev
from appliance.agent.engine import Engine
from appliance.agent.prompt import family_tools, suggested_tools, system_prompt
from appliance.agent.settings import EngineSettings
from appliance.analyzers.families import FAMILIES
from appliance.llm.fake import ScriptedModel
from appliance.tools.base import PLACES, Registry, ToolSpec, ok
from appliance.tools.registry import default_registry
from appliance.tools.schema import schema_from_signature


def test_every_real_tool_declares_what_it_reads_and_every_check_family_has_one_first_tool():
    specs = default_registry().specs
    assert all(spec.reads for spec in specs)
    for kind in ("log", "file", "folder", "sensors"):
        assert len([s for s in specs if s.reads == kind]) == 1, kind
    families = {a.family for a in FAMILIES}
    for family in families:
        assert len([s for s in specs if family in s.first_for]) == 1, family
    declared = {f for s in specs for f in s.first_for + s.also_for}
    assert declared <= families  # no tool serves a family that no analyzer checks
    assert {s.name for s in specs if s.reads in PLACES} == {"list_dir", "dir_sizes", "largest_files", "read_log",
                                                            "read_file"}


def renamed(specs: tuple[ToolSpec, ...]) -> list[ToolSpec]:
    return [replace(spec, name=f"x_{spec.name}") for spec in specs]


def test_a_renamed_tool_is_still_suggested_by_what_it_reads_and_serves():
    specs = renamed(default_registry().specs)
    assert suggested_tools("Backups fail. The log is /srv/backup/nightly.log. Why?", specs)[0] == "x_read_log"
    assert suggested_tools("The app in /opt/billing cannot connect. Why?", specs)[0] == "x_list_dir"
    assert family_tools(["disk_io", "failed_services"], specs) == ["x_disk_io", "x_top_processes", "x_run_readonly",
                                                                   "x_read_log"]
    prompt = system_prompt(specs, EngineSettings())
    assert '"action": "x_sensors"' in prompt  # the worked example calls the tool that reads the sensors


def test_the_engine_nudges_after_error_lines_from_any_tool_that_reads_a_log_and_only_those():
    def tail(path: str):
        return ok(f"start of {path}\nERROR disk quota exceeded for user7")

    def prompt_after_one_call(reads: str) -> str:
        spec = ToolSpec("tail", "The end of a file.", schema_from_signature(tail), tail, {"path": "/a"}, reads=reads)
        model = ScriptedModel([{"thought": "look", "action": "tail", "action_input": {"path": "/var/log/a.log"}},
                               claim("user7 exceeded the disk quota.", "problem")])
        engine = Engine(model, Registry([spec]), EngineSettings(), snapshot=lambda pids: {"load": {"1m": 0.1}})
        events = list(engine.run("Why did the backup fail?"))
        assert isinstance(events[-1], ev.RunEnded)
        return model.calls[1][0][-1].content

    assert "The ERROR lines above answer" in prompt_after_one_call("log")
    assert "The ERROR lines above answer" not in prompt_after_one_call("file")
