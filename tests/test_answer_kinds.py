"""Every answer rule judges only the kinds of question it declares (agent/answer/rules.py).

For each rule: a case it fires on (a question of one of its kinds, an answer and the evidence a
run would have), then the same answer and evidence under a question of every other kind, which it
must leave alone — on its own and inside the whole judge. Then the cases of issue 31 that right
answers used to be sent back for: a user named for "which user?", an honest "cannot tell" to a
question about something else, and a complaint answered past a warning in the evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from appliance.agent.answer.misfit import Kind
from appliance.agent.answer.rules import RULES, Answer, AnswerContext, judge_answer
from appliance.agent.evidence import Evidence, Look
from appliance.agent.question.kinds import THINGS, Asks, Resource
from appliance.agent.question.question import Question, read_question
from appliance.analyzers.base import OK, WARNING, Finding, Standout

CPU_OK = Finding("cpu", OK, "no CPU hog: the busiest, kworker (pid 5), uses 2 % of one core", culprit=None)
CPU_HOG = Finding("cpu", WARNING, "CPU hog: hashminer (pid 12) uses 99 % of one core (threshold 75 %)",
                  culprit="hashminer", pid=12)
USERS_HOG = Finding("user_load", WARNING, "user www-data takes 70 % of all 2 cores with 2 processes",
                    culprit="www-data", pid=12)
MEM_OK = Finding("memory", OK, "no memory pressure: 20 GiB of 23 GiB available")
PLACE_OK = Finding("filesystem_full", OK, "not full: /srv/up is on /srv (ext4): 40 % used, 6.0 GiB free",
                   {"used_percent": 40.0, "mount": "/srv"}, path="/srv/up")
PORT = Finding("listening", OK, "tcp port 4242 is listened on by ledger (pid 77)",
               {"port": 4242, "listening": True, "owner": "ledger (pid 77)", "owner_pid": 77})
THREADS = Finding("threads", OK, "threads fine: the most, 302, in threadfarm (pid 29) of 435 on the machine",
                  culprit="threadfarm", pid=29)
LOG = Finding("log_errors", WARNING, "/srv/app.log: 2 error lines; it starts with: «ERROR db: connection refused»",
              culprit="/srv/app.log", path="/srv/app.log")
HELD_BY_NONE = Finding("path_holders", OK, "nothing holds /mnt/backup: no process has a file open, its working "
                       "directory or a mapped file there; it can be unmounted", path="/mnt/backup")
HELD_AS_FACT = Finding("path_holders", OK, "/srv/data is held by 1 process: nginx (pid 31), with an open file",
                       path="/srv/data")
READS = Finding("path_lookup", OK, "/srv/r/q2.csv exists: www-data can pass every folder on the way and may read it",
                path="/srv/r/q2.csv")
DELETED_OK = Finding("deleted_open", OK, "no space held by deleted files worth noting: the biggest, 4.0 KiB, in "
                     "bash (pid 44)")
GROWS = Finding("disk_growth", WARNING, "growing: /srv/spool/t.log grew from 23.8 MiB to 26.0 MiB in 1.2 s "
                "(1.9 MiB/s), written by ingestd (pid 31); its filesystem has 230.0 MiB free",
                culprit="/srv/spool/t.log", path="/srv/spool/t.log")
MEM_LEAD = Finding("memory", OK, "no memory pressure: 20 GiB of 23 GiB available; the top consumer is cachehoard (pid 41) "
                   "with 3.0 GiB (13 % of RAM), 40× the next", standout=Standout("cachehoard", 41, 3.2e9, 8.0e7))
OVERVIEW = {"os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0-18-amd64", "hostname": "web1",
            "virtualization": "virtual machine (KVM)", "time_zone": "Europe/Berlin (UTC+01:00)",
            "cpu": {"model": "AMD EPYC 7B13", "logical_cores": 2}}
FACTS = Evidence(measured=(Look("this machine", "system_overview", {}, {"status": "ok", "data": OVERVIEW}),))
FACTS_BODY = "os=\"Debian GNU/Linux 12 (bookworm)\" kernel=6.1.0-18-amd64 hostname=web1 virtualization=\"virtual machine (KVM)\""
SIZES = ("headline: largest: /srv/projects/render 48.0 MiB (96.2%)\npath=/srv/projects total=\"49.9 MiB\"\n"
         "  path=/srv/projects/docs type=dir size=\"688.0 KiB\"")


@dataclass(frozen=True)
class Case:
    """A question of one of the rule's kinds, and a finish the rule sends back."""

    question: str
    asks: Asks
    answer: str
    evidence: Evidence
    bodies: tuple[str, ...]
    result: tuple[tuple[str, object], ...] = ()
    self_pids: frozenset[int] = frozenset()
    log_bodies: tuple[str, ...] = ()


