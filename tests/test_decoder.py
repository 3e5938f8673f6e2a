"""The fast decoder against llama-cpp-python's own grammar path, on real GGUF models.

What matters:
- under greedy decoding, the fast decoder's output is the builtin path's output, for every tool's
  step schema, the full step schema and the reflection schema (evaluation schedule held equal:
  see FastDecoder's docstring for why batched drafts are compared separately);
- with batched drafts on, every output still parses and validates, and drafts are really used;
- fed random logits (hypothesis), every token sequence the decoder emits is accepted by an
  independent grammar sampler, and a finished object parses and validates.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

llama_cpp = pytest.importorskip("llama_cpp")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from appliance.agent.actions import every_schema  # noqa: E402
from appliance.agent.settings import EngineSettings  # noqa: E402
from appliance.llm.base import Message, ModelInfo  # noqa: E402
from appliance.llm.runtime import load_llama  # noqa: E402
from appliance.llm.chat_model import LlamaChatModel  # noqa: E402
from appliance.llm.fast_decoder import FastDecoder  # noqa: E402
from appliance.llm.grammar_matcher import GrammarMatcher, ProbeSet  # noqa: E402
from appliance.llm.sampling import SamplingSettings  # noqa: E402
from appliance.llm.session import Session  # noqa: E402
from appliance.llm.grammar import compile_schema  # noqa: E402
from appliance.tools.registry import default_registry  # noqa: E402
from appliance.tools.schema import validate  # noqa: E402

# Short strings so that objects finish within a few dozen tokens and the tests stay fast.
SETTINGS = EngineSettings(thought_max_chars=40, answer_max_chars=60, evidence_max_chars=30, result_max_chars=20)


def schema_cases() -> dict[str, dict]:
    return every_schema(default_registry().specs, SETTINGS)


def check_valid(value, schema: dict) -> str | None:
    """`validate` plus the anyOf the step schema uses (one alternative must accept)."""
    if "anyOf" in schema:
        problems = [check_valid(value, option) for option in schema["anyOf"]]
        return None if any(p is None for p in problems) else problems[0]
    problem = validate(value, schema, where="output")
    if problem is None and isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                problem = check_valid(value[key], sub)
                if problem:
                    return problem
    return problem


@pytest.fixture(scope="module")
def smollm2(smollm2_path):
    llama = load_llama(smollm2_path, n_ctx=2048, n_threads=1)  # AMX extra buffers off (see appliance.llm.speed)
    yield llama
    llama.close()


@pytest.fixture(scope="module")
def system_message():
    # Short on purpose: each comparison re-evaluates the prompt from scratch for each decoder.
    tools = ", ".join(spec.name for spec in default_registry().specs)
    return Message(
        "system",
        "You are a troubleshooting assistant. Reply with one JSON object: "
        '{"thought": ..., "action": ..., "action_input": {...}}. Tools: ' + tools + ", finish, ask_user.",
    )


def _pair(llama):
    info = ModelInfo(name="test")
    return (
        LlamaChatModel(llama, info, decoder="builtin"),
        LlamaChatModel(llama, info, decoder="fast", draft=False),
        LlamaChatModel(llama, info, decoder="fast", draft=True),
    )


def test_fast_equals_builtin_for_every_schema(smollm2, system_message):
    builtin, exact, drafted = _pair(smollm2)
    builtin.reset()
    system_tokens = builtin.count_tokens([system_message]) - 8  # safely inside the system message
    forced_total = 0
    for name, schema in schema_cases().items():
        messages = [system_message, Message("user", f"My disk is almost full. Take the next step with {name}.")]
        outputs = []
        for model in (builtin, exact, drafted):
            # The same cache state for each decoder: the system message stays cached, the
            # question is evaluated afresh in one batch.
            model.reset(keep_tokens=system_tokens)
            outputs.append(model.generate(messages, schema, max_tokens=40))
        reference, fast, with_drafts = outputs
        assert fast.text == reference.text, name
        assert fast.finish_reason == reference.finish_reason, name
        assert fast.stats.completion_tokens == reference.stats.completion_tokens
        for gen in (reference, with_drafts):
            if gen.finish_reason == "stop":
                assert check_valid(json.loads(gen.text), schema) is None, (name, gen.text)
        forced_total += with_drafts.stats.forced_tokens
    assert forced_total > 20  # keys and punctuation really are drafted and accepted


def test_fast_equals_builtin_across_steps_of_a_run(smollm2, system_message):
    """Prefix reuse on: the second step starts from the cached transcript in both decoders."""
    builtin, exact, _ = _pair(smollm2)
    schema = schema_cases()["step"]
    texts = {}
    for model in (builtin, exact):
        model.reset()
        messages = [system_message, Message("user", "Why is my computer slow?")]
        first = model.generate(messages, schema, max_tokens=80)
        messages += [Message("assistant", first.text), Message("user", 'Observation: {"status": "ok", "data": "load 7.9"}')]
        second = model.generate(messages, schema, max_tokens=80)
        assert second.stats.prompt_tokens_reused >= first.stats.prompt_tokens_reused + first.stats.completion_tokens
        texts[model.decoder_name] = (first.text, second.text)
    assert texts["builtin"] == texts["fast"]


def test_qwen05_fast_equals_builtin(qwen05_path, system_message):
    llama = load_llama(qwen05_path, n_ctx=2048, n_threads=1)  # AMX extra buffers off (see appliance.llm.speed)
    try:
        builtin, exact, drafted = _pair(llama)
        messages = [system_message, Message("user", "What is using my CPU?")]
        schema = schema_cases()["step"]
        out = []
        for model in (builtin, exact, drafted):
            model.reset()
            out.append(model.generate(messages, schema, max_tokens=24))
        assert out[1].text == out[0].text
        assert out[1].text.startswith('{"thought"') or out[1].text.startswith('{ "thought"')
        assert out[2].stats.forced_tokens > 0
    finally:
        llama.close()


# --- random logits --------------------------------------------------------------------------


class RandomLogitsSession(Session):
    """A real vocabulary and grammar, but logits from a seeded RNG instead of the model.

    With probability `follow` a row favours the next drafted token, so drafts are sometimes
    accepted, sometimes cut short — both paths of the decoder get exercised.
    """

    def __init__(self, llama, seed: int, follow: float, spike: float) -> None:
        super().__init__(llama)
        self.rng = np.random.default_rng(seed)
        self.follow = follow
        self.spike = spike
        self.tokens: list[int] = [1]
        self.rows = [self._row(None)]

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    def trim(self, n: int) -> None:
        del self.tokens[n:]

    def _row(self, favoured: int | None) -> np.ndarray:
        row = self.rng.normal(0.0, 3.0, self.n_vocab).astype(np.single)
        if self.rng.random() < self.spike:  # a peaked distribution, like a confident model
            row[self.rng.integers(self.n_vocab)] += 40.0
        if favoured is not None and self.rng.random() < self.follow:
            row[favoured] += 80.0
        return row

    def decode(self, tokens) -> None:
        tokens = list(tokens)
        self.tokens.extend(tokens)
        self.rows = [self._row(tokens[j + 1] if j + 1 < len(tokens) else None) for j in range(len(tokens))]

    def logits(self, row: int) -> np.ndarray:
        return self.rows[row]

    def evaluated(self) -> np.ndarray:
        return np.asarray(self.tokens, dtype=np.intc)


PROPERTY_SCHEMAS = [
    {
        "type": "object",
        "properties": {
            "thought": {"type": "string", "maxLength": 8},
            "action": {"enum": ["disk_usage", "disk_io", "top_processes"]},
            "n": {"type": "integer", "enum": [1, 2, 3, 10]},
            "flag": {"type": "boolean"},
        },
        "required": ["thought", "action", "n", "flag"],
        "additionalProperties": False,
    },
    {
        "anyOf": [
            {
                "type": "object",
                "properties": {"action": {"const": "list_dir"}, "action_input": {
                    "type": "object", "properties": {"path": {"type": "string", "maxLength": 6}},
                    "required": ["path"], "additionalProperties": False}},
                "required": ["action", "action_input"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {"action": {"const": "finish"}, "action_input": {
                    "type": "object", "properties": {"evidence": {
                        "type": "array", "items": {"type": "string", "maxLength": 4}, "maxItems": 2}},
                    "required": ["evidence"], "additionalProperties": False}},
                "required": ["action", "action_input"],
                "additionalProperties": False,
            },
        ]
    },
]


@pytest.fixture(scope="module")
def probe_session(smollm2):
    return Session(smollm2)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 2**32 - 1),
    follow=st.floats(0.0, 1.0),
    spike=st.floats(0.0, 1.0),
    which=st.integers(0, len(PROPERTY_SCHEMAS) - 1),
    temperature=st.sampled_from([0.0, 0.0, 0.8]),
)
def test_random_logits_always_follow_the_grammar(smollm2, probe_session, seed, follow, spike, which, temperature):
    schema = PROPERTY_SCHEMAS[which]
    grammar = compile_schema(schema)
    session = RandomLogitsSession(smollm2, seed, follow, spike)
    decoder = FastDecoder(session)
    result = decoder.decode(grammar, SamplingSettings(temperature=temperature, seed=seed), max_tokens=80)

    # Replay through an independent grammar sampler: every token must be allowed in turn.
    checker = GrammarMatcher(probe_session, grammar, ProbeSet.for_session(probe_session))
    for token in result.tokens:
        assert checker.allows(token), (result.tokens, token)
        checker.accept(token)
    text = b"".join(session.piece(t) for t in result.tokens).decode("utf-8", errors="replace")
    if result.finish_reason == "stop":
        assert any(checker.allows(t) for t in session.eog_ids)
        assert check_valid(json.loads(text), schema) is None, text
    else:
        assert result.finish_reason == "length" and len(result.tokens) == 80
    checker.close()


class PrefixLogitsSession(RandomLogitsSession):
    """Logits that are a pure function of the token prefix, however the tokens were batched.

    On a real model, batched and one-at-a-time evaluation give logits that differ by rounding
    (see FastDecoder), so a real model cannot show that drafting changes nothing *but* the
    rounding. With these logits it must change nothing at all: drafts on, drafts off and the
    builtin rule (mask the whole vocabulary, then take the best token) give the same tokens.
    """

    def __init__(self, llama, seed: int, spike: float) -> None:
        self.seed, self.spike_rate = seed, spike
        super().__init__(llama, seed, 0.0, 0.0)
        self.rows_from = 0

    def _prefix_row(self, n: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, *self.tokens[:n]])
        row = rng.normal(0.0, 3.0, self.n_vocab).astype(np.single)
        if rng.random() < self.spike_rate:
            row[rng.integers(self.n_vocab)] += 40.0
        return row

    def decode(self, tokens) -> None:
        self.rows_from = len(self.tokens)
        self.tokens.extend(tokens)

    def logits(self, row: int) -> np.ndarray:
        n = len(self.tokens) if row == -1 else self.rows_from + row + 1
        return self._prefix_row(n)


def _mask_then_argmax(session, matcher, max_tokens: int) -> list[int]:
    """The builtin path's greedy rule: the whole vocabulary masked by the grammar every token."""
    tokens: list[int] = []
    while len(tokens) < max_tokens:
        token = int(np.argmax(matcher.masked(session.logits(-1))))
        if session.is_eog(token):
            break
        matcher.accept(token)
        tokens.append(token)
        session.decode([token])
    return tokens


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), spike=st.floats(0.0, 1.0), which=st.integers(0, len(PROPERTY_SCHEMAS) - 1))
def test_greedy_with_drafts_is_exactly_mask_then_argmax_on_the_same_logits(smollm2, probe_session, seed, spike, which):
    grammar = compile_schema(PROPERTY_SCHEMAS[which])
    outputs, forced = {}, 0
    for name, draft in (("draft", True), ("nodraft", False)):
        decoder = FastDecoder(PrefixLogitsSession(smollm2, seed, spike), draft=draft)
        result = decoder.decode(grammar, SamplingSettings(temperature=0.0), max_tokens=60)
        outputs[name] = result.tokens
        forced += result.forced_tokens
    reference = GrammarMatcher(probe_session, grammar, ProbeSet.for_session(probe_session))
    try:
        outputs["mask-then-argmax"] = _mask_then_argmax(PrefixLogitsSession(smollm2, seed, spike), reference, 60)
    finally:
        reference.close()
    assert outputs["draft"] == outputs["nodraft"] == outputs["mask-then-argmax"], outputs


