#!/usr/bin/env python3
"""What the command-line redactor costs in diagnostic value: the share of the words of ordinary
daemons' command lines (tests/support/secret_benign_cmdlines.py, none holding a secret) that stay
visible after `redact_argv`, and every word it masked, so a rule that hides too much shows here.

    .venv/bin/python scripts/cmdline_visibility.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support.secret_benign_cmdlines import LINES  # noqa: E402
from appliance.tools.redaction.cmdline import redact_argv  # noqa: E402


def visibility() -> tuple[int, int, list[tuple[str, str]]]:
    """(words, words kept whole, (word, shown) for each changed one), over every line as `ps` splits it."""
    total = kept = 0
    changed = []
    for line in LINES:
        argv = line.split(" ")
        shown = redact_argv(argv)
        for before, after in zip(argv, shown):
            total += 1
            if before == after:
                kept += 1
            else:
                changed.append((before, after))
    return total, kept, changed


def main() -> int:
    total, kept, changed = visibility()
    for before, after in changed:
        print(f"  masked: {before}  ->  {after}")
    print(f"{len(LINES)} daemon command lines, {total} words: {kept} stay visible ({100 * kept / total:.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
