"""The real TUI in a real terminal (tmux) with a real small model, driven as a person would.

scripts/tui_tmux_drive.sh starts `appliance --model SmolLM2`, waits for the screen and for the
model, sets the step limit through the command palette, types a question, and reads the screen
until an answer box shows. The run must also be in the database, as the TUI recorded it. At
80x24 the answer box keeps 60 columns and the footer stays whole.
Needs the Debian package `tmux` (CI installs it); skipped loudly here when it is missing, and a
failure in CI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "tui_tmux_drive.sh"
FOOTER_HINTS = ("^q Quit", "esc Cancel", "^r History", "^t System", "^p palette")


def assert_fits_80x24(screen: str) -> None:
    """At 80x24 (SSH) the answer box keeps 60 columns and the footer's key hints are whole."""
    lines = screen.rstrip("\n").splitlines()
    footer = lines[-1]
    for hint in FOOTER_HINTS:
        assert hint in footer, f"the footer lost {hint!r}: {footer!r}"
    assert "…" not in footer
    top = next((line for line in lines if "╭─ Answer" in line), "")
    assert top, f"no answer box on screen:\n{screen}"
    assert top.index("╮") - top.index("╭") + 1 >= 60, f"the answer box is narrow:\n{screen}"


@pytest.mark.model
@pytest.mark.slow
def test_real_tui_in_tmux_answers_a_question(smollm2_path, tmp_path):
    if shutil.which("tmux") is None:
        if os.environ.get("CI"):
            pytest.fail("tmux is missing in CI: apt-get install -y tmux")
        pytest.skip("TMUX IS NOT INSTALLED: apt-get install -y tmux to run the real-terminal test")
    model = smollm2_path
    db = tmp_path / "runs.db"
    screen_file = tmp_path / "screen.txt"
    env = dict(os.environ, PYTHON=sys.executable, STEPS="2", TIMEOUT="420", SCREEN_OUT=str(screen_file),
               WIDTH="80", HEIGHT="24")
    done = subprocess.run(
        ["bash", str(SCRIPT), str(model), "why is my computer slow?", str(db)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    screen = screen_file.read_text() if screen_file.exists() else done.stdout
    assert done.returncode == 0, f"no answer on screen\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert "Answer" in screen
    assert "smollm2" in screen  # the status bar names the model
    assert "step " in screen and "/2" in screen  # the step limit set through the palette
    assert_fits_80x24(screen)

    from appliance.store import open_store

    with open_store(db, readonly=True) as store:
        runs = store.list_runs()
        assert [r["question"] for r in runs] == ["why is my computer slow?"]
        run = store.get_run(runs[0]["id"])
    assert run["status"] in ("finished", "max_steps", "budget")
    assert len(run["steps"]) >= 2  # the snapshot and at least one step of the model's
