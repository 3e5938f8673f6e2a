"""How the evaluation's scorer reads an all-clear in an answer: the judge's own reading of English,
kept in the evaluation (the product reads no answer's words; it judges claims, agent/claim_checks.py).
"""

from __future__ import annotations

import re

# Ways a short answer says "nothing is wrong". Loose about phrasing but without bare words like
# "free" or "ok": a model that copies the prompt's example ("only 0.2 GB free") must not read as an
# all-clear. Shared with the evaluation's scorer (appliance/eval/scoring.py).
ALL_CLEAR = re.compile(
    r"\bno\s+(?:[\w-]+\s+){0,3}?(?:errors?|problems?|issues?|faults?|failures?|process(?:es)?|files?|culprit|one|"
    r"listeners?|services?|programs?|anomal\w*|unusual\w*|signs?|evidence|abnormal\w*)\b"
    r"|\bnothing\b|\bnone\b|\bnot\s+(?:[\w-]+\s+){0,3}?(?:listening|running|in use|used|found|unusual\w*|large|"
    r"abnormal\w*|wrong|failing|open|bound)\b"
    r"|\b(?:did|does|do|was|were|is|are)(?: not|n't)\s+(?:[\w-]+\s+){0,2}?(?:report|show|contain|find|have|log|see)\w*"
    r"\s+(?:[\w-]+\s+){0,1}?(?:errors?|problems?|issues?|failures?)\b"
    r"|\b(?:isn't|aren't|wasn't|weren't|no one)\b"
    r"|\b(?:port|it)(?: \d+)? is (?:free|unused|available|closed)\b"
    r"|\b(?:healthy|normal(?:ly)?|fine|clean|successful(?:ly)?|succeeded)\b"
    r"|\b(?:0|zero) (?:errors?|failures?)\b",
    re.IGNORECASE,
)
# Result fields that name a culprit; a no-fault control must leave them empty.
CULPRIT_FIELDS = ("culprit", "process", "pid")
