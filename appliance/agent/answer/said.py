"""What an answer says, read from its words: an all-clear, a claim of a family's fault, a denial, a
yes, a number, a process or a problem it names, a copy of other text.

Why one leaf module: every answer rule reads answers with these same readers; kept here, below
the rules and importing none of them, the answer path stays a few imports deep (issue 31).
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterable, Mapping, Sequence

from appliance.analyzers.base import Finding, problems_for
from appliance.analyzers.growth import TRENDS

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
# Words that claim a problem; an all-clear answer has none left once its all-clear clauses are out.
_PROBLEM_CLAIM = re.compile(
    r"\b(?:errors?|fail\w*|wrong|crash\w*|denied|refused|exceed\w*|killed|full|high|large\w*|uses?|using|"
    r"listens?|listening|hog\w*|leak\w*|slow\w*|stuck|malformed|invalid|missing|cause[sd]?|because)\b|\d%|\d %"
    , re.IGNORECASE,
)
# Result fields that name a culprit; a no-fault control must leave them empty (also the eval's rule).
CULPRIT_FIELDS = ("culprit", "process", "pid")
# An all-clear phrase up to the end of its clause; "because", "but", "although" … begin another
# ("nothing listens on port 5432 because the log shows errors" claims the errors).
_CLAUSE_START = r"\b(?:because|but|although|though|whereas|yet)\b"
_ALL_CLEAR_CLAUSE = re.compile(f"(?:{ALL_CLEAR.pattern})(?:(?!{_CLAUSE_START})[^.;,])*", re.IGNORECASE)


def claims_problem(text: str) -> bool:
    """The text uses a word that claims a problem (an error, a failure, something full or high…)."""
    return _PROBLEM_CLAIM.search(text) is not None


def says_all_clear(answer: str) -> bool:
    """True when the answer says nothing is wrong and claims no problem anywhere else (each
    all-clear phrase is removed up to the end of its clause before looking for problem words:
    "no process is using port 4242" is all clear, "X uses 99% CPU; no errors in the log" is not)."""
    if not ALL_CLEAR.search(answer):
        return False
    rest = re.sub(_CLAUSE_START, " ", _ALL_CLEAR_CLAUSE.sub(" ", answer), flags=re.IGNORECASE)
    return not _PROBLEM_CLAIM.search(rest)


_GROWING = "|".join(re.escape(w) for w in TRENDS if any(word.endswith("ing") for word in w.split()))
# What an answer says when it claims the family's fault. General words of the fault, not of any one case.
FAULT_CLAIMS: Mapping[str, re.Pattern] = {
    family: re.compile(pattern, re.I) for family, pattern in {
        "cpu": r"(?<!memory )(?<!ram )\bhog\w*\b(?![^.;]{0,30}\b(?:memory|ram|disk|i/o|connections?|sockets?|threads|bandwidth|space)\b)"
               r"|\b(?:cpu|processor)\b[^.;]*\b(?:saturat\w*|overload\w*|maxed|pegged|100 ?%)"
               r"|\bhigh (?:cpu|load)\b",
        "memory": r"\bout of memory\b|\bmemory (?:leak|pressure|exhaust\w*)\b|\b(?:ram|memory) is (?:full|exhausted|low)\b"
                  r"|\b(?:hog|eat|ate)\w*\b[^.;]{0,30}\b(?:memory|ram)\b|\b(?:memory|ram) hog\w*\b",
        "swap": r"\bswapping\b|\bswap (?:storm|thrash\w*)\b|\bthrash\w*\b",
        "filesystem_full": r"\b(?:disk|filesystem|file system|partition|drive|volume|root|mount|director\w*|folder)\b"
                           r"[^.;]{0,40}\b(?:is |are )?(?:full|out of space|almost full|nearly full)\b|\bno space left\b"
                           r"|\bout of (?:disk )?space\b|\bfill(?:s|ing)? up\b|\babout to fill\b|\brunning out of space\b"
                           r"|/[\w./@+-]+ (?:is|are) (?:almost |nearly )?full\b",
        "inodes": r"\binodes?\b[^.;]{0,40}\b(?:exhaust\w*|full|used up|run out|ran out)\b"
                  r"|\bout of (?:free )?inodes\b",
        "readonly_fs": r"\bread[- ]only\b",
        "zombies": r"\bzombies?\b",
        "disk_io": r"\b(?:disk|i/o|io)\b[^.;]{0,30}\b(?:saturat\w*|overload\w*|bottleneck|100 ?% busy)\b"
                   r"|\b(?:hog|hammer|thrash)\w*\b[^.;]{0,30}\b(?:disk|drive|ssd|i/o)\b",
        "deleted_open": r"\bdeleted\b[^.;]{0,40}\b(?:open|held|holding)\b",
        "open_files": r"\btoo many open files\b|\b(?:file descriptor|fd) limit\b"
                      r"|\b(?:near|close to|at|reach\w*) (?:its|the|their) (?:open[- ]files? )?limit\b",
        "threads": r"\b(?:too many|tons of|unusual\w*|excessive\w*|abnormal\w*)(?: (?:high|large))? (?:number of )?threads\b|\bhog\w*\b[^.;]{0,30}\bthreads\b",
        "connections": r"\b(?:too many|tons of|unusual\w*|excessive\w*|abnormal\w*)(?: (?:high|large))? (?:number of )?"
                       r"(?:network )?connections\b|\bhog\w*\b[^.;]{0,30}\b(?:connections?|sockets?|bandwidth)\b"
                       r"|\b(?:network|connections?)\b[^.;]{0,20}\b(?:jammed|clogged|congested|flooded)\b",
        "log_errors": r"\b(?:shows?|showing|has|have|had|reports?|reported|contains?|logged|logs|lists?) "
                      r"(?:\w+ ){0,2}(?:errors?|failures?)\b",
        "restarts": r"\b(?:crash[- ]?loop\w*|keeps? (?:restarting|crashing|dying)|restarting over and over)\b",
        # a file or folder said to grow, beside the growth verdict of its place (memory has its own words)
        # (the words of growth people use, analyzers.growth.TRENDS: "is getting bigger", "keeps ballooning")
        "disk_growth": r"(?:/[\w.@+-]+|\b(?:file|log|folder|directory|trace)s?\b)[^.;]{0,60}\b(?:(?:keeps?|kept) (?:on )?"
                       rf"(?:{_GROWING})|(?:is|are|was|were) (?:(?:still|steadily|constantly|quickly|rapidly) )?(?:{_GROWING})"
                       r"|grow(?:s|ing) (?:at|by|fast|quickly|rapidly|steadily|every|constantly))\b",
        "process_names": r"\b(?:in|running in) (?:unusual\w*|abnormal\w*|excessive\w*|huge|too many)(?: large)? "
                         r"(?:numbers?|copies|counts?)\b|\btoo many (?:copies|instances)\b|\bfork(?:ing)? (?:crazy|bomb)\b"
                         r"|\bunusual(?:ly)? (?:many|high numbers? of|large numbers? of) (?:copies|instances|processes)\b",
        # a listener said to leave its connections waiting, or packets said to be lost
        "network_errors": r"\bnot (?:accepting|taking|answering)\b[^.;]{0,30}\bconnections?\b"
                          r"|\b(?:accept|listen) (?:queue|backlog)\b[^.;]{0,20}\bfull\b"
                          r"|\bconnections? (?:are|is) (?:waiting|piling up|stuck|hanging)\b|\bpackets? (?:are )?(?:lost|dropped)\b",
        "disk_usage": r"\b(?:takes?|taking|uses?|using|eats?|eating|fills?|filling|holds?|holding)\b[^.;]{0,30}"
                      r"\b(?:much more|far more|most of|the bulk|more than (?:the |all )?others)\b",
        "config": r"\b(?:invalid|wrong|bad|malformed|incorrect) (?:\w+ ){0,2}(?:settings?|values?|options?|ports?|config\w*)\b"
                  r"|\b(?:settings?|values?|options?|parameters?|port)\b[^;]{0,120}?\b(?:is|are) "
                  r"(?:invalid|wrong|malformed|incorrect|out of range)\b"
                  r"|\b(?:settings?|values?|options?|port) (?:is |are )?(?:invalid|wrong|out of range|not valid)\b"
                  r"|\bmisconfigur\w*|\bout of range\b"
                  # a setting by its own name ("`listen_port` … is invalid"): config verdicts exist
                  # only for a file the question named, so the subject is one of its settings
                  r"|\b(?:is|are) (?:invalid|malformed|incorrect|not valid)\b",
    }.items()
}
# Words that claim more of a resource than is normal, whatever the family's own phrases.
_EXCESS = re.compile(r"\b(?:unusual\w*|excessive\w*|abnormal\w*|too much|a lot of|hogg?\w*|high)\b", re.I)
_NOUNS = {"cpu": r"\b(?:cpu|processor)\b", "memory": r"\b(?:memory|ram)\b", "disk_io": r"\b(?:i/o|io|disk writes?)\b"}
_YES = re.compile(r"^\W*yes\b", re.I)

SELF_MARKERS = ("(appliance itself)", "this appliance (the assistant itself")
_SELF_WORDS = re.compile(r"\bappliance itself\b|\bthis appliance\b", re.I)


_NEGATION = re.compile(r"\b(?:no|not|none|nothing|never|without|neither|nor)\b|n't\b", re.I)
# A clause ends at ; or at . ! ? before a space or the end: the dot of relay.conf, 0.5 or 1.5 GiB
# is inside a clause, not its end.
_CLAUSES = re.compile(r"(?:[^.;!?]|[.!?](?=\S))+")


def clauses(text: str) -> list[str]:
    return [c.strip() for c in _CLAUSES.findall(text) if c.strip()]


def asserts(clause: str, pattern: re.Pattern) -> bool:
    """The clause asserts `pattern`: it matches, with no negation before the match's end ("the
    disk is not full" does not; "listen_port is invalid because it is not in range" does)."""
    match = pattern.search(clause)
    return match is not None and not _NEGATION.search(clause[: match.end()])