CASES: dict[str, Case] = {
    "yes-no-verdict": Case("Is any process hogging the CPU?", Asks.YES_NO, "Yes, kworker (pid 5) is hogging the CPU.",
                           Evidence((CPU_OK,), ("cpu",)), (CPU_OK.line(),)),
    "not-the-appliance": Case("Which process uses the most CPU?", Asks.PROCESS, "python3 (pid 321) uses 95 % CPU.",
                              Evidence((CPU_OK,), ("cpu",)), ("pid=321 name=python3 cpu=95",), (("pid", 321),),
                              frozenset({321})),
    "port-verdict": Case("Which process listens on port 4242?", Asks.PORT,
                         "There are no established connections on port 4242.", Evidence((PORT,), ("listening",)),
                         (PORT.line(),)),
    "unasked-port": Case("Does any process hold many connections?", Asks.YES_NO,
                         "No, there are no established connections on port 443.", Evidence(), ("conns=3",)),
    "backed-shares": Case("Which process has the most threads?", Asks.PROCESS,
                          "threadfarm (pid 30) has 302 threads and runs at 302% of the CPU.", Evidence(),
                          ("pid=30 name=threadfarm threads=302 cpu_percent=61.2",)),
    "claims-no-fault": Case("why is my laptop so slow?", Asks.EXPLANATION, "The eth0 interface is up: eth0 up=yes.",
                            Evidence((CPU_OK, MEM_OK), ("cpu", "memory")), (CPU_OK.line(), "interface=eth0 up=yes")),
    "agrees-with-checks": Case("What is wrong with this machine?", Asks.EXPLANATION,
                               "kworker (pid 5) is hogging the CPU.", Evidence((CPU_OK,), ("cpu",)), (CPU_OK.line(),)),
    "right-place": Case("is /srv/up about to fill up?", Asks.YES_NO, "No: the disk is 23 % used.",
                        Evidence((PLACE_OK,), ("filesystem_full",), places=(PLACE_OK,)), (PLACE_OK.line(), "/ 23%")),
    "answers-the-lookup": Case("www-data has trouble with /srv/r/q2.csv, can you look?", Asks.EXPLANATION,
                               "The file /srv/r/q2.csv is 24 bytes and was modified today.",
                               Evidence((READS,), ("path_lookup",), places=(READS,)),
                               (READS.line(), "path=/srv/r/q2.csv size=\"24 B\" modified=today")),
    "under-the-place": Case("Which folder under /srv/projects takes the most space?", Asks.FOLDER,
                            "The / filesystem is the fullest, at 25.4% used.",
                            Evidence((), ("filesystem_full",), (Look("/srv/projects", "dir_sizes", {}, {"status": "ok"}),)),
                            (SIZES, "headline: fullest: / 25.4% used")),
    "names-the-culprit": Case("my laptop is slow, what is going on?", Asks.EXPLANATION,
                              "The fan is loud because the room is warm: 22 C.", Evidence((CPU_HOG,), ("cpu",)),
                              (CPU_HOG.line(), "temp=22 C")),
    "names-the-standout": Case("which app is hogging all the memory?", Asks.PROCESS, "No problem found: no memory pressure.",
                               Evidence((MEM_LEAD, CPU_OK), ("memory",)), (MEM_LEAD.line(), CPU_OK.line())),
    "names-the-doer": Case("Space on /srv/spool keeps shrinking: which file is growing, and which process writes it?",
                           Asks.FILE, "The file /srv/spool/t.log is growing at 1.9 MiB/s.",
                           Evidence((GROWS,), ("disk_growth",)), (GROWS.line(),)),
    "none-at-the-place": Case("which program is keeping /mnt/backup busy?", Asks.PROCESS,
                              "bash (pid 44) has files open on /mnt/backup.",
                              Evidence((DELETED_OK, HELD_BY_NONE), ("path_holders", "deleted_open"),
                                       places=(HELD_BY_NONE,)),
                              (DELETED_OK.line(), HELD_BY_NONE.line())),
    "verdicts-first": Case("Which process has the most threads?", Asks.PROCESS, "python (pid 40) has the most threads.",
                           Evidence((THREADS,), ("threads",)), (THREADS.line(), "pid=40 name=python threads=12")),
    "names-a-user": Case("this shared server is crawling, whose account is responsible?", Asks.USER,
                         "The server is under heavy load from hashminer (pid 12).", Evidence((USERS_HOG, CPU_HOG),
                                                                                          ("user_load", "cpu")),
                         (USERS_HOG.line(), CPU_HOG.line(), "pid=12 name=hashminer user=www-data cpu_percent=98")),
    "names-the-fact": Case("which kernel is this box on, and is it a vm?", Asks.SYSTEM_FACT,
                           "The Linux kernel version is Debian GNU/Linux 12 (bookworm), and it is a virtual machine.",
                           FACTS, (FACTS_BODY,)),
    "shape": Case("How much memory is free?", Asks.AMOUNT, "Plenty of memory is free: no memory pressure.",
                  Evidence((MEM_OK,), ("memory",)), (MEM_OK.line(),)),
    "yes-or-no": Case("Does the backup folder hold more than the logs?", Asks.YES_NO,
                      "The backup folder /srv/backup holds 3.0 GiB.", Evidence(), ("path=/srv/backup size=3.0 GiB",)),
    "settled-no": Case("Is any process using an unusual amount of memory? If so, which?", Asks.PROCESS,
                       "cachehog (pid 9) has the most, 3.1 GiB.", Evidence((MEM_OK,), ("memory",)),
                       (MEM_OK.line(), "pid=9 name=cachehog memory=3.1 GiB")),
    "addresses-finding": Case("everything feels sticky today, whats up", Asks.EXPLANATION,
                              "The largest file is /var/cache/big.bin, 2.0 GiB.",
                              Evidence((CPU_HOG,), ("disk_io",)), (CPU_HOG.line(), "largest file: /var/cache/big.bin 2.0 GiB")),
}


def _question(case: Case, asks: Asks) -> Question:
    """The case's question as the reader gives it, labelled `asks` (the model's choice)."""
    words = read_question(case.question)
    question = replace(words, asks=asks, sure=True) if words.asks is not asks else words
    return question.relabelled(asks, question.resource if question.resource is not Resource.NONE else Resource.CPU,
                               question.fault)


def _ctx(case: Case, question: Question) -> AnswerContext:
    return AnswerContext(question=question, evidence=case.evidence, bodies=list(case.bodies),
                         log_bodies=list(case.log_bodies), self_pids=case.self_pids, tools_worked=True)


def test_every_rule_has_a_case_and_declares_its_kinds():
    assert {rule.name for rule in RULES} == set(CASES)
    assert all(rule.kinds and rule.serves for rule in RULES)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_a_rule_fires_on_its_own_kind_and_on_no_other(rule):
    case = CASES[rule.name]
    assert case.asks in rule.kinds
    own = _question(case, case.asks)
    said = Answer(case.answer, dict(case.result))
    misfit = rule.judge(said, own, _ctx(case, own))
    assert misfit is not None and misfit.rule == rule.name, rule.name
    for other in set(Asks) - rule.kinds:
        question = _question(case, other)
        assert rule.judge(said, question, _ctx(case, question)) is None, (rule.name, other)
        assert judge_answer(case.answer, dict(case.result), _ctx(case, question)).rule != rule.name, (rule.name, other)


def test_a_user_named_for_which_user_is_not_sent_back_for_not_naming_the_process():
    """Issue 31: "which user uses the most CPU" answered with the user was steered to the hog process."""
    evidence = Evidence((CPU_HOG,), ("cpu",))
    bodies = [CPU_HOG.line(), "user=alice cpu_percent=99.0 processes=3"]
    question = read_question("which user uses the most CPU?")
    assert question.asks is Asks.USER
    ctx = AnswerContext(question=question, evidence=evidence, bodies=bodies, tools_worked=True)
    assert judge_answer("alice uses the most CPU: 99 %.", {"culprit": "alice"}, ctx).problem is None
    process = read_question("which process uses the most CPU?")
    assert judge_answer("alice uses the most CPU: 99 %.", {"culprit": "alice"},
                        replace(ctx, question=process)).kind is Kind.MISSES_CULPRIT


def test_an_honest_cannot_tell_to_a_question_about_something_else_is_accepted():
    question = read_question("what will the weather be like tomorrow in paris?")
    assert question.asks is Asks.OUT_OF_SCOPE and not question.seeks_fault
    ctx = AnswerContext(question=question, evidence=Evidence((CPU_OK,), ("cpu",)), bodies=[CPU_OK.line()],
                        tools_worked=True)
    verdict = judge_answer("I cannot tell: this machine's readings say nothing about the weather.", {}, ctx)
    assert verdict.problem is None
    made_up = judge_answer("It will rain; the forecast is in /srv/weather.txt.", {}, ctx)
    assert made_up.kind is Kind.UNBACKED_PATH  # an invented fact is still refused
    about_machine = replace(ctx, question=read_question("why is my computer slow?"))
    assert judge_answer("I cannot tell.", {}, about_machine).kind is Kind.REFUSAL


def test_a_complaint_answered_past_a_warning_goes_back_to_the_warning_and_naming_it_passes():
    case = CASES["addresses-finding"]
    question = _question(case, Asks.EXPLANATION)
    ctx = _ctx(case, question)
    refused = judge_answer(case.answer, {}, ctx)
    assert refused.kind is Kind.UNADDRESSED and refused.finding is CPU_HOG
    assert judge_answer("hashminer (pid 12) uses 99 % of one core.", {}, ctx).problem is None
    unrelated = "The hashminer CPU hog is unrelated; the largest file is /var/cache/big.bin, 2.0 GiB."
    assert judge_answer(unrelated, {}, ctx).kind is not Kind.UNADDRESSED


