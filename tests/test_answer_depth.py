"""The answer path stays flat: issue 31 asks that the chain of imports from the finish path through
the answer package be at most 4 modules, so that a rule is one piece beside the others, not a floor
on a tower. Measured on the real import graph with grimp, the library import-linter uses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_answer_path_is_at_most_four_modules_deep():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "answer_depth.py")], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("answer path:"))
    depth = int(line.split(":")[1].split()[0])
    assert 2 <= depth <= 4, line
