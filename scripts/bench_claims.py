#!/usr/bin/env python3
"""Today's answer path against an earlier commit's, side by side in one run (issue 55's speed).

For each question, both trees answer it with `appliance ask --json` in a fresh process (the prompt
cache in place, warmed by one question first), alternating which goes first. Printed per tree:
the mean generated tokens per question, the tokens of the evidence given before the first step
(step 0's observation, counted with the model's own tokenizer) and the seconds per question, and
the ratios new/old. The earlier tree is a detached worktree of `--baseline` in a temporary folder.

  .venv/bin/python scripts/bench_claims.py                       # against 270fe26, the default model
  .venv/bin/python scripts/bench_claims.py --baseline HEAD~5 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Plain questions of several kinds, in this script's own words (no evaluation case's).
QUESTIONS = (
    "how much memory is free right now?",
    "which program is using the most cpu?",
    "is anything listening on port 22?",
    "how many cpu cores does this computer have?",
    "what is taking up the space on my disk?",
    "why does my computer feel slow?",
)
WARM_UP = "what is this machine?"


def ask(tree: Path, db: Path, question: str, model: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), APPLIANCE_MODELS_DIR=str(ROOT / "models"))
    done = subprocess.run([sys.executable, "-m", "appliance.cli", "ask", "--json", "--no-ask", "--db", str(db),
                           "--model", model, question], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=600)
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise SystemExit(f"bench_claims: {tree.name} gave no JSON for {question!r}: {done.stderr.strip()[-300:]}")


def evidence_tokens(db: Path, run_id: str, tokenize) -> int:
    from appliance.store import open_store

    with open_store(db, readonly=True) as store:
        run = store.get_run(run_id)
    first = next((s for s in run.steps or () if s.step == 0), None)
    return len(tokenize(first.observation)) if first else 0


def tokenizer(model: str):
    from llama_cpp import Llama

    path = next(iter(sorted((ROOT / "models").glob(f"{model}*.gguf"))), None)
    if path is None:
        raise SystemExit(f"bench_claims: no GGUF for {model} under models/ (appliance models pull {model})")
    llama = Llama(model_path=str(path), vocab_only=True, verbose=False)
    return lambda text: llama.tokenize(text.encode(), add_bos=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="270fe26")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-claims-"))
    old = work / "baseline"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old), args.baseline], check=True,
                   capture_output=True)
    trees = {"new": ROOT, "old": old}
    tokenize = tokenizer(args.model)
    rows: dict[str, list[dict]] = {"new": [], "old": []}
    try:
        for name, tree in trees.items():
            ask(tree, work / f"{name}.db", WARM_UP, args.model)  # the prompt cache of each tree's system prompt
        for round_index in range(args.rounds):
            for index, question in enumerate(QUESTIONS):
                order = ["new", "old"] if (index + round_index) % 2 == 0 else ["old", "new"]
                for name in order:
                    db = work / f"{name}.db"
                    end = ask(trees[name], db, question, args.model)
                    row = {"question": question, "generated": end["completion_tokens"], "seconds": end["seconds"],
                           "evidence": evidence_tokens(db, end["run_id"], tokenize), "answer": end["answer"]}
                    rows[name].append(row)
                    print(f"{name:3}  {row['seconds']:6.1f} s  {row['generated']:4} generated  "
                          f"{row['evidence']:5} evidence tokens  {question}  →  {row['answer'][:90]}", flush=True)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], capture_output=True)
    means = {name: {k: statistics.mean(r[k] for r in got) for k in ("generated", "evidence", "seconds")}
             for name, got in rows.items()}
    print()
    for key, label in (("generated", "generated tokens per question"), ("evidence", "evidence tokens before step 1"),
                       ("seconds", "seconds per question")):
        new, old_value = means["new"][key], means["old"][key]
        print(f"{label:32} new {new:7.1f}  old ({args.baseline}) {old_value:7.1f}  new/old {new / old_value:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
