"""Whether a question is about something other than this machine: general knowledge, a chore, the
world outside (the weather, a recipe, how a hash table works, the difference between TCP and UDP).

Why apart from the reader's other words: such a question gets an honest "this machine cannot tell"
rather than a diagnosis, so the line between it and a question about this machine is drawn in one
place. A question with a path or a port, or whose computer words point at this machine ("my disk",
"this box", "here"), is about this machine whatever its shape.
"""

from __future__ import annotations

import re

_OUT_OF_SCOPE = re.compile(
    r"\b(?:weather|forecast|poem|haiku|joke|recipe|stocks?|share\s+price|bitcoin|president|prime\s+minister|"
    r"capital\s+of|population|football|soccer|movie|song|lyrics|translate|essay|novel|story|horoscope|lottery|"
    r"girlfriend|boyfriend|dinner|birthday|vacation|holiday|homework|relativity|revenue|traffic\s+on\s+the\s+way|"
    r"send\s+an?\s+(?:e-?mail|message|text)|book\s+a|order\s+(?:me\s+)?a)\b", re.I)
# Words about a computer: a question with none of them (and no path or port) is not about this machine.
_MACHINE = re.compile(
    r"\b(?:comput\w*|machine|laptop|pc|desktop|server|box|system\w*|linux|ubuntu|debian|os|kernel|app\w*|program\w*|"
    r"process\w*|pid|files?|folders?|director\w*|dir|disks?|drives?|ssd|space|storage|partition\w*|mount\w*|network\w*|"
    r"internet|wifi|ports?|sockets?|connect\w*|services?|daemon|logs?|errors?|boot\w*|cpu|processor|cores?|memory|"
    r"ram|swap|load|fans?|hot|slow\w*|sluggish|fast|lag\w*|freez\w*|crash\w*|hang\w*|stuck|screen|browser|sites?|"
    r"websites?|video\w*|tabs?|download\w*|upload\w*|install\w*|update\w*|users?|accounts?|root|sudo|terminal|"
    r"command|script\w*|cron|timers?|jobs?|clock|time\s*zone|uptime|dns|ip|address|firewall|config\w*|settings?|"
    r"password|permission\w*|access|gigs?|gb|mb|bytes?|usb|sd|card|printer|keyboard|mouse|battery|running|runs?|"
    r"database|db|docker|container|vm|virtual|python|java|node|nginx|apache|ssh|backup\w*|sync\w*|email\s+server|"
    r"host\w*|route\w*|resolv\w*|reach\w*|df|du|ls|ps|top|iptables|nft|units?|fstab|devices?|i/?o|pressure|psi|"
    r"mysql|postgres\w*|redis|tomcat|httpd|sshd|systemd|journal\w*|cgroups?|threads?|fork\w*|monitor|gpu|"
    r"packages?|drivers?|hardware|shutdown|shut\s+down|reboot\w*|restart\w*|sleep|wake|login|logon|logout|log\s+in|logged\s+(?:in|on|out)|"
    r"writ\w*|sav(?:e|ed|ing)|reports?|print\w*|open\w*|delet\w*|copy\w*|start\w*|stop\w*|work\w*)\b"
    r"|\b\d{1,3}(?:\.\d{1,3}){3}\b|\b[a-z0-9-]+\.(?:internal|local|lan|com|org|net|io)\b",
    re.I)
# The shape of a request for general knowledge or a chore ("explain …", "write me …", "recommend …",
# "what is the best …"): about this machine only when a computer word of it points here (below).
_REQUEST = re.compile(
    r"^\W*(?:(?:can|could|would)\s+(?:you|u)\s+(?:please\s+)?)?(?:help\s+me\s+with|write|tell\s+me\s+(?:a|about)|"
    r"explain|predict|translate|send|recomm?end|suggest|summari[sz]e|compose|draft|plan|book|order|"
    r"what\s+is\s+the\s+best(?!\s+way\b))\b", re.I)
# A question about the world ("who won …", "what is the capital of …", "how do I bake …"): out of
# scope only when no computer word is in it at all: "who is logged in?", "who is using port 8080?"
# and "what is the best way to free disk space?" are about this machine.
_WORLD = re.compile(
    r"^\W*(?:who\s+(?:won|is|was|were)|what\s+is\s+the\s+(?:population|capital|meaning|temperature|weather|best\s+way)|"
    r"what'?s\s+the\s+(?:weather|temperature|score|best\s+way)|how\s+do\s+(?:i|you)\s+(?:cook|bake|make|say)|"
    r"hows?\s+the\s+(?:traffic|weather))\b", re.I)
# Words that point a machine word at this machine ("my laptop", "the disk", "this box"); a request
# whose machine words none of them points at is about computers in general ("write a Python
# function", "recommend a good laptop", "translate 'disk full'"), a chore, not this machine's state.
_HERE = frozenset("my this the our these those its mine".split())
_ON_HERE = re.compile(r"\b(?:here|on\s+it|in\s+it)\b", re.I)


def _points_here(text: str) -> bool:
    """A machine word of `text` follows, within three words, a word that points at this machine."""
    for match in _MACHINE.finditer(text):
        before = [word.strip(",.;:'\"()").lower() for word in text[:match.start()].split()[-3:]]
        if _HERE.intersection(before):
            return True
    return bool(_ON_HERE.search(text))


# General knowledge asked in any shape ("what's the difference between …", "how does a … work",
# "… in general", "is X faster than Y", "give me a …", a sum or a unit to convert): about computers in
# general unless a computer word of it points at this machine.
_GENERAL = re.compile(
    r"\bin\s+general\b|\bdifferences?\s+between\b|\bhow\s+does\s+(?:a|an)\s+[\w-]+(?:\s+[\w-]+)?\s+work\b"
    r"|\b(?:is|are)\s+[\w+#.-]+\s+(?:faster|slower|better|worse|safer|easier)\s+than\b"
    r"|^\W*(?:(?:can|could|would)\s+(?:you|u)\s+(?:please\s+)?)?give\s+me\s+(?:a|an|some)\b"
    r"|\bwhat(?:'s|\s+is)\s+a\s+good\b|\bwhat(?:'s|\s+is)\s+\d+(?:\.\d+)?\s*%\s+of\s+\d|^\W*convert\s+\d", re.I)
# A how-to with no computer word at all ("how do I center a div in css"); "how do I check disk
# space?" asks about this machine's disk.
_HOW_TO = re.compile(r"^\W*how\s+(?:do|can|should|would)\s+(?:i|you|we|one)\b", re.I)


def elsewhere(text: str, faulty: bool = False) -> bool:
    """The question is about something other than this machine (`faulty`: its words report a fault,
    which keeps a question that names the weather or a song about this machine's trouble)."""
    if _OUT_OF_SCOPE.search(text) and not faulty:
        return True
    if (_REQUEST.search(text) or _GENERAL.search(text)) and not _points_here(text):
        return True
    return bool(_HOW_TO.search(text) or _WORLD.search(text)) and not _MACHINE.search(text)