def test_a_complaint_answered_with_the_quoted_error_in_its_own_words_addresses_it():
    """Class: a complaint about a failing app whose log's error is the warning in front of the
    model. Saying the error's substance in other words ("an authentication failure") addresses it
    without naming the log's path; a guess that shares a word or two with it does not."""
    log = Finding("log_errors", WARNING, '/srv/app/logs/app.log: 1 error line; it starts with: «2024-05-14 02:15:54 '
                  'ERROR db: FATAL: password authentication failed for user "billing" (db.internal:5432)»',
                  path="/srv/app/logs/app.log")
    question = read_question("my billing thing in /srv/app keeps falling over, can u figure out whats up")
    ctx = AnswerContext(question=question, evidence=Evidence((log,), ("log_errors",)), bodies=[log.line()],
                        tools_worked=True)
    rule = {r.name: r for r in RULES}["addresses-finding"]
    said = "The billing service keeps failing due to a password authentication failure for the billing user."
    assert rule.judge(Answer(said, {}), question, ctx) is None
    for guess in ("The billing service is failing, probably a bad deploy.",
                  "The database user has too little memory."):
        assert rule.judge(Answer(guess, {}), question, ctx) is not None, guess
    kill = Finding("oom", WARNING, "the kernel logged 2 errors: «Memory cgroup out of memory: Killed process 26 "
                   "(bloat) total-vm:295132kB»", culprit="bloat", pid=26)
    ctx = AnswerContext(question=read_question("something keeps crashing on me"), evidence=Evidence((kill,), ()),
                        bodies=[kill.line()], tools_worked=True)
    assert rule.judge(Answer("A process was killed because its group ran out of memory.", {}), ctx.question, ctx) is None
    assert rule.judge(Answer("The disk is slow.", {}), ctx.question, ctx) is not None


def test_a_past_event_of_another_part_need_not_be_addressed_but_one_of_the_part_asked_must():
    """A stale OOM kill in the evidence does not turn "is the CPU slowing me down? no" into a wrong
    answer; asked about memory, or about nothing in particular, the kill must be addressed."""
    kill = Finding("oom", WARNING, "the kernel OOM-killed bloat (pid 88) 14 min ago", culprit="bloat", pid=88)
    answer = "No problem found: no CPU hog, the busiest uses 2 % of one core."
    rules_by_name = {rule.name: rule for rule in RULES}
    for topics, addressed in ((("cpu",), False), (("memory", "oom"), True), ((), True)):
        evidence = Evidence((kill, CPU_OK), topics)
        question = read_question("is something slowing my computer down?")
        ctx = AnswerContext(question=question, evidence=evidence, bodies=[kill.line(), CPU_OK.line()],
                            tools_worked=True)
        verdict = judge_answer(answer, {}, ctx)
        assert (verdict.problem is not None) is addressed, (topics, verdict)
        assert rules_by_name["addresses-finding"].judge(Answer(answer, {}), question, ctx) is not None or not addressed
    # a current problem elsewhere: an open complaint must address it, a question about one named place need not
    place = Finding("readonly_fs", OK, "/srv/docs is writable (tmpfs)", path="/srv/docs")
    for text, asks, addressed in (("my laptop is slow, what is going on?", Asks.EXPLANATION, True),
                                  ("Is the filesystem at /srv/docs mounted read-only?", Asks.YES_NO, False)):
        question = read_question(text)
        assert question.asks is asks
        places = (place,) if question.paths else ()
        evidence = Evidence((CPU_HOG, place), ("readonly_fs",) if places else ("disk_io",), places=places)
        ctx = AnswerContext(question=question, evidence=evidence, bodies=[CPU_HOG.line(), place.line()],
                            tools_worked=True)
        said = Answer("No problem found: /srv/docs is writable." if places else "The disk is 40 % busy.", {})
        assert (rules_by_name["addresses-finding"].judge(said, question, ctx) is not None) is addressed, text


def test_an_answer_lacking_the_fact_gets_the_tool_of_its_kind_run_before_the_retry():
    """Issue 31: a plain fact guessed, sent back, guessed again; now the retry reads the fact."""
    import os

    from appliance.agent import events as ev
    from appliance.agent.engine import Engine
    from appliance.agent.settings import EngineSettings
    from appliance.llm.fake import ScriptedModel
    from appliance.tools.registry import default_registry

    release = os.uname().release
    guess = {"thought": "t", "action": "finish",
             "action_input": {"answer": "You run the latest kernel.", "result": {}, "evidence": []}}
    right = {"thought": "t", "action": "finish",
             "action_input": {"answer": f"The kernel is {release}.", "result": {"value": release}, "evidence": []}}
    model = ScriptedModel([guess, right])
    engine = Engine(model, default_registry(), EngineSettings(reflection=False, question_reader="words"),
                    snapshot=lambda pids: {"load": "load=0.3 on 2 cores"})
    events = list(engine.run("which kernel version is this machine running?"))
    assert [e.reason for e in events if isinstance(e, ev.AnswerRejected)][0].startswith("[no-tool-used-yet")
    retry_prompt = model.calls[1][0][-1].content
    assert "The appliance ran system_overview" in retry_prompt and release in retry_prompt
    final = [e for e in events if isinstance(e, ev.FinalAnswer)][-1]
    assert not final.forced and release in final.answer


def test_the_engines_own_answer_is_plain_words_without_labels():
    from appliance.agent.answer.assemble import assemble

    question = read_question("what is filling my disk?")
    told = assemble(question, Evidence((CPU_HOG, MEM_OK), ("filesystem_full",)), "the step limit of 3 was reached",
                    ["headline: largest: /home 12.0 GiB (80.0%)"])
    assert "hashminer (pid 12)" in told.text and "[warning]" not in told.text and "cpu:" not in told.text
    assert "[" not in told.text.replace("(", "") and told.text.endswith("was reached.)")
    # a CPU hog is no culprit of a question about the disk: it is said, after what was asked, as found elsewhere
    assert told.result == {} and "Elsewhere on this machine they found: CPU hog: hashminer" in told.text
    slow = assemble(read_question("why is my computer slow?"), Evidence((CPU_HOG, MEM_OK), ("cpu", "memory")), "x")
    assert slow.result == {"culprit": "hashminer", "pid": 12}
    assert slow.text.startswith("The appliance's checks found a problem: CPU hog: hashminer") and "Elsewhere" not in slow.text
    measured = Look("/", "largest_files", {}, {"status": "partial", "data": {"headline": "largest file: /var/tmp/r.bin 3.0 GiB"}})
    looked = assemble(question, Evidence((PLACE_OK,), ("filesystem_full",), (measured,)), "no answer held",
                      ['headline: fullest: / 27.7% used, 73.4 GiB free | note="tmpfs listed only when full"'])
    assert "What the appliance measured: largest file: /var/tmp/r.bin 3.0 GiB." in looked.text
    assert "read on the way: fullest: / 27.7% used, 73.4 GiB free." in looked.text and "note=" not in looked.text
    clear = assemble(question, Evidence((PLACE_OK,), ("filesystem_full",)), "no answer held")
    assert clear.text.startswith("The checks of disk space found nothing wrong: not full")


def test_an_entry_of_the_root_folder_is_under_it():
    """The fullest filesystem measured before the first step is often `/`: "/opt is filling the disk"
    names an entry under it (the rule once read `/` as no place at all and sent every answer back)."""
    from appliance.agent.answer.fit import outside_place

    question = read_question("what is filling my disk?")
    bodies = ['headline: largest: /opt 8.2 GiB (34.2%)\n  path=/opt type=dir size="8.2 GiB"\n  path=/var type=dir']
    assert outside_place(question, "/opt is filling the disk.", {"culprit": "/opt"}, ["/"], bodies) is None
    assert outside_place(question, "The disk is 28 % used.", {}, ["/"], bodies) is not None
    # a sibling that shares the folder's name as a prefix is not under it
    assert outside_place(read_question("which folder under /srv/projects takes the most space?"),
                         "/srv/projects-old takes the most.", {}, ["/srv/projects"],
                         ["path=/srv/projects-old size=9 GiB\npath=/srv/projects/docs size=1 GiB"]) is not None


