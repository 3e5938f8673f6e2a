"""The question read by its words alone: the prior the model's labels refine, and the whole
reading where no model is asked (tests, `--no-check` tools, a model that cannot answer).

Why kept: it is instant, it knows the technical phrasings exactly, and it pulls out what must be
exact (paths, ports, pids, names) better than any label could.
"""

from __future__ import annotations

import re
from typing import Sequence

from appliance.agent.question.kinds import AMOUNT_FORM, OPEN, WHICH, WHY, YES_NO_FORM, Asks, Resource

_AMOUNT_Q = re.compile(
    r"\bhow\s+(?:many|much|long|full|big|large|old|hot|fast|often|busy)\b"
    r"|\bwhat\s+(?:percentage|percent|fraction|share|size|temperature)\b"
    r"|\bhow\s+(?:\w+\s+){0,3}?(?:left|free|remain\w*)\b|\buptime\b",
    re.I,
)
_THING = (r"(?:process(?:es)?|program|app|application|service|daemon|file|folder|directory|dir|port|user|"
          r"partition|filesystem|disk|mount|thing|one|task|job|unit|connection|socket|parent)")
_WHICH_Q = re.compile(
    rf"\b(?:which|what)\s+(?:\w+\s+){{0,2}}?{_THING}\b|\bwho\b"
    r"|\bwhat(?:'s|\s+is|\s+are)?\s+(?:\w+\s+)?(?:using|eating|filling|holding|taking|listening|hogging|"
    r"consuming|running|keeping|writing|reading|spawning|opening|doing)\b"
    r"|\bwhat(?:'s|\s+is)\s+it\b|\bfind\s+(?:it|them|the\s+\w+)\b|\bwhich\s+one\b"
    # "what's hammering it?", "what is slowing my laptop?": a verb done to the person's thing asks for
    # the thing doing it, whatever the verb ("what's going on with …" has no object; a cause is WHY).
    r"|\bwhat(?:'s|\s+is|\s+are|\s+keeps)\s+(?!causing\b)\w+ing\s+(?:it|them|this|that|my|our|the|me|us)\b",
    re.I,
)
_WHY_Q = re.compile(r"\bwhy\b|\bwhat\s+(?:caused|causes|went\s+wrong|is\s+wrong|'s\s+wrong|happened)\b", re.I)
# "anything wrong with the reports?" is "is there anything wrong …?" with its verb left out; "something
# is wrong with my disk" is a statement.
_YES_NO_Q = re.compile(r"^\s*(?:is|are|does|do|did|has|have|can|could|was|were|am|will|should)\b"
                       r"|\b(?:is|are)\s+(?:there|anything|something|any)\b"
                       r"|^\s*(?:anything|something|any)\b(?!\s+(?:is|are|was|were|has|have|keeps|seems)\b)(?:[^.?!]|\.(?=\S))*\?",
                       re.I)
_SUPERLATIVE = re.compile(r"\b(?:biggest|largest|most|top|busiest|heaviest|fullest|highest|main|closest)\b", re.I)
_CONDITIONAL = re.compile(r"\bif so\b|^\s*(?:is|are|does|do)\s+(?:any|anything|something|there)\b", re.I)
_TROUBLE = re.compile(
    r"\b(?:errors?|fail\w*|slow\w*|full|hog\w*|stuck|crash\w*|die[sd]?|dying|dead|broken|broke|wrong|problems?|"
    r"issues?|leak\w*|high|loud|hot|eating|filling|flood\w*|zombies?|defunct|restart\w*|hang\w*|freez\w*|"
    r"refus\w*|denied|unusual\w*|too\s+many|running\s+out|out\s+of|keeps?|won'?t|can'?t|cannot|couldn'?t|"
    r"doesn'?t|isn'?t\s+working|not\s+working|anything|something|heavy|heavily|busy|thrash\w*|most)\b",
    re.I,
)


_FAILURE = re.compile(r"\berror|\bfail|\bcrash|\bwrong|\bbroken|can'?t|cannot|won'?t|doesn'?t", re.I)


def form_in(text: str) -> str:
    """How a question is put: amount, which, why, yes_no or open (a statement such as "my laptop
    is slow" is open: a culprit or an all-clear both fit)."""
    if _AMOUNT_Q.search(text):
        return AMOUNT_FORM
    if _WHICH_Q.search(text):
        return WHICH
    if _WHY_Q.search(text):
        return WHY
    if _YES_NO_Q.search(text):
        return YES_NO_FORM
    return OPEN


