"""The question read by its words alone: the prior the model's labels refine, and the whole
reading where no model is asked (tests, `--no-check` tools, a model that cannot answer).

Why kept: it is instant, it knows the technical phrasings exactly, and it pulls out what must be
exact (paths, ports, pids, names) better than any label could.
"""

from __future__ import annotations

import re
from typing import Sequence

from appliance.agent.question.scope import elsewhere
from appliance.agent.question.facts import facets_in
from appliance.agent.question.kinds import AMOUNT_FORM, OPEN, WHICH, WHY, YES_NO_FORM, Asks, Resource

_AMOUNT_Q = re.compile(
    r"\bhow\s+(?:many|much|long|full|big|large|old|hot|fast|often|busy)\b"
    r"|\bwhat\s+(?:percentage|percent|fraction|share|size|temperature)\b"
    r"|\bhow\s+(?:\w+\s+){0,3}?(?:left|free|remain\w*)\b|\buptime\b", re.I)
_THING = (r"(?:process(?:es)?|program|app|application|service|daemon|file|folder|directory|dir|port|user|"
          r"(?:sym)?links?|shortcuts?|partition|filesystem|disk|mount|thing|one|task|job|unit|connection|socket|parent)")
_WHICH_Q = re.compile(
    rf"\b(?:which|what)\s+(?:\w+\s+){{0,2}}?{_THING}\b|\bwho\b"
    r"|\bwhat(?:'s|\s+is|\s+are)?\s+(?:\w+\s+)?(?:using|eating|filling|holding|taking|listening|hogging|"
    r"consuming|running|keeping|writing|reading|spawning|opening|doing)\b"
    r"|\bwhich\s+(?:\w+\s+)?logs?\b|\bwhat(?:'s|\s+is)\s+it\b|\bfind\s+(?:it|them|the\s+\w+)\b|\bwhich\s+one\b|\bby\s+what\b"
    # "what's hammering it?", "what is slowing my laptop?": a verb done to the person's thing asks for
    # the thing doing it, whatever the verb ("what's going on with …" has no object; a cause is WHY).
    r"|\bwhat(?:'s|\s+is|\s+are|\s+keeps)\s+(?!causing\b)\w+ing\s+(?:it|them|this|that|my|our|the|me|us)\b",
    re.I,
)
# "what's going on?", "what is happening to it?", "how come …?": an open request for what happens is a why
_WHY_Q = re.compile(r"\bwhy\b|\bwhat(?:\s+(?:caused|causes|went\s+wrong|is\s+wrong|happened)|'s\s+wrong)\b"
                    r"|\bwhat(?:'s|\s+is|\s+are)\s+(?:going\s+on|happening|up\s+with|the\s+(?:matter|deal))\b"
                    r"|\bwhat\s+gives\b|\bhow\s+come\b", re.I)
# "anything wrong with the reports?" is "is there anything wrong …?" with its verb left out; "something
# is wrong with my disk" is a statement.
# "can't log in since …" and "doesn't work" open a statement, not a question.
# A clause after a preamble asks too ("before I unplug it: does anything still use it?").
_YES_NO_Q = re.compile(r"(?:^|[.:;!?]\s*)\s*(?:is|are|does|do|did|has|have|can|could|was|were|am|will|should)\b(?!'t\b)"
                       r"|\b(?:is|are)\s+(?:there|anything|something|any)\b"
                       r"|^\s*(?:anything|something|any)\b(?!\s+(?:is|are|was|were|has|have|keeps|seems)\b)(?:[^.?!]|\.(?=\S))*\?",
                       re.I)
# "can you check?", "could you take a look, it is slow": a request to look, not a question answered
# yes or no ("can you check if nginx runs?" still asks whether it does)
_LOOK_REQUEST = re.compile(r"(?:^|[.:;!?,]\s*)\s*(?:please\s+)?(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?"
                           r"(?:check|look|help|investigate|dig|figure|find\s+out|take\s+a\s+look|have\s+a\s+look)\b"
                           r"(?!\s+(?:if|whether)\b)", re.I)
