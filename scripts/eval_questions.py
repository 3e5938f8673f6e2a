#!/usr/bin/env python3
"""How well the question reader labels the labeled question set (issue 31): accuracy per kind asked,
per resource, of the fault flag and of the mentions, overall and per style, and the time a question.

The set is tests/data/questions/: `kept.jsonl` (the default) was written before any tuning and is
never read to change code, so measure it with `--no-misses` (counts only, no question text);
`tune.jsonl` is the half to read and tune on. Usage:

  .venv/bin/python scripts/eval_questions.py --no-misses                  # the kept half, lexical prior
  .venv/bin/python scripts/eval_questions.py tests/data/questions/tune.jsonl
  .venv/bin/python scripts/eval_questions.py --model qwen --no-misses     # the model classifies
  .venv/bin/python scripts/eval_questions.py --json                       # the numbers as JSON

A question is right on `mentions` when its paths, ports, pids and names each equal the label's as
sets; `all` is right when asks, resource, fault and mentions all are.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Iterable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "data" / "questions"
DEFAULT_FILE = DATA / "kept.jsonl"
MENTIONS = ("paths", "ports", "pids", "names")
FIELDS = ("asks", "resource", "fault", "mentions")


def load(path: Path) -> list[dict[str, Any]]:
    """The labeled questions of one JSONL file, in order."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _label(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def predicted(question: Any) -> dict[str, Any]:
    """A `Question` (or anything with its attributes) as plain labels, to compare with a row's."""
    out = {"asks": _label(question.asks), "resource": _label(question.resource), "fault": bool(question.fault)}
    for key in MENTIONS:
        out[key] = sorted(_label(v) for v in getattr(question, key))
    return out


def mentions_equal(row: dict[str, Any], got: dict[str, Any]) -> bool:
    return all(set(row[key]) == set(got[key]) for key in MENTIONS)


@dataclass
class Tally:
    """Right and total, by a key (a kind, a resource, a style)."""

    right: Counter = field(default_factory=Counter)
    total: Counter = field(default_factory=Counter)

    def add(self, key: str, ok: bool) -> None:
        self.total[key] += 1
        self.right[key] += int(ok)

    def rows(self, order: tuple[str, ...] = ()) -> list[tuple[str, int, int]]:
        keys = [k for k in order if k in self.total] + sorted(k for k in self.total if k not in order)
        return [(key, self.right[key], self.total[key]) for key in keys]


@dataclass
class Result:
    per_field: Tally = field(default_factory=Tally)  # asks | resource | fault | mentions | all
    per_asks: Tally = field(default_factory=Tally)  # the asks label right, by the expected kind
    per_resource: Tally = field(default_factory=Tally)
    per_style: Tally = field(default_factory=Tally)  # every field right, by style
    confusion: Counter = field(default_factory=Counter)  # (field, expected, got) of the misses
    misses: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


def score(rows: Iterable[dict[str, Any]], read: Callable[[str], Any]) -> Result:
    """Read every row's text and compare with its labels."""
    result = Result()
    for row in rows:
        started = time.perf_counter()
        question = read(row["text"])
        result.seconds.append(time.perf_counter() - started)
        got = predicted(question)
        ok = {"asks": got["asks"] == row["asks"], "resource": got["resource"] == row["resource"],
              "fault": got["fault"] == row["fault"], "mentions": mentions_equal(row, got)}
        for key, good in ok.items():
            result.per_field.add(key, good)
        everything = all(ok.values())
        result.per_field.add("all", everything)
        result.per_asks.add(row["asks"], ok["asks"])
        result.per_resource.add(row["resource"], ok["resource"])
        result.per_style.add(row.get("style", "?"), everything)
        for key in ("asks", "resource", "fault"):
            if not ok[key]:
                result.confusion[(key, str(row[key]), str(got[key]))] += 1
        for key in MENTIONS:
            if set(row[key]) != set(got[key]):
                result.confusion[(key, "", "")] += 1  # which kind of mention differs, never the text
        if not everything:
            result.misses.append((row, got))
    return result