def claims(text: str, pattern: re.Pattern) -> bool:
    """True when a clause of `text` asserts `pattern` (a clause that negates it does not)."""
    return any(asserts(c, pattern) for c in clauses(text))


# Words of a reported error: a clause with one is not a denial even when it says "not" ("could not
# open stock.db: database disk image is malformed").
_ERROR_WORDS = re.compile(r"(?i:\b(?:could not|couldn't|cannot|can't|refused|denied|malformed|corrupt\w*|failed|"
                          r"unreachable|timed out|permissions?|privileges?|access\w* (?:is |was )?(?:denied|refused)|"
                          r"not (?:allowed|permitted|running|listening|responding|accepting|reachable|writable|readable|accessible)"
                          r"|(?:does|do|did)\s*(?:not|n't) have (?:the )?(?:necessary |required |enough )?"
                          r"(?:rights|access))\b)|\bERROR\b|\bFATAL\b|\[Errno")


def denies_all(answer: str) -> bool:
    """The answer says nothing is wrong: an all-clear phrase, or only negated fault claims, and
    no clause that reports an error (an error line, "cannot", "permission", "not running")."""
    if says_all_clear(answer):
        return True
    negated = [c for c in clauses(answer) if _NEGATION.search(c) and not _ERROR_WORDS.search(c)
               and not any(asserts(c, p) for p in FAULT_CLAIMS.values())]
    asserted = [c for c in clauses(answer) if c not in negated]
    if any(_ERROR_WORDS.search(c) for c in asserted):
        return False  # it reports an error ("… [Errno 13] Permission denied: '/srv/x'")
    return bool(negated) and not any(p.search(c) for c in asserted for p in FAULT_CLAIMS.values())