def test_which_user_is_answered_by_a_user_and_the_retry_is_steered_to_the_busiest_one():
    """The busiest process is no answer to "whose account is it?": sent back, and the retry begins
    with the per-user verdict and may name only that user; an answer naming the user passes, and a
    question about who owns a named place is left to the place."""
    from appliance.agent.answer.steer import steer

    case = CASES["names-a-user"]
    question = _question(case, Asks.USER)
    refused = judge_answer(case.answer, {}, _ctx(case, question))
    assert refused.rule == "names-a-user"
    steered = steer(refused.misfit, question, case.evidence, list(case.bodies))  # as the engine steers
    assert steered.culprits == ("www-data",) and steered.openings[0].startswith("user www-data takes 70 %")
    passed = judge_answer("The user www-data runs hashminer (pid 12), which takes 70 % of both cores.", {},
                          _ctx(case, question))
    assert passed.rule != "names-a-user"
    owner = replace(_question(case, Asks.USER), paths=("/srv/shared",))
    assert judge_answer(case.answer, {}, _ctx(case, owner)).rule != "names-a-user"
    quiet = replace(case, evidence=Evidence((), ("user_load",)), bodies=("pid=3 name=sshd user=root cpu=1",))
    quiet_misfit = next(r for r in RULES if r.name == "names-a-user").judge(Answer("sshd uses the most.", {}),
                                                                           question, _ctx(quiet, question))
    assert quiet_misfit is not None and quiet_misfit.name == "root"
    assert steer(quiet_misfit, question, quiet.evidence, list(quiet.bodies)).openings == ("The user root",)


def test_the_cause_at_a_named_path_is_named_as_itself_not_by_restating_the_failing_path():
    """"No such file" on /srv/shop/current/config.yml, caused by the dangling link /srv/shop/current:
    an answer that only restates the failing path names no cause and goes back; one that names the
    link passes, and so does a storage answer naming a place under the full mount (as before)."""
    link = Finding("path_lookup", WARNING, "/srv/shop/current/config.yml does not exist: /srv/shop/current is a link "
                   "to /srv/shop/releases/r7, which does not exist", culprit="/srv/shop/current",
                   path="/srv/shop/current")
    evidence = Evidence((link,), ("path_lookup",), (Look("/srv/shop/current/config.yml", "read_file", {},
                                                         {"status": "error"}),), places=(link,))
    case = Case("my tool dies with 'No such file or directory' on /srv/shop/current/config.yml, why?", Asks.EXPLANATION,
                "", evidence, (link.line(),))
    question = _question(case, Asks.EXPLANATION)
    restated = judge_answer("The file /srv/shop/current/config.yml does not exist.", {}, _ctx(case, question))
    assert restated.rule == "names-the-culprit"
    named = judge_answer("/srv/shop/current is a link to /srv/shop/releases/r7, which does not exist.", {},
                         _ctx(case, question))
    assert named.rule != "names-the-culprit"
    # the link named only as the folder that holds the file (an echo of the failing path) goes back;
    # where it points, named, passes
    echoed = judge_answer("The file is not in /, but it is in the /srv/shop/current directory.", {},
                          _ctx(case, question))
    assert echoed.rule == "names-the-culprit"
    target = judge_answer("/srv/shop/current points to r7, a release that is gone.", {}, _ctx(case, question))
    assert target.rule != "names-the-culprit"
    # a folder on the way that blocks a user: the verdict names nothing off the asked path, so the
    # folder named is the answer
    closed = Finding("path_lookup", WARNING, "permission denied on the way to /srv/www/app.conf: www-data may not "
                     "enter /srv/www (drwx------)", culprit="/srv/www", path="/srv/www")
    denied = Case("www-data gets 'Permission denied' reading /srv/www/app.conf, which folder blocks it?",
                  Asks.FOLDER, "", Evidence((closed,), ("path_lookup",), (), places=(closed,)), (closed.line(),))
    assert judge_answer("/srv/www blocks it: drwx------ lets only its owner in.", {},
                        _ctx(denied, _question(denied, Asks.FOLDER))).rule != "names-the-culprit"
    full = Finding("filesystem_full", WARNING, "full: /srv/up is on /srv (ext4): 100 % used", culprit="/srv", path="/srv")
    storage = Case("uploads to /srv/up fail, why?", Asks.EXPLANATION, "", Evidence(
        (full,), ("filesystem_full",), (Look("/srv/up", "list_dir", {}, {"status": "ok"}),), places=(full,)),
        (full.line(),))
    assert judge_answer("/srv/up is on /srv, which is 100 % used.", {}, _ctx(storage, _question(storage, Asks.EXPLANATION))
                        ).rule != "names-the-culprit"


def test_a_which_question_answered_by_what_an_ok_verdict_lists_is_not_sent_to_say_nothing_is_wrong():
    """"what job runs every minute and hammers the disk?": the scheduled-jobs verdict lists the job as
    a fact (ok); the answer naming it is right, not a claim of nothing; an answer naming something
    no verdict names still goes back."""
    jobs = Finding("scheduled_jobs", OK, "3 cron jobs in 2 tables; every minute: '/usr/bin/tar -czf /var/tmp/snap.tgz "
                   "/usr' (/etc/cron.d/snap, as root)")
    case = Case("something kicks off every single minute on here and the disk gets hammered. what job is that?",
                Asks.SERVICE, "", Evidence((jobs,), ("scheduled_jobs",)), (jobs.line(), "interface=eth0 up=yes"))
    question = _question(case, Asks.SERVICE)
    named = judge_answer("The cron job /usr/bin/tar -czf /var/tmp/snap.tgz /usr runs every minute.", {},
                         _ctx(case, question))
    assert named.rule != "claims-no-fault"
    other = judge_answer("The eth0 interface is up: eth0 up=yes.", {}, _ctx(case, question))
    assert other.rule == "claims-no-fault"


def test_the_engines_own_answer_to_which_user_leads_with_the_user():
    from appliance.agent.answer.assemble import assemble

    question = _question(CASES["names-a-user"], Asks.USER)
    assembled = assemble(question, Evidence((CPU_HOG, USERS_HOG), ("cpu", "user_load")), "no answer held")
    assert assembled.text.startswith("The appliance's checks found a problem: user www-data takes 70 %")
    assert assembled.result.get("culprit") == "www-data"


def test_a_retry_begins_with_the_clause_that_names_the_cause_as_itself():
    from appliance.agent.answer.steer import statement

    link = Finding("path_lookup", WARNING, "/srv/shop/current/config.yml does not exist: /srv/shop/current is a link "
                   "to /srv/shop/releases/r7, which does not exist (/srv/shop/releases has no entry r7)",
                   culprit="/srv/shop/current", path="/srv/shop/current")
    assert statement(link).startswith("/srv/shop/current is a link to /srv/shop/releases/r7")
    assert statement(CPU_HOG) == "CPU hog: hashminer (pid 12) uses 99 % of one core (threshold 75 %)"


