"""What changed between two evaluations: per scenario, success rate and metric deltas (B minus A).

The point of an evaluation is to be re-run after every change of prompt, tool or model; this is
the view that says whether the change helped, and where it hurt.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from appliance.eval.metrics import KIND_ORDER, markdown_table, summarise_by, summarise_by_scenario

_PARENS = re.compile(r"\s*\([^()]*\)")

# (summary key, heading, format of the delta)
DELTA_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("steps", "Δsteps", "{:+.1f}"),
    ("invalid_actions", "Δinvalid", "{:+.1f}"),
    ("repeated_actions", "Δrepeat", "{:+.1f}"),
    ("prompt_tokens", "Δprompt", "{:+.0f}"),
    ("completion_tokens", "Δcompl", "{:+.0f}"),
    ("seconds", "Δsec", "{:+.1f}"),
    ("tokens_per_second", "Δtok/s", "{:+.1f}"),
    ("canary_leaks", "Δleaks", "{:+.0f}"),
)


def compare(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """a, b: eval records as `records.load_eval` returns them. Scenarios in either are listed; one
    missing from a side has None for that side. The overall row covers only the scenarios both ran
    (labelled "overall (shared)" when the suites differ), so a smaller suite cannot look better or
    worse just by leaving scenarios out."""
    table_a = summarise_by_scenario(a["cases"])
    table_b = summarise_by_scenario(b["cases"])
    names = [n for n in table_a if n != "overall"] + [n for n in table_b if n not in table_a and n != "overall"]
    shared = [n for n in names if n in table_a and n in table_b]
    overall = "overall" if len(shared) == len(names) else "overall (shared)"
    table_a[overall] = summarise_by_scenario(c for c in a["cases"] if c["scenario"] in shared)["overall"]
    table_b[overall] = summarise_by_scenario(c for c in b["cases"] if c["scenario"] in shared)["overall"]
    rows = {}
    for name in [*names, overall]:
        sa, sb = table_a.get(name), table_b.get(name)
        row: dict[str, Any] = {
            "success_a": sa["success_rate"] if sa else None,
            "success_b": sb["success_rate"] if sb else None,
        }
        for key, _, _ in DELTA_COLUMNS:
            row[key] = (sb[key] - sa[key]) if sa and sb else None
        both = name in shared
        row["changed"] = _changed_verdicts(a["cases"], b["cases"], name) if both else []
        rows[name] = row
    return {
        "a": {k: a[k] for k in ("id", "model", "suite", "repeat", "started_at")},
        "b": {k: b[k] for k in ("id", "model", "suite", "repeat", "started_at")},
        "scenarios": rows,
        "kinds": _by_kind([c for c in a["cases"] if c["scenario"] in shared],
                          [c for c in b["cases"] if c["scenario"] in shared]),
    }


def _by_kind(cases_a: Sequence[Mapping], cases_b: Sequence[Mapping]) -> dict[str, dict[str, Any]]:
    """Success A and B per phrasing kind (precise / vague / control), over the shared scenarios."""
    table_a = summarise_by(cases_a, "kind", KIND_ORDER)
    table_b = summarise_by(cases_b, "kind", KIND_ORDER)
    return {
        kind: {"success_a": table_a[kind]["success_rate"] if kind in table_a else None,
               "success_b": table_b[kind]["success_rate"] if kind in table_b else None}
        for kind in [*table_a, *(k for k in table_b if k not in table_a)] if kind != "overall"
    }


def _changed_verdicts(cases_a: Sequence[Mapping], cases_b: Sequence[Mapping], scenario: str) -> list[str]:
    """Failure reasons that appear on one side only (what got fixed, what broke), compared without
    their parenthesised details: the planted names and PIDs differ on every run."""

    def reasons(cases: Sequence[Mapping]) -> set[str]:
        return {_PARENS.sub("", c["reason"]).strip() for c in cases if c["scenario"] == scenario and not c["success"]}

    reasons_a, reasons_b = reasons(cases_a), reasons(cases_b)
    return [f"fixed: {r}" for r in sorted(reasons_a - reasons_b)] + [f"new: {r}" for r in sorted(reasons_b - reasons_a)]


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _moved(row: Mapping[str, Any]) -> str:
    moved = _rate(row["success_a"]) + " → " + _rate(row["success_b"])
    if row["success_a"] is not None and row["success_b"] is not None and row["success_a"] != row["success_b"]:
        moved += " ▲" if row["success_b"] > row["success_a"] else " ▼"
    return moved


def format_comparison(diff: Mapping[str, Any]) -> str:
    a, b = diff["a"], diff["b"]
    lines = [
        f"A: eval {a['id']} · {a['model']} · {a['suite']} · K={a['repeat']} · {a['started_at']}",
        f"B: eval {b['id']} · {b['model']} · {b['suite']} · K={b['repeat']} · {b['started_at']}",
    ]
    headings = ["scenario", "success A→B", *(h for _, h, _ in DELTA_COLUMNS)]
    rows = []
    for name, row in diff["scenarios"].items():
        cells = [name, _moved(row)]
        cells += ["—" if row[key] is None else fmt.format(row[key]) for key, _, fmt in DELTA_COLUMNS]
        rows.append(cells)
    lines.append(markdown_table(headings, rows))
    kinds = diff.get("kinds") or {}
    if kinds:
        lines.append("")
        lines.append(markdown_table(["kind", "success A→B"], [[kind, _moved(row)] for kind, row in kinds.items()]))
    notes = [(name, note) for name, row in diff["scenarios"].items() for note in row["changed"]]
    if notes:
        lines.append("")
        lines.extend(f"{name}: {note}" for name, note in notes)
    return "\n".join(lines)