_SUPERLATIVE = re.compile(r"\b(?:biggest|largest|most|top|busiest|heaviest|fullest|highest|main|closest)\b", re.I)
_CONDITIONAL = re.compile(r"\bif so\b|(?:^|[.:;!?]\s*)\s*(?:is|are|does|do)\s+(?:any|anything|something|there)\b", re.I)
_SUSPECT_BAD = r"invalid|malformed|corrupt\w*|misconfigur\w*"  # "is any setting in X invalid?": trouble and fault
_TROUBLE = re.compile(
    r"\b(?:errors?|fail\w*|slow\w*|full|hog\w*|stuck|crash\w*|die[sd]?|dying|dead|broken|broke|wrong|problems?|"
    r"issues?|leak\w*|high|loud|hot|eating|filling|flood\w*|zombies?|defunct|restart\w*|hang\w*|freez\w*|"
    r"refus\w*|denied|unusual\w*|too\s+many|running\s+out|out\s+of|keeps?|won'?t|can'?t|cannot|couldn'?t|"
    r"doesn'?t|isn'?t\s+working|not\s+working|anything|something|heavy|heavily|busy|thrash\w*|most|"
    + _SUSPECT_BAD + r")\b",
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
    if _YES_NO_Q.search(_LOOK_REQUEST.sub(" ", text)):
        return YES_NO_FORM
    return OPEN


def ranking_in(text: str) -> bool:
    return form_in(text) == WHICH and bool(_SUPERLATIVE.search(text)) and not _CONDITIONAL.search(text)


def fault_label_in(text: str) -> bool:
    """The words report or suspect a fault (the question's fault label)."""
    return bool(_FAULT.search(text))


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
                   r"|\b([a-z][\w.+-]*\.(?:service|timer|socket|mount|target))\b"
                   r"|\b((?:eth|wlan|enp|ens|wlp|eno|br|docker|veth|tun|wg)\d[\w]*)\b"
                   r"|\b(?:the\s+|my\s+|a\s+|an\s+)?([a-z][\w.+-]{1,30})\s+(?:process(?:es)?|service|daemon|unit|job|"
                   r"workers?|app|exporter|server|master|backend|container)\b"
                   r"|\b(?:copies|instances)\s+of\s+([a-z][\w.+-]{1,30})\b"
                   r"|\b(?:is|are|does|do)\s+([a-z][\w.+-]{1,30})\s+(?:listening|running|using|writing|on)\b"
                   r"|\b(?:user|account)\s+([a-z_][\w.-]{1,31})\b", re.I)
_NOT_NAMES = frozenset("""a an the this that my our any some which what one other each every all no new old
    same own busy main top big biggest largest heavy running dead zombie stuck slow single many few several
    system background weird strange unknown child parent root-owned java-like user users is was which who web
    it its their his her more most less so as of for to in on at by uses using use has have had eats eating
    takes taking runs owns owning keeps starts cron worker workers deploy database web backup nightly scheduled
    something anything nothing everything there here this that node- local remote default current last first
    port ports file files folder process program app service server job thing things computer machine""".split())


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
# "Whose" asks for a person opening a question or clause ("tell me whose it is"), not after a noun ("the job whose log …")
_WHOSE_ASKED = (r"(?:^|[.?!;:,(\"']\s*|\b(?:and|but|so|or|then|me|know|see|out|wonder|wondering|guess|idea|sure|"
                r"asking|ask|check|tell)\s+)whose\b")
_USER = re.compile(r"\b(?:which|what|whose)\s+(?:\w+\s+){0,2}?(?:users?|accounts?|uids?|logins?)\b|" + _WHOSE_ASKED +
                   r"|\bwho'?s\s+account\b|\b(?:per|by|each)\s+user\b|\buser\s+(?:is\s+)?(?:using|uses|eating|hogging)\b"
                   r"|\bwhich\s+of\s+(?:us|(?:the|our|my)\s+(?:accounts|users|people|logins))\b"
                   r"|\bwho\s+(?:here|among\s+us|on\s+this\s+(?:box|server|machine|computer))\b", re.I)
# People named as people ("one of the people logged in here is using all the cpu, who"): a person is
# asked for unless their number is ("how many people are logged in?").
_PEOPLE = re.compile(r"\b(?:people|persons|coworkers?|colleagues?|somebody|someone)\s+(?:\w+\s+)?logged\s+(?:in|on)\b",
                     re.I)
