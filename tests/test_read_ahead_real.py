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
