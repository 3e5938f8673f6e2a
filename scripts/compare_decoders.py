#!/usr/bin/env python3
"""How often the fast decoder's greedy output differs from llama-cpp-python's grammar path.

For each question × schema (every tool's step schema, the full step schema and the reflection
schema, with short string bounds so a comparison takes seconds), generate greedily with the
builtin path, the fast decoder without drafts and the fast decoder with drafts, each from a fresh
context, and count the outputs that differ from the builtin one. Without drafts the count must be
0 (same evaluation schedule); with drafts, batched evaluation rounds logits differently, so a
near-tie can go the other way (see docs/performance-decode.md).

    .venv/bin/python scripts/compare_decoders.py                       # Qwen 0.5B, 2 threads
    .venv/bin/python scripts/compare_decoders.py --model tiny --show
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from appliance.agent.actions import every_schema  # noqa: E402
from appliance.agent.settings import EngineSettings  # noqa: E402
from appliance.config import resolve_paths  # noqa: E402
from appliance.llm.base import Message, ModelInfo  # noqa: E402
from appliance.llm.catalog import load_catalog, resolve_model  # noqa: E402
from appliance.llm.chat_model import LlamaChatModel  # noqa: E402
from appliance.tools.registry import default_registry  # noqa: E402

SETTINGS = EngineSettings(thought_max_chars=40, answer_max_chars=60, evidence_max_chars=30, result_max_chars=20)
QUESTIONS = ["My disk is almost full.", "Why is my fan so loud?", "Which process listens on port 8080?"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct", help="catalog name, alias or path")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=60)
    parser.add_argument("--show", action="store_true", help="print each differing pair")
    args = parser.parse_args(argv)

    import llama_cpp

    path = resolve_model(args.model, models_dir=resolve_paths().models_dir, catalog=load_catalog()).path
    llama = llama_cpp.Llama(str(path), n_ctx=2048, n_threads=args.threads, n_threads_batch=args.threads,
                            verbose=False)
    info = ModelInfo(name=Path(path).stem)
    decoders = {"builtin": LlamaChatModel(llama, info, decoder="builtin"),
                "nodraft": LlamaChatModel(llama, info, decoder="fast", draft=False),
                "draft": LlamaChatModel(llama, info, decoder="fast", draft=True)}
    tools = ", ".join(spec.name for spec in default_registry().specs)
    system = Message("system", "You are a troubleshooting assistant. Reply with one JSON object: "
                     '{"thought": ..., "action": ..., "action_input": {...}}. Tools: ' + tools + ", finish, ask_user.")
    differ = {"nodraft": 0, "draft": 0}
    invalid = 0
    cases = 0
    for question in QUESTIONS:
        for name, schema in every_schema(default_registry().specs, SETTINGS).items():
            messages = [system, Message("user", f"{question} Take the next step with {name}.")]
            texts = {}
            for kind, model in decoders.items():
                model.reset()
                gen = model.generate(messages, schema, max_tokens=args.max_tokens)
                texts[kind] = gen.text
                if gen.finish_reason == "stop":
                    try:
                        json.loads(gen.text)
                    except ValueError:
                        invalid += 1
            cases += 1
            for kind in differ:
                if texts[kind] != texts["builtin"]:
                    differ[kind] += 1
                    if args.show:
                        print(f"{kind} differs ({name}, {question!r}):\n  builtin: {texts['builtin']}\n  {kind}: {texts[kind]}")
    llama.close()
    print(f"{info.name}, {args.threads} threads: {cases} cases; differ from builtin: without drafts "
          f"{differ['nodraft']}, with drafts {differ['draft']}; finished outputs that did not parse: {invalid}")
    return 1 if differ["nodraft"] or invalid else 0


if __name__ == "__main__":
    sys.exit(main())