# One of several people, asked for: "which of us is burning the most ram", "someone here is hogging
# everything, who is it?" (a person said to do it, then asked who; "something …, what is it?" is a program).
_ONE_OF_US = re.compile(r"\b(?:which|who)\s+of\s+us\b|\b(?:someone|somebody)\b.{0,80}\bwho(?:'?s|\s+is)\s+"
                        r"(?:it|that|they|doing\s+(?:it|that|this))\b", re.I)
# "who is using …" asks for a person, unless what is used is a thing programs hold: "who is using
# port 8080?" or "who's using /mnt/usb?" asks for the program holding it (its user is a detail).
_WHO_DOES = re.compile(r"\bwho(?:'?s|\s+is)?\s+(?:logged|using|eats|owns|(?:is\s+)?the\s+one)\b", re.I)
_HELD = re.compile(r"\b(?:ports?|sockets?|connections?)\b|:\d{2,5}\b", re.I)
_COUNT = re.compile(r"\bhow\s+many\b(?!\s+(?:gigs?|gb|mb|kb|tb|bytes|megabytes|gigabytes|percent|mb/s|seconds|minutes|"
                    r"hours|days))|\bnumber\s+of\b|\bcount\s+(?:of|the)\b", re.I)
_AMOUNT_EXTRA = re.compile(r"\bhow\s+many\s+(?:gigs?|gb|mb|kb|tb|bytes|megabytes|gigabytes|percent|mb/s|seconds|"
                           r"minutes|hours|days)\b|\bwhat\s+is\s+the\s+(?:total|average|current)\b", re.I)
_FACT = re.compile(
    r"\b(?:what|which)(?:'s|\s+is|\s+are)?\s+(?:the\s+|my\s+|this\s+)?(?:\w+\s+)?(?:kernel|version|distro|distribution|"
    r"linux|os|operating\s+system|hostname|host\s*name|time\s*zone|cpu|processor|architecture|"
    r"ip(?:v[46])?(?:\s+address(?:es)?)?|addresses|router|nameservers?|dns\s+servers?|default\s+route|gateway|"
    r"machine\s+name|name\s+of\s+this)\b"
    r"|\bwhat\s+(?:time|date)\b.{0,30}\b(?:is\s+it|think|set)|\boutput\s+of\s+\w+"
    r"|\bwhen\s+did\s+(?:this|the|my)\s+(?:machine|box|computer|server|system|laptop)\s+(?:last\s+)?(?:boot|start|reboot)"
    r"|\bwhat\s+(?:kind|type)\s+of\s+(?:machine|cpu|processor|virtual)"
    r"|\bis\s+(?:this|it)\s+(?:machine\s+)?(?:a\s+)?(?:vm|virtual|container|bare\s+metal)"
    r"|\bhow\s+many\s+(?:cpus?|cores|processors)\s+(?:does|do|has|have)\b"
    r"|\bwhat\s+is\s+[\w.\-/]+\s+set\s+to\b|\bwhat\s+is\s+the\s+[\w.\-/ ]{1,40}\s+set\s+to\b", re.I)
# "give me the kernel release", "tell me if this is a VM": a request for the facts it names
_TELL_ME = re.compile(r"\b(?:give|tell|show|send)\s+me\b|\bi\s+(?:need|want)\s+(?:to\s+know\s+)?(?:the\s+|what\s+|which\s+)",
                      re.I)
_PORT_Q = re.compile(r"\b(?:which|what)\s+(?:\w+\s+)?(?:ports?|sockets?)\b|\bports?\s+(?:is|are)\s+(?:open|listening)\b"
                     r"|\bwhat(?:'s|\s+is)\s+listening\b|\bopen\s+ports\b|\bon\s+which\s+port\b", re.I)