def ranking_in(text: str) -> bool:
    return form_in(text) == WHICH and bool(_SUPERLATIVE.search(text)) and not _CONDITIONAL.search(text)


def fault_in(text: str) -> bool:
    return form_in(text) == WHICH or bool(_TROUBLE.search(text))


_PATH = re.compile(r"(?<![\w.~])((?:/|~/)[\w.@+\-]+(?:/[\w.@+\-]+)*/?)")


def conditional_in(text: str) -> bool:
    return bool(_CONDITIONAL.search(text))


def trouble_in(text: str) -> bool:
    return bool(_TROUBLE.search(text))


def failure_in(text: str) -> bool:
    return bool(_FAILURE.search(text))


def superlative_in(text: str) -> bool:
    return bool(_SUPERLATIVE.search(text))


def paths_in(text: str) -> list[str]:
    """Absolute (or ~) paths the question names, in order, without trailing punctuation."""
    paths = []
    for raw in _PATH.findall(text):
        path = raw.rstrip(".,;:?!)")
        if path not in paths and path not in ("/",):
            paths.append(path)
    return paths


_PORT = re.compile(r"\bports?\s+(?:number\s+|no\.?\s*|#\s*)?(\d{1,5})\b"
                   r"|\b(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\]|[\w-]+\.[\w.-]+)\s*:\s*(\d{1,5})\b", re.I)
MAX_PORTS = 3


def ports_in(text: str) -> list[int]:
    """The ports the question names ("port 8080", "localhost:5432"), in order, at most MAX_PORTS."""
    found: list[int] = []
    for match in _PORT.finditer(text):
        port = int(match.group(1) or match.group(2))
        if 0 < port < 65536 and port not in found:
            found.append(port)
    return found[:MAX_PORTS]


_PID = re.compile(r"\b(?:pid|process(?:\s+id)?|process\s+number)\s*#?\s*(\d{1,7})\b", re.I)
_NAME = re.compile(r"[\"'`‘“]([\w.@+-]{2,40})[\"'`’”]"
                   r"|\b(?:the\s+|my\s+|a\s+|an\s+)?([a-z][\w.+-]{1,30})\s+(?:process(?:es)?|service|daemon|unit|job)\b"
                   r"|\b(?:user|account)\s+([a-z_][\w.-]{1,31})\b", re.I)
_NOT_NAMES = frozenset("""a an the this that my our any some which what one other each every all no new old
    same own busy main top big biggest largest heavy running dead zombie stuck slow single many few several
    system background weird strange unknown child parent root-owned java-like user users is was which who web
    it its their his her more most less so as of for to in on at by uses using use has have had eats eating
    takes taking runs owns owning keeps starts""".split())


def named_pids(text: str) -> list[int]:
    return list(dict.fromkeys(int(m) for m in _PID.findall(text)))


def named_things(text: str) -> list[str]:
    """Names the question gives: quoted words, "the X process/service", "user X"."""
    names: list[str] = []
    for match in _NAME.finditer(text):
        name = next(g for g in match.groups() if g)
        if name.lower() not in _NOT_NAMES and not name.isdigit() and name not in names:
            names.append(name)
    return names


# What is asked, by words: the first that matches wins (the order matters: "how many processes"
# asks a count, not a process).
_OUT_OF_SCOPE = re.compile(
    r"\b(?:weather|forecast|poem|haiku|joke|recipe|stocks?|share\s+price|bitcoin|president|prime\s+minister|"
    r"capital\s+of|football|soccer|movie|song|lyrics|translate|essay|novel|horoscope|lottery|girlfriend|"
    r"boyfriend|dinner|birthday|vacation|holiday)\b", re.I)
_USER = re.compile(r"\b(?:which|what|whose)\s+(?:\w+\s+)?(?:user|account)s?\b|\bwho\s+(?:is\s+)?(?:logged|using|eats)"
                   r"|\b(?:per|by|each)\s+user\b|\buser\s+(?:is\s+)?(?:using|uses|eating|hogging)\b", re.I)
