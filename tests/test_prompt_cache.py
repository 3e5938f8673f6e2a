"""The prompt cache on a real model (SmolLM2-135M): the system prompt's KV state saved by one
start is loaded by the next, which then evaluates only the question; a change of prompt or model
makes a new file; a corrupt or truncated file is ignored with a note and rebuilt; old files go.

Two separately loaded contexts stand for two starts of the appliance (a new context holds
nothing: only the file can give it the system prompt).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("llama_cpp")

from appliance.llm.base import Message, ModelInfo  # noqa: E402
from appliance.llm.chat_model import LlamaChatModel  # noqa: E402
from appliance.llm.prompt_cache import PromptCache, header_problem  # noqa: E402
from appliance.llm.runtime import load_llama  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {"thought": {"type": "string", "maxLength": 40}, "action": {"enum": ["disk_usage", "finish"]}},
    "required": ["thought", "action"],
    "additionalProperties": False,
}
TOOLS = "\n".join(f"## tool_{i}\nReturns reading number {i} of this machine; use it when asked about part {i}."
                  for i in range(24))
SYSTEM = Message("system", "You are a troubleshooting assistant. Reply with one JSON object.\n" + TOOLS)
QUESTION = Message("user", "Why is the disk full?")


@pytest.fixture(scope="module")
def contexts(smollm2_path):
    """Two contexts on the same file: the first start and the second."""
    return [load_llama(smollm2_path, n_ctx=2048, n_threads=1) for _ in range(2)]


def start(llama, cache, *, sha256="b179" * 16) -> LlamaChatModel:
    """A fresh chat model over an emptied context, as a new process would have it."""
    info = ModelInfo(name="smollm2", path=str(llama.model_path), sha256=sha256, context_length=2048)
    chat = LlamaChatModel(llama, info, prompt_cache=cache)
    chat.reset()
    return chat


def ask(chat: LlamaChatModel, system: Message = SYSTEM):
    return chat.generate([system, QUESTION], SCHEMA, max_tokens=24)


def question_tokens(chat: LlamaChatModel, system: Message = SYSTEM) -> int:
    """Tokens of the prompt after the system message: the question and the template's glue."""
    whole = chat.count_tokens([system, QUESTION])
    return whole - len(chat._tokenize(chat.template.render([system], add_generation_prompt=False), True))


def test_the_second_start_loads_the_system_prompt_and_evaluates_only_the_question(contexts, tmp_path):
    cache = PromptCache(tmp_path)
    first = start(contexts[0], cache)
    made = ask(first)
    assert first.last_prefix.status == "evaluated" and first.last_prefix.file
    assert len(cache.files()) == 1
    system_tokens = first.last_prefix.tokens
    assert made.stats.prompt_tokens_evaluated >= system_tokens  # the first start paid for it

    second = start(contexts[1], cache)
    again = ask(second)
    assert second.last_prefix.status == "loaded"
    assert again.stats.prompt_tokens_evaluated <= question_tokens(second)
    assert again.stats.prompt_tokens_reused == system_tokens
    # The loaded cells are the evaluated ones: greedy decoding gives the same reply.
    assert again.text == made.text
    assert second.runtime_report()["system_prompt"]["status"] == "loaded"


def test_the_loaded_state_gives_the_same_logits_as_evaluating(contexts, tmp_path):
    cache = PromptCache(tmp_path)
    first = start(contexts[0], cache)
    first.warm([SYSTEM])
    tokens = first._tokenize(first.render([SYSTEM, QUESTION]), True)
    first._session.prefill(tokens)
    evaluated = first._session.logits(-1).copy()
    second = start(contexts[1], cache)
    assert second.warm([SYSTEM]).status == "loaded"
    second._session.prefill(tokens)
    assert np.array_equal(second._session.logits(-1), evaluated)
    # and a context that holds nothing of the prompt would not give them (the check can fail)
    second._session.trim(0)
    second._session.prefill(tokens[-8:])
    assert not np.array_equal(second._session.logits(-1), evaluated)


def test_a_changed_prompt_or_model_makes_a_new_file(contexts, tmp_path):
    cache = PromptCache(tmp_path)
    ask(start(contexts[0], cache))
    other_prompt = Message("system", SYSTEM.content + "\nNever guess.")
    changed = start(contexts[1], cache)
    ask(changed, other_prompt)
    assert changed.last_prefix.status == "evaluated"
    other_model = start(contexts[1], cache, sha256="0" * 64)
    ask(other_model)
    assert other_model.last_prefix.status == "evaluated"
    assert len(cache.files()) == 3
    assert start(contexts[0], cache).warm([other_prompt]).status == "loaded"


@pytest.mark.parametrize("damage, word", [("flip", "corrupt"), ("truncate", "truncated")])
def test_a_damaged_file_is_ignored_with_a_note_and_rebuilt(contexts, tmp_path, damage, word):
    cache = PromptCache(tmp_path)
    made = ask(start(contexts[0], cache))
    path = cache.files()[0].path
    size = path.stat().st_size
    if damage == "flip":
        with open(path, "r+b") as handle:
            handle.seek(size - 1000)
            byte = handle.read(1)
            handle.seek(size - 1000)
            handle.write(bytes([byte[0] ^ 0xFF]))
    else:
        os.truncate(path, size // 2)
    victim = start(contexts[1], cache)
    again = ask(victim)
    assert victim.last_prefix.status == "evaluated"
    assert word in victim.last_prefix.note and path.name in victim.last_prefix.note
    assert again.text == made.text
    assert header_problem(path) == "" and path.stat().st_size > size // 2 + 1  # rewritten whole
    assert start(contexts[0], cache).warm([SYSTEM]).status == "loaded"


def test_old_files_are_pruned_beyond_the_bounds(tmp_path):
    cache = PromptCache(tmp_path, max_files=2, max_bytes=10_000)
    for i, size in enumerate([4000, 4000, 4000]):
        path = tmp_path / f"{i:032x}.kv"
        path.write_bytes(b"x" * size)
        os.utime(path, (1000 + i, 1000 + i))
    removed = cache.prune()
    assert [p.name for p in removed] == [f"{0:032x}.kv"]
    small = PromptCache(tmp_path, max_files=5, max_bytes=5000)
    assert [p.name for p in small.prune()] == [f"{1:032x}.kv"]
    assert [f.path.name for f in small.files()] == [f"{2:032x}.kv"]
    assert "damaged" in small.summary()  # not a prompt cache file at all
