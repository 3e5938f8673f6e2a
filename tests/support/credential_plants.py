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


def parroting_finish(messages, schema) -> dict:
    """A finish whose answer repeats the first line the model was shown that holds a canary (else
    the last observation's end): a model that says what it saw, so a canary any tool let through
    would stand in the answer too. The answer is bounded (240 characters) as the schema asks."""
    lines = [line for m in messages if m.role != "system" for line in m.content.splitlines()]
    said = next((line for line in lines if "canary phrase" in line), lines[-1] if lines else "nothing")
    return {"thought": "done", "action": "finish",
            "action_input": {"stance": "cannot_tell", "cites": [], "subject": "", "value": "", "answer": said[-240:]}}


def record_runs(registry, paths: list[Path], db_path: Path, batch: int = 6) -> list[str]:
    """Run the real engine over the planted files, `batch` a run (the question names them, so
    each is profiled before the first step; then read_file on each; then a parroting finish), and
    record every event into a database at `db_path`. Returns every text the model was shown."""
    from appliance.agent.engine import Engine
    from appliance.agent.settings import EngineSettings
    from appliance.llm.fake import ScriptedModel
    from appliance.store import open_store

    settings = EngineSettings(max_steps=batch + 2, reflection=False, snapshot=False, no_progress_steps=batch + 2)
    shown: list[str] = []
    store = open_store(db_path)
    try:
        for start in range(0, len(paths), batch):
            group = paths[start:start + batch]
            reads = [{"thought": "read it", "action": "read_file", "action_input": {"path": str(p)}} for p in group]
            model = ScriptedModel([*reads, *[parroting_finish] * 4])
            question = "what do these files hold: " + ", ".join(str(p) for p in group) + "?"
            ends = []
            for event in Engine(model, registry, settings).run(question):
                store.record(event)
                ends += [event] if type(event).__name__ == "RunEnded" else []
            assert [e.status for e in ends] == ["finished"], [(e.status, e.error) for e in ends]
            shown += [m.content for messages, _schema in model.calls for m in messages]
    finally:
        store.close()
    return shown


def exported(db_path: Path, env: dict[str, str]) -> str:
    """What the real `appliance runs export --all` writes of that database, as JSON Lines and as
    OpenTelemetry traces, plain and anonymized."""
    import subprocess
    import sys

    out = []
    for fmt in ("jsonl", "otlp"):
        for extra in ([], ["--anonymize"]):
            done = subprocess.run([sys.executable, "-m", "appliance.cli", "--db", str(db_path), "runs", "export",
                                   "--all", "--format", fmt, *extra], capture_output=True, text=True, env=env,
                                  timeout=120, check=True)
            out.append(done.stdout)
    return "\n".join(out)


def leaked_anywhere(canaries: list[str], *texts: str | bytes) -> list[str]:
    """The canaries found in any of the texts (a database's bytes among them)."""
    found = []
    for canary in canaries:
        if any((canary.encode() if isinstance(t, bytes) else canary) in t for t in texts):
            found.append(canary)
    return found