def _pct(right: int, total: int) -> str:
    return f"{right:>4}/{total:<4} {right / total:6.1%}" if total else "   —"


def format_result(result: Result, *, misses: bool) -> str:
    lines: list[str] = []
    for title, tally in (("field", result.per_field), ("asks (by the expected kind)", result.per_asks),
                         ("resource (by the expected resource)", result.per_resource),
                         ("every field right, by style", result.per_style)):
        lines.append(f"\n{title}:")
        lines.extend(f"  {key:<14} {_pct(right, total)}" for key, right, total in tally.rows((*FIELDS, "all")))
    if result.confusion:
        lines.append("\nconfusion (field: expected -> got, count):")
        for (key, want, got), n in result.confusion.most_common():
            lines.append(f"  {key}: {want} -> {got}  {n}" if want or got else f"  {key}: differ  {n}")
    if result.seconds:
        s = result.seconds
        lines.append(f"\ntime a question: mean {statistics.mean(s) * 1000:.1f} ms, median "
                     f"{statistics.median(s) * 1000:.1f} ms, max {max(s) * 1000:.1f} ms, total {sum(s):.1f} s")
    if misses and result.misses:
        lines.append(f"\nmisses ({len(result.misses)}):")
        for row, got in result.misses:
            wrong = [f"{k}: {row[k]} -> {got[k]}" for k in ("asks", "resource", "fault") if row[k] != got[k]]
            wrong += [f"{k}: {row[k]} -> {got[k]}" for k in MENTIONS if set(row[k]) != set(got[k])]
            lines.append(f"  {row['text']!r}\n      " + "; ".join(wrong))
    return "\n".join(lines).lstrip("\n")


def as_dict(result: Result) -> dict[str, Any]:
    def table(tally: Tally) -> dict[str, dict[str, int]]:
        return {key: {"right": right, "total": total} for key, right, total in tally.rows()}

    return {"field": table(result.per_field), "asks": table(result.per_asks),
            "resource": table(result.per_resource), "style": table(result.per_style),
            "confusion": [{"field": k, "expected": w, "got": g, "count": n}
                          for (k, w, g), n in result.confusion.most_common()],
            "seconds": {"mean": statistics.mean(result.seconds) if result.seconds else None,
                        "max": max(result.seconds, default=None), "total": sum(result.seconds)}}


def _reader(model_spec: str | None) -> Callable[[str], Any]:
    """read_question with no model (the lexical prior), or the words' reading relabelled by the GGUF
    the project loads for --model, after the run's own system prompt (as a run asks it)."""
    from appliance.agent.question.question import read_question

    if model_spec is None:
        return lambda text: read_question(text)
    from appliance.agent.prompt import system_prompt
    from appliance.agent.question.classify import classify
    from appliance.agent.settings import EngineSettings
    from appliance.analyzers import ANALYZERS
    from appliance.config import resolve_paths
    from appliance.llm.base import Message
    from appliance.llm.runtime import open_chat_model
    from appliance.tools.registry import default_registry

    started = time.perf_counter()
    model = open_chat_model(model_spec, paths=resolve_paths())
    print(f"model {model_spec} loaded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    system = Message("system", system_prompt(default_registry().specs, EngineSettings()))
    known = [a.family for a in ANALYZERS]
    return lambda text: classify(read_question(text), model, system, known=known)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE,
                        help="a JSONL file of labeled questions (default: the kept half)")
    parser.add_argument("--model", metavar="NAME|PATH", help="classify with this model (default: lexical only)")
    parser.add_argument("--no-misses", action="store_true",
                        help="counts only, no question text (use it on the kept half)")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON (never the texts)")
    args = parser.parse_args(argv)
    rows = load(args.file)
    result = score(rows, _reader(args.model))
    if args.json:
        print(json.dumps(as_dict(result), indent=2))
    else:
        print(f"{args.file.name}: {len(rows)} questions, model {args.model or 'none (lexical prior)'}")
        print(format_result(result, misses=not args.no_misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
