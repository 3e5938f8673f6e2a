"""Runs as a portable file: one JSON object per run (JSON Lines) or one JSON document.

For carrying off an air-gapped machine to get help, so every record is self-contained: the run,
its model (name, size, sha256), its settings and all its steps. With `anonymize`, one Masker goes
over the whole export so a value masked in one run has the same mask in every other.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterable, TextIO

from appliance import __version__
from appliance.store.anonymize import Identity, Masker
from appliance.store.records import RunRecord
from appliance.store.timefmt import iso
from appliance.tools.redact import redact_value

FORMAT_NAME = "appliance-runs"
FORMAT_VERSION = 1


def prepare(runs: Iterable[RunRecord], *, anonymize: bool, identity: Identity | None = None) -> list[RunRecord]:
    """The runs (each with its steps) as they go into the file: redacted again (a database written
    before a redaction rule existed must not carry the secret out), and masked when asked."""
    rows = [redact_value(run.to_dict()) for run in runs]
    if anonymize:
        masker = Masker(identity or Identity.of_this_machine())
        masker.learn(rows)
        rows = [_masked(masker, row) for row in rows]
    return [RunRecord.from_row(row) for row in rows]


def _masked(masker: Masker, run: dict[str, Any]) -> dict[str, Any]:
    masked = masker.row({k: v for k, v in run.items() if k != "steps"})
    masked["steps"] = [masker.row(step) for step in run.get("steps") or []]
    return masked


def write(runs: Iterable[RunRecord], stream: TextIO, *, fmt: str = "jsonl", anonymize: bool = False,
          identity: Identity | None = None) -> int:
    """Write the export to `stream`; returns the number of runs written."""
    records = [run.to_dict() for run in prepare(runs, anonymize=anonymize, identity=identity)]
    if fmt == "jsonl":
        for record in records:
            stream.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    elif fmt == "json":
        document = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "exported_at": iso(time.time()),
            "appliance_version": __version__,
            "anonymized": anonymize,
            "runs": records,
        }
        json.dump(document, stream, ensure_ascii=False, default=str, indent=2)
        stream.write("\n")
    else:
        raise ValueError(f"unknown export format {fmt!r}")
    return len(records)
