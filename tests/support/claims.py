"""Scripted finishes as claims: a reply that cites the facts of the transcript holding what its
answer states, as a model that cites well would (tests of the loop need a finish that stands, not
a model's reading)."""

from __future__ import annotations

import re
from typing import Any, Sequence

_FACT = re.compile(r"^(F\d+) (.*)$", re.M)
_TOKEN = re.compile(r"[\w./-]{3,}")


def shown_facts(messages: Sequence[Any]) -> list[tuple[str, str]]:
    """(id, line) of every fact the transcript showed, in order."""
    return [(m.group(1), m.group(2)) for msg in messages for m in _FACT.finditer(msg.content)]


def citing(answer: str, facts: list[tuple[str, str]], allowed: Sequence[str]) -> list[str]:
    """The ids (at most three) whose lines share the most tokens with the answer; the newest fact
    when none shares any."""
    words = {w.lower().strip(".") for w in _TOKEN.findall(answer)}
    scored = []
    for index, (fact_id, line) in enumerate(facts):
        if fact_id not in allowed:
            continue
        shared = len(words & {w.lower().strip(".") for w in _TOKEN.findall(line)})
        if shared:
            scored.append((-shared, -index, fact_id))
    picked = [fact_id for _, _, fact_id in sorted(scored)[:3]]
    return picked or [list(allowed)[-1]]


def claim(answer: str, stance: str = "value", *, thought: str = "done", subject: str = "", value: str = "",
          cites: Sequence[str] | None = None):
    """A finish reply: given cites as they are, else those a careful model would choose."""

    def reply(messages, schema):
        options = schema.get("anyOf", [schema])
        finish = next((o for o in options if o.get("properties", {}).get("action", {}).get("const") == "finish"), None)
        facts = shown_facts(messages)
        allowed = (finish["properties"]["action_input"]["properties"]["cites"]["items"]["enum"] if finish
                   else [fact_id for fact_id, _ in facts] or ["F1"])  # another call (a reflection) reads it as it can
        chosen = list(cites) if cites is not None else citing(answer, facts, allowed)
        return {"thought": thought, "action": "finish",
                "action_input": {"stance": stance, "cites": chosen, "subject": subject, "value": value,
                                 "answer": answer}}

    return reply
