"""Every well-known credential store of the table, planted with a canary at its real path (as root),
where that is safe: only a file that does not exist yet is created, with the folders it needs, and
everything created is removed after. Stores whose real place a running system reads on its own
(sudo's, PAM's, GRUB's, sshd's, the account databases) are not planted; their path is still
checked against the policy. The policy is the default one with `/` added, so only the deny-list
stands between a tool and the canary."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from appliance.tools.context import ToolContext
from appliance.tools.credential_paths import KNOWN_STORES
from appliance.tools.paths import PathPolicy
from appliance.tools.registry import build_registry
from support.credential_plants import canary_for, canary_text, names, planted_file, reads, verdict


# Read by the running system on its own: a stray file there could change what it does.
NOT_PLANTED = ("/etc/sudoers", "/etc/shadow", "/etc/gshadow", "/etc/security/", "/etc/ssh/", "/etc/grub.d/", "/boot/",
               "/etc/NetworkManager/", "/etc/wpa_supplicant/", "/run/user/")


@pytest.fixture
def planted():
    """(store, real file, canary or None when not planted); removes what it made."""
    made_files: list[Path] = []
    made_dirs: list[Path] = []
    out = []
    for index, store in enumerate(KNOWN_STORES):
        path = planted_file(store, Path("/"), "/root")
        if str(path).startswith(NOT_PLANTED) or os.path.lexists(path):
            out.append((store, path, None))
            continue
        missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
        for folder in reversed(missing):
            folder.mkdir(mode=0o700)
            made_dirs.append(folder)
        path.write_text(canary_text(canary_for(index)))
        made_files.append(path)
        out.append((store, path, canary_for(index)))
    try:
        yield out
    finally:
        for path in made_files:
            path.unlink(missing_ok=True)
        for folder in reversed(made_dirs):
            shutil.rmtree(folder, ignore_errors=True)


def test_every_store_at_its_real_path_is_refused(planted):
    registry = build_registry(ToolContext(policy=PathPolicy.default(extra_roots=["/"])))
    seen: Counter = Counter()
    wrong = []
    for store, path, canary in planted:
        reason = registry.call("read_file", {"path": str(path)})
        if reason["status"] != "denied":
            wrong.append((store.path, reason.get("error") or reason["status"]))
        if canary is None:
            seen["checked, not planted"] += 1
            continue
        outcome = verdict({**reads(registry, path), **names(registry, path)}, canary)
        seen[outcome] += 1
        if outcome != "refused":
            wrong.append((store.path, outcome))
    print(dict(seen))
    assert wrong == []
    assert seen["refused"] >= 150, seen
    assert not any(c and c in json.dumps(registry.call("list_dir", {"path": "/etc"})) for _s, _p, c in planted)
