"""Plant every well-known credential store at its real path, and ask the tools and the engine about
them; run as `unshare -m --propagation private python -m support.real_path_plants OUT` (root).

Nothing on the machine is written: in the private mount namespace each top folder the stores live
under (/etc, /var, /run, /root, …) gets an overlay whose upper layer is a folder of OUT, so a
canary written over /etc/shadow lands in OUT and the real file, and every process outside the
namespace, never sees it. Existing files are planted too (the overlay copies them up), stores the
system reads on its own included: the namespace ends with this process.

Writes OUT/report.json: each store's verdict under the default policy and under the default policy
with `/` allowed (only the deny-list between a tool and the canary), and the texts the model was
shown; the engine's runs go to OUT/runs.db (outside every overlay) for the caller to export.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from appliance.tools.context import ToolContext
from appliance.tools.credential_paths import KNOWN_STORES
from appliance.tools.paths import PathPolicy
from appliance.tools.registry import build_registry
from support.credential_plants import canary_for, canary_text, names, planted_file, reads, record_runs, verdict

HOME = "/root"


def overlay(top: Path, scratch: Path) -> None:
    """`top` seen through an overlay whose writes go under `scratch` (this namespace only)."""
    upper, work = scratch / "upper" / top.name, scratch / "work" / top.name
    upper.mkdir(parents=True)
    work.mkdir(parents=True)
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o", f"lowerdir={top},upperdir={upper},workdir={work}",
                    str(top)], check=True, capture_output=True)


def plant(out: Path) -> list[tuple[str, Path, str]]:
    """(store, real path, canary) for every store, each written at its real path."""
    files = [(store, planted_file(store, Path("/"), HOME)) for store in KNOWN_STORES]
    for top in sorted({Path("/", path.parts[1]) for _store, path in files}):
        overlay(top, out / "layers")
    plants = []
    for index, (store, path) in enumerate(files):
        if path.is_dir():  # a store named as a file that is a folder here: plant inside it
            path = path / "canary.conf"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(canary_text(canary_for(index)))
        plants.append((store.path, path, canary_for(index)))
    return plants


def main(out: Path) -> int:
    plants = plant(out)
    policies = {"default": PathPolicy.default(), "root allowed": PathPolicy.default(extra_roots=["/"])}
    report: dict = {"verdicts": {}, "planted": [[s, str(p), c] for s, p, c in plants]}
    for label, policy in policies.items():
        registry = build_registry(ToolContext(policy=policy))
        report["verdicts"][label] = {
            store: verdict({**reads(registry, path), **names(registry, path),
                            "inspect_path": registry.call("inspect_path", {"path": str(path)})}, canary)
            for store, path, canary in plants}
    registry = build_registry(ToolContext(policy=policies["root allowed"]))
    report["shown"] = record_runs(registry, [path for _s, path, _c in plants], out / "runs.db")
    (out / "report.json").write_text(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