def test_a_plain_which_question_is_steered_to_the_fact_its_ok_verdict_states():
    """"which job runs every minute?" asks for a fact the scheduled-jobs verdict states (ok): the
    retry begins with that part of the verdict, not with "No problem found"; a yes/no question and
    a complaint gets the all-clear and, where its words ask about it, that fact after it ("every
    minute my machine crawls, what runs then?"); a complaint about the CPU gets the all-clear alone."""
    from appliance.agent.answer.steer import NO_PROBLEM, fine_opening

    jobs = Finding("scheduled_jobs", OK, "3 cron jobs in 2 tables, every program found; periodic scripts: 4; "
                   "every minute: '/usr/bin/tar -czf /var/tmp/s.tgz /usr' (/etc/cron.d/s, as root)")
    which = _question(Case("something starts every minute here, which job is that?", Asks.SERVICE, "", Evidence(), ()),
                      Asks.SERVICE)
    which = replace(which, fault=False)
    assert fine_opening(jobs, which).startswith("every minute: '/usr/bin/tar -czf")
    yes_no = read_question("are there any jobs that run every minute?")
    assert fine_opening(jobs, yes_no).startswith(NO_PROBLEM)
    complaint = read_question("which job keeps failing every minute?")
    assert complaint.fault and fine_opening(jobs, complaint).startswith(NO_PROBLEM)
    crawls = read_question("every minute my machine crawls for a few seconds. what is running then?")
    assert crawls.fault and crawls.asks in THINGS
    assert fine_opening(jobs, crawls) == (f"{NO_PROBLEM}3 cron jobs in 2 tables, every program found; "
                                          "every minute: '/usr/bin/tar -czf /var/tmp/s.tgz /usr' (/etc/cron.d/s, as root)")
    cpu_ok = Finding("cpu", OK, "no CPU hog: the busiest, api (pid 7), uses 3 % of one core; load 0.4 over 2 cores")
    hog = read_question("which program is hogging the cpu?")
    assert hog.fault and fine_opening(cpu_ok, hog) == f"{NO_PROBLEM}no CPU hog"
    # "is any …? if so, which?" asks which only on a yes: the all-clear, not the top of the ranking
    files_ok = Finding("open_files", OK, "no process is near its open-file limit: the most open files, 56, are held "
                       "by api (pid 7) (limit 65536); the system has 213 file handles of fs.file-max 2471052")
    if_so = read_question("Is any process close to its limit of open files? If so, which?")
    assert if_so.conditional and if_so.asks in THINGS
    assert fine_opening(files_ok, if_so) == f"{NO_PROBLEM}no process is near its open-file limit"
    plain = read_question("which process has the most open files?")
    assert "api (pid 7)" in fine_opening(files_ok, plain)  # a plain which still gets the ranking's fact


def test_a_retry_asked_for_a_port_begins_with_the_listening_verdicts_list():
    """"which port is busy?" where no listener is a fault: the listening verdict's list is the
    answer (who holds which port), not its count; a list too long keeps its whole first entries.
    Other kinds, and verdicts of other families, keep the headline."""
    from appliance.agent.answer.steer import NO_PROBLEM, fine_opening

    ports = Finding("listening", OK, "2 listening ports: tcp 2024 an unknown process; tcp 43915 ledgersync (pid 30)")
    busy = read_question("my server wont start, which port is busy?")
    assert busy.asks is Asks.PORT
    assert fine_opening(ports, busy) == f"{NO_PROBLEM}{ports.verdict}"
    many = Finding("listening", OK, "9 listening ports: " + "; ".join(f"tcp {4000 + n} a-long-service-name-{n} (pid {n})"
                                                                        for n in range(9)))
    cut = fine_opening(many, busy)
    assert cut.startswith(f"{NO_PROBLEM}9 listening ports: tcp 4000 ") and cut.endswith("(pid 2)") and len(cut) <= 180
    cpu_ok = Finding("cpu", OK, "no CPU hog: the busiest, api (pid 7), uses 3 % of one core; load 0.4 over 2 cores")
    assert fine_opening(cpu_ok, busy) == f"{NO_PROBLEM}no CPU hog"  # not the kind's family
    slow = read_question("why is my server so slow?")
    assert fine_opening(ports, slow) == f"{NO_PROBLEM}2 listening ports"  # not a port question


def test_the_program_a_scheduled_job_starts_answers_which_process_runs():
    """"the fans spin up once a minute, what's doing that?" asks for a process; the program of the
    job started every minute is one, though no process list shows it between its runs. A thing
    the observations never name still goes back."""
    from appliance.agent.answer.fit import check_fit

    jobs = ("[ok] scheduled_jobs: 3 cron jobs in 2 tables, every program found; every minute: "
            "'/usr/bin/tar -czf /var/tmp/s.tgz /usr' (/etc/cron.d/s, as root)")
    question = read_question("the fans spin up once a minute like clockwork, whats doing that?")
    assert question.asks is Asks.PROCESS
    assert check_fit(question, "every minute: '/usr/bin/tar -czf /var/tmp/s.tgz /usr' (/etc/cron.d/s, as root) "
                               "starts then.", {}, [jobs]) is None
    assert check_fit(question, "A cron job runs tar every minute.", {}, [jobs]) is None
    assert "names-no-thing" in str(check_fit(question, "The fans do it, as fans do.", {}, [jobs]))
    # a quoted path that is no command's program is no process
    assert "names-no-thing" in str(check_fit(question, "/var/tmp/s.tgz is written.", {}, [jobs]))


def test_a_conditional_question_about_a_number_is_settled_no_like_one_about_a_thing():
    """"Is some program running in a huge number of copies? If so, what starts them?" reads as a
    count; where the checks found no swarm, an answer stating the most common program's copies
    without saying no goes back, while a plain "how many …?" is not judged by settled-no."""
    names_ok = Finding("process_names", OK, "no program runs in unusual numbers: the most common name is 11 "
                       "processes named python, 10 of them started by process_api (pid 1)")
    evidence = Evidence((names_ok,), ("process_names",))
    conditional = read_question("Is some program running in a huge number of copies? If so, what starts them?")
    assert conditional.asks is Asks.COUNT
    ctx = AnswerContext(question=conditional, evidence=evidence, bodies=[names_ok.line()], tools_worked=True)
    answer = "The python process is running in 10 copies, started by process_api."
    assert judge_answer(answer, {}, ctx).rule == "settled-no"
    assert judge_answer("No: the most common name is python, 11 processes.", {}, ctx).rule != "settled-no"
    plain = replace(ctx, question=read_question("how many python processes are running?"))
    assert judge_answer("11 processes named python are running.", {}, plain).rule != "settled-no"


def test_which_process_at_a_place_nothing_holds_goes_back_to_that_verdict_and_a_named_holder_passes():
    """"Which program keeps /mnt/backup busy?" where nothing holds it: a process seen in another
    reading is no holder; the retry begins with the place's own verdict, and "nothing holds it"
    passes. Where the verdict names the holder as a fact, naming it passes."""
    from appliance.agent.answer.steer import steer
    case = CASES["none-at-the-place"]
    question = read_question(case.question)
    assert question.asks is Asks.PROCESS
    ctx = _ctx(case, question)
    verdict = judge_answer(case.answer, {}, ctx)
    assert verdict.rule == "none-at-the-place" and verdict.finding is HELD_BY_NONE
    opening = steer(verdict_misfit(verdict), question, case.evidence, case.bodies).openings[0]
    assert "nothing holds /mnt/backup" in opening
    assert judge_answer("Nothing holds /mnt/backup: no process has a file open there, so it can be unmounted.", {},
                        ctx).problem is None
    held = Evidence((HELD_AS_FACT,), ("path_holders",), places=(HELD_AS_FACT,))
    asked = read_question("which process has files open on /srv/data?")
    ctx = AnswerContext(question=asked, evidence=held, bodies=[HELD_AS_FACT.line()], tools_worked=True)
    assert judge_answer("nginx (pid 31) has a file open on /srv/data.", {}, ctx).problem is None
    assert judge_answer("bash (pid 44) has a file open on /srv/data.", {},
                        replace(ctx, bodies=[HELD_AS_FACT.line(), DELETED_OK.line()])).rule == "none-at-the-place"


GROWS_NONE = Finding("disk_growth", OK, "nothing under /srv/spool grows fast: 0 file(s) grew in 1.2 s; the "
                     "filesystem is not filling", path="/srv/spool")
SPOOL_FULL_OK = Finding("filesystem_full", OK, "not full: /srv/spool is on /srv/spool (tmpfs): 2 % used",
                        path="/srv/spool")
