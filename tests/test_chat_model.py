"""LlamaChatModel on a real GGUF (SmolLM2-135M): the ChatModel contract the engine relies on.

Prefix reuse across the steps of a run (prompt tokens evaluated per step stay within the new
tokens + 32), streaming, cancellation, thread policy, the token budget, context overflow, and the
chat template read from the GGUF file.
"""

from __future__ import annotations

import json

import pytest

llama_cpp = pytest.importorskip("llama_cpp")

from appliance.errors import ModelError  # noqa: E402
from appliance.llm.runtime import load_llama  # noqa: E402
from appliance.llm.base import ChatModel, Message, ModelInfo  # noqa: E402
from appliance.llm.chat_model import LlamaChatModel, Transcript  # noqa: E402
from appliance.llm.chat_template import ChatTemplate, render_chatml  # noqa: E402
from appliance.llm.grammar import compile_schema  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {
        "thought": {"type": "string", "maxLength": 60},
        "action": {"enum": ["disk_usage", "top_processes", "finish"]},
        "action_input": {
            "type": "object",
            "properties": {"path": {"type": "string", "maxLength": 20}},
            "required": ["path"],
            "additionalProperties": False,
        },
    },
    "required": ["thought", "action", "action_input"],
    "additionalProperties": False,
}
SYSTEM = Message(
    "system",
    "You are a troubleshooting assistant. Reply with one JSON object with thought, action and "
    "action_input. Tools: disk_usage(path), top_processes(path), finish(path).",
)


@pytest.fixture(scope="module")
def llama(smollm2_path):
    model = load_llama(smollm2_path, n_ctx=2048, n_threads=1)  # AMX extra buffers off (see appliance.llm.speed)
    yield model
    model.close()


@pytest.fixture
def model(llama):
    chat = LlamaChatModel(llama, ModelInfo(name="smollm2", context_length=2048))
    chat.reset()
    return chat


def test_implements_the_protocol(model):
    assert isinstance(model, ChatModel)
    assert model.context_length == 2048
    assert model.count_tokens([SYSTEM]) > 20


def test_eight_step_run_evaluates_only_new_tokens(model):
    """The transcript grows by one assistant step and one observation per step; each step must
    evaluate at most its new tokens + 32 and never reset the context."""
    messages = [SYSTEM, Message("user", "Why is my disk full?")]
    cached = 0  # tokens of the previous prompt and its reply, all in the KV cache
    for step in range(8):
        gen = model.generate(messages, SCHEMA, max_tokens=64)
        stats = gen.stats
        total = stats.prompt_tokens_reused + stats.prompt_tokens_evaluated
        if step > 0:
            new_tokens = total - cached
            assert 0 < new_tokens < 80
            assert stats.prompt_tokens_evaluated <= new_tokens + 32, (step, stats)
            assert stats.prompt_tokens_reused >= cached - 1
        cached = total + stats.completion_tokens
        observation = json.dumps({"status": "ok", "data": f"/srv {90 + step}% used"})
        messages = messages + [Message("assistant", gen.text), Message("user", f"Observation: {observation}")]


def test_streamed_pieces_make_the_text_and_it_parses(model):
    pieces: list[str] = []
    gen = model.generate([SYSTEM, Message("user", "Check /var")], SCHEMA, max_tokens=96, on_text=pieces.append)
    assert "".join(pieces) == gen.text
    assert len(pieces) > 5
    assert gen.finish_reason == "stop"
    value = json.loads(gen.text)
    assert value["action"] in ("disk_usage", "top_processes", "finish")
    assert gen.stats.completion_tokens >= 10
    assert 0 < gen.stats.forced_tokens < gen.stats.completion_tokens
    assert gen.stats.generation_ms > 0 and gen.stats.prompt_ms > 0


