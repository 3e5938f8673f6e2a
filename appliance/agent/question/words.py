"""The question's form read from a handful of structural words: the prior where no model labels
it (tests, `--no-check` tools, a model that cannot answer), and what stands when those words are
unambiguous ("how many", "which file", a question opened by "is").

Why so little: every phrasing a pattern knows is one it was written for; a person's own words
reach the model's labels (question/classify.py), which choose among the kinds under a grammar.
The resource and out-of-scope are the model's alone.
"""

from __future__ import annotations

import re
from typing import Sequence

from appliance.agent.question.kinds import Asks

_COUNT = re.compile(r"\bhow\s+many\b|\bnumber\s+of\b", re.I)
_AMOUNT = re.compile(r"\bhow\s+(?:much|long|big|large|full|old|hot|fast|often)\b|\bwhat\s+percent(?:age)?\b", re.I)
# "which process …", "what file …": the noun after which/what names the thing asked for
_HEAD = re.compile(r"\b(?:which|what)\s+(?:\w+\s+)?(process(?:es)?|programs?|apps?|files?|folders?|director(?:y|ies)|"
                   r"ports?|services?|daemons?|users?|accounts?|partitions?|filesystems?|disks?|logs?)\b", re.I)
_WHO = re.compile(r"\bwho(?:'?s|se)?\b", re.I)
_YES_NO = re.compile(r"(?:^|[.:;!?]\s*)\s*(?:is|are|does|do|did|has|have|can|could|was|were|will)\b(?!n?'t\b)", re.I)
_WHY = re.compile(r"\bwhy\b|\bwhat'?s\s+wrong\b|\bwhat\s+(?:is\s+wrong|happened|went\s+wrong)\b", re.I)
_FAULT = re.compile(r"\b(?:errors?|fail\w*|slow\w*|full|stuck|crash\w*|broken|wrong|problems?|issues?|leak\w*|"
                    r"hang\w*|freez\w*|refus\w*|denied|can'?t|cannot|won'?t|doesn'?t|not\s+working|keeps?|"
                    r"too\s+(?:many|much)|out\s+of|down|missing|dead|dies|died|hot|loud|hog\w*|lag\w*)\b", re.I)

_THING_KIND = {"process": Asks.PROCESS, "program": Asks.PROCESS, "app": Asks.PROCESS, "file": Asks.FILE,
               "log": Asks.FILE, "folder": Asks.FOLDER, "directory": Asks.FOLDER, "port": Asks.PORT,
               "service": Asks.SERVICE, "daemon": Asks.SERVICE, "user": Asks.USER, "account": Asks.USER,
               "partition": Asks.FILESYSTEM, "filesystem": Asks.FILESYSTEM, "disk": Asks.FILESYSTEM}


def _singular(noun: str) -> str:
    noun = noun.lower()
    if noun.endswith("ies"):
        return noun[:-3] + "y"
    if noun.endswith("sses"):
        return noun[:-2]
    return noun if noun.endswith("ss") else noun.removesuffix("s")


def lexical_asks(text: str, paths: Sequence[str] = (), ports: Sequence[int] = ()) -> tuple[Asks, bool]:
    """What the question asks for by its structural words, and whether they said so (False: the
    reader fell back to its default and the model's label is worth more)."""
    if _COUNT.search(text):
        return Asks.COUNT, True
    if _AMOUNT.search(text):
        return Asks.AMOUNT, True
    head = _HEAD.search(text)
    if head:
        return _THING_KIND[_singular(head.group(1))], True
    if _WHO.search(text):  # who holds a port or a path is a program; who else is a person
        return (Asks.PROCESS if paths or ports else Asks.USER), False
    if _YES_NO.search(text):
        return Asks.YES_NO, True
    return Asks.EXPLANATION, bool(_WHY.search(text))


def fault_in(text: str) -> bool:
    """The words report or suspect a fault."""
    return bool(_FAULT.search(text))