_SERVICE_Q = re.compile(r"\b(?:which|what)\s+(?:\w+\s+){0,2}?(?:services?|units?|daemons?|timers?|servers|cron\s*"
                        r"(?:jobs?|entries|tables?)|crontabs?|scheduled\s+(?:jobs?|tasks?))\b"
                        r"|\b(?:is|are)\s+scheduled\b|\bwhat\s+is\s+scheduled\b|\bruns?\s+automatically\b"
                        r"|\bstarts?\s+(?:up\s+)?(?:by\s+itself|automatically|on\s+its\s+own|at\s+boot)\b"
                        r"|\bsome\s+service\b.*\bwhich\s+one\b", re.I)
_FILE_Q = re.compile(r"\b(?:which|what)\s+(?:\w+\s+){0,2}?(?:files?|symlinks?|links?|configs?)\b"
                     r"|\b(?:largest|biggest|giant|huge)\s+files?\b|\bfile\b.{0,40}\bwhich\s+one\b"
                     r"|\bwhere\s+does\s+(?:\w+\s+){1,3}(?:write|keep|put|store)\b", re.I)
_FOLDER_Q = re.compile(r"\b(?:which|what)\s+(?:\w+\s+){0,2}?(?:folders?|director(?:y|ies)|dirs?|subdirector(?:y|ies))\b"
                       r"|\b(?:largest|biggest)\s+(?:folders?|director(?:y|ies))\b"
                       r"|\bwhat(?:'s|\s+is)\s+(?:\w+\s+)?(?:filling|taking\s+up|eating\s+up|using\s+up)\s+(?:all\s+)?"
                       r"(?:the\s+|my\s+|this\s+)?(?:disk|drive|space|storage|partition|ssd|hdd|hard\s+drive)"
                       r"|\bwhere\s+(?:is|did|does|has)\s+(?:it\s+all|all\s+(?:the|my)\s+\w+|the\s+space|my\s+space)"
                       r"|\bwhere\b.{0,30}\b(?:space|gigs|gigabytes)\b|\bfiles\b.{0,60}\bwhere\s*\??$", re.I)
_FS_Q = re.compile(r"\b(?:which|what)\s+(?:\w+\s+){0,2}?(?:filesystems?|file\s+systems?|partitions?|mounts?|disks?|drives?|"
                   r"volumes?)\b|\bone\s+of\s+(?:my|the)\s+(?:disks|drives|partitions|volumes)\b", re.I)
_LOG_Q = re.compile(r"\blogs?\b|\.log\b|\bjournal\b|\.out\b", re.I)
_PROCESS_Q = re.compile(r"\b(?:which|what)\s+(?:\w+\s+){0,2}?(?:process(?:es)?|programs?|apps?|applications?|tasks?|parent)\b"
                        r"|\bwho\s+(?:is\s+)?\w+ing\b|\bby\s+what\b|\bwhat\s+keeps\b"
                        # "what is writing to it?" asks for the doer
                        r"|\bwhat(?:'s|\s+is)\s+(?:writing|reading|spawning|starting|launching|opening|holding|hogging|"
                        r"eating|running|forking)\b", re.I)
# Words that report or suspect a fault (the question's fault label; a which-question without them
# asks for a fact, "which process uses the most memory?").
_FAULT = re.compile(
    r"\b(?:errors?|fail\w*|slow\w*|full|hog\w*|stuck|crash\w*|die[sd]?|dying|dead|broken|broke|wrong|problems?|"
    r"issues?|leak\w*|loud|overheat\w*|eating|flood\w*|zombies?|defunct|keeps?\s+(?:restart|dying|crash|coming|"
    r"filling|growing|failing)\w*|hang\w*|freez\w*|refus\w*|denied|unusual\w*|too\s+many|running\s+out|out\s+of|"
    r"won'?t|can'?t|cannot|couldn'?t|doesn'?t|isn'?t\s+working|not\s+working|thrash\w*|maxed|lag\w*|sluggish|"
    r"missing|lost|disappear\w*|gone|stopped|down|busy|drops?|unreachable|not\s+(?:from|reachable)|timeout|"
    r"timed\s+out|forever|ages|stutter\w*|spik\w*|oom|killed|in\s+use|filling|crawl\w*|weird|strange|throttl\w*|"
    r"ignor\w*|crazy|too\s+much|holding\s+space|taking\s+up|all\s+the\s+space|grew|"
    r"growing|read[\s-]only|100\s?%(?!\w)|longest|scann\w*|heavy|loops?|not\s+work\w*|[45]\d\ds|d\s+state|"
    r"all\s+of\s+it|nobody|no\s+one|can\s+only|blocking|blocked|leftover|left\s+(?:running|over)|"
    # excess said plainly: "an absurd number of threads", "a ton of connections", "hundreds of workers"
    r"absurd\w*|insane\w*|ridiculous\w*|massive\w*|enormous|a\s+ton\s+of|tons\s+of|so\s+many|way\s+too|"
    r"(?:hundreds|thousands)\s+of|gone\s+nuts|nuts|" + _SUSPECT_BAD + r")\b",
    re.I)


