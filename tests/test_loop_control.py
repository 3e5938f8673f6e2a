"""The loop's control policy on its own: no model, no scripted run."""

from appliance.agent.control import LoopControl
from appliance.agent.settings import EngineSettings


def control(**kw) -> LoopControl:
    return LoopControl(EngineSettings(**kw), can_ask=True)


def test_finish_is_not_allowed_before_anything_was_looked_at_unless_the_evidence_answers():
    ctl = control()
    assert ctl.grammar(1).finish is False and ctl.grammar(1).tools and ctl.grammar(1).ask
    ctl.finish_early = True
    assert ctl.grammar(1).finish is True
    ctl2 = control()
    ctl2.looked = True
    assert ctl2.grammar(2).finish is True


def test_the_last_step_may_only_finish():
    ctl = control(max_steps=3)
    assert ctl.grammar(2).tools and not ctl.is_last(2)
    g = ctl.grammar(3)
    assert ctl.is_last(3) and not g.tools and not g.ask


def test_a_repeated_tool_leaves_the_grammar_for_two_steps():
    ctl = control(max_steps=8)
    ctl.observed(2, action="top_processes", status="ok", new_info=False, repeats=2, is_tool=True)
    assert "top_processes" in ctl.grammar(3).exclude and "top_processes" in ctl.grammar(4).exclude
    assert "top_processes" not in ctl.grammar(5).exclude


def test_steps_without_new_information_force_a_finish_and_mark_it_forced():
    ctl = control(no_progress_steps=2, max_steps=8)
    assert ctl.observed(1, action="a", status="ok", new_info=False, repeats=0, is_tool=True).trigger is None
    after = ctl.observed(2, action="b", status="ok", new_info=False, repeats=0, is_tool=True)
    assert ctl.finish_only and ctl.forced and "no new information" in after.notes[0]
    assert ctl.is_last(3) and not ctl.may_retry(3)


def test_new_information_resets_the_no_progress_count():
    ctl = control(no_progress_steps=2)
    ctl.observed(1, action="a", status="ok", new_info=False, repeats=0, is_tool=True)
    ctl.observed(2, action="b", status="ok", new_info=True, repeats=0, is_tool=True)
    ctl.observed(3, action="c", status="ok", new_info=False, repeats=0, is_tool=True)
    assert not ctl.finish_only


def test_reflection_triggers_in_order_failure_repeat_and_the_near_limit_once():
    ctl = control(max_steps=8, repeat_reflect_at=3)
    assert ctl.observed(1, action="a", status="error", new_info=True, repeats=0, is_tool=True).trigger == "the tool failed"
    assert ctl.observed(2, action="a", status="ok", new_info=True, repeats=3, is_tool=True).trigger.startswith("you made the same call 3")
    assert ctl.observed(3, action="b", status="empty", new_info=True, repeats=0, is_tool=True).trigger == "the tool found nothing"
    assert ctl.observed(6, action="c", status="ok", new_info=True, repeats=0, is_tool=True).trigger == "only 2 steps are left"
    assert ctl.observed(6, action="d", status="ok", new_info=True, repeats=0, is_tool=True).trigger is None


def test_no_reflection_when_turned_off_or_too_late():
    ctl = control(max_steps=8, reflection=False)
    assert ctl.observed(1, action="a", status="error", new_info=True, repeats=0, is_tool=True).trigger is None
    ctl = control(max_steps=3)
    assert ctl.observed(2, action="a", status="error", new_info=True, repeats=0, is_tool=True).trigger is None


def test_a_rejected_answer_gets_one_more_step_then_not():
    ctl = control(max_steps=8, answer_rejections=1)
    assert ctl.may_retry(2)
    ctl.rejected()
    assert not ctl.may_retry(3)
    assert not control(max_steps=4).may_retry(4)


def test_the_model_may_stop_itself_only_after_a_tool_worked():
    ctl = control()
    ctl.reflected(False)
    assert not ctl.finish_only
    ctl.tools_worked = True
    ctl.reflected(False)
    assert ctl.finish_only and not ctl.forced and ctl.may_retry(4)


def test_the_step_after_an_invalid_output_is_sampled_and_the_next_valid_one_is_greedy_again():
    ctl = control(max_steps=8)
    assert not ctl.samples(2)
    ctl.observed(1, action="finish", status="invalid", new_info=False, repeats=0, is_tool=False)
    assert ctl.samples(2) and not ctl.samples(3)
    ctl.observed(2, action="top_processes", status="ok", new_info=True, repeats=0, is_tool=True)
    assert not ctl.samples(3)
