"""A flag: one thing about one named object that a Linux expert would point at (an immutable file,
a certificate about to expire, a process stopped by a signal), as a typed value on its profile.

Why a value of its own: a profile (inspect_path, inspect_process, inspect_program, inspect_user)
states facts; a flag is the judgment over those facts, with a severity, so `appliance check THING`
can exit by the worst one and the answer checks can tell a warning from a plain fact without
reading words. A flag is a fact about the thing, never an answer rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Literal, Mapping

Severity = Literal["ok", "warning", "critical"]
SEVERITIES: tuple[str, ...] = ("ok", "warning", "critical")


@dataclass(frozen=True)
class Flag:
    """kind: a short stable id ("immutable", "cert_expired"); severity: ok, warning or critical;
    says: one plain sentence a person reads, with the values it rests on."""

    kind: str
    severity: Severity
    says: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "severity": self.severity, "says": self.says}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Flag":
        severity = str(data.get("severity", "warning"))
        return cls(str(data.get("kind", "")), severity if severity in SEVERITIES else "warning",  # type: ignore[arg-type]
                   str(data.get("says", "")))


def flag_dicts(flags: Iterable[Flag]) -> list[dict[str, str]]:
    """Flags as a tool result carries them (`data["flags"]`), worst first."""
    rank = {name: i for i, name in enumerate(SEVERITIES)}
    return [f.as_dict() for f in sorted(flags, key=lambda f: -rank[f.severity])]
