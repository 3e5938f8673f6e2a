#!/usr/bin/env python3
"""The TUI's first question: seconds from Enter to the model's first token and to the answer, with
the first prompt read ahead while the question is typed and without (issue 14).

Each try is a new TUI (the real app, headless, through Textual's Pilot) with the real model, loaded
as the TUI loads it (the prompt cache in place), the real tools and the real machine check. Once
the model is ready, the question is typed one key every --pace seconds, then Enter; the run's
record gives the first token's time after the run began (at Enter), its whole time and step 1's
prompt tokens evaluated and reused. Modes alternate (which goes first rotates) for --rounds
rounds; medians and ratios are printed. Usage:

  .venv/bin/python scripts/bench_tui_first.py                       # the default model
  .venv/bin/python scripts/bench_tui_first.py --model tiny --rounds 2 --max-steps 2
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

QUESTIONS = ["Which process is using the most memory?", "How full is my disk?"]


async def one_try(args: argparse.Namespace, question: str, read_ahead: bool, db: Path) -> dict:
    from textual.widgets import Input

    from appliance.agent import events as ev
    from appliance.commands.tui import build_app

    env = dict(os.environ, APPLIANCE_READ_AHEAD="1" if read_ahead else "0")
    app = build_app(argparse.Namespace(db=str(db), model=args.model, verbose=False), env=env)
    app.set_step_limit(args.max_steps)
    async with app.run_test(size=(100, 30)) as pilot:
        while app.model_phase != "ready":
            await pilot.pause(0.1)
        await pilot.pause(args.read_pause)  # the person reads the welcome screen
        box = app.query_one("#question", Input)
        box.focus()
        for key in question:
            await pilot.press("space" if key == " " else key)
            await pilot.pause(args.pace)
        await pilot.press("enter")
        while not any(isinstance(e, ev.RunEnded) for e in app.run_screen.events_seen):
            await pilot.pause(0.1)
        end = [e for e in app.run_screen.events_seen if isinstance(e, ev.RunEnded)][-1]
        steps = [e for e in app.run_screen.events_seen if isinstance(e, ev.StepRecorded) and e.step == 1]
        stats = steps[0].stats if steps else None
        app.exit()
    return {"first_token": end.timing.get("first_token", float("nan")), "total": end.seconds, "steps": end.steps,
            "status": end.status, "evaluated": stats.prompt_tokens_evaluated if stats else 0,
            "reused": stats.prompt_tokens_reused if stats else 0, "answer": end.answer}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="catalog name or path (default: the default model)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-steps", type=int, default=3)
    parser.add_argument("--pace", type=float, default=0.15, help="seconds between two keys")
    parser.add_argument("--read-pause", type=float, default=2.0, help="seconds between the model ready and the first key")
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    args = parser.parse_args()
    questions = QUESTIONS[: max(1, args.questions)]
    modes = {"read ahead": True, "not read ahead": False}
    print(f"{args.rounds} rounds x {len(questions)} questions, a key every {args.pace} s, max {args.max_steps} steps, "
          f"load average {os.getloadavg()}, {time.strftime('%F %T')}", flush=True)
    rows: dict[str, list[dict]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory(prefix="bench-tui-first-") as tmp:
        for r in range(args.rounds):
            for i, question in enumerate(questions):
                order = list(modes) if (r + i) % 2 == 0 else list(reversed(modes))
                for mode in order:
                    row = asyncio.run(one_try(args, question, modes[mode], Path(tmp) / "runs.db"))
                    rows[mode].append(row)
                    print(f"  r{r + 1} {mode:15} {question[:32]:32} first token {row['first_token']:5.1f} s · "
                          f"answer {row['total']:5.1f} s · {row['steps']} steps {row['status']} · step 1 evaluated "
                          f"{row['evaluated']:4d} reused {row['reused']:4d} | {row['answer'][:70]!r}", flush=True)
    print("medians")
    medians = {}
    for mode, found in rows.items():
        medians[mode] = {key: statistics.median(r[key] for r in found) for key in ("first_token", "total", "evaluated")}
        m = medians[mode]
        print(f"  {mode:15} first token {m['first_token']:5.1f} s · answer {m['total']:5.1f} s · "
              f"step 1 evaluated {m['evaluated']:.0f} tokens")
    on, off = medians["read ahead"], medians["not read ahead"]
    print(f"  ratios read ahead / not: first token {on['first_token'] / off['first_token']:.2f} · "
          f"answer {on['total'] / off['total']:.2f}")
    print(f"load average at the end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
