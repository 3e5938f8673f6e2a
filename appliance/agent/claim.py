"""The finish action as a claim over numbered evidence: a stance, the facts it cites, an optional
subject and value, and the sentence the person reads.

Why a claim: a small model's free sentence can only be judged by reading English, which fits the
phrasings it was written for. A claim's parts are choices under a grammar built for each step —
the ids of the facts shown, the entities they name — so a claim about a fact nobody saw cannot be
written at all, and the checks (agent/claim_checks.py) judge the parts, not the words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

STANCES: tuple[str, ...] = ("problem", "no_problem", "yes", "no", "value", "cannot_tell")
MAX_CITES = 3


@dataclass(frozen=True)
class Claim:
    """What a finish says. stance: problem (something is wrong: the subject and the facts that show
    it), no_problem (nothing is wrong there), yes / no (to a yes-or-no question), value (a number
    or a fact asked for), cannot_tell (the evidence does not settle it, or it is not about this
    machine). cites: the ids of the facts it rests on. subject: the entity it is about, as the
    evidence labels it. value: the value asked for, as a fact shows it. answer: the sentence."""

    stance: str
    cites: tuple[str, ...]
    answer: str
    subject: str = ""
    value: str = ""

    @classmethod
    def from_input(cls, data: Mapping[str, Any]) -> "Claim":
        cites = data.get("cites") or ()
        if isinstance(cites, str):
            cites = (cites,)
        return cls(str(data.get("stance") or "cannot_tell"), tuple(str(c) for c in cites)[:MAX_CITES],
                   str(data.get("answer") or "").strip(), str(data.get("subject") or "").strip(),
                   str(data.get("value") or "").strip())

    def result(self) -> dict[str, Any]:
        """The structured result a front end, the store and the evaluation read."""
        out: dict[str, Any] = {"stance": self.stance, "cites": list(self.cites)}
        if self.subject:
            out["subject"] = self.subject
        if self.value:
            out["value"] = self.value
        return out


@dataclass(frozen=True)
class Narrowing:
    """What a retry may still choose: stances left out, subjects refuted, and the facts it must
    cite from (empty: any shown fact)."""

    drop_stances: frozenset[str] = frozenset()
    drop_subjects: frozenset[str] = frozenset()
    first_cite: tuple[str, ...] = ()
    need_subject: bool = False  # the subject may not be left empty
    need_value: bool = False  # the value may not be left empty
    since: int = 0  # how many facts had been shown when it was made: any fact shown after may be cited

    def merged(self, other: "Narrowing") -> "Narrowing":
        return Narrowing(self.drop_stances | other.drop_stances, self.drop_subjects | other.drop_subjects,
                         other.first_cite or self.first_cite, self.need_subject or other.need_subject,
                         self.need_value or other.need_value, max(self.since, other.since))


@dataclass(frozen=True)
class Choices:
    """The enums one step's finish grammar offers, from the facts shown so far."""

    fact_ids: tuple[str, ...]
    subjects: tuple[str, ...]
    narrowing: Narrowing = field(default_factory=Narrowing)

    @property
    def stances(self) -> list[str]:
        return [s for s in STANCES if s not in self.narrowing.drop_stances] or ["cannot_tell"]

    @property
    def subject_labels(self) -> list[str]:
        return [s for s in self.subjects if s not in self.narrowing.drop_subjects]

    @property
    def first_cites(self) -> list[str]:
        wanted = [c for c in self.narrowing.first_cite if c in self.fact_ids]
        newer = [c for c in self.fact_ids[self.narrowing.since:] if c not in wanted]
        return wanted + newer if wanted else list(self.fact_ids)


def claim_schema(choices: Choices, *, answer_max: int, value_max: int) -> dict:
    """The finish action_input under a grammar: stance first (the model decides what it claims),
    the cites (1–3 ids shown; on a narrowed retry, only the facts it must rest on), the subject
    ("" for none) and the value ("" for none), each chosen before the sentence, which comes last and
    is written about what was chosen. Every key is required: a small model leaves optional keys out."""
    ids = choices.first_cites or ["F0"]
    cites: dict[str, Any] = {"type": "array", "items": {"enum": ids}, "minItems": 1, "maxItems": MAX_CITES}
    props: dict[str, Any] = {"stance": {"enum": choices.stances}, "cites": cites}
    subjects = choices.subject_labels
    props["subject"] = {"enum": subjects if choices.narrowing.need_subject and subjects else ["", *subjects]}
    props["value"] = {"type": "string", "maxLength": value_max}
    if choices.narrowing.need_value:
        props["value"]["minLength"] = 1
    props["answer"] = {"type": "string", "maxLength": answer_max}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def cited(claim: Claim, shown: Iterable[str]) -> list[str]:
    """The claim's cites that were shown, in its order."""
    known = set(shown)
    return [c for c in claim.cites if c in known]


def subject_names(labels: Sequence[str]) -> list[str]:
    """The bare names inside subject labels ("hogzilla (pid 4711)" → "hogzilla")."""
    return [label.split(" (pid ", 1)[0] for label in labels]
