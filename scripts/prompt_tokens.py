#!/usr/bin/env python3
"""How many tokens the engine's system prompt takes with a model's own tokenizer (issue 14).

Loads only the vocabulary (no weights, well under a second) and renders the system prompt with
the model's chat template, as a run does. Usage:

  .venv/bin/python scripts/prompt_tokens.py                 # the default model (Qwen 1.5B)
  .venv/bin/python scripts/prompt_tokens.py --model tiny --show
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from appliance.agent.prompt import system_prompt  # noqa: E402
from appliance.agent.settings import EngineSettings  # noqa: E402
from appliance.config import resolve_paths  # noqa: E402
from appliance.llm.base import Message  # noqa: E402
from appliance.llm.catalog import load_catalog, resolve_model  # noqa: E402
from appliance.llm.chat_template import ChatTemplate  # noqa: E402
from appliance.tools.registry import default_registry  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--show", action="store_true", help="print the prompt too")
    args = parser.parse_args()
    import llama_cpp

    resolved = resolve_model(args.model, models_dir=resolve_paths().models_dir, catalog=load_catalog(), env={})
    llama = llama_cpp.Llama(str(resolved.path), vocab_only=True, verbose=False)
    text = system_prompt(default_registry().specs, EngineSettings())
    rendered = ChatTemplate.from_llama(llama).render([Message("system", text)], add_generation_prompt=False)
    tokens = llama.tokenize(rendered.encode(), add_bos=False, special=True)
    print(f"{resolved.name}: system prompt {len(tokens)} tokens, {len(text)} characters")
    if args.show:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
