"""Planting the well-known credential stores (appliance.tools.credential_paths) with a canary, and
asking every tool that reads contents or shows names about them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from appliance.tools.credential_paths import KnownStore

STAND_IN = "appliance-canary"  # what a `*` component becomes when a store is planted


@dataclass(frozen=True)
class Plant:
    store: KnownStore
    file: Path  # the planted file (inside the store when the store is a folder)
    canary: str


def planted_file(store: KnownStore, root: Path, home: str) -> Path:
    """Where a canary for `store` goes: under `root` ("/" for the real place), `~` as `home`."""
    text = store.path.replace("~", home.rstrip("/"), 1) if store.per_user else store.path
    text = "/".join(STAND_IN if part == "*" else part.replace("*", STAND_IN) for part in text.split("/"))
    path = Path(str(root).rstrip("/") + "/" + text.strip("/"))
    return path / "canary.conf" if store.folder else path


def canary_for(index: int) -> str:
    """A plain phrase, no secret shape: only a refusal, never the redactor, keeps it out of sight."""
    return f"plain canary phrase number {index} with lemon"


def canary_text(canary: str) -> str:
    return f"# planted by the appliance's tests\nnote {canary}\n"


def reads(registry, path: Path) -> dict[str, dict]:
    """What the content tools say of `path`."""
    return {name: registry.call(name, {"path": str(path)}) for name in ("read_file", "read_log")}


def names(registry, path: Path) -> dict[str, dict]:
    """What the name tools say of `path` and its folder."""
    folder = str(path.parent)
    return {"list_dir": registry.call("list_dir", {"path": folder}),
            "path_lookup": registry.call("path_lookup", {"path": str(path)})}


def walks(registry, root: Path) -> dict[str, dict]:
    return {"dir_sizes": registry.call("dir_sizes", {"path": str(root), "depth": 3, "top": 30}),
            "largest_files": registry.call("largest_files", {"path": str(root), "top": 50, "min_size_mb": 0})}


def verdict(results: dict[str, dict], canary: str) -> str:
    """'refused' when every content tool refused, 'masked' when one answered but without the canary,
    'LEAKED' when the canary is in any result."""
    if any(canary in json.dumps(result) for result in results.values()):
        return "LEAKED"
    content = [results[name] for name in ("read_file", "read_log") if name in results]
    return "refused" if all(r["status"] == "denied" for r in content) else "masked"
