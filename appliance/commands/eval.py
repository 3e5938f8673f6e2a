"""`appliance eval`: run the evaluation suite on this machine; `eval compare A B`, `eval list`,
`eval scenarios`.

The run plants real faults (processes, files, a listening socket) in sandboxes it removes again,
asks each question through the engine with nobody to answer follow-ups, scores the answers against
the planted truth, and records runs and results in the run database.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from appliance.commands.common import add_common_options, command_paths
from appliance.errors import UsageError

# The splits --split takes (appliance/eval/scenarios.py; test is dev2's old name).
SPLITS = ("dev", "dev2", "dev3", "test", "sealed", "unnamed")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="run the evaluation scenarios (real faults in sandboxes) and score the agent",
        description="Plant real faults on this machine, ask the agent about each, score against the truth. "
        "Subcommands: compare A B, list, scenarios.",
    )
    add_common_options(parser)
    _run_options(parser)
    parser.set_defaults(handler=cmd_run)
    actions = parser.add_subparsers(dest="eval_command", metavar="ACTION")

    p = actions.add_parser("run", help="run a suite (the default action)")
    add_common_options(p)
    _run_options(p)
    p.set_defaults(handler=cmd_run)

    p = actions.add_parser("compare", help="what changed between two evaluations (B minus A)")
    add_common_options(p)
    p.add_argument("a", help="eval id, or latest / previous")
    p.add_argument("b", help="eval id, or latest / previous")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(handler=cmd_compare)

    p = actions.add_parser("list", help="the evaluations in the database, newest first")
    add_common_options(p)
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(handler=cmd_list)

    p = actions.add_parser("show", help="one evaluation's table and its failed cases")
    add_common_options(p)
    p.add_argument("id", help="eval id, or latest / previous")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(handler=cmd_show)

    p = actions.add_parser("scenarios", help="the scenarios and suites")
    add_common_options(p)
    p.add_argument("--split", choices=SPLITS, help="only the cases of this split")
    p.set_defaults(handler=cmd_scenarios)


def _run_options(parser: argparse.ArgumentParser) -> None:
    default = argparse.SUPPRESS
    parser.add_argument("--suite", default=default,
                        help="smoke, dev, dev2, dev3, sealed, unnamed, full (dev, dev2 and dev3), or scenario/family names joined by "
                             "commas (default: full)")
    parser.add_argument("--split", choices=SPLITS, default=default,
                        help="run one split: dev, dev2 and dev3 are tuned on (test is dev2's old name); sealed and unnamed are never "
                             "tuned on (docs/eval.md)")
    parser.add_argument("--repeat", "-k", type=int, default=default, help="runs per scenario (default: 1)")
    parser.add_argument("--max-steps", type=int, default=default, help="engine step limit (default: the engine's)")
    parser.add_argument("--time-budget", type=float, default=default, metavar="SECONDS",
                        help="wall-clock limit of each run (default: the engine's)")
    parser.add_argument("--json", action="store_true", default=default, help="print JSON instead of a table")
    parser.add_argument("--quiet", action="store_true", default=default, help="no progress lines on stderr")
    parser.add_argument("--no-quiet-check", action="store_true", default=default,
                        help="run every case even when its families already have a problem on this machine "
                             "(by default such a case is void and counts in no rate)")


def cmd_run(args: argparse.Namespace) -> int:
    from appliance.agent.settings import EngineSettings
    from appliance.eval.quiet import machine_noise
    from appliance.eval.runner import print_progress, run_eval
    from appliance.eval.scenarios import suite as pick_suite
    from appliance.llm.runtime import open_chat_model
    from appliance.store import open_store

    suite_name = _suite_name(args)
    repeat = getattr(args, "repeat", 1)
    if repeat < 1:
        raise UsageError("--repeat must be at least 1")
    scenarios = pick_suite(suite_name)
    settings = EngineSettings()
    if getattr(args, "max_steps", None) is not None:
        if args.max_steps < 1:
            raise UsageError("--max-steps must be at least 1")
        settings = dataclasses.replace(settings, max_steps=args.max_steps)
    if getattr(args, "time_budget", None) is not None:
        if args.time_budget <= 0:
            raise UsageError("--time-budget must be more than 0 seconds")
        settings = dataclasses.replace(settings, time_budget_seconds=args.time_budget)
    paths = command_paths(args)
    model = open_chat_model(getattr(args, "model", None), paths=paths, verbose=getattr(args, "verbose", False))
    store = open_store(paths.db)
    try:
        report = run_eval(
            model, scenarios, suite=suite_name, repeat=repeat, settings=settings, store=store,
            on_case=None if getattr(args, "quiet", False) else print_progress,
            quiet_check=None if getattr(args, "no_quiet_check", False) else machine_noise,
        )
    finally:
        store.close()
    if getattr(args, "json", False):
        print(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        print(report.table())
        _print_failures(c.as_dict() for c in report.cases)
    return 0


def _suite_name(args: argparse.Namespace) -> str:
    """--split NAME is --suite NAME for a split; both at once is a usage error."""
    split, named = getattr(args, "split", None), getattr(args, "suite", None)
    if split and named:
        raise UsageError("give --split or --suite, not both")
    return split or named or "full"


def _print_failures(cases) -> None:
    failed = [c for c in cases if not c["success"]]
    if failed:
        print("\nfailed cases:")
    for case in failed:
        answer = " ".join(str(case.get("answer") or case["metrics"].get("answer") or "").split())[:160]
        run = f" run {case['run_id'][:8]}" if case.get("run_id") else ""
        print(f"  {case['scenario']} #{case['repeat_index']}{run}: {case['reason']}" + (f" — answer: {answer}" if answer else ""))


def _reader(args: argparse.Namespace):
    from appliance.store import open_store

    return open_store(command_paths(args).db, readonly=True)


def cmd_compare(args: argparse.Namespace) -> int:
    from appliance.eval.compare import compare, format_comparison
    from appliance.eval.records import load_eval, resolve_eval

    store = _reader(args)
    try:
        a = load_eval(store, resolve_eval(store, args.a))
        b = load_eval(store, resolve_eval(store, args.b))
    finally:
        store.close()
    diff = compare(a, b)
    print(json.dumps(diff, indent=2, default=str) if args.json else format_comparison(diff))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from appliance.eval.metrics import markdown_table

    store = _reader(args)
    try:
        evals = store.list_evals(limit=args.limit)
    finally:
        store.close()
    rows = []
    for row in evals:
        overall = row.summary.get("overall") or {}
        rows.append({"id": row.id, "started_at": row.started_at, "model": row.model, "suite": row.suite,
                     "repeat": row.repeat, "cases": overall.get("cases"), "success_rate": overall.get("success_rate")})
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
    elif not rows:
        print("no evaluations yet; run: appliance eval --suite smoke")
    else:
        print(markdown_table(
            ["id", "started", "model", "suite", "K", "cases", "success"],
            [[str(r["id"]), str(r["started_at"]), r["model"], r["suite"], str(r["repeat"]), str(r["cases"] or "—"),
              "—" if r["success_rate"] is None else f"{r['success_rate']:.0%}"] for r in rows],
        ))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from appliance.eval.metrics import format_report
    from appliance.eval.records import load_eval, resolve_eval

    store = _reader(args)
    try:
        record = load_eval(store, resolve_eval(store, args.id))
    finally:
        store.close()
    if args.json:
        print(json.dumps(record, indent=2, default=str))
        return 0
    title = f"eval {record['id']} · model {record['model']} · suite {record['suite']} · K={record['repeat']}"
    print(format_report(record["cases"], title=title))
    _print_failures(record["cases"])
    return 0


def cmd_scenarios(args: argparse.Namespace) -> int:
    from appliance.eval.scenarios import TUNED_FAMILIES as FAMILIES  # the old families and the tuned profile ones
    from appliance.eval.scenarios import SCENARIOS, SEALED_SCENARIOS, SPLIT_ALIASES, SUITES, UNNAMED_SCENARIOS
    from appliance.eval.sealed import SEALED_FAMILIES

    split = SPLIT_ALIASES.get(args.split, args.split) if getattr(args, "split", None) else None
    cases = [s for s in (*SCENARIOS, *SEALED_SCENARIOS, *UNNAMED_SCENARIOS) if split in (None, s.split)]
    summaries = {f.name: f.summary for f in (*FAMILIES, *SEALED_FAMILIES)}
    for kind in dict.fromkeys(s.family for s in UNNAMED_SCENARIOS):  # an unnamed kind: one question or two
        summaries[kind] = "one kind of question (the unnamed split); a right answer holds what follows each case"
    for family, summary in summaries.items():
        mine = [s for s in cases if s.family == family]
        if not mine:
            continue
        print(f"{family}: {summary}")
        for s in mine:
            right = f"  (right: {s.summary})" if s.split == "unnamed" else ""
            print(f"  {s.split:<6}  {s.kind:<7}  {s.phrasing:<7}  {s.asks or '?':<12}  {s.name:<28}  {s.question}{right}")
    print()
    for name, members in SUITES.items():
        print(f"suite {name} ({len(members)}): {', '.join(members)}")
    print("(the suite test is dev2's old name; dev, dev2 and dev3 are tuned on, sealed and unnamed never are)")
    sys.stdout.flush()
    return 0
