"""Every well-known credential store of the table, planted with a canary at its real path, existing
files and the stores the running system reads on its own included: refused by every tool (contents,
names, the path profile) under the default policy and with `/` allowed, and the canary in no prompt,
answer, database or export of engine runs over them.

The plants live in a private mount namespace, behind overlays whose upper layers are in the test's
temporary folder (tests/support/real_path_plants.py): the machine's files are never written, and no
other process (an eval running beside the tests) can see a plant. Needs root, as `unshare -m` does;
the project's CI and this machine run the tests as root."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from appliance.tools.credential_paths import KNOWN_STORES
from support.credential_plants import exported, leaked_anywhere
from support.store import checkout_env

TESTS = Path(__file__).resolve().parent


def test_every_store_at_its_real_path_is_refused_and_in_no_answer_database_or_export(tmp_path):
    assert os.geteuid() == 0 and shutil.which("unshare"), "planting real paths needs root and unshare(1)"
    shadow = Path("/etc/shadow").read_bytes()
    env = {**checkout_env(), "PYTHONPATH": os.pathsep.join([str(TESTS), checkout_env()["PYTHONPATH"]])}
    done = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, "-m", "support.real_path_plants",
                           str(tmp_path)], capture_output=True, text=True, env=env, cwd=str(TESTS), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert Path("/etc/shadow").read_bytes() == shadow  # the real file was never written
    report = json.loads((tmp_path / "report.json").read_text())
    planted = report["planted"]
    assert len(planted) == len(KNOWN_STORES) >= 150
    assert not any(Path(path).exists() and canary in Path(path).read_text(errors="replace")
                   for _store, path, canary in planted if os.path.isfile(path))  # no plant is seen out here
    for label, verdicts in report["verdicts"].items():
        wrong = {store: outcome for store, outcome in verdicts.items() if outcome != "refused"}
        assert wrong == {}, (label, wrong, Counter(verdicts.values()))
    stored = b"".join(f.read_bytes() for f in tmp_path.glob("runs.db*"))
    assert b"read_file" in stored and b"/etc/shadow" in stored
    export = exported(tmp_path / "runs.db", checkout_env())
    canaries = [canary for _store, _path, canary in planted]
    assert leaked_anywhere(canaries, "\n".join(report["shown"]), stored, export) == []
