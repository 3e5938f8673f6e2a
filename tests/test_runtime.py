"""Loading real GGUF files through llama.cpp: the smoke test (SmolLM2 generates one
grammar-constrained JSON object that parses), the opened chat model, a file llama.cpp refuses, and
llama.cpp's log staying silent unless asked for."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from appliance.config import CHECKOUT_DIR, resolve_paths
from appliance.errors import ModelError
from appliance.llm.base import Message
from appliance.llm.runtime import load_llama, open_chat_model
from appliance.llm.threads import AdaptiveThreadPolicy, FixedThreadPolicy

pytestmark = pytest.mark.model

SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["cpu_usage", "disk_usage"]},
        "reason": {"type": "string", "maxLength": 60},
    },
    "required": ["action", "reason"],
    "additionalProperties": False,
}


def test_smollm2_generates_a_grammar_constrained_json_object(smollm2_path):
    from llama_cpp import LlamaGrammar

    # Threads as the appliance chooses them: on a machine busy with other work, two lock-step
    # threads are many times slower than one (measured: 36 s against 2 s for this very call).
    threads, batch = AdaptiveThreadPolicy()()
    llama = load_llama(smollm2_path, n_ctx=1024, n_threads=threads, n_threads_batch=batch)
    assert llama.n_ctx() == 1024
    grammar = LlamaGrammar.from_json_schema(json.dumps(SCHEMA), verbose=False)
    prompt = ("<|im_start|>user\nThe fan is loud. Pick a tool as JSON.<|im_end|>\n<|im_start|>assistant\n")
    out = llama.create_completion(prompt, grammar=grammar, max_tokens=80, temperature=0.0)
    data = json.loads(out["choices"][0]["text"])
    assert set(data) == {"action", "reason"} and data["action"] in ("cpu_usage", "disk_usage")
    assert len(data["reason"]) <= 60


def test_open_chat_model_resolves_checks_and_wraps(smollm2_path):
    paths = resolve_paths()
    model = open_chat_model("tiny", paths=paths, env={}, n_ctx=2048, thread_policy=FixedThreadPolicy(1))
    assert model.info.name == "smollm2-135m-instruct"
    assert model.info.sha256 == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert model.context_length == 2048
    messages = [Message("system", "Answer with JSON."), Message("user", "Which tool shows CPU usage?")]
    generation = model.generate(messages, SCHEMA, max_tokens=60)
    data = json.loads(generation.text)
    assert data["action"] in ("cpu_usage", "disk_usage")
    assert (generation.stats.threads, generation.stats.threads_batch) == (1, 1)


def test_catalog_context_length_is_used_by_default(smollm2_path):
    model = open_chat_model(str(smollm2_path), paths=resolve_paths(), env={})
    assert model.info.name == "smollm2-135m-instruct"  # a path named like a catalog file gets its facts
    assert model.context_length == 8192


def test_a_file_llama_cpp_refuses(tmp_path, make_gguf):
    path = make_gguf(tmp_path / "odd.gguf", architecture="nonsense")  # a valid header, no such model
    with pytest.raises(ModelError) as caught:
        load_llama(path, n_ctx=512, n_threads=1)
    message = caught.value.message
    assert message == f"llama.cpp could not load model file {path}: unknown model architecture: 'nonsense'"


def test_changed_catalog_file_is_refused_before_loading(tmp_path, smollm2_path):
    """Same size, one byte different: the header check passes, the hash check must not."""
    copy = tmp_path / "smollm2-135m-instruct-q4_1.gguf"
    data = bytearray(smollm2_path.read_bytes())
    data[-100] ^= 0xFF
    copy.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="does not match its recorded sha256"):
        open_chat_model(str(copy), paths=resolve_paths(), env={})


LOAD = textwrap.dedent("""
    import sys
    from appliance.llm.runtime import load_llama
    llama = load_llama(sys.argv[1], n_ctx=256, n_threads=1, verbose=sys.argv[2] == "1")
    llama.create_completion("Hi", max_tokens=2)
""")


def test_llama_cpp_log_is_silent_unless_verbose(smollm2_path):
    def stderr_of(verbose: str) -> str:
        result = subprocess.run([sys.executable, "-c", LOAD, str(smollm2_path), verbose], cwd=CHECKOUT_DIR,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stderr + result.stdout

    assert stderr_of("0") == ""
    assert "llama_model_loader" in stderr_of("1")