def claims_fault(text: str, family: str) -> bool:
    """The text asserts this family's fault: its own phrases, or excess words beside its noun."""
    pattern = FAULT_CLAIMS.get(family)
    if pattern is not None and claims(text, pattern):
        return True
    noun = _NOUNS.get(family)
    return noun is not None and any(_EXCESS.search(c) and re.search(noun, c, re.I) and not _NEGATION.search(c)
                              for c in clauses(text))


def claims_any_fault(text: str) -> bool:
    """The text asserts the fault of some family (claims_fault of any of them)."""
    return any(claims_fault(text, family) for family in FAULT_CLAIMS)


_QUESTION_HEAD = re.compile(r"^\s*(?:is|are|does|do|did|has|have|can|could|was|were|will|should)\b\s*", re.I)
_WORDS = re.compile(r"[a-z0-9]+")


def affirms(answer: str, question: str) -> bool:
    """The answer to a yes/no question says yes: it begins with "yes", or a clause of it repeats the
    question's last words ("… is about to fill up" for "is /srv about to fill up?") without a
    negation."""
    if _YES.search(answer):
        return True
    tail = _WORDS.findall(_QUESTION_HEAD.sub("", question.lower()))[-3:]
    if len(tail) < 3:
        return False
    phrase = " ".join(tail)
    return any(phrase in " ".join(_WORDS.findall(c.lower())) and not _NEGATION.search(c) for c in clauses(answer))


def names_a_problem(stated: str, findings: Sequence[Finding]) -> bool:
    """The text names what a problem finding names (its culprit, pid or path), in any family."""
    return names_any(stated, [f for f in findings if f.is_problem])