SPOOL_SIZES = "headline: largest: /srv/spool/trace.log 4.0 MiB (100.0%)"


def test_which_file_grows_at_a_place_where_nothing_grows_is_not_answered_with_the_largest_file():
    """"Which log under /srv/spool keeps ballooning?" where the place's growth verdict found
    nothing: naming the largest file pins a growth on it that no check found; the retry begins
    with that verdict. Saying nothing grows (and naming the largest) passes."""
    from appliance.agent.answer.steer import steer
    evidence = Evidence((GROWS_NONE, SPOOL_FULL_OK), ("disk_growth", "filesystem_full"),
                        places=(GROWS_NONE, SPOOL_FULL_OK))
    question = read_question("which log under /srv/spool keeps ballooning?")
    assert question.asks is Asks.FILE
    ctx = AnswerContext(question=question, evidence=evidence, bodies=[GROWS_NONE.line(), SPOOL_SIZES],
                        tools_worked=True)
    verdict = judge_answer("The largest file is /srv/spool/trace.log with 4.0 MiB.", {}, ctx)
    assert verdict.rule == "none-at-the-place" and verdict.finding is GROWS_NONE
    opening = steer(verdict_misfit(verdict), question, evidence, [GROWS_NONE.line(), SPOOL_SIZES]).openings[0]
    assert "nothing under /srv/spool grows fast" in opening
    assert judge_answer("No problem found: nothing under /srv/spool grows fast; the largest file is "
                        "/srv/spool/trace.log, 4.0 MiB.", {}, ctx).rule != "none-at-the-place"


def test_a_retry_about_a_named_path_begins_with_what_was_asked_of_it_not_with_what_was_contradicted():
    """"www-data has trouble with X": the refused answer said the disk is full where the place's
    filesystem is not; the retry begins with X's lookup for www-data, which the question asked,
    not with the fullness the answer happened to contradict. A question about the place's space
    keeps the fullness."""
    from appliance.agent.answer.steer import NO_PROBLEM, steer
    reads = Finding("path_lookup", OK, "/srv/r/q2.csv exists: www-data can pass every folder on the way and may "
                    "read it", path="/srv/r/q2.csv")
    not_full = Finding("filesystem_full", OK, "not full: /srv/r/q2.csv is on / (ext4): 25 % used, 76 GiB free",
                       path="/")
    question = read_question("www-data has trouble with /srv/r/q2.csv, can you look?")
    evidence = Evidence((reads, not_full), ("path_lookup", "filesystem_full"), places=(reads, not_full))
    ctx = AnswerContext(question=question, evidence=evidence, bodies=[reads.line(), not_full.line()],
                        tools_worked=True)
    verdict = judge_answer("The disk is full: / (ext4) is 25 % used, so www-data cannot write.", {}, ctx)
    assert verdict.finding is not_full
    openings = steer(verdict_misfit(verdict), question, evidence, [reads.line(), not_full.line()]).openings
    assert openings == (f"{NO_PROBLEM}/srv/r/q2.csv exists: www-data can pass every folder on the way and may "
                        "read it",)
    space = read_question("is the disk under /srv/r/q2.csv full?")
    evidence = Evidence((not_full,), ("filesystem_full",), places=(not_full,))
    ctx = AnswerContext(question=space, evidence=evidence, bodies=[not_full.line()], tools_worked=True)
    verdict = judge_answer("Yes, the disk is full: / (ext4) is 25 % used.", {}, ctx)
    assert steer(verdict_misfit(verdict), space, evidence, [not_full.line()]).openings[0].startswith(
        f"{NO_PROBLEM}not full")


def test_a_complaint_about_a_named_path_whose_lookup_is_fine_is_answered_with_what_it_found():
    """The lookup leads and found the file there and readable for www-data: an answer about the
    file's size goes back, and so does a denial; saying who may read it passes, and so does the
    lookup's own fact that a folder is closed to others. The retry begins with the lookup. Without
    a lookup leading (a question about space), the rule is silent."""
    from appliance.agent.answer.steer import NO_PROBLEM, steer
    question = read_question("www-data has trouble with /srv/r/q2.csv, can you look?")
    evidence = Evidence((READS,), ("path_lookup",), places=(READS,))
    ctx = AnswerContext(question=question, evidence=evidence, bodies=[READS.line(), "size=\"24 B\""],
                        tools_worked=True)
    size = judge_answer("The file /srv/r/q2.csv is 24 bytes and was modified today.", {}, ctx)
    assert size.rule == "answers-the-lookup" and size.finding is READS
    assert steer(verdict_misfit(size), question, evidence, [READS.line()]).openings == (
        f"{NO_PROBLEM}/srv/r/q2.csv exists: www-data can pass every folder on the way and may read it",)
    assert judge_answer("www-data cannot read /srv/r/q2.csv.", {}, ctx).rule == "answers-the-lookup"
    assert judge_answer("Nothing is wrong: www-data may read /srv/r/q2.csv.", {}, ctx).problem is None
    private = Finding("path_lookup", OK, "/srv/r/q2.csv exists; a user other than the owner may not pass through "
                      "/srv/r (drwx------ root:root)", path="/srv/r/q2.csv")
    ctx = AnswerContext(question=read_question("is /srv/r/q2.csv fine?"),
                        evidence=Evidence((private,), ("path_lookup",), places=(private,)),
                        bodies=[private.line()], tools_worked=True)
    assert judge_answer("It exists; a user other than the owner may not pass through /srv/r.", {}, ctx).problem is None
    space = AnswerContext(question=read_question("why is the disk under /srv/up so full?"),
                          evidence=Evidence((PLACE_OK,), ("filesystem_full",), places=(PLACE_OK,)),
                          bodies=[PLACE_OK.line()], tools_worked=True)
    assert judge_answer("/srv is 40 % used, 6.0 GiB free: it is not full.", {}, space).rule != "answers-the-lookup"


def test_an_answer_that_is_the_question_again_goes_back_and_one_that_adds_a_fact_stays():
    """"which log is ballooning?" answered with the question itself (a word added) names nothing;
    the same words with the file and its rate, or a yes to a yes/no question, answer it."""
    from appliance.analyzers.base import WARNING as WARN
    grows = Finding("disk_growth", WARN, "growing: /srv/spool/trace.log grew 2.0 MiB/s", culprit="/srv/spool/trace.log",
                    path="/srv/spool/trace.log")
    evidence = Evidence((grows,), ("disk_growth",), places=(grows,))
    question = read_question("free space on /srv/spool keeps shrinking, which log is ballooning?")
    ctx = AnswerContext(question=question, evidence=evidence, bodies=[grows.line()], tools_worked=True)
    echo = judge_answer("the free disk space on /srv/spool keeps shrinking, which log is ballooning?",
                        {"culprit": "/srv/spool/trace.log"}, ctx)
    assert echo.kind is Kind.NO_FACT and "restates" in str(echo.problem)
    assert judge_answer("/srv/spool/trace.log is ballooning: it grew 2.0 MiB/s.", {}, ctx).problem is None
    port = read_question("is anything listening on port 4242 right now?")
    ctx = AnswerContext(question=port, evidence=Evidence((PORT,), ("listening",)), bodies=[PORT.line()],
                        tools_worked=True)
    assert judge_answer("Yes, ledger (pid 77) is listening on port 4242 right now.", {}, ctx).problem is None


NET_OK = Finding("network_errors", OK, "no network errors: 0 TCP retransmits of 0 segments, no interface errors or "
                 "drops growing, no listener leaving connections waiting")


