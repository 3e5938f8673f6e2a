"""A picture of the TUI answering a real question (docs/screenshot.svg, shown in the README), taken
with Textual's own screenshot support so it can be refreshed after any change to the screen.

    .venv/bin/python scripts/screenshot.py [--question Q] [--model NAME] [--size 120x36] [--out FILE]

The real app as `appliance` builds it (model, engine, checks), headless at the given size; the
question (default: the first welcome example) is typed key by key and the answer awaited. The run
goes to a temporary database, not to the person's history.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from appliance.commands.tui import build_app  # noqa: E402
from appliance.tui.welcome import EXAMPLES  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


async def until(pilot: Any, holds: Callable[[], bool], timeout: float, what: str) -> None:
    limit = time.monotonic() + timeout
    while not holds():
        if time.monotonic() > limit:
            raise SystemExit(f"gave up after {timeout:.0f} s waiting for {what}")
        await pilot.pause(0.1)


async def take(app: Any, question: str, size: tuple[int, int], out: Path, per_key: float, timeout: float) -> str:
    from textual.widgets import Markdown

    async with app.run_test(size=size) as pilot:
        screen = app.run_screen
        await until(pilot, lambda: app.model_phase in ("ready", "missing", "error"), 300, "the model")
        if app.model_phase != "ready":
            raise SystemExit(f"the model did not load ({app.model_phase})")
        warming = lambda: any(worker.group == "warm" and worker.is_running for worker in app.workers)  # noqa: E731
        await pilot.pause(0.5)
        await until(pilot, lambda: not warming(), 300, "the prompt to be read")  # as a person waits for "ready"
        for char in question:
            await pilot.press(char)
            await pilot.pause(per_key)
        await pilot.press("enter")
        await until(pilot, lambda: screen.run_active, 30, "the run to start")
        await until(pilot, lambda: not screen.run_active, timeout, "the answer")
        for answer in screen.query(Markdown):
            await until(pilot, lambda answer=answer: len(answer.children) > 0, 10, "the answer to render")
        screen.question_box.cursor_blink = False
        app.clear_notifications()
        await pilot.pause(0.5)
        out.write_text(app.export_screenshot(title=f"appliance: {question}"))
        return screen.last_answer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--question", default=EXAMPLES[0])
    parser.add_argument("--model", help="a catalog name or a .gguf path (default: the default model)")
    parser.add_argument("--size", default="120x36", help="COLUMNSxROWS (default 120x36)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshot.svg")
    parser.add_argument("--per-key", type=float, default=0.1, help="seconds between keys (default 0.1)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the answer")
    args = parser.parse_args()
    width, height = (int(part) for part in args.size.lower().split("x"))
    db = Path(tempfile.mkdtemp(prefix="screenshot-")) / "runs.db"
    app = build_app(argparse.Namespace(db=str(db), model=args.model, verbose=False))
    answer = asyncio.run(take(app, args.question, (width, height), args.out, args.per_key, args.timeout))
    print(f"{args.out}: {args.question!r} → {answer}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
