"""Why an answer was sent back, as a value: what kind of misfit, the words the model reads, the
finding it rests on, and what the retry must do.

Why a value: the steering and the engine's own answer act on the kind and the finding, never on
the words of a message (a label parsed back fits only the labels it was written against).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from appliance.analyzers.base import Finding


class Kind(str, Enum):
    """What was wrong with an answer."""

    EMPTY = "empty-answer"
    SAME_AS_REJECTED = "same-answer-as-rejected"
    COPIED = "copied-text"
    NO_TOOL_YET = "no-tool-used-yet"
    REFUSAL = "refusal-while-tools-work"
    UNBACKED_FIELD = "field-not-in-any-observation"
    UNBACKED_PATH = "path-not-in-any-observation"
    UNBACKED_SHARE = "share-not-in-any-observation"
    NO_FACT = "no-observed-fact-named"
    SELF = "names-the-appliance-itself"
    PORT_VERDICT = "port-verdict"
    UNASKED_PORT = "unasked-port"
    CLAIMS_NO_FAULT = "claims-no-fault"
    CONTRADICTS = "contradicts-check"  # finding: the verdict contradicted (ok: a fault claimed; else: one denied)
    SAY_YES_OR_NO = "say-yes-or-no"  # finding: the ok verdict a "no" rests on, when there is one
    WRONG_PLACE = "another-place"
    OUTSIDE_PLACE = "not-under-the-place"
    MISSES_CULPRIT = "misses-the-check"
    NOT_FIRST = "not-the-first"
    NO_NUMBER = "no-number"
    NO_RATE = "no-rate"  # a how-fast question answered without the rate an observation shows
    NAMES_NO_THING = "names-no-thing"
    NAMES_NO_USER = "names-no-user"  # name: the user the observations rank first
    NAMES_NO_STANDOUT = "names-no-standout"  # finding: the ok verdict whose ranking one process leads by far
    NAMES_NO_DOER = "names-no-doer"  # finding: the problem verdict that names the process doing it
    LOG_NOT_QUOTED = "log-errors-not-quoted"
    UNADDRESSED = "finding-not-addressed"
    LOOKUP_MISSED = "lookup-not-answered"  # finding: the ok lookup of the named path the answer left out or denied
    FACT_NOT_NAMED = "fact-not-named"  # name: the sentence stating the facts asked, as measured
    LAST_STEP = "last-step"


# Kinds that say the answer named no real culprit (itself, one no observation shows, none, or only
# what it filtered by): a retry may rest on the checks' all-clear.
NO_REAL_CULPRIT = frozenset({Kind.CLAIMS_NO_FAULT, Kind.SELF, Kind.UNBACKED_FIELD, Kind.NO_FACT, Kind.UNASKED_PORT})
# Kinds whose answer invented or lacked a fact: a retry gets the tool that shows it first.
LACKS_FACT = frozenset({Kind.UNBACKED_FIELD, Kind.UNBACKED_PATH, Kind.NO_FACT, Kind.NAMES_NO_THING, Kind.NO_NUMBER,
                        Kind.NO_TOOL_YET})
# Kinds that copy the engine's own words or a refused answer: never passed on as the model's.
COPIES = frozenset({Kind.SAME_AS_REJECTED, Kind.COPIED})


@dataclass(frozen=True)
class Misfit:
    """kind: what was wrong; reason: the label the model reads (the engine's words and what they
    quote from the machine or the answer); own: the engine's words alone, which an answer must not
    copy (a retry may repeat the verdict a label quotes); finding: the verdict it rests on;
    invented: never passed on as the model's answer; rule: the rule that found it (the record);
    name: what the retry must name, when the rule knows it (the busiest user)."""

    kind: Kind
    reason: str
    finding: Finding | None = None
    own: str = ""
    invented: bool = True
    rule: str = ""
    name: str = ""

    @property
    def own_words(self) -> str:
        return self.own or f"[{self.kind.value}]"

    def __str__(self) -> str:
        return self.reason
