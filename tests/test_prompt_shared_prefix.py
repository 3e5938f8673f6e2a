"""A run that can ask the person (the TUI) and one that cannot (`ask --no-ask`) start with one system
prompt, so the state one of them evaluated and saved is the state the other loads."""

from __future__ import annotations

import pytest

from appliance.agent.engine import Engine
from appliance.agent.settings import EngineSettings
from appliance.llm.fake import ScriptedModel
from appliance.tools.registry import default_registry
from support.claims import claim

SNAP = {"load": {"1m": 0.1, "5m": 0.1, "15m": 0.1, "cpus": 2}}


def first_call(ask) -> list:
    model = ScriptedModel([claim("The load is 0.1.", "value", value="0.1")])
    engine = Engine(model, default_registry(), EngineSettings(question_reader="words"), snapshot=lambda pids: SNAP)
    list(engine.run("what is the load average?", ask=ask))
    return model.calls[0][0]


def test_asking_or_not_changes_the_question_message_and_never_the_system_prompt():
    asking = first_call(lambda q: "the first one")
    silent = first_call(None)
    assert asking[0].role == silent[0].role == "system"
    assert asking[0].content == silent[0].content
    assert "can answer one short question with ask_user" in asking[1].content
    assert "Nobody can answer questions in this run" in silent[1].content


def test_warming_brings_in_the_system_prompt_a_run_starts_with():
    model = ScriptedModel([])
    warmed: list = []
    model.warm = lambda messages, **kw: warmed.append(messages)  # type: ignore[attr-defined]
    engine = Engine(model, default_registry(), EngineSettings(), snapshot=lambda pids: SNAP)
    engine.warm()
    assert [m.content for m in warmed[0]] == [first_call(None)[0].content]


@pytest.mark.timeout(300)
def test_the_cache_file_one_front_end_saved_is_loaded_by_the_other(smollm2_path, tmp_path):
    from appliance.llm.base import ModelInfo
    from appliance.llm.chat_model import LlamaChatModel
    from appliance.llm.prompt_cache import PromptCache
    from appliance.llm.runtime import load_llama

    cache = PromptCache(tmp_path / "cache")

    def fresh() -> LlamaChatModel:
        llama = load_llama(smollm2_path, n_ctx=4096, n_threads=2)
        info = ModelInfo(name="smollm2", path=str(smollm2_path), sha256="c0de" * 16, context_length=4096)
        return LlamaChatModel(llama, info, prompt_cache=cache)

    tui = Engine(fresh(), default_registry(), EngineSettings(), snapshot=lambda pids: SNAP)
    assert tui.warm().status == "evaluated"  # the TUI warms while the person types
    ask = Engine(fresh(), default_registry(), EngineSettings(allow_ask=False), snapshot=lambda pids: SNAP)
    report = ask.warm()
    assert report.status == "loaded" and len(cache.files()) == 1
