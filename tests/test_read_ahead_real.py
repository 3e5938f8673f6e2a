"""The first prompt read ahead on a real model (SmolLM2-135M): what was read ahead stays in the KV
cache, so the run's first call evaluates only the question's line and what follows it, and it
answers exactly as a context that evaluated the whole prompt at once.

Why a real model: the saving is llama.cpp's KV cache holding the prefix, found again by token
comparison after the question's text was tokenized with it; a scripted model has neither.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("llama_cpp")

from appliance.agent.prompt import QUESTION_LINE, question_message  # noqa: E402
from appliance.llm.base import Message, ModelInfo  # noqa: E402
from appliance.llm.chat_model import LlamaChatModel  # noqa: E402
from appliance.llm.runtime import load_llama  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {"thought": {"type": "string", "maxLength": 40}, "action": {"enum": ["top_processes", "finish"]}},
    "required": ["thought", "action"],
    "additionalProperties": False,
}
SYSTEM = Message("system", "You are a troubleshooting assistant. Reply with one JSON object.\n"
                 + "\n".join(f"- tool_{i}: returns reading {i} of this machine." for i in range(12)))
EVIDENCE = "\n".join(
    ['<observation tool="check" status="ok">']
    + [f"[warning] cpu: CPU saturated: load {4 + i / 10:.1f} on 2 cores; the busiest is burn-{i} (pid {4000 + i}) 99 %"
       for i in range(12)]
    + ["</observation>"])


def messages(question: str) -> list[Message]:
    return [SYSTEM, Message("user", question_message(question, EVIDENCE, 3))]


@pytest.fixture(scope="module")
def contexts(smollm2_path):
    return [load_llama(smollm2_path, n_ctx=2048, n_threads=1) for _ in range(2)]


def chat(llama) -> LlamaChatModel:
    model = LlamaChatModel(llama, ModelInfo(name="smollm2", path=str(llama.model_path), context_length=2048))
    model.reset()
    return model


def test_the_run_evaluates_only_what_follows_the_prefix_read_ahead(contexts):
    ahead, whole = chat(contexts[0]), chat(contexts[1])
    report = ahead.read_ahead(messages("is the cpu b"), upto=QUESTION_LINE)  # typed so far
    assert report is not None and not report.stopped
    assert report.reused + report.evaluated == report.tokens and report.evaluated > 200  # system prompt, then the rest

    asked = messages("is the cpu busy right now?")  # the question as submitted
    got = ahead.generate(asked, SCHEMA, max_tokens=24)
    text = ahead.render(asked)
    tail = len(ahead._tokenize(text[text.rfind(QUESTION_LINE):], False))
    assert got.stats.prompt_tokens_evaluated <= tail + 2  # the question's line on, give or take the seam
    assert got.stats.prompt_tokens_reused >= report.tokens - 2

    reference = whole.generate(asked, SCHEMA, max_tokens=24)
    assert reference.stats.prompt_tokens_evaluated > report.tokens  # without: all of it
    assert got.text == reference.text  # the same cells, so the same greedy answer


def test_a_read_ahead_leaves_a_busy_context_alone_and_a_stop_keeps_what_was_done(contexts):
    model = chat(contexts[0])
    model._lock.acquire()  # a run holds the context
    try:
        assert model.read_ahead(messages("cpu?"), upto=QUESTION_LINE) is None
    finally:
        model._lock.release()
    stopped = model.read_ahead(messages("cpu?"), upto=QUESTION_LINE, should_stop=lambda: True)
    assert stopped is not None and stopped.stopped and stopped.evaluated == 0
    assert model.read_ahead(messages("cpu?"), upto="not in the prompt") is None
    again = model.read_ahead(messages("cpu?"), upto=QUESTION_LINE)
    assert again is not None and again.evaluated == again.tokens - again.reused
    same = model.read_ahead(messages("cpu? (typed on)"), upto=QUESTION_LINE)  # the same prefix
    assert same is not None and same.evaluated == 0 and same.reused == same.tokens == again.tokens
    assert np.isfinite(model._session.logits(-1)).all()


def test_a_warm_up_waiting_for_a_busy_context_gives_up_when_stopped_and_a_cancelled_run_ends_at_once(contexts):
    """A run warms its system prompt beside step 0 (agent/warm_beside.py). When another call holds
    the context (the TUI's own warm-up on a first start), that warm-up waits; a cancel must still
    end the run within a second, not when the other call lets go."""
    import threading
    import time

    from appliance.agent import events as ev
    from appliance.agent.engine import Engine
    from appliance.agent.evidence import NoEvidence
    from appliance.agent.settings import EngineSettings
    from support.tui import registry

    model = chat(contexts[0])
    model._lock.acquire()  # another call holds the context
    try:
        started = time.monotonic()
        box: list = []
        warming = threading.Thread(target=lambda: box.append(
            model.warm([SYSTEM], should_stop=lambda: time.monotonic() - started > 0.3)), daemon=True)
        warming.start()
        warming.join(timeout=2.0)
        assert not warming.is_alive() and box == [None]  # it gave up instead of waiting for the context
        assert 0.3 <= time.monotonic() - started < 1.0
        cancel = threading.Event()
        engine = Engine(model, registry(), EngineSettings(max_steps=2), evidence=NoEvidence(),
                        snapshot=lambda pids: {"load": [0.1, 0.1, 0.1]})
        threading.Timer(0.5, cancel.set).start()
        events = list(engine.run("is the cpu busy?", cancel=cancel))
        took = time.monotonic() - started
    finally:
        model._lock.release()
    assert isinstance(events[-1], ev.RunEnded) and events[-1].status == ev.CANCELLED
    assert took < 0.3 + 0.5 + 1.0 + 0.5, took  # the warm-up above, the cancel, and a second to end
