"""`appliance runs ...`: browse, show, export, measure and prune the recorded runs.

Everything but `rm` opens the database read-only, so these commands work while a run is being
written (and never mark someone else's live run as interrupted).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from appliance.agent.cited import cited_lines
from appliance.agent.events import RUN_STATUSES
from appliance.agent.timing import runtime_line, timing_line
from appliance.commands.common import add_common_options, command_paths
from appliance.errors import UsageError, terminal_json, terminal_safe
from appliance.store import export as exporter
from appliance.store import otlp
from appliance.store.records import ReflectionRecord, RunRecord, StepRecord
from appliance.store.store import Store, open_store
from appliance.store.timefmt import parse_date


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("runs", help="browse, show, export and prune recorded runs",
                                   description="Browse, show, export and prune the recorded runs.")
    add_common_options(parser)
    commands = parser.add_subparsers(dest="runs_command", metavar="ACTION")
    parser.set_defaults(handler=_list, limit=20, status=None, search=None, json=False)

    p = commands.add_parser("list", help="recent runs, newest first")
    add_common_options(p)
    p.add_argument("--limit", type=_positive_int, default=20, metavar="N", help="at most N runs (default 20)")
    p.add_argument("--status", choices=RUN_STATUSES, help="only runs with this status")
    p.add_argument("--search", metavar="TEXT", help="full-text search in questions, answers, thoughts and observations")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.set_defaults(handler=_list)

    p = commands.add_parser("show", help="one run's whole trajectory, step by step")
    add_common_options(p)
    p.add_argument("run_id", metavar="ID", help="a run id or its first characters")
    p.add_argument("--json", action="store_true", help="print the run and its steps as JSON")
    p.add_argument("--raw", action="store_true",
                   help="also print each fact the answer cites as the tool returned it (key=value)")
    p.set_defaults(handler=_show)

    p = commands.add_parser("export", help="runs as a portable JSON Lines or JSON file, or OpenTelemetry traces")
    add_common_options(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("run_id", nargs="?", metavar="ID", help="a run id or its first characters")
    which.add_argument("--all", action="store_true", help="every recorded run")
    p.add_argument("--format", choices=("jsonl", "json", "otlp"), default="jsonl",
                   help="jsonl (default) or json: whole runs, for `runs import`; otlp: OpenTelemetry GenAI "
                        "spans in the OTLP JSON file format, for a Collector or any OTLP backend")
    p.add_argument("--anonymize", action="store_true",
                   help="mask host name, user names, home paths and IP addresses (consistently)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    p.set_defaults(handler=_export)

    p = commands.add_parser("import", help="merge runs exported on other machines into this database")
    add_common_options(p)
    p.add_argument("files", nargs="+", metavar="FILE", help="files written by `appliance runs export` (jsonl or json)")
    p.add_argument("--host", metavar="NAME",
                   help="record these runs as made on NAME (default: the host each export names)")
    p.set_defaults(handler=_import)

    p = commands.add_parser("stats", help="per model: runs, finished share, mean steps, tokens, tokens/s")
    add_common_options(p)
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.set_defaults(handler=_stats)

    p = commands.add_parser("rm", help="delete one run, or every run started before a date")
    add_common_options(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("run_id", nargs="?", metavar="ID", help="a run id or its first characters")
    which.add_argument("--before", metavar="DATE", help="runs started before DATE (YYYY-MM-DD[THH:MM], UTC)")
    p.set_defaults(handler=_rm)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _db_path(args: argparse.Namespace) -> Path:
    return command_paths(args).db


def _reader(args: argparse.Namespace) -> Store | None:
    """The database read-only, or None when nothing has been recorded yet."""
    path = _db_path(args)
    if not path.exists():
        return None
    return open_store(path, readonly=True)


# -- list ---------------------------------------------------------------------------------------

def _list(args: argparse.Namespace) -> int:
    store = _reader(args)
    runs = [] if store is None else _closing(store, lambda s: s.list_runs(
        limit=args.limit, status=args.status, search=args.search))
    if args.json:
        print(terminal_json([run.to_dict() for run in runs], indent=2, default=str))
        return 0
    if not runs:
        print("no runs recorded yet" if store is None and not (args.status or args.search)
              else "no runs match", f"({_db_path(args)})")
        return 0
    print(_table(["ID", "STARTED (UTC)", "HOST", "STATUS", "STEPS", "MODEL", "QUESTION"],
                 [[r.id[:12], _short_time(r.started_at), r.host or "?", r.status,
                   str(r.step_count), r.model_name, _one_line(r.question, 50)] for r in runs]))
    return 0


def _closing(store: Store, fn):
    try:
        return fn(store)
    finally:
        store.close()


def _short_time(stamp: str | None) -> str:
    return (stamp or "")[:16].replace("T", " ")


def _one_line(text: str | None, width: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _table(header: list[str], rows: list[list[str]]) -> str:
    rows = [[terminal_safe(str(cell)) for cell in row] for row in rows]  # questions and names from the database
    widths = [max(len(str(row[i])) for row in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in [header] + rows]
    return "\n".join(lines)


# -- show ---------------------------------------------------------------------------------------

def _show(args: argparse.Namespace) -> int:
    store = _require_reader(args)
    run = _closing(store, lambda s: s.get_run(args.run_id))
    if args.json:
        print(terminal_json(run.to_dict(), indent=2, default=str))
    else:
        print(terminal_safe(render_run(run, raw=args.raw)))
    return 0


def _require_reader(args: argparse.Namespace) -> Store:
    store = _reader(args)
    if store is None:
        raise UsageError(f"no runs recorded yet ({_db_path(args)})")
    return store


def render_run(run: RunRecord, raw: bool = False) -> str:
    """The whole trajectory as plain text, step by step (what `runs show` prints); raw: the cited
    facts as the model read them follow the evidence in plain words."""
    out = _run_header(run)
    for step in run.steps or ():
        out.append("")
        out.extend(_step_lines(step))
    out.append("")
    if run.answer:
        out.append(_field("Answer", run.answer))
    if run.result:
        out.append(_field("Result", terminal_json(run.result, indent=2)))
    if run.evidence:
        out.append(_field("Evidence", "\n".join(f"- {e}" for e in run.evidence)))
    cited = cited_lines((step.observation or "" for step in run.steps or ()), (run.result or {}).get("cites") or ())
    if raw and cited:
        out.append(_field("Evidence as read", "\n".join(cited)))
    if run.error:
        out.append(_field("Error", run.error))
    return "\n".join(out).rstrip()


def _run_header(run: RunRecord) -> list[str]:
    head = f"Run {run.id} · {run.status} · {run.step_count} steps"
    if run.seconds is not None:
        head += f" · {run.seconds:.1f} s"
    out = [head, f"Started {run.started_at}" + (f", ended {run.ended_at}" if run.ended_at else "")]
    if run.host:
        out.append(f"Host: {run.host}")
    out.append(f"Question: {run.question}")
    size = f", {run.model_size / 1e6:.0f} MB" if run.model_size else ""
    sha = f", sha256 {run.model_sha256[:16]}…" if run.model_sha256 else ""
    out.append(f"Model: {run.model_name}" + (f" ({run.model_path}{size}{sha})" if run.model_path else ""))
    if run.settings:
        out.append("Settings: " + " ".join(f"{k}={v}" for k, v in run.settings.items()))
    out.append(f"Tokens: {run.prompt_tokens} prompt evaluated, {run.prompt_tokens_reused} reused, "
               f"{run.completion_tokens} completion · appliance {run.version or '?'}")
    if run.timing:
        out.append("Time: " + timing_line(run.timing))
    if run.runtime:
        out.append("Runtime: " + runtime_line(run.runtime))
    return out


def _step_lines(step: StepRecord) -> list[str]:
    out = [_step_header(step)]
    if step.thought:
        out.append(_field("Thought", step.thought))
    out.append(_field("Action", f"{step.action or '?'} {terminal_json(step.action_input)}"))
    tool = f" ({step.tool_ms:.0f} ms)" if step.tool_ms else ""
    out.append(_field(f"Observation [{step.observation_status or '?'}]{tool}", step.observation))
    if step.observation_summary:
        out.append(_field("Summary", step.observation_summary))
    if step.reflection:
        out.append(_field("Reflection", _reflection_words(step.reflection)))
    if step.evaluation:
        out.append(_field("Evaluation", step.evaluation))
    return out


def _reflection_words(reflection: ReflectionRecord) -> str:
    return " ".join(f"{k}={v}" for k, v in reflection.to_dict().items())


def _step_header(step: StepRecord) -> str:
    parts = [f"── Step {step.step} · {step.at}",
             f"{step.prompt_tokens} prompt tokens ({step.prompt_tokens_reused} reused), "
             f"{step.completion_tokens} completion"]
    if step.tokens_per_second:
        parts.append(f"{step.tokens_per_second:.1f} tok/s")
    if step.threads:
        parts.append(f"threads {step.threads}/{step.threads_batch or step.threads}")
    return " · ".join(parts)


def _field(label: str, text: str) -> str:
    lines = str(text).splitlines() or [""]
    if len(lines) == 1 and len(lines[0]) + len(label) < 96:
        return f"  {label}: {lines[0]}"
    body = "\n".join(textwrap.indent(line, "      ") for line in lines)
    return f"  {label}:\n{body}"


# -- export -------------------------------------------------------------------------------------

def _export(args: argparse.Namespace) -> int:
    store = _require_reader(args)

    def runs_of(s: Store) -> list[RunRecord]:
        if args.all:
            return [s.get_run(r.id) for r in reversed(s.list_runs(limit=None))]
        return [s.get_run(args.run_id)]

    runs = _closing(store, runs_of)
    if not args.output or args.output == "-":
        _write(runs, sys.stdout, args)
        return 0
    target = Path(args.output).expanduser()
    count = _write_atomically(target, runs, args)
    print(f"exported {count} run{'s' if count != 1 else ''} to {target}"
          + (" (anonymized)" if args.anonymize else ""), file=sys.stderr)
    return 0


def _write(runs: list[RunRecord], stream: Any, args: argparse.Namespace) -> int:
    if args.format == "otlp":
        return otlp.write(runs, stream, anonymize=args.anonymize)
    return exporter.write(runs, stream, fmt=args.format, anonymize=args.anonymize)


def _write_atomically(target: Path, runs: list[RunRecord], args: argparse.Namespace) -> int:
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent if str(target.parent) else ".")
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            count = _write(runs, stream, args)
        os.replace(tmp, target)
        return count
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None


# -- import -------------------------------------------------------------------------------------

def _import(args: argparse.Namespace) -> int:
    from appliance.store.importer import import_runs, read_export

    exports = [(path, read_export(Path(path).expanduser())) for path in args.files]  # all read before writing
    store = open_store(_db_path(args))
    try:
        for path, runs in exports:
            done = import_runs(store, runs, host=args.host)
            renamed = f", {done.renamed} given new ids (their ids were taken)" if done.renamed else ""
            print(f"{path}: imported {done.added} run{'s' if done.added != 1 else ''} from "
                  f"{', '.join(done.hosts) or 'no host'}; {done.skipped} already here{renamed}")
    finally:
        store.close()
    return 0


# -- stats --------------------------------------------------------------------------------------

def _stats(args: argparse.Namespace) -> int:
    store = _reader(args)
    rows = [] if store is None else _closing(store, lambda s: s.stats())
    if args.json:
        print(json.dumps([row.to_dict() for row in rows], indent=2))
        return 0
    if not rows:
        print(f"no runs recorded yet ({_db_path(args)})")
        return 0
    print(_table(
        ["MODEL", "RUNS", "FINISHED", "MEAN STEPS", "MEAN TOKENS", "PROMPT REUSED", "TOK/S", "MEAN S"],
        [[r.model, str(r.runs), f"{100 * r.finished_share:.0f}%", f"{r.mean_steps:.1f}", f"{r.mean_tokens:.0f}",
          _share(r.prompt_tokens_reused, r.prompt_tokens), f"{r.tokens_per_second or 0:.1f}",
          f"{r.mean_seconds or 0:.1f}"] for r in rows]))
    return 0


def _share(reused: int, evaluated: int) -> str:
    total = reused + evaluated
    return f"{100 * reused / total:.0f}%" if total else "-"


# -- rm -----------------------------------------------------------------------------------------

def _rm(args: argparse.Namespace) -> int:
    path = _db_path(args)
    if not path.exists():
        raise UsageError(f"no runs recorded yet ({path})")
    cutoff = parse_date(args.before) if args.before else None  # a bad date fails before opening
    store = open_store(path)
    try:
        if cutoff is not None:
            count = store.delete_before(cutoff)
            print(f"removed {count} run{'s' if count != 1 else ''} started before {cutoff}")
        else:
            run_id = store.delete_run(args.run_id)
            print(f"removed run {run_id}")
    finally:
        store.close()
    return 0
