"""The TUI's system prompt (it can ask the person) and `ask --no-ask`'s differ only in their tail."""

from appliance.agent.prompt import system_prompt
from appliance.agent.settings import EngineSettings
from appliance.tools.registry import default_registry


def test_the_prompts_with_and_without_ask_user_share_all_but_their_last_line():
    specs = default_registry().specs
    settings = EngineSettings()
    asking = system_prompt(specs, settings, can_ask=True)
    silent = system_prompt(specs, settings, can_ask=False)
    head_a, _, tail_a = asking.rpartition("\n")
    head_s, _, tail_s = silent.rpartition("\n")
    assert head_a == head_s
    assert tail_a != tail_s and "ask_user" in tail_a and "ask_user" in tail_s
    assert "ask_user" not in head_a.split("# Output")[0]  # the tool list no longer holds it