# Resource cues in order of strength: the first resource whose cue the words use is the one asked
# about ("which process has /mnt/x open" is about files, "one of my disks is slow" about disk I/O,
# "my computer is slow" about the CPU only when nothing more specific is named).
_RESOURCES: tuple[tuple[Resource, re.Pattern], ...] = (
    (Resource.FILES, re.compile(r"\bopen\s+files|\bfile\s+descriptors?|\bfds?\b|\bulimit|\bhandles?\b|\binodes?\b|"
                                r"\bi?use%|\bentries\b|\b(?:many|tiny|little|small|lots\s+of|tons\s+of)\s+(?:\w+\s+)?files\b|"
                                r"\bhas\s+\S+\s+open\b|\bhas\s+(?:it|them|this|that)\s+open\b|\beject|\bunmount|\bumount|"
                                r"\btarget\s+is\s+busy|\bin\s+use\b|\bsymlinks?|\blinks?\b|\bpermission|\bdenied\b|"
                                r"\bcannot\s+be\s+(?:read|opened)|\bcan'?t\s+(?:read|open)\b|\bowns?\b.{0,20}\b(?:socket|file)",
                                re.I)),
    (Resource.DISK_IO, re.compile(r"\bi/?o\b|\biowait|\bio\s+wait|\bdisk\s+(?:activity|busy|light|thrash\w*)|"
                                  r"\bwrit(?:es|ing)\s+(?:to|the\s+most|right\s+now)|\breads?\s+and\s+writes|"
                                  r"\bhammer\w*\s+(?:the\s+)?disk|\bdrive\s+light|\bmb/s\b|\b(?:disk|drive)\s+is\s+at\s+100|"
                                  r"\b(?:disks?|drives?)\b.{0,25}\b(?:really\s+)?slow|"
                                  # the drive worked hard: "thrashing the ssd", "the hard drive grinds constantly"
                                  r"\b(?:thrash|hammer|grind|churn|pound)\w*\s+(?:\w+\s+){0,2}(?:disks?|drives?|ssds?|hdds?|nvme)\b|"
                                  r"\b(?:disks?|drives?|ssds?|hdds?|nvme)\b.{0,30}\b(?:grind\w*|churn\w*|thrash\w*|hammer\w*|"
                                  r"blink\w*|chatter\w*|constantly|nonstop|never\s+stops)", re.I)),
    # a login that fails or crawls is read from the logs (auth, sshd, the journal)
    (Resource.LOGS, re.compile(r"\blogs?\b|\blog(?:in|on)s?\b|\.log\b|\bjournal|\bsyslog|\bdmesg|\bkernel\s+(?:errors?|messages?)|"
                               r"\bexceptions?\b|\.out\b", re.I)),
    (Resource.CONFIG, re.compile(r"\bconfig\w*|\bsettings?\b|\.conf\b|\.cfg\b|\.ini\b|\.ya?ml\b|\.toml\b|"
                                 r"\bunit\s+files?|\bset\s+to\b|\bsysctl|\blimits\.conf", re.I)),
    (Resource.MEMORY, re.compile(r"\bmemory|\bram\b|\bswap|\boom\b|\bout\s+of\s+memory|\bleak\w*|\brss\b|"
                                 r"\bresident\b|\bpss\b", re.I)),
    # pages, sites and videos that do not load ("pages half load") are the network's, not the CPU's load
    (Resource.NETWORK, re.compile(r"\b(?:pages?|sites?|websites?|videos?|streams?|downloads?)\b.{0,25}\bload", re.I)),
    (Resource.CPU, re.compile(r"\bcpu|\bprocessor|\bcores?\b|\bload\b|\bfans?\b|\bhot\b|\bthrottl\w*", re.I)),
    (Resource.NETWORK, re.compile(r"\bports?\b|\bnetwork|\bconnect\w*|\bsockets?|\blisten\w*|\bdns\b|\binternet|\bwifi|"
                                  r"\bfirewall|\broute|\bhostname|\bresolv\w*|\bping\b|\bhttp|\bremote|\bssh\b|"
                                  r"\bupload\w*|\bdownload\w*|\bsending\b|\boutside\b|\breach\w*|\bsites?\b|\bwebsites?\b|"
                                  r"\bscann\w*|\bdrops?\b|\bretransmit\w*", re.I)),
    (Resource.TIME, re.compile(r"\bclock|\btime\s*zone|\btimezone|\bntp\b|\buptime|\bboot\w*|\bdate\b|\btime\s+sync|"
                               r"\bdrift|\bscheduled?\b|\bevery\s+(?:hour|day|night|minute|morning)|\bat\s+night\b|"
                               r"\bnightly|\bautomatically\b|\bturned\s+it\s+off|\brestarted\s+the\s+(?:machine|computer)|"
                               r"\bcron|\btimers?\b", re.I)),
    # "full of copies of one program" is about its contents, not a full disk
    (Resource.DISK_SPACE, re.compile(r"\bdisk|\bspace\b|\bfull\b(?!\s+of\b)|\bstorage|\bpartition|\bfilesystem|\bfile\s+system|"
                                     r"\bgigs?\b|\bgb\b|\bfolders?|\bdirector(?:y|ies)|\bmount|\bdrives?\b|\bquota|"
                                     r"\b(?:biggest|largest|giant|huge)\b|\bbytes\b|\bgrew\b|\bfree\b|"
                                     r"\bfill(?:s|ing)?\s+up\b", re.I)),
    (Resource.PROCESSES, re.compile(r"\bprocess|\bzombie|\bdefunct|\bthreads?\b|\bfork|\brestart\w*|\bcrash\w*|"
                                    r"\bspawn\w*|\bservices?\b|\bdaemon|\bjobs?\b|\bunits?\b|\bsystemd|\bprograms?\b|"
                                    r"\brunning\b|\bstuck\b|\bservers\b|\bcopies\b|\bkeeps\s+(?:coming|starting)|"
                                    r"\bstarting\s+it|\bd\s+state", re.I)),
    # a hog of no named resource is the CPU's; "hogging connections" is the network's
    (Resource.CPU, re.compile(r"\bslow\w*|\bsluggish|\blag\w*|\bbusy|\bcrawl\w*|\bstutter\w*|\bfreez\w*|\bhog\w*", re.I)),
)