# The line a verdict quotes (a log's error, the kernel's message): «…».
QUOTED = re.compile(r"«([^»]+)»")
# Words of a quoted line that say nothing of its substance: levels, and words most lines share.
_LINE_FILLER = frozenset({"error", "errors", "fatal", "warning", "warn", "info", "debug", "critical", "from", "with",
                          "that", "this", "have", "been", "were", "when", "into", "after"})
MESSAGE_WORDS = 3  # stated words of a quoted line that make its substance said


def _stems(text: str) -> list[str]:
    """Words of four letters or more, cut to four ("failed" and "failure" are one): an answer says
    a line in its own words."""
    words = re.findall(r"[a-z]{4,}", text.lower())
    return list(dict.fromkeys(w[:4] for w in words if w not in _LINE_FILLER))


def states_message(stated: str, finding: Finding) -> bool:
    """The text says the substance of the line the verdict quotes: MESSAGE_WORDS of its words (all
    of them when it has fewer), in any form. "fails because of a password authentication failure"
    says «FATAL: password authentication failed for user "billing"» without naming its log."""
    match = QUOTED.search(finding.verdict)
    if match is None:
        return False
    line = _stems(match.group(1))[:12]
    said = set(_stems(stated))
    return bool(line) and sum(stem in said for stem in line) >= min(MESSAGE_WORDS, len(line))


def addresses(stated: str, findings: Sequence[Finding]) -> bool:
    """The text names a problem finding or says the line one quotes."""
    return names_a_problem(stated, findings) or any(states_message(stated, f) for f in findings if f.is_problem)


def names_any(stated: str, findings: Sequence[Finding], *, whole_paths: bool = False) -> bool:
    """The text names what one of `findings` names: its culprit, pid or path, as a whole word;
    with `whole_paths`, a path only as itself, not as the start of a longer one (the dangling link
    /srv/app/current is not named by /srv/app/current/config.yml, the path that fails)."""
    text = stated.lower()
    for finding in findings:
        names = [str(x).lower() for x in (finding.culprit, finding.pid, finding.path) if x not in (None, "")]
        for name in names:
            deeper = r"|/[\w.]" if whole_paths and name.startswith("/") else ""
            if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\d{deeper})", text):
                return True
            port = _PORT_CULPRIT.fullmatch(name)
            if port and re.search(rf"(?:\bport\s+|(?<=\w):){port.group(1)}(?!\d)", text):
                return True  # "tcp port 60683" named as a log line or an address writes it: "127.0.0.1:60683"
    return False


_PORT_CULPRIT = re.compile(r"(?:tcp|udp)\s+port\s+(\d+)")


def says_whole(text: str, name: str) -> bool:
    """`text` has `name` as a whole word: not inside a longer name, path or dotted word."""
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text) is not None


def adds_to_the_question(stated: str, finding: Finding, asked_paths: Sequence[str]) -> bool:
    """The text names what the verdict found beyond the question's own words, when everything the
    verdict names as its subject lies on a path the question gives (the link `/srv/app/current` on the
    failing `/srv/app/current/config.yml`: naming it is an echo). What counts is a place the verdict
    names off the asked paths (the link's missing target), by its path or its last part; with no
    such place, what it found there (`_found_there`). True when the subject is not on an asked path."""
    asked = [os.path.normpath(p) for p in asked_paths if p.startswith("/")]

    def on_asked(path: str) -> bool:
        return any(a == path or a.startswith(path.rstrip("/") + "/") for a in asked)

    subject = str(finding.culprit or finding.path or "")
    text = stated.lower()
    if not subject.startswith("/"):
        # a culprit by its name (a setting, a process) adds when named; its file, when the question
        # gives that file, is an echo unless what was found there is said
        path = str(finding.path or "")
        if not path.startswith("/") or not on_asked(os.path.normpath(path)) or says_whole(text, subject.lower()):
            return True
        return _found_there(stated, finding)
    if not on_asked(os.path.normpath(subject)):
        return True
    beyond = [p for p in _QUOTED_PATH.findall(finding.verdict) if not on_asked(os.path.normpath(p))]
    if not beyond:
        return _found_there(stated, finding)
    return any(says_whole(text, name.lower()) for path in beyond for name in (path, os.path.basename(path)) if name)


# What a verdict found at a place, beyond the place's name: a setting ("listen_port"), a value
# ("99999"), a share ("100 %"): a name with "_" in it, or a number of three digits or more.
_FOUND_TOKEN = re.compile(r"(?<![\w/.-])(?:[A-Za-z][\w.-]*_[\w.-]+|\d{3,})(?![\w/-])")


