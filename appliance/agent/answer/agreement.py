"""Does the final answer agree with the analyzers' verdicts, and does it leave the appliance out?

Why: the analyzers judge each fault family with thresholds a person can defend; a small model's
"the disk is full" at 22 % used, or "nothing is wrong" beside a critical finding, contradicts them.
Such an answer goes back to the model once with the verdict it contradicts; the model explains,
the verdicts judge. The appliance itself (the model runs in it, so it is always among the busiest
processes) is never an answer.

A claim of a family's fault is read from the answer with that family's own words (a few general
phrases per family, below); a claim is contradicted only when that family's verdict is `ok`.
"""

from __future__ import annotations

from appliance.agent.answer.misfit import Kind, Misfit
from appliance.agent.question.question import Question, as_question

import re
from typing import Any, Iterable, Mapping, Sequence

from appliance.agent.answer.checks import says_all_clear
from appliance.analyzers.base import OK, Finding
from appliance.analyzers.folder_sizes import FAMILY as FOLDER

# What an answer says when it claims the family's fault. General words of the fault, not of any one case.
FAULT_CLAIMS: Mapping[str, re.Pattern] = {
    family: re.compile(pattern, re.I) for family, pattern in {
        "cpu": r"\bhog\w*\b|\b(?:cpu|processor)\b[^.;]*\b(?:saturat\w*|overload\w*|maxed|pegged|100 ?%)"
               r"|\bhigh (?:cpu|load)\b",
        "memory": r"\bout of memory\b|\bmemory (?:leak|pressure|exhaust\w*)\b|\b(?:ram|memory) is (?:full|exhausted|low)\b",
        "swap": r"\bswapping\b|\bswap (?:storm|thrash\w*)\b|\bthrash\w*\b",
        "filesystem_full": r"\b(?:disk|filesystem|file system|partition|drive|volume|root|mount|director\w*|folder)\b"
                           r"[^.;]{0,40}\b(?:is |are )?(?:full|out of space|almost full|nearly full)\b|\bno space left\b"
                           r"|\bout of (?:disk )?space\b|\bfill(?:s|ing)? up\b|\babout to fill\b|\brunning out of space\b"
                           r"|/[\w./@+-]+ (?:is|are) (?:almost |nearly )?full\b",
        "inodes": r"\binodes?\b[^.;]{0,40}\b(?:exhaust\w*|full|used up|run out|ran out)\b"
                  r"|\bout of (?:free )?inodes\b",
        "readonly_fs": r"\bread[- ]only\b",
        "zombies": r"\bzombies?\b",
        "disk_io": r"\b(?:disk|i/o|io)\b[^.;]{0,30}\b(?:saturat\w*|overload\w*|bottleneck|100 ?% busy)\b",
        "deleted_open": r"\bdeleted\b[^.;]{0,40}\b(?:open|held|holding)\b",
        "open_files": r"\btoo many open files\b|\b(?:file descriptor|fd) limit\b"
                      r"|\b(?:near|close to|at|reach\w*) (?:its|the|their) (?:open[- ]files? )?limit\b",
        "threads": r"\b(?:too many|tons of|unusual\w*|excessive\w*|abnormal\w*)(?: (?:high|large))? (?:number of )?threads\b",
        "connections": r"\b(?:too many|tons of|unusual\w*|excessive\w*|abnormal\w*)(?: (?:high|large))? (?:number of )?"
                       r"(?:network )?connections\b",
        "log_errors": r"\b(?:shows?|showing|has|have|had|reports?|reported|contains?|logged|logs|lists?) "
                      r"(?:\w+ ){0,2}(?:errors?|failures?)\b",
        "restarts": r"\b(?:crash[- ]?loop\w*|keeps? (?:restarting|crashing|dying)|restarting over and over)\b",
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
                          r"not (?:allowed|permitted|running|listening|responding|reachable|writable|readable|accessible)"
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


def yes_no_fit(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
               family: str | None, question: "Question | str | None" = None) -> tuple[str | None, tuple[str, ...]]:
    """`yes_no_misfit` with its reason as the model reads it."""
    misfit, drop = yes_no_misfit(answer, result, findings, family, question)
    return (misfit.reason if misfit is not None else None), drop


def yes_no_misfit(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
                  family: str | None, question: "Question | str | None" = None) -> tuple[Misfit | None, tuple[str, ...]]:
    """For "is any … ?" about a family the checks judge: (a reason, fields to drop). A claim of the
    family's fault while its verdict is ok goes back, and so does a "yes" when the question itself
    claims that fault ("is the disk full?"; not "does one folder take more space?", whose yes is
    about folders); an answer that says no (or claims nothing) keeps no culprit: the check found none."""
    if family is None or family not in FAULT_CLAIMS:
        return None, ()
    verdicts = [f for f in findings if f.family == family]
    if not verdicts or any(f.is_problem for f in verdicts):
        return None, ()
    stated = " ".join([answer, *(str(v) for v in result.values())])
    asked = None if question is None else as_question(question).text
    says_yes = _YES.search(answer) and (asked is None or claims_fault(asked, family))
    if says_yes or claims_fault(stated, family):
        return _contradicts(verdicts[0], 200), ()
    if asked is not None and claims_fault(asked, family) and not denies_all(answer) \
            and not names_a_problem(stated, findings):
        # neither yes nor no ("the top process is python, 42.9 MiB" for "is any process using an
        # unusual amount of memory?"): the verdict says no, so must the answer (unless it names a
        # problem the checks found in another family)
        return Misfit(Kind.SAY_YES_OR_NO, f"[say-yes-or-no: {verdicts[0].line()[:200]}]", verdicts[0],
                      own="[say-yes-or-no]"), ()
    return None, tuple(k for k in ("culprit", "process", "pid") if k in result)


def unasked_culprit(result: Mapping[str, Any], seeks_fault: bool) -> tuple[str, ...]:
    """The culprit field of an answer to a question that asks for no culprit ("how long has this
    machine been up?" answered with culprit "system"): it claims nothing the person asked, so it
    goes rather than sending a right answer back. The process a question asks for is kept."""
    return () if seeks_fault or "culprit" not in result else ("culprit",)


def all_clear_drops(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
                    asks_which: bool) -> tuple[str, ...]:
    """The fields an answer that says nothing is wrong cannot keep: a culprit ("the daily reports
    run without errors" with culprit "reportgen"), and any field that claims the fault the answer
    denies ("No problem found: …" with value "logs contain errors", the refused answer's field
    kept through a retry). An all-clear names nothing at fault, unless the field names a problem
    the checks found. The process a which-question asks for stays: there it is the thing asked
    about, not a culprit."""
    if not denies_all(answer) or claims_any_fault(answer):
        return ()
    keys = ("culprit",) if asks_which else ("culprit", "process", "pid")
    culprits = [k for k in keys if k in result and not names_a_problem(str(result[k]), findings)]
    claims = [k for k, v in result.items() if k not in keys and isinstance(v, str) and claims_any_fault(v)
              and not names_a_problem(v, findings)]
    return tuple(culprits + claims)


_QUESTION_HEAD = re.compile(r"^\s*(?:is|are|does|do|did|has|have|can|could|was|were|will|should)\b\s*", re.I)
_WORDS = re.compile(r"[a-z0-9]+")


def affirms(answer: str, question: "Question | str") -> bool:
    """The answer to a yes/no question says yes: it begins with "yes", or a clause of it repeats the
    question's last words ("… is about to fill up" for "is /srv about to fill up?") without a
    negation."""
    if _YES.search(answer):
        return True
    tail = _WORDS.findall(_QUESTION_HEAD.sub("", as_question(question).text.lower()))[-3:]
    if len(tail) < 3:
        return False
    phrase = " ".join(tail)
    return any(phrase in " ".join(_WORDS.findall(c.lower())) and not _NEGATION.search(c) for c in clauses(answer))


def place_fit(answer: str, question: "Question | str", places: Sequence[Finding]) -> Misfit | None:
    """For a yes/no question about a place the checks judged fine: a "yes" contradicts them."""
    fine = [f for f in places if not f.is_problem]
    if not fine or any(f.is_problem for f in places) or not affirms(answer, question):
        return None
    return _contradicts(fine[0], 200)


def _contradicts(finding: Finding, room: int) -> Misfit:
    """The answer says what `finding`, a verdict of the checks, denies (or denies what it found)."""
    return Misfit(Kind.CONTRADICTS, f"[contradicts-check: {finding.line()[:room]}]", finding, own="[contradicts-check]")


def names_a_problem(stated: str, findings: Sequence[Finding]) -> bool:
    """The text names what a problem finding names (its culprit, pid or path), in any family."""
    problems = [f for f in findings if f.is_problem]
    return bool(problems) and misses_culprit(stated, {}, problems) is None


def problems_for(findings: Iterable[Finding], families: Iterable[str]) -> list[Finding]:
    wanted = set(families)
    return [f for f in findings if f.family in wanted and f.is_problem]


def check_agreement(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
                    topics: Sequence[str]) -> str | None:
    """`agreement_misfit` as the model reads it."""
    misfit = agreement_misfit(answer, result, findings, topics)
    return misfit.reason if misfit is not None else None


def agreement_misfit(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
                     topics: Sequence[str]) -> Misfit | None:
    """None when the answer agrees with the verdicts, else the verdict it contradicts.

    findings: every verdict of the run's first check; topics: the families the question is about."""
    if not findings:
        return None
    stated = " ".join([answer, *(str(v) for v in result.values())])
    if denies_all(answer) and not _culprit(result):
        problems = list(problems_for(findings, topics))
        # an answer that names what one of the problems names states it, in the verdict's own
        # negative words ("nothing listens on tcp port 54161: … is down"), and denies nothing
        if problems and not names_a_problem(stated, problems):
            return _contradicts(problems[0], 160)
    by_family: dict[str, list[Finding]] = {}
    for finding in findings:
        by_family.setdefault(finding.family, []).append(finding)
    for family in FAULT_CLAIMS:
        verdicts = by_family.get(family)
        if not verdicts or not claims_fault(stated, family):
            continue
        if all(v.severity == OK for v in verdicts):
            return _contradicts(verdicts[0], 160)
    return None


def _culprit(result: Mapping[str, Any]) -> bool:
    return any(str(result.get(k) or "").strip() for k in ("culprit", "process", "pid"))


def misses_culprit(answer: str, result: Mapping[str, Any], problems: Sequence[Finding]) -> str | None:
    """A reason when the check found the culprit of the question's main family and the answer
    names none of what those findings name (their culprit, pid or path), nor says they are wrong
    in a way that names them."""
    if not problems:
        return None
    stated = " ".join([answer, *(str(v) for v in result.values())]).lower()
    for finding in problems:
        names = [str(x).lower() for x in (finding.culprit, finding.pid, finding.path) if x not in (None, "")]
        if any(re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-]|\.\d)", stated) for n in names):
            return None
    return f"[misses-the-check: {problems[0].line()[:200]}]"


_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
_OTHER_RESOURCE = re.compile(r"\b(?:cpu|cores?|processors?|memory|ram|swap|load|threads?|connections?|inodes?)\b", re.I)


# A process a verdict names in prose: "the top consumer is cachehoard (pid 4242)".
NAMED_PROCESS = re.compile(r"([\w.\-:]{2,}) \(pid (\d+)\)")


def named_processes(findings: Iterable[Finding]) -> list[str]:
    """The processes the verdicts name in prose, in order, each once."""
    return list(dict.fromkeys(m.group(1) for f in findings for m in NAMED_PROCESS.finditer(f.verdict)))


def names_process(stated: str, name: str, pid: object) -> bool:
    """The text names the process: its name as a whole word, or its pid."""
    text = stated.lower()
    return bool(name and re.search(rf"(?<![\w.-]){re.escape(name.lower())}(?![\w-])", text)) \
        or bool(pid and re.search(rf"\b{pid}\b", text))


def first_ranked(findings: Sequence[Finding], topic: str | None) -> tuple[Finding, str, str] | None:
    """The verdict of the question's own family that names a process first in its ranking
    ("thread counts are normal: the most, 302, in threadfarm (pid 29368)"), with that name and pid."""
    for finding in (f for f in findings if f.family == topic):
        match = NAMED_PROCESS.search(finding.verdict)
        if match is not None:
            return finding, match.group(1), match.group(2)
    return None


def names_first_ranked(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
                       topic: str | None) -> bool:
    """The answer names the process the topic's verdict ranks first (its name or pid)."""
    first = first_ranked(findings, topic)
    return first is not None and _names_ranked(answer, result, first)


def _names_ranked(answer: str, result: Mapping[str, Any], first: tuple[Finding, str, str]) -> bool:
    stated = " ".join([answer, *(str(v) for v in result.values())])
    return names_process(stated, first[1], first[2])


def not_verdicts_first(answer: str, result: Mapping[str, Any], findings: Sequence[Finding],
                       topic: str | None) -> str | None:
    """For "which process has the most …?": an answer that names neither the process the
    question's own family ranks first nor its pid answers from another ranking (the top CPU user
    for a question about threads)."""
    first = first_ranked(findings, topic)
    if first is None or _names_ranked(answer, result, first):
        return None
    return f"[not-the-first: the check ranks first: {first[0].line()[:160]}]"


def wrong_place(answer: str, result: Mapping[str, Any], places: Sequence[Finding],
                findings: Sequence[Finding] = ()) -> str | None:
    """A reason when the question names a place and the answer gives a share of space that is not
    the share of the filesystem holding that place, without naming that filesystem ("/ is 23 %
    used" for "is /srv/uploads about to fill up?"). A share a folder verdict among `findings`
    states (an entry's part of its folder: "render-farm holds 96.2 % of …/projects") is the
    answer to what fills the place, not another filesystem's use."""
    spaces = [f for f in places if f.family == "filesystem_full" and "used_percent" in f.values]
    if not spaces:
        return None
    stated = " ".join([answer, *(str(v) for v in result.values())])
    in_folders = {float(f.values[key]) for f in findings if f.family == FOLDER
                  for key in ("largest_percent", "next_percent") if key in f.values}
    # a share of CPU, memory or inodes is no share of space
    shares = [float(m) for c in clauses(stated) if not _OTHER_RESOURCE.search(c) for m in _PERCENT.findall(c)
              if not any(abs(float(m) - part) <= 1.0 for part in in_folders)]
    if not shares:
        return None
    for place in spaces:
        pct = float(place.values["used_percent"])
        mount = str(place.values.get("mount") or "")
        if any(abs(share - pct) <= 1.0 for share in shares) or (mount and mount != "/" and mount in stated):
            return None
    return f"[another-place: the question is about {spaces[0].line()[:200]}]"


def names_self(answer: str, result: Mapping[str, Any], self_pids: Iterable[int], self_names: Iterable[str],
               bodies: Iterable[str]) -> str | None:
    """A reason when the answer blames the appliance: its pid, a process name the observations
    label as the appliance, or the label itself in the answer (unless the answer is all clear)."""
    pids = {int(p) for p in self_pids}
    pid = result.get("pid")
    if isinstance(pid, int) and pid in pids or str(pid).isdigit() and int(str(pid)) in pids:
        return "[names-the-appliance-itself: that pid is the assistant, never a culprit]"
    names = {n.lower() for n in self_names if n}
    for body in bodies:
        for line in body.splitlines():
            if any(marker in line.lower() for marker in SELF_MARKERS):
                match = re.search(r"name=([^\s;,]+)", line)
                if match:
                    names.add(match.group(1).replace("(appliance", "").lower())
    for key in ("process", "culprit"):
        value = str(result.get(key) or "").lower().strip()
        if value and (value in names or any(m in value for m in SELF_MARKERS)):
            return "[names-the-appliance-itself: that process is the assistant, never a culprit]"
    lowered = answer.lower()
    if claims(lowered, _SELF_WORDS):
        return "[names-the-appliance-itself: the assistant is never the answer]"
    return None