_WHICH_WORD = re.compile(r"\bwhich\b", re.I)
# The thing a conditional question asks for: "is any process …?", or "is something …? which ports?"
_CONDITIONAL_THING = re.compile(r"\b(?:any|one|some|which)\s+(?:\w+\s+){0,2}?(process|program|folder|directory|file|"
                                r"filesystem|partition|port|service|user)(?:es|s)?\b", re.I)
_THING_KIND = {"process": Asks.PROCESS, "program": Asks.PROCESS, "app": Asks.PROCESS, "application": Asks.PROCESS,
               "folder": Asks.FOLDER, "directory": Asks.FOLDER, "file": Asks.FILE, "filesystem": Asks.FILESYSTEM,
               "partition": Asks.FILESYSTEM, "port": Asks.PORT, "service": Asks.SERVICE, "daemon": Asks.SERVICE,
               "user": Asks.USER, "log": Asks.FILE}  # "which log keeps growing?": a log asked for is a file


def lexical_resource(text: str) -> Resource:
    """The resource of the strongest cue the question uses (`_RESOURCES`' order), its paths left
    out ("/data/incoming" names a folder, not the network)."""
    words = _PATH.sub(" ", text)
    return next((resource for resource, pattern in _RESOURCES
                 if pattern.search(text if resource in _PATH_CUES else words)), Resource.NONE)