def _found_there(stated: str, finding: Finding) -> bool:
    """The text says what the verdict found at a place the question names, not the place alone:
    the family's fault claimed ("/srv/docs is mounted read-only"), or a setting or a value the
    verdict states there. "X is the largest file in /srv/docs" for a read-only /srv/docs names the
    place and nothing found there. A family with no words of its fault keeps the place as named."""
    if finding.family not in FAULT_CLAIMS or claims_fault(stated, finding.family):
        return True
    tokens = set(_FOUND_TOKEN.findall(_QUOTED_PATH.sub(" ", finding.verdict)))
    return any(says_whole(stated.lower(), token.lower()) for token in tokens)


def names_cause(stated: str, findings: Sequence[Finding], asked_paths: Sequence[str], *,
                whole_paths: bool = True) -> bool:
    """The text names one of `findings` as itself: a path only whole (unless `whole_paths` is off),
    and a cause that lies on an asked path (the dangling link inside the failing path) only with
    what its verdict found there (where the link points), since naming it alone restates the question."""
    return any(names_any(stated, [f], whole_paths=whole_paths) and adds_to_the_question(stated, f, asked_paths)
               for f in findings)


# A process a verdict names in prose: "the top consumer is NAME (pid N)".
NAMED_PROCESS = re.compile(r"([\w.\-:]{2,}) \(pid (\d+)\)")


def named_processes(findings: Iterable[Finding]) -> list[str]:
    """The processes the verdicts name in prose, in order, each once."""
    return list(dict.fromkeys(m.group(1) for f in findings for m in NAMED_PROCESS.finditer(f.verdict)))


def names_process(stated: str, name: str, pid: object) -> bool:
    """The text names the process: its name as a whole word, or its pid."""
    text = stated.lower()
    return bool(name and says_whole(text, name.lower())) or bool(pid and re.search(rf"\b{pid}\b", text))


def named_standout(stated: str, findings: Iterable[Finding]) -> Finding | None:
    """The verdict whose standing-out process (Finding.standout) the text names."""
    return next((f for f in findings if f.standout and names_process(stated, f.standout.name, f.standout.pid)), None)


# A path of two or more parts, as an answer quotes it from a verdict (a command line's program).
_QUOTED_PATH = re.compile(r"(?<![\w.-])/[\w.@+-]+(?:/[\w.@+-]+)+")


def quotes_a_verdict(answer: str, findings: Sequence[Finding]) -> bool:
    """The answer names what one of the verdicts names, even an ok one: a path, or a process with
    its pid ("which job runs every minute?" is answered by the job the scheduled-jobs verdict lists
    as a fact)."""
    tokens = _QUOTED_PATH.findall(answer) + [m.group(0) for m in NAMED_PROCESS.finditer(answer)]
    return any(token in f.verdict for token in tokens for f in findings)


def misses_culprit(answer: str, result: Mapping[str, Any], problems: Sequence[Finding]) -> str | None:
    """A reason when the check found the culprit of the question's main family and the answer
    names none of what those findings name (their culprit, pid or path), nor says they are wrong
    in a way that names them."""
    if not problems:
        return None
    if names_any(" ".join([answer, *(str(v) for v in result.values())]), problems):
        return None
    return f"[misses-the-check: {problems[0].line()[:200]}]"


def first_ranked(findings: Sequence[Finding], topic: str | None) -> tuple[Finding, str, str] | None:
    """The verdict of the question's own family that names a process first in its ranking
    ("thread counts are normal: the most, 302, in NAME (pid N)"), with that name and pid."""
    for finding in (f for f in findings if f.family == topic):
        match = NAMED_PROCESS.search(finding.verdict)
        if match is not None:
            return finding, match.group(1), match.group(2)
    return None


def names_first_ranked(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
                       topic: str | None) -> bool:
    """The answer names the process the topic's verdict ranks first (its name or pid)."""
    first = first_ranked(findings, topic)
    return first is not None and names_ranked(answer, result, first)


def names_ranked(answer: str, result: Mapping[str, Any], first: tuple[Finding, str, str]) -> bool:
    """The answer, its fields included, names that ranked process by name or pid."""
    stated = " ".join([answer, *(str(v) for v in result.values())])
    return names_process(stated, first[1], first[2])


_YES_OR_NO = re.compile(r"^\W*(?:yes|no)\b", re.I)
SAY_YES_OR_NO = "[say-yes-or-no: the question asks yes or no; begin the answer with Yes or No]"


def begins_yes_or_no(answer: str) -> bool:
    """The answer begins with the word "yes" or "no"."""
    return _YES_OR_NO.search(answer) is not None