def test_drafts_are_used_with_prefix_logits(smollm2):
    """The equality above is not vacuous: on these logits drafts are taken and accepted."""
    grammar = compile_schema(PROPERTY_SCHEMAS[0])
    result = FastDecoder(PrefixLogitsSession(smollm2, 7, 0.5), draft=True).decode(
        grammar, SamplingSettings(temperature=0.0), max_tokens=60)
    assert result.forced_tokens >= 5, result


class CopyingSession(PrefixLogitsSession):
    """Logits of a model that copies: where the last three tokens appeared before, the token
    that followed them there wins; elsewhere the row is random. Still a pure function of the
    prefix, so drafts can change how many decodes run, never which tokens come out."""

    def __init__(self, llama, seed: int, context: list[int]) -> None:
        super().__init__(llama, seed, 0.0)
        self.tokens = [1, *context]
        self.decodes = 0

    def _prefix_row(self, n: int) -> np.ndarray:
        row = super()._prefix_row(n)
        prefix = self.tokens[:n]
        for i in range(len(prefix) - 4, -1, -1):
            if prefix[i : i + 3] == prefix[-3:]:
                row[prefix[i + 3]] += 60.0
                break
        return row

    def decode(self, tokens) -> None:
        self.decodes += 1
        super().decode(tokens)