# Resources a path itself may name (a log file, a configuration file).
_PATH_CUES = frozenset({Resource.LOGS, Resource.CONFIG})


_THINGS_Q = ((Asks.PORT, _PORT_Q), (Asks.SERVICE, _SERVICE_Q), (Asks.FOLDER, _FOLDER_Q), (Asks.FILE, _FILE_Q),
             (Asks.FILESYSTEM, _FS_Q), (Asks.PROCESS, _PROCESS_Q))


# "which process …", "what file …": the noun right after which/what names the thing asked for.
_HEAD = re.compile(r"\b(?:which|what)\s+(?:\w+\s+)?(process(?:es)?|programs?|apps?|applications?|files?|folders?|"
                   r"director(?:y|ies)|ports?|services?|daemons?|logs?)\b", re.I)


def _singular(noun: str) -> str:
    """"processes" → "process", "directories" → "directory", "files" → "file"."""
    if noun.endswith("ies"):
        return noun[:-3] + "y"
    if noun.endswith("sses"):
        return noun[:-2]
    return noun if noun.endswith("ss") else noun.removesuffix("s")


def _head_thing(text: str, form: str) -> Asks | None:
    """The thing a which/what question asks for: the noun its first which/what names ("which
    process has files open on /mnt/x?" asks for a process, not a file); else the first of the
    list's patterns that matches. A why or open question names no process as what it asks for
    ("why is this program slow?")."""
    if form not in (WHICH, OPEN, WHY):
        return None
    head = _HEAD.search(text)
    if head and form == WHICH:
        return _THING_KIND[_singular(head.group(1).lower())]
    return next((asks for asks, pattern in _THINGS_Q
                 if pattern.search(text) and (form == WHICH or asks is not Asks.PROCESS)), None)


def _asks_a_person(text: str, paths: Sequence[str]) -> bool:
    """The question asks which user or account: said so, or "who" does something to a thing a
    person has (the CPU, the memory, a file's ownership), not to one a program holds (a port, a
    socket, a path it keeps open)."""
    if _USER.search(text) or _ONE_OF_US.search(text) or (_PEOPLE.search(text) and not _COUNT.search(text)):
        return True
    who = _WHO_DOES.search(text)
    if not who:
        return False
    if who.group(0).lower().endswith("owns"):  # a file's owner is an account
        return True
    return not (_HELD.search(text) or paths)


def lexical_asks(text: str, paths: Sequence[str] = ()) -> tuple[Asks, bool]:
    """What the question asks for, by its words alone, and whether words that say so matched
    (False: the reader fell back to its default, and the model's choice is worth more)."""
    form = form_in(text)
    if not paths and elsewhere(text, faulty=bool(_FAULT.search(text))):
        return Asks.OUT_OF_SCOPE, True
    if (_FACT.search(text) or (_TELL_ME.search(text) and facets_in(text))) and not _FAULT.search(text):
        return Asks.SYSTEM_FACT, True
    # "Does any process hold a large number of …? If so, which?" asks for the thing; its count or
    # amount words say what makes it one
    thing = _CONDITIONAL_THING.search(text) if form == YES_NO_FORM and conditional_in(text) \
        and _WHICH_WORD.search(text) else None
    if thing:
        return _THING_KIND[thing.group(1).lower()], True
    # "is any user hogging the machine?" asks yes or no; "which user …?" and "whose …?" ask for the user
    if _asks_a_person(text, paths) and not (form == YES_NO_FORM and not _WHICH_WORD.search(text)
                                            and not re.search(_WHOSE_ASKED, text, re.I)):
        return Asks.USER, True
    if _COUNT.search(text):
        return Asks.COUNT, True
    if form == AMOUNT_FORM or _AMOUNT_EXTRA.search(text):
        return Asks.AMOUNT, True
    if form != YES_NO_FORM or not conditional_in(text):
        asked = _head_thing(text, form)
        if asked is not None:
            return asked, True
    if form == WHICH:
        return Asks.PROCESS, False
    if form == YES_NO_FORM:
        return Asks.YES_NO, True
    if _LOG_Q.search(text) or any(p.endswith(".log") or "/log" in p for p in paths):
        return Asks.LOG_CAUSE, True
    return Asks.EXPLANATION, False