@pytest.mark.parametrize("decoder", ["fast", "builtin"])
def test_should_stop_cancels_within_two_tokens(llama, decoder):
    chat = LlamaChatModel(llama, ModelInfo(name="smollm2"), decoder=decoder)
    chat.reset()
    seen: list[str] = []
    gen = chat.generate(
        [SYSTEM, Message("user", "Why is my disk full?")],
        SCHEMA,
        max_tokens=96,
        on_text=seen.append,
        should_stop=lambda: len(seen) >= 3,
    )
    assert gen.finish_reason == "cancelled"
    assert gen.stats.completion_tokens <= 3 + 2 + 8  # a few tokens, plus at most one forced draft
    assert gen.text == "".join(seen)


@pytest.mark.parametrize("decoder", ["fast", "builtin"])
def test_max_tokens_ends_with_length(llama, decoder):
    chat = LlamaChatModel(llama, ModelInfo(name="smollm2"), decoder=decoder)
    chat.reset()
    gen = chat.generate([SYSTEM, Message("user", "Why is my disk full?")], SCHEMA, max_tokens=5)
    assert gen.finish_reason == "length"
    assert gen.stats.completion_tokens == 5


def test_thread_policy_is_applied_and_reported(llama):
    calls = []

    def policy():
        calls.append(1)
        return (1, 2)

    chat = LlamaChatModel(llama, ModelInfo(name="smollm2"), thread_policy=policy)
    gen = chat.generate([SYSTEM, Message("user", "hi")], SCHEMA, max_tokens=2)
    assert calls == [1]
    assert (gen.stats.threads, gen.stats.threads_batch) == (1, 2)
    # Without a policy the stats report what the context really uses.
    llama_cpp.llama_set_n_threads(llama.ctx, 1, 1)
    plain = LlamaChatModel(llama, ModelInfo(name="smollm2"))
    gen = plain.generate([SYSTEM, Message("user", "hi")], SCHEMA, max_tokens=2)
    assert (gen.stats.threads, gen.stats.threads_batch) == (1, 1)


def test_context_overflow_is_a_one_line_model_error(model):
    huge = Message("user", "disk " * 3000)
    with pytest.raises(ModelError) as info:
        model.generate([SYSTEM, huge], SCHEMA, max_tokens=8)
    assert "context" in info.value.message and "\n" not in info.value.message


def test_template_comes_from_the_gguf_and_matches_chatml(llama):
    template = ChatTemplate.from_llama(llama)
    assert template.source == "gguf"
    messages = [SYSTEM, Message("user", "hi"), Message("assistant", "{}")]
    assert template.render(messages) == render_chatml(messages)
    assert ChatTemplate(template=None).render(messages) == render_chatml(messages)
    broken = ChatTemplate(template="{{ raise_exception('no system role') }}")
    assert broken.render(messages) == render_chatml(messages)


def test_transcript_reuses_generated_tokens_verbatim():
    transcript = Transcript()
    calls = []

    def tokenize(text, at_start):
        calls.append(text)
        return [ord(c) for c in text]

    transcript.reset_to("<p>", [1, 2])
    transcript.append("{x}", [7])  # generated: one token, however the tokenizer would split it
    tokens = transcript.tokens_for("<p>{x}<end>", tokenize)
    assert tokens == [1, 2, 7] + [ord(c) for c in "<end>"]
    assert calls == ["<end>"]
    assert transcript.tokens_for("<q>", tokenize) == [ord("<"), ord("q"), ord(">")]


def test_grammar_is_cached_and_ends_at_the_closing_brace():
    first = compile_schema(SCHEMA)
    assert compile_schema(json.loads(json.dumps(SCHEMA))) is first
    root = [line for line in first.gbnf.splitlines() if line.startswith("root ::= ")][0]
    assert root.endswith('"}"')
    with pytest.raises(ModelError):
        compile_schema({"type": "object", "properties": {"x": {"$ref": "#/nowhere"}}})


def test_generated_json_has_the_canonical_layout(model):
    """One layout (json.dumps's) leaves keys and punctuation forced, so they are drafted."""
    gen = model.generate([SYSTEM, Message("user", "Check /var")], SCHEMA, max_tokens=96)
    assert gen.finish_reason == "stop"
    assert gen.text == json.dumps(json.loads(gen.text), ensure_ascii=False)
    assert gen.text.startswith('{"thought": "')
    assert gen.stats.forced_tokens >= 8