_COUNT = re.compile(r"\bhow\s+many\b|\bnumber\s+of\b|\bcount\s+(?:of|the)\b", re.I)
_FACT = re.compile(
    r"\b(?:what|which)(?:'s|\s+is|\s+are)?\s+(?:the\s+|my\s+|this\s+)?(?:\w+\s+)?(?:kernel|version|distro|distribution|"
    r"os|operating\s+system|hostname|host\s*name|time\s*zone|cpu\s+model|processor\s+model|architecture|"
    r"ip(?:\s+address)?|nameservers?|dns\s+servers?|default\s+route|gateway|machine\s+name)\b"
    r"|\bwhen\s+did\s+(?:this|the|my)\s+(?:machine|box|computer|server|system|laptop)\s+(?:last\s+)?(?:boot|start|reboot)"
    r"|\bwhat\s+(?:kind|type)\s+of\s+(?:machine|cpu|processor|virtual)|\bis\s+this\s+(?:a\s+)?(?:vm|virtual|container)"
    r"|\bhow\s+many\s+(?:cpus?|cores|processors)\s+(?:does|do|has|have)\b", re.I)
_PORT_Q = re.compile(r"\b(?:which|what)\s+(?:\w+\s+)?(?:ports?|sockets?)\b|\bports?\s+(?:is|are)\s+(?:open|listening)\b"
                     r"|\bwhat(?:'s|\s+is)\s+listening\b|\bopen\s+ports\b", re.I)
_SERVICE_Q = re.compile(r"\b(?:which|what)\s+(?:\w+\s+){0,2}?(?:services?|units?|daemons?|timers?|cron\s*jobs?)\b", re.I)
_FILE_Q = re.compile(r"\b(?:which|what)\s+(?:\w+\s+){0,2}?files?\b|\b(?:largest|biggest)\s+files?\b", re.I)
_FOLDER_Q = re.compile(r"\b(?:which|what)\s+(?:\w+\s+){0,2}?(?:folders?|director(?:y|ies)|dirs?)\b"
                       r"|\bwhat(?:'s|\s+is)\s+(?:\w+\s+)?(?:filling|taking\s+up|eating\s+up|using\s+up)\s+(?:all\s+)?"
                       r"(?:the\s+|my\s+|this\s+)?(?:disk|drive|space|storage|partition|ssd|hdd|hard\s+drive)", re.I)
_FS_Q = re.compile(r"\b(?:which|what)\s+(?:\w+\s+){0,2}?(?:filesystems?|file\s+systems?|partitions?|mounts?|disks?|drives?|volumes?)\b", re.I)
_LOG_Q = re.compile(r"\blogs?\b|\.log\b|\bjournal\b", re.I)
_PROCESS_Q = re.compile(r"\b(?:which|what)\s+(?:\w+\s+){0,2}?(?:process(?:es)?|programs?|apps?|applications?|tasks?|parent)\b"
                        r"|\bwho\s+(?:is\s+)?\w+ing\b", re.I)

_RESOURCES: tuple[tuple[Resource, re.Pattern], ...] = (
    (Resource.LOGS, re.compile(r"\blogs?\b|\.log\b|\bjournal|\bsyslog|\bdmesg|\bkernel\s+(?:errors?|messages?)", re.I)),
    (Resource.DISK_IO, re.compile(r"\bi/?o\b|\biowait|\bdisk\s+(?:activity|busy|light|thrash\w*)|\bwrit(?:es|ing)\s+(?:to|the\s+most)|"
                                  r"\breads?\s+and\s+writes|\bhammer\w*\s+(?:the\s+)?disk|\bdrive\s+light", re.I)),
    (Resource.DISK_SPACE, re.compile(r"\bdisk|\bspace\b|\bfull\b|\bstorage|\bpartition|\bfilesystem|\bfile\s+system|\bgigs?\b|"
                                     r"\bgb\b|\binodes?|\bfolders?|\bdirector(?:y|ies)|\bmount|\bdrive\b|\bquota", re.I)),
    (Resource.MEMORY, re.compile(r"\bmemory|\bram\b|\bswap|\boom\b|\bout\s+of\s+memory|\bleak\w*|\brss\b", re.I)),
    (Resource.CPU, re.compile(r"\bcpu|\bprocessor|\bcores?\b|\bload\b|\bfans?\b|\bhot\b|\bslow\w*|\bsluggish|\blag\w*|"
                              r"\bthrottl\w*|\bbusy|\bhog\w*", re.I)),
    (Resource.NETWORK, re.compile(r"\bports?\b|\bnetwork|\bconnect\w*|\bsockets?|\blisten\w*|\bdns\b|\binternet|\bwifi|"
                                  r"\bfirewall|\broute|\bhostname|\bresolv\w*|\bping\b|\bhttp|\bremote|\bssh\b", re.I)),
    (Resource.FILES, re.compile(r"\bopen\s+files|\bfile\s+descriptors?|\bfds?\b|\bulimit|\bhandles?\b|\bbusy\s+target|"
                                r"\btarget\s+is\s+busy|\bhas\s+\S+\s+open\b|\bsymlink|\blinks?\b|\bpermission", re.I)),
    (Resource.TIME, re.compile(r"\bclock|\btime\s*zone|\btimezone|\bntp\b|\buptime|\bboot\w*|\bdate\b|\btime\s+sync|\bdrift", re.I)),
    (Resource.CONFIG, re.compile(r"\bconfig\w*|\bsettings?\b|\.conf\b|\.ini\b|\.ya?ml\b|\.toml\b|\bkernel\s+version|\bdistro", re.I)),
    (Resource.PROCESSES, re.compile(r"\bprocess|\bzombie|\bdefunct|\bthreads?\b|\bfork|\brestart\w*|\bcrash\w*|\bspawn\w*|"
                                    r"\bservices?\b|\bdaemon|\bcron|\btimers?\b|\bjobs?\b", re.I)),
)