def test_a_listener_said_not_to_accept_its_connections_is_judged_by_its_verdict():
    """"ledger on port 4242 is not accepting connections" where the listener-queue check found none
    waiting goes back ("not accepting" is no denial); saying it accepts them passes."""
    evidence = Evidence((PORT, NET_OK), ("network_errors", "listening"))
    question = read_question("folks say my service on port 4242 is sluggish to answer sometimes, anything wrong?")
    ctx = AnswerContext(question=question, evidence=evidence, bodies=[PORT.line(), NET_OK.line()], tools_worked=True)
    assert judge_answer("No problem found: no network errors; ledger (pid 77) on port 4242 is accepting its "
                        "connections.", {}, ctx).problem is None
    assert judge_answer("ledger (pid 77) on port 4242 is not accepting connections, so clients hang.", {},
                        ctx).problem is not None


def test_which_file_of_a_place_judged_only_for_space_names_its_largest_entry():
    """A file asked of a place whose words asked no growth, holders or counts (its space only) is
    not this rule's: the largest entry answers "what file is filling /srv/spool?"."""
    evidence = Evidence((SPOOL_FULL_OK,), ("filesystem_full",), places=(SPOOL_FULL_OK,))
    question = read_question("what file is filling /srv/spool?")
    ctx = AnswerContext(question=question, evidence=evidence, bodies=[SPOOL_FULL_OK.line(), SPOOL_SIZES],
                        tools_worked=True)
    assert judge_answer("/srv/spool/trace.log takes the most, 4.0 MiB.", {}, ctx).rule != "none-at-the-place"


def verdict_misfit(verdict):
    from appliance.agent.answer.misfit import Misfit
    return Misfit(verdict.kind, verdict.problem, verdict.finding, own=verdict.own, rule=verdict.rule)


def test_a_which_process_answer_that_names_only_a_file_goes_back():
    """"Which process …?" answered with the largest file names no process: sent back, whatever
    else it names; a process with its pid, or "none", passes the shape."""
    from appliance.agent.answer.fit import check_fit
    bodies = ["headline: largest: /mnt/backup/photos.tar 2.0 MiB", "pid=84 name=kworker cpu=2"]
    q = "which process is keeping /mnt/backup busy?"
    assert check_fit(q, "The largest file is /mnt/backup/photos.tar, 2.0 MiB.", {}, bodies).startswith("[names-no-thing")
    assert check_fit(q, "kworker (pid 84) is busy.", {}, bodies) is None
    assert check_fit("which file on /mnt/backup is the largest?", "The largest file is /mnt/backup/photos.tar.", {},
                     bodies) is None


def test_whose_account_is_hogging_is_answered_no_where_the_per_user_check_found_none():
    """A denial answers "whose account is hogging the CPU?" where the per-user verdict is fine; a
    ranking ("which user uses the most CPU?") still asks for the user it ranks first."""
    users_ok = Finding("user_load", OK, "no user takes most of the CPU: the busiest, root, takes 2 % of all 2 cores",
                       culprit="root")
    evidence = Evidence((users_ok, CPU_OK), ("user_load", "cpu"))
    bodies = [users_ok.line(), "user=root cpu_percent=2.1 processes=70"]

    def judged(question: str, answer: str):
        q = read_question(question)
        assert q.asks is Asks.USER
        return judge_answer(answer, {}, AnswerContext(question=q, evidence=evidence, bodies=bodies, tools_worked=True))

    assert judged("whose account is hogging the cpu right now?", "No account is hogging the CPU.").problem is None
    assert judged("which user uses the most cpu?", "No account is hogging the CPU.").rule == "names-a-user"
    assert judged("which user uses the most cpu?", "root, with 2 % of all 2 cores.").problem is None


def test_a_which_question_about_a_fault_nothing_shows_ends_on_that_verdict_not_another_familys_top():
    """"Which program has gone haywire forking?" at its last step, where every check of it is
    fine: the answer begins with the check that found none, not with the process another
    family's verdict ranks first (the most threads). A ranking question still gets its top entry."""
    from appliance.agent.answer.steer import steer_last
    names_ok = Finding("process_names", OK, "no program runs in unusual numbers: the most common name is 4 "
                       "processes named bash, 1 of them started by init (pid 1)")
    evidence = Evidence((THREADS, names_ok), ("process_names", "threads"))
    bodies = [THREADS.line(), names_ok.line()]
    opening = steer_last(read_question("which program has gone forking crazy on this box?"), evidence, bodies).openings
    assert opening and opening[0].startswith("No problem found: no program runs in unusual numbers")
    ranking = steer_last(read_question("which process has the most threads?"), Evidence((THREADS,), ("threads",)),
                         [THREADS.line()]).openings
    assert ranking and "threadfarm (pid 29)" in ranking[0]


@pytest.mark.parametrize("doc", ["README.md", "docs/engine.md"])
def test_the_rule_tables_of_the_docs_mark_each_rule_with_exactly_its_kinds(doc):
    """The table people read (README, docs/engine.md) says what the code does: one row per rule,
    in order, a mark under each kind it judges and none elsewhere."""
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / doc).read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    by_name = {row.split("`")[1]: [cell.strip() for cell in row.strip("|").split("|")[2:]] for row in rows}
    assert [name for name in by_name if name in {r.name for r in RULES}] == [r.name for r in RULES]
    for rule in RULES:
        marks = by_name[rule.name]
        assert len(marks) == len(Asks), rule.name
        assert {kind for kind, mark in zip(Asks, marks) if mark} == set(rule.kinds), rule.name


def test_a_question_asking_who_does_it_beside_the_thing_is_steered_to_the_process_the_check_names():
    """Class: "what is growing (how many …), and which process writes (starts) it?" — the thing
    named, the doer left out, where a problem verdict names it. The retry begins with the verdict's
    clause that names the process, and an answer naming it (by name or pid) passes. A question
    that asks no doer, and an all-clear, are left alone."""
    from appliance.agent.answer.steer import steer
    case = CASES["names-the-doer"]
    question = read_question(case.question)
    assert question.doer and not read_question("which file under /srv/spool is growing?").doer
    rule = next(r for r in RULES if r.name == "names-the-doer")
    misfit = rule.judge(Answer(case.answer, {}), question, _ctx(case, question))
    assert misfit is not None and misfit.kind is Kind.NAMES_NO_DOER and misfit.finding is GROWS
    opening = steer(misfit, question, case.evidence, list(case.bodies)).openings
    assert opening == ("/srv/spool/t.log grew from 23.8 MiB to 26.0 MiB in 1.2 s (1.9 MiB/s), written by ingestd (pid 31)",)
    for named in ("/srv/spool/t.log grows at 1.9 MiB/s, written by ingestd.", "/srv/spool/t.log, by pid 31."):
        assert rule.judge(Answer(named, {}), question, _ctx(case, question)) is None
    plain = read_question("which file under /srv/spool is growing?")
    assert rule.judge(Answer(case.answer, {}), plain, _ctx(case, plain)) is None
    assert rule.judge(Answer("No problem found: nothing grows.", {}), question, _ctx(case, question)) is None