def test_drafts_copied_from_the_context_change_the_decodes_not_the_tokens(smollm2):
    rng = np.random.default_rng(3)
    eog = set(Session(smollm2).eog_ids)
    line = [int(t) for t in rng.choice(np.arange(200, 5000), 40, replace=False) if int(t) not in eog]
    context = [*rng.integers(200, 5000, 25).tolist(), *line, *rng.integers(200, 5000, 10).tolist(), *line[:3]]
    runs = {}
    for lookup in (True, False):
        session = CopyingSession(smollm2, 11, context)
        result = FastDecoder(session, draft=True, lookup=lookup).decode(
            None, SamplingSettings(temperature=0.0), max_tokens=30)
        runs[lookup] = (result, session.decodes)
    (copied, decodes), (plain, plain_decodes) = runs[True], runs[False]
    assert copied.tokens == plain.tokens
    assert copied.tokens[:20] == line[3:23]  # the copying model really copies the line
    assert copied.copied_tokens >= 15 and plain.copied_tokens == 0
    assert decodes <= plain_decodes // 3, (decodes, plain_decodes)


@pytest.mark.parametrize("low,high", [(0, 4194304), (0, 65535), (-5, 12), (-300, -7), (1, None), (10, 10)])
def test_integer_bounds_are_exact_in_the_grammar(probe_session, low, high):
    """The converter ignores minimum/maximum; grammar.py adds exact digit-range rules."""
    schema = {"type": "integer", "minimum": low}
    if high is not None:
        schema["maximum"] = high
    grammar = compile_schema(schema)
    probes = ProbeSet.for_session(probe_session)
    by_char = {c: t for t, c in probes.char.items()}
    top = high if high is not None else low + 10**7
    candidates = {low, top, low - 1, top + 1, 0, -1, (low + top) // 2, 10 * top + 3}
    candidates |= set(np.random.default_rng(0).integers(low - 50, top + 50, 40).tolist())
    for number in sorted(candidates):
        matcher = GrammarMatcher(probe_session, grammar, probes)
        generable = True
        for char in str(number):
            token = by_char[char]
            if not matcher.allows(token):
                generable = False
                break
            matcher.accept(token)
        generable = generable and any(matcher.allows(t) for t in probe_session.eog_ids)
        matcher.close()
        assert generable == (low <= number <= top or (high is None and number >= low)), number


def test_number_bounds_are_respected_in_the_grammar(probe_session):
    grammar = compile_schema({"type": "number", "minimum": 0.2, "maximum": 5.0})
    probes = ProbeSet.for_session(probe_session)
    by_char = {c: t for t, c in probes.char.items()}

    def generable(text: str) -> bool:
        matcher = GrammarMatcher(probe_session, grammar, probes)
        try:
            for char in text:
                if not matcher.allows(by_char[char]):
                    return False
                matcher.accept(by_char[char])
            return any(matcher.allows(t) for t in probe_session.eog_ids)
        finally:
            matcher.close()

    assert all(generable(t) for t in ["0.2", "5", "5.0", "2.7", "1"])
    assert not any(generable(t) for t in ["0.1", "5.1", "6", "10", "0", "-1"])
