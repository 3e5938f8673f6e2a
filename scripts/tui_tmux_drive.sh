#!/usr/bin/env bash
# Drive the real TUI the way a person does: in a terminal (tmux), type a question, read the answer
# off the screen. Used by tests/test_tui_tmux.py and handy by hand.
#
#   scripts/tui_tmux_drive.sh MODEL QUESTION [DB]
#
# MODEL: a catalog name or a .gguf path; DB: the run database (default: a temporary file).
# Environment: PYTHON (default python3), STEPS (set the step limit through the command palette
# first, as a person would; empty = leave the default), TIMEOUT seconds for the run (default 240),
# WIDTH/HEIGHT of the terminal (default 80x24), SCREEN_OUT (also write the final screen there).
# Prints the final screen; exit 0 when an answer box appeared, 1 when not, 2 on bad usage.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 MODEL QUESTION [DB]" >&2
  exit 2
fi
MODEL=$1
QUESTION=$2
WORK=$(mktemp -d)
DB=${3:-$WORK/runs.db}
PYTHON=${PYTHON:-python3}
TIMEOUT=${TIMEOUT:-240}
WIDTH=${WIDTH:-80}
HEIGHT=${HEIGHT:-24}
SESSION="appliance-drive-$$"
command -v tmux >/dev/null || { echo "tmux is not installed (apt-get install -y tmux)" >&2; exit 2; }

cleanup() {
  tmux kill-session -t "$SESSION" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

screen() { tmux capture-pane -p -t "$SESSION"; }

# wait_for PATTERN SECONDS: poll the screen until the extended regex PATTERN shows.
wait_for() {
  local pattern=$1 limit=$2 waited=0
  while ! screen | grep -Eq "$pattern"; do
    sleep 0.5
    waited=$((waited + 1))
    if [ "$waited" -ge $((limit * 2)) ]; then
      echo "--- timed out after ${limit}s waiting for /$pattern/; the screen was:" >&2
      screen >&2
      return 1
    fi
  done
}

tmux new-session -d -s "$SESSION" -x "$WIDTH" -y "$HEIGHT" \
  "cd '$PWD' && APPLIANCE_HOME='$WORK/home' exec '$PYTHON' -m appliance.cli --model '$MODEL' --db '$DB'"

# The screen comes first; the model loads behind it (status: "loading model", then "ready").
wait_for "loading model|ready|Ask about this machine" 30
wait_for " ready " 120

if [ -n "${STEPS:-}" ]; then
  tmux send-keys -t "$SESSION" C-p
  sleep 0.5
  tmux send-keys -t "$SESSION" -l "set step limit: $STEPS"
  sleep 0.8
  tmux send-keys -t "$SESSION" Enter
  wait_for "step 0/${STEPS}( |$)" 10
fi

tmux send-keys -t "$SESSION" -l "$QUESTION"
tmux send-keys -t "$SESSION" Enter
wait_for "running|Step 1" 30
# The run is over when the status bar (always on screen) says how it ended; the answer box is then
# scrolled into view from its first line, titled "Answer" or "Answer (how it ended)".
status=0
wait_for "· (finished|stopped at the step limit|stopped by the token/time budget|cancelled|failed) ·" "$TIMEOUT" \
  || status=1
sleep 1
screen | grep -q "Answer" || status=1
final=$(screen)
echo "$final"
if [ -n "${SCREEN_OUT:-}" ]; then
  echo "$final" >"$SCREEN_OUT"
fi
tmux send-keys -t "$SESSION" C-q
sleep 0.5
exit $status