def test_a_complaint_about_a_part_where_one_process_stands_far_ahead_must_name_it():
    """Class: "which program is eating X?", "is something hogging X?", "X feels clogged, what is
    it?" where X's verdict is ok yet its ranking puts one process far ahead (Finding.standout).
    The all-clear is sent back to the ranking's clause; naming the process — even as a hog or as
    running too many of something — passes every rule. Left alone: no standout, a problem verdict
    there (the culprit rules judge), a question about another part first ("why is it slow?"), and
    the kinds the rule does not declare."""
    from appliance.agent.answer.steer import steer
    case = CASES["names-the-standout"]
    question = read_question(case.question)
    ctx = _ctx(case, question)
    refused = judge_answer(case.answer, {}, ctx)
    assert refused.kind is Kind.NAMES_NO_STANDOUT and refused.finding is MEM_LEAD
    misfit = next(r for r in RULES if r.name == "names-the-standout").judge(Answer(case.answer, {}), question, ctx)
    assert misfit is not None
    opening = steer(misfit, question, case.evidence, list(case.bodies)).openings
    assert opening == ("the top consumer is cachehoard (pid 41) with 3.0 GiB (13 % of RAM), 40× the next",)
    for named in ("cachehoard (pid 41) is hogging the memory: 3.0 GiB, 40× the next.", "pid 41 holds 3.0 GiB."):
        assert judge_answer(named, {"culprit": "cachehoard"}, ctx).problem is None, named
    asked = read_question("is something eating my memory?")
    yes_no = replace(ctx, question=asked)
    assert asked.asks is Asks.YES_NO and judge_answer(case.answer, {}, yes_no).kind is Kind.NAMES_NO_STANDOUT
    assert steer(misfit, asked, case.evidence, list(case.bodies)).openings[0].startswith("Yes: the top consumer is")
    # left alone
    slow = read_question("why is my computer slow?")
    assert judge_answer("No problem found: the CPU is idle and no memory pressure.", {},
                        replace(ctx, question=slow)).kind is not Kind.NAMES_NO_STANDOUT
    plain = replace(ctx, evidence=Evidence((MEM_OK, CPU_OK), ("memory",)))
    assert judge_answer(case.answer, {}, plain).problem is None
    pressure = Finding("memory", WARNING, "memory pressure: 1 GiB of 23 GiB available; the top consumer is cachehoard "
                       "(pid 41) with 21 GiB", culprit="cachehoard", pid=41)
    assert judge_answer(case.answer, {}, replace(ctx, evidence=Evidence((pressure,), ("memory",)))).kind \
        is not Kind.NAMES_NO_STANDOUT
    for other in (Asks.AMOUNT, Asks.USER, Asks.FILE, Asks.FOLDER):
        relabelled = _question(case, other)
        assert judge_answer(case.answer, {}, _ctx(case, relabelled)).kind is not Kind.NAMES_NO_STANDOUT, other


def test_a_process_far_ahead_said_to_run_too_many_threads_agrees_with_the_ok_verdict():
    """The ok threads verdict judges no leak; naming its standout as running too many threads
    states what the ranking found, and is no contradiction. Another process said to do so is."""
    lead = Finding("threads", OK, "thread counts are normal: the most, 300, in threadfarm (pid 29), 15× the next; "
                   "435 threads on the machine", standout=Standout("threadfarm", 29, 300, 20))
    question = read_question("which app is running way too many threads")
    ctx = AnswerContext(question=question, evidence=Evidence((lead,), ("threads",)), bodies=[lead.line()],
                        tools_worked=True)
    assert judge_answer("threadfarm (pid 29) runs too many threads: 300, 15× the next.", {}, ctx).problem is None
    assert judge_answer("No problem found: thread counts are normal.", {}, ctx).kind is Kind.NAMES_NO_STANDOUT
    other = judge_answer("kworker runs too many threads.", {}, ctx)
    assert other.problem is not None


def test_standing_out_takes_the_floor_and_three_times_the_next():
    from appliance.analyzers.base import standout
    assert standout("a", 1, 300.0, [20.0, 5.0], 100) == Standout("a", 1, 300.0, 20.0)
    assert standout("a", 1, 300.0, [5.0, 20.0], 100).next_amount == 20.0  # the largest of the rest, in any order
    assert standout("a", 1, 300.0, [150.0], 100) is None  # 2x the next: a spread, not a lead
    assert standout("a", 1, 90.0, [1.0], 100) is None  # under the floor
    assert standout("a", 1, 300.0, [], 100).lead() == "no other process has any"
    assert standout("a", 1, 300.0, [0.0], 100).lead() == "no other process has any"
    assert standout("a", 1, 300.0, [20.0], 100).lead() == "15× the next"


def test_is_anything_running_too_many_is_answered_yes_with_the_process_far_ahead():
    """"Is anything running an absurd number of threads?" where one process runs 300 and the next
    20: not settled "no" (settled-no leaves it), a "yes" naming it agrees with the ok verdict, an
    all-clear is sent back, and the retry begins "Yes: " with the ranking's clause."""
    from appliance.agent.answer.steer import steer
    lead = Finding("threads", OK, "thread counts are normal: the most, 300, in threadfarm (pid 29), 15× the next; "
                   "435 threads on the machine", standout=Standout("threadfarm", 29, 300, 20))
    for text in ("is anything running an absurd number of threads?", "Is any process running too many threads?"):
        question = read_question(text)
        ctx = AnswerContext(question=question, evidence=Evidence((lead,), ("threads",)), bodies=[lead.line()],
                            tools_worked=True)
        assert judge_answer("Yes: threadfarm (pid 29) runs 300 threads, 15× the next.", {}, ctx).problem is None, text
        refused = judge_answer("No problem found: thread counts are normal.", {}, ctx)
        assert refused.kind is Kind.NAMES_NO_STANDOUT, (text, refused)
        opening = steer(refused.misfit, question, ctx.evidence, [lead.line()]).openings
        assert opening == ("Yes: the most, 300, in threadfarm (pid 29), 15× the next",), opening


def test_a_question_about_growth_is_not_sent_after_the_largest_memory_user():
    """"Which program keeps growing in memory?" asks about growth first; a process that merely
    holds the most memory is no answer to it, standing out or not."""
    growth_ok = Finding("memory_growth", OK, "no process's memory grows: the most, +0.0 MiB/s, in sesscache (pid 7)")
    question = read_question("which program keeps growing in memory?")
    assert question.families[0] == "memory_growth"
    ctx = AnswerContext(question=question, evidence=Evidence((growth_ok, MEM_LEAD), ("memory_growth", "memory")),
                        bodies=[growth_ok.line(), MEM_LEAD.line()], tools_worked=True)
    assert judge_answer("No problem found: no process's memory grows.", {}, ctx).kind is not Kind.NAMES_NO_STANDOUT
    eating = read_question("laptop got super sluggish, feels like something is eating memory")
    assert eating.families[0] != "memory"
    assert judge_answer("No problem found: no memory pressure.", {},
                        replace(ctx, question=eating, evidence=Evidence((MEM_LEAD, CPU_OK), eating.families))).kind \
        is Kind.NAMES_NO_STANDOUT


@pytest.mark.parametrize("answer, family", [
    ("The process 'python' with PID 9685 is hogging all the memory.", "memory"),
    ("The network is jammed up: fanout (pid 9935) holds the most connections.", "connections"),
    ("fanout (pid 9935) is hogging connections.", "connections"),
    ("kworker is hogging the CPU.", "cpu"),
])
def test_a_hog_is_a_claim_about_the_resource_hogged(answer, family):
    """"Hogging all the memory" claims memory's fault, not the CPU's: sent back with the memory
    verdict, not steered to the processor; with no resource named a hog is the CPU's."""
    conns = Finding("connections", OK, "connections are normal: 2 inbound to local listeners, 2 outbound; the most, 4, "
                    "in fanout (pid 9935)")
    evidence = Evidence((MEM_OK, CPU_OK, conns), ("memory", "cpu", "connections"))
    ctx = AnswerContext(question=read_question("what is wrong with this machine?"), evidence=evidence,
                        bodies=[f.line() for f in evidence.findings] + ["pid=9685 name=python memory=35.1 MiB"],
                        tools_worked=True)
    refused = judge_answer(answer, {}, ctx)
    assert refused.kind is Kind.CONTRADICTS and refused.finding is not None and refused.finding.family == family, refused