_WHICH_WORD = re.compile(r"\bwhich\b", re.I)
_CONDITIONAL_THING = re.compile(r"\b(?:any|one|some)\s+(?:\w+\s+){0,2}?(process|program|folder|directory|file|"
                                r"filesystem|partition|port|service|user)(?:es|s)?\b", re.I)
_THING_KIND = {"process": Asks.PROCESS, "program": Asks.PROCESS, "folder": Asks.FOLDER, "directory": Asks.FOLDER,
               "file": Asks.FILE, "filesystem": Asks.FILESYSTEM, "partition": Asks.FILESYSTEM, "port": Asks.PORT,
               "service": Asks.SERVICE, "user": Asks.USER}


def lexical_resource(text: str) -> Resource:
    """The resource whose words come first in the question (ties: the listed order)."""
    best: tuple[int, int, Resource] | None = None
    for order, (resource, pattern) in enumerate(_RESOURCES):
        if resource is Resource.PROCESSES and best is not None:
            continue  # "which process uses the most CPU" is about the CPU
        match = pattern.search(text)
        if match and (best is None or (match.start(), order) < best[:2]):
            best = (match.start(), order, resource)
    return best[2] if best else Resource.NONE


def lexical_asks(text: str, paths: Sequence[str] = ()) -> tuple[Asks, bool]:
    """What the question asks for, by its words alone, and whether words that say so matched
    (False: the reader fell back to its default, and the model's choice is worth more)."""
    form = form_in(text)
    if _OUT_OF_SCOPE.search(text) and not _TROUBLE.search(text) and not paths:
        return Asks.OUT_OF_SCOPE, True
    if _FACT.search(text):
        return Asks.SYSTEM_FACT, True
    if _USER.search(text):
        return Asks.USER, True
    if _COUNT.search(text):
        return Asks.COUNT, True
    if form == AMOUNT_FORM:
        return Asks.AMOUNT, True
    if form == WHICH or _PORT_Q.search(text):
        for asks, pattern in ((Asks.PORT, _PORT_Q), (Asks.SERVICE, _SERVICE_Q), (Asks.FOLDER, _FOLDER_Q),
                              (Asks.FILE, _FILE_Q), (Asks.FILESYSTEM, _FS_Q), (Asks.PROCESS, _PROCESS_Q)):
            if pattern.search(text):
                return asks, True
        return Asks.PROCESS, False
    if form == YES_NO_FORM:
        # "Is any process …? If so, which?" asks for the thing, when there is one
        thing = _CONDITIONAL_THING.search(text) if conditional_in(text) and _WHICH_WORD.search(text) else None
        if thing:
            return _THING_KIND[thing.group(1).lower()], True
        return Asks.YES_NO, True
    if _LOG_Q.search(text) or any(p.endswith(".log") or "/log" in p for p in paths):
        return Asks.LOG_CAUSE, True
    return Asks.EXPLANATION, False
