#!/usr/bin/env bash
# Set everything up if needed (virtual environment, install, the model), then start the TUI.
# Arguments go to `appliance` (e.g. `bash scripts/start.sh --model small`). Idempotent: a second
# run reuses the environment and the verified model file.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

# The catalog model this start will use (--model, else $APPLIANCE_MODEL, else the default); a path
# or an imported model needs no pull.
model="$(.venv/bin/python - "$@" <<'PY'
import sys
from appliance.llm.catalog import load_catalog, model_spec
args = sys.argv[1:]
spec = None
for i, arg in enumerate(args):
    if arg == "--model" and i + 1 < len(args):
        spec = args[i + 1]
    elif arg.startswith("--model="):
        spec = arg.split("=", 1)[1]
catalog = load_catalog()
entry = catalog.find(model_spec(spec, None, catalog))
print(entry.name if entry else "")
PY
)"
if [ -n "$model" ]; then
    echo "start: making sure the model $model is installed and verified"
    .venv/bin/appliance models pull "$model" >/dev/null
fi
exec .venv/bin/appliance "$@"
