"""A refused answer's retry: what it must begin with, and the grammar that makes it so.

What matters: the opening follows the kind of misfit and the verdicts (the culprit the check
found, the entry ranked first, the ok verdict the answer contradicted, the log's cause), never a
guess; a real model's output under the grammar begins with the opening and is still a valid
finish; and the judge accepts an all-clear that the verdicts back, without a fact of its own.
"""

from __future__ import annotations

import json

import pytest

from appliance.agent.answer.misfit import Kind, Misfit

from appliance.agent.actions import finish_input_schema, step_schema
from appliance.agent.answer.checks import check_answer
from appliance.agent.evidence import Evidence
from appliance.agent.answer.rules import AnswerContext, judge_answer
from appliance.agent.settings import EngineSettings
from appliance.agent.answer.openings import LOG_CAUSE
from appliance.agent.answer.steer import NO_PROBLEM, Steer, steer
from dataclasses import replace
from appliance.analyzers.base import CRITICAL, OK, WARNING, Finding
from appliance.llm.grammar import compile_schema
from appliance.llm.keywords import STARTS_WITH

CPU_OK = Finding("cpu", OK, "no CPU hog: the busiest process, kworker (pid 12), uses 2 % of one core; load 0.3 on 2 cores")
ZOMBIES = Finding("zombies", WARNING, "reaper (pid 4242) holds 5 zombie children", culprit="reaper", pid=4242)
ZOMBIES_OK = Finding("zombies", OK, "no zombie processes")
MEM_OK = Finding("memory", OK, "no memory pressure: 20 GiB of 23 GiB available; the top consumer is cachehog "
                               "(pid 999) with 3.1 GiB (13 % of RAM)")
FULL = Finding("filesystem_full", CRITICAL, "/srv/up is 100 % full: 0 B free", culprit="/srv/up", path="/srv/up")


def test_an_answer_contradicting_an_ok_verdict_of_its_topic_is_steered_to_the_verdict():
    evidence = Evidence(findings=(CPU_OK, ZOMBIES_OK), topics=("cpu",))
    problem = Misfit(Kind.CONTRADICTS, f"[contradicts-check: {CPU_OK.line()}]", CPU_OK)
    got = steer(problem, "why is my laptop so slow?", evidence, [])
    assert got == Steer(openings=(NO_PROBLEM + "no CPU hog",))


def test_a_contradiction_outside_the_question_topics_steers_nowhere():
    """'the disk is full' asked about inodes: the ok filesystem verdict is not the question's."""
    evidence = Evidence(findings=(CPU_OK,), topics=("inodes",))
    assert steer(Misfit(Kind.CONTRADICTS, f"[contradicts-check: {CPU_OK.line()}]", CPU_OK), "why can't I create files?", evidence, []) == Steer()


def test_a_refusal_for_another_reason_is_still_steered_when_the_answer_contradicts_an_ok_verdict():
    evidence = Evidence(findings=(CPU_OK,), topics=("cpu",))
    got = steer(Misfit(Kind.UNBACKED_FIELD, "[result.culprit='cpu' not-in-any-observation]"), "is something hogging the CPU?", evidence, [],
                answer="The CPU is pegged at 100 % by a hog.", result={"culprit": "cpu"})
    assert got.openings == (NO_PROBLEM + "no CPU hog",) and not got.culprits


def test_the_culprit_the_check_found_is_what_the_retry_names_and_begins_with():
    evidence = Evidence(findings=(CPU_OK, ZOMBIES), topics=("zombies",))
    got = steer(Misfit(Kind.MISSES_CULPRIT, f"[misses-the-check: {ZOMBIES.line()}]", ZOMBIES), "why are there defunct processes?", evidence, [])
    # the opening is what the check established about it, so the model cannot pin another fault on the name
    assert got == Steer(culprits=("reaper",), openings=("reaper (pid 4242) holds 5 zombie children",))


def test_the_opening_is_the_verdicts_clause_that_names_the_culprit_or_the_name_when_that_is_too_long():
    from appliance.agent.answer.steer import MAX_OPENING, statement

    hog = Finding("cpu", WARNING, "CPU hog: hashminer (pid 12) uses 99 % of one core (threshold 75 %); load 1.2 "
                                  "on 2 cores", culprit="hashminer", pid=12)
    # the head clause goes first when it is a headline the clause does not say ("CPU hog")
    assert statement(hog) == "CPU hog: hashminer (pid 12) uses 99 % of one core (threshold 75 %)"
    denied = Finding("permissions", WARNING, "permission denied: reportgen (pid 7), running as nobody (uid 65534), "
                                             "may not create files in /srv/out (drwxr-xr-x root:root: only root may "
                                             "create files in it); the log: «x»", culprit="/srv/out", path="/srv/out")
    assert statement(denied).endswith("(drwxr-xr-x root:root: only root may create files in it)")  # a colon in parentheses
    assert statement(denied).startswith("permission denied: reportgen (pid 7)")  # the words a person looks for
    long = Finding("deleted_open", CRITICAL, "x" * MAX_OPENING + " held by logd", culprit="logd")
    assert statement(long) == "logd"
    elsewhere = Finding("zombies", WARNING, "5 zombies; their parent is not shown", culprit="reaper")
    assert statement(elsewhere) == "reaper"
    # a verdict that lists who is affected after its statement: the name alone says nothing of the
    # fault, so the opening is the statement with the name
    listed = Finding("cgroup_limits", WARNING, "control group /g1 is throttled by its CPU quota of 0.05 CPU: 100 % of "
                     "its periods (482 ms held back); its programs wait: thumbjob (pid 17)", culprit="thumbjob", pid=17)
    assert statement(listed) == "control group /g1 is throttled by its CPU quota of 0.05 CPU: thumbjob (pid 17)"
    # a verdict shortened in the evidence, its aside cut: the clause still leads, without the aside
    far = "/tmp/appliance-x-17448-wjd683fi/srv/shop"
    cut = Finding("path_lookup", WARNING, f"{far}/current/config.yml does not exist: {far}/current is a link to "
                  f"{far}/releases/2024-06-01, which does not exist ({far}/releases has no entry 20… [26 more chars]",
                  culprit=f"{far}/current", path=f"{far}/current")
    assert statement(cut) == f"{far}/current is a link to {far}/releases/2024-06-01, which does not exist"


def test_words_after_a_no_problem_opening_that_claim_the_fault_again_or_copy_the_engine_go():
    from appliance.agent.rejection import rejection_message
    from appliance.agent.answer.steer import kept_after_opening

    guard = [rejection_message(Misfit(Kind.NO_FACT, "[no-observed-fact-named]").own_words)]
    opening = NO_PROBLEM + "not full"
    assert kept_after_opening(opening + ". The disk is 26% used, which is about to fill up.", [opening], guard) \
        == opening + "."
    assert kept_after_opening(opening + ". Next: finish again with a new answer in your own words that names a "
                              "process, path, number or error line.", [opening], guard) == opening + "."
    kept = opening + ", 12 % used of 16 MiB. Nothing there fills it."
    assert kept_after_opening(kept, [opening], guard) == kept
    # only after an opening the engine set: a model's own words are judged as they are
    assert kept_after_opening("The disk is full.", ["reaper"], guard) == "The disk is full."
    # words that name nothing observed go (the question asked back, a guess); a fact stays
    from appliance.agent.answer.fit import names_entity
    bodies = ["path=/srv/in/trace.log size=\"4.0 MiB\""]
    seen = lambda text: names_entity(text, bodies)  # noqa: E731
    names = NO_PROBLEM + "no program runs in unusual numbers"
    assert kept_after_opening(names + ". This is unusual and could indicate a spawn. Whose account is to blame?",
                              [names], guard, observed=seen) == names + "."
    assert kept_after_opening(names + ". The largest file is /srv/in/trace.log.", [names], guard, observed=seen) \
        == names + ". The largest file is /srv/in/trace.log."
    # the fault in either word order: "inodes are exhausted", "running out of inodes"
    inodes = NO_PROBLEM + "inodes fine"
    assert kept_after_opening(inodes + ". The filesystem at / is running out of inodes.", [inodes], guard) \
        == inodes + "."
    # the all-clear's own sentence continued into what was refused (a port nobody asked about) ends at
    # the opening, though the all-clear alone names nothing observed; other continuations stay
    from appliance.agent.answer.ports import unasked_port
    normal = NO_PROBLEM + "connections are normal"
    refused = lambda text: unasked_port(text, ()) is not None  # noqa: E731
    assert kept_after_opening(normal + " on port 2048.", [normal], guard, refused, seen) == normal + "."
    assert kept_after_opening(normal + ", 2 established.", [normal], guard, refused, lambda text: True) \
        == normal + ", 2 established."
    # … or into text copied from elsewhere (the prompt's examples)
    examples = ["battery: percent=12.0 plugged_in=no time_left=25m; the battery is at 12% and not plugged in, with about "
                "25 minutes left"]
    assert kept_after_opening(normal + ", battery is at 12% and not plugged in, with about 25 minutes left.", [normal],
                              examples, refused, seen) == normal + "."


def test_a_clause_after_a_culprit_opening_that_contradicts_a_verdict_goes():
    from appliance.agent.answer.agreement import check_agreement
    from appliance.agent.answer.steer import kept_after_opening

    space_ok = Finding("filesystem_full", OK, "no filesystem is full: the fullest, / (ext4) is 26 % used")
    inodes = Finding("inodes", CRITICAL, "/srv/php uses 100 % of its inodes, 0 of 512 free", culprit="/srv/php")

    def contradicts(text: str) -> bool:
        return check_agreement(text, {}, (space_ok, inodes), ()) is not None

    opening = "/srv/php uses 100 % of its inodes, 0 of 512 free"
    said = opening + ", which is why the root filesystem is full."
    assert kept_after_opening(said, [opening], [], contradicts) == opening + "."
    said = opening + ". The disk is full. New files need a free inode."
    assert kept_after_opening(said, [opening], [], contradicts) == opening + ". New files need a free inode."
    # what agrees with the verdicts stays, clause and sentence
    said = opening + ", so no new file can be created there. Free space does not help."
    assert kept_after_opening(said, [opening], [], contradicts) == said
    # the opening's sentence continued straight into the contradiction ends at the opening
    connections_ok = Finding("connections", OK, "connections are normal: 40 inbound, 40 outbound; the most, 80, "
                                                "in fanout (pid 7)")

    def against_connections(text: str) -> bool:
        return check_agreement(text, {}, (connections_ok,), ()) is not None

    ranked = "the most, 80, in fanout (pid 7)"
    said = ranked + " is opening tons of network connections, which floods the network. It started at 10:00."
    assert kept_after_opening(said, [ranked], [], against_connections) == ranked + ". It started at 10:00."
    assert kept_after_opening(ranked + " holds them to one server.", [ranked], [], against_connections) \
        == ranked + " holds them to one server."
    # without a verdict it contradicts, the same clause stays
    said = opening + ", which is why the root filesystem is full."
    assert kept_after_opening(said, [opening], [], lambda text: False) == said


def test_a_problem_at_the_place_the_question_names_wins_over_its_families():
    evidence = Evidence(findings=(CPU_OK, FULL), topics=("cpu",), places=(FULL,))
    got = steer(Misfit(Kind.NO_FACT, "[no-observed-fact-named]"), "why can't I upload to /srv/up?", evidence, [])
    assert got.openings == ("/srv/up is 100 % full",) and got.culprits == ("/srv/up",)


def test_a_retry_begins_with_the_gravest_problem_alone_and_equals_stay_choices():
    # the class: several problems of the part asked about; offered a critical and a warning as two
    # openings, the model copied both joined by "or"
    hoard = Finding("disk_usage", WARNING, "one entry takes most of the space: /srv/up/cache holds 98 % of /srv/up",
                    culprit="/srv/up/cache", path="/srv/up/cache")
    evidence = Evidence(findings=(FULL, hoard), topics=("filesystem_full", "disk_usage"), places=(FULL, hoard))
    got = steer(Misfit(Kind.NO_FACT, "[no-observed-fact-named]"), "uploads stopped working", evidence, [])
    assert got.openings == ("/srv/up is 100 % full",) and got.culprits == ("/srv/up", "/srv/up/cache")
    other = Finding("zombies", WARNING, "reaper2 (pid 4243) holds 3 zombie children", culprit="reaper2", pid=4243)
    evidence = Evidence(findings=(ZOMBIES, other), topics=("zombies",))
    got = steer(Misfit(Kind.NO_FACT, "[no-observed-fact-named]"), "why are there defunct processes?", evidence, [])
    assert len(got.openings) == 2


def test_a_which_question_is_steered_to_what_the_observation_ranks_first():
    bodies = ["headline: largest: /data/videos 3.1 GiB\nentries: ..."]
    evidence = Evidence(findings=(CPU_OK,), topics=("disk_usage",))
    got = steer(Misfit(Kind.NOT_FIRST, "[not-the-first: the observation ranks first: headline: largest: /data/videos 3.1 GiB]"),
                "which folder under /data is the biggest?", evidence, bodies)
    assert got == Steer(culprits=("/data/videos",), openings=("/data/videos",))


def test_a_which_question_without_a_ranking_uses_the_process_its_verdict_names():
    evidence = Evidence(findings=(MEM_OK,), topics=("memory",))
    got = steer(Misfit(Kind.SELF, "[names-the-appliance-itself: the assistant is never the answer]"),
                "which process uses the most memory?", evidence, [])
    assert got.openings == ("the top consumer is cachehog (pid 999) with 3.1 GiB (13 % of RAM)",)
    assert got.culprits == ("cachehog",)


def test_a_log_answer_that_did_not_quote_the_cause_begins_with_the_log():
    evidence = Evidence(findings=(CPU_OK,), topics=("log_errors",))
    got = steer(Misfit(Kind.LOG_NOT_QUOTED, "[log-errors-not-quoted: the log shows: ERROR db: connection refused]"), "why does app fail?",
                evidence, [], log_errors=["2026-12-01 ERROR db: connection refused"])
    assert got == Steer(openings=(LOG_CAUSE + "«ERROR db: connection refused»",))
    # the cause line the log's verdict quotes, first and without its timestamp
    verdict = Finding("log_errors", WARNING, "/srv/app.log: 2 error lines in the newest run (2 in 122 lines scanned); it "
                      "starts with: «2026-12-03 06:20:44 ERROR db: cannot connect to postgres at 127.0.0.1:35021: "
                      "[Errno 111] Connection refused»", path="/srv/app.log")
    place = Evidence(findings=(verdict,), topics=("log_errors",), places=(verdict,))
    got = steer(Misfit(Kind.LOG_NOT_QUOTED, "[log-errors-not-quoted: the log shows: count=2]"), "What is wrong?", place, [],
                log_errors=['count=2 example="2026-12-03 06:20:45 ERROR db: cannot connect to postgres at 127.0.0.1:35021"'])
    assert got.openings == (LOG_CAUSE + "«ERROR db: cannot connect to postgres at 127.0.0.1:35021: [Errno 111] "
                            "Connection refused»",)
    # with no verdict, an observation's example line
    got = steer(Misfit(Kind.LOG_NOT_QUOTED, "[log-errors-not-quoted: the log shows: count=2]"), "What is wrong?", evidence, [],
                log_errors=['count=2 example="2026-12-03 06:20:45 ERROR db: cannot connect to postgres"'])
    assert got.openings == (LOG_CAUSE + "«ERROR db: cannot connect to postgres»",)


def test_an_invented_fact_with_no_verdict_to_name_is_sent_back_unsteered():
    evidence = Evidence(findings=(CPU_OK,), topics=("connections",))
    assert steer(Misfit(Kind.UNBACKED_PATH, "[answer-path '/x/y' not-in-any-observation]"), "what is talking to the internet?",
                 evidence, []) == Steer()


def test_the_finish_schema_carries_the_openings_and_the_grammar_admits_only_them():
    settings = EngineSettings()
    schema = finish_input_schema(settings, ("reaper",), ("reaper",))
    assert schema["properties"]["answer"][STARTS_WITH] == ["reaper"]
    assert list(schema["properties"])[:2] == ["result", "answer"]  # settled culprit first
    gbnf = compile_schema(step_schema([], settings, tools=False, ask=False, openings=('say "x" \\ ok',))).gbnf
    assert '("say \\\\\\"x\\\\\\" \\\\\\\\ ok")' in gbnf  # JSON-escaped, then GBNF-escaped


@pytest.mark.model
def test_a_real_model_under_the_grammar_begins_its_answer_with_the_opening(smollm2_path):
    """SmolLM2 on the real grammar path: an opening with quotes and non-ASCII starts the answer of
    a finish that still parses and validates (the escaping is what can go wrong)."""
    from appliance.llm.base import Message, ModelInfo
    from appliance.llm.chat_model import LlamaChatModel
    from appliance.llm.runtime import load_llama

    settings = EngineSettings(answer_max_chars=60, thought_max_chars=40, evidence_max_chars=30, result_max_chars=20)
    llama = load_llama(smollm2_path, n_ctx=2048, n_threads=2)
    try:
        model = LlamaChatModel(llama, ModelInfo(name="smollm2"), decoder="fast")
        messages = [Message("system", "Reply with one JSON object."),
                    Message("user", "Is the CPU busy? The check said: no CPU hog, load 0.3.")]
        for opening in ('Le journal dit: "refusé" \\',):
            schema = step_schema([], settings, tools=False, ask=False, openings=(opening,))
            gen = model.generate(messages, schema, max_tokens=400)
            step = json.loads(gen.text)
            assert step["action"] == "finish"
            assert step["action_input"]["answer"].startswith(opening), gen.text
            assert len(step["action_input"]["answer"]) <= settings.answer_max_chars
    finally:
        llama.close()


def test_a_culprit_that_names_nobody_is_no_culprit():
    bodies = ["[ok] restarts: no process is restarting (9 new processes/s while watched 1.2 s)"]
    verdict = check_answer("There are no connections, so no process is flooding the network.",
                           {"culprit": "no process", "value": "no connections"}, bodies, tools_worked=True)
    assert "culprit" not in verdict.result
    assert not (verdict.problem or "").startswith("[result.culprit")


def test_an_all_clear_backed_by_clear_verdicts_needs_no_fact_of_its_own():
    restarts_ok = Finding("restarts", OK, "no process is restarting (9 new processes/s while watched 1.2 s)")
    evidence = Evidence(findings=(restarts_ok, CPU_OK), topics=("restarts",))
    ctx = AnswerContext(question="is some service crash-looping?", evidence=evidence, bodies=[restarts_ok.line()],
                        tools_worked=True)
    assert judge_answer("There are no crash-looping processes.", {}, ctx).problem is None
    # the same answer beside a problem of its topic is refused: the verdicts do not back it
    failing = Finding("restarts", WARNING, "flakyd (pid 77) restarted 5 times in 1.5 s", culprit="flakyd", pid=77)
    ctx_bad = AnswerContext(question="is some service crash-looping?", bodies=[failing.line()], tools_worked=True,
                            evidence=Evidence(findings=(failing,), topics=("restarts",)))
    assert judge_answer("There are no crash-looping processes.", {}, ctx_bad).problem is not None


def test_an_all_clear_answers_a_question_of_fact_only_with_the_fact():
    listening = Finding("listening", OK, "1 listening ports: tcp 2024 sshd")
    ctx = AnswerContext(question="is anything listening on port 4242?", bodies=[listening.line()], tools_worked=True,
                        evidence=Evidence(findings=(listening,), topics=("listening",)))
    assert judge_answer("all fine", {}, ctx).problem == "[no-observed-fact-named]"


PLACE_OK = Finding("filesystem_full", OK, "not full: /srv/up is on /srv/up (tmpfs): 12 % used, 14.0 MiB free of 16.0 MiB",
                   {"used_percent": 12.0, "mount": "/srv/up"})


def test_a_yes_about_a_place_the_checks_judged_fine_goes_back_and_is_steered_to_its_verdict():
    question = "is /srv/up about to fill up?"
    evidence = Evidence(findings=(PLACE_OK, CPU_OK), topics=("filesystem_full",), places=(PLACE_OK,))
    ctx = AnswerContext(question=question, evidence=evidence, bodies=[PLACE_OK.line()], tools_worked=True)
    verdict = judge_answer("The /srv/up directory is about to fill up.", {}, ctx)
    assert verdict.problem == f"[contradicts-check: {PLACE_OK.line()}]"
    assert steer(verdict.misfit, question, evidence, []).openings == (NO_PROBLEM + "not full",)
    # the right answer passes: a no, with the place's numbers
    assert judge_answer("No, /srv/up is 12 % used with 14.0 MiB free.", {}, ctx).problem is None
    assert judge_answer("/srv/up is not about to fill up: 12 % used.", {}, ctx).problem is None


def test_a_which_question_about_a_named_folder_is_answered_with_an_entry_under_it():
    from appliance.agent.evidence import Look

    body = ("headline: largest: /srv/projects/render-farm 48.0 MiB (96.2%)\npath=/srv/projects total=\"49.9 MiB\"\n"
            "  path=/srv/projects/docs-site type=dir size=\"688.0 KiB\"")
    look = Look("/srv/projects", "dir_sizes", {"path": "/srv/projects"}, {"status": "ok"})
    disk = Finding("filesystem_full", OK, "no filesystem is full: the fullest, / (ext4) is 25 % used")
    evidence = Evidence(findings=(disk,), topics=("filesystem_full",), looks=(look,))
    question = "Does any one folder under /srv/projects take much more space than the others? If so, which?"
    usage = "headline: fullest: / 25.4% used, 75.7 GiB free\nfilesystems: mount=/ device=/dev/vda type=ext4"
    ctx = AnswerContext(question=question, evidence=evidence, bodies=[disk.line(), body, usage], tools_worked=True)
    problem = judge_answer("The / filesystem is the fullest, at 25.4% used.", {"culprit": "filesystem", "value": "/"},
                           ctx).problem
    assert problem is not None and problem.startswith("[not-under-the-place: the question asks about /srv/projects")
    assert judge_answer("Yes: render-farm, 48.0 MiB of the 49.9 MiB.", {}, ctx).problem is None
    assert judge_answer("/srv/projects/render-farm holds 96.2% of it.", {}, ctx).problem is None
    assert judge_answer("No folder stands out; / is 25.4% used.", {}, ctx).problem is None  # a no needs no entry


def test_an_answer_that_claims_nothing_to_what_is_wrong_goes_back_steered_to_the_verdict():
    """'is something slowing my computer down?' answered 'the network interfaces are up' when the
    checks found nothing wrong: neither an all-clear nor a fault, so not an answer."""
    question = "is something slowing my computer down?"
    evidence = Evidence(findings=(CPU_OK, MEM_OK), topics=("cpu", "memory"))
    ctx = AnswerContext(question=question, evidence=evidence, tools_worked=True,
                        bodies=[CPU_OK.line(), "interfaces: interface=eth0 up=yes"])
    answer = "The network interfaces are up and running: eth0 up=yes."
    verdict = judge_answer(answer, {"culprit": "network interfaces"}, ctx)
    assert verdict.problem is not None and verdict.problem.startswith("[claims-no-fault")
    assert steer(verdict.misfit, question, evidence, []).openings == (NO_PROBLEM + "no CPU hog",)
    assert judge_answer("Nothing is slowing it down: no CPU hog, kworker (pid 12) uses 2 % of one core.",
                        {}, ctx).problem is None
    # with a problem in its families the rule does not apply (the culprit rules do)
    hot = Finding("cpu", WARNING, "CPU hog: miner (pid 77) uses 190 % of one core", culprit="miner", pid=77)
    ctx_hot = AnswerContext(question=question, evidence=Evidence(findings=(hot,), topics=("cpu",)),
                            tools_worked=True, bodies=[hot.line()])
    assert not (judge_answer("miner (pid 77) uses 190 % of one core.", {}, ctx_hot).problem or "").startswith(
        "[claims-no-fault")


def test_a_reported_symptom_asked_as_which_is_answered_by_the_top_of_its_ranking():
    """'something is opening tons of connections, what is it?' where the check finds the counts
    normal but its ranking puts one process far ahead: that process is the answer (the engine's
    own steered opening names it); another process, or none, is not. Where none stands out, the
    top of the ranking is no answer either: nothing is wrong."""
    from appliance.analyzers.base import Standout
    question = "something is opening tons of network connections, what is it?"
    conns = Finding("connections", OK, "connection counts are normal: the most, 80, in fanout-71ed (pid 8804), 20× the "
                                       "next; 40 inbound to local listeners, 40 outbound",
                    standout=Standout("fanout-71ed", 8804, 80, 4))
    evidence = Evidence(findings=(conns, CPU_OK), topics=("connections",))
    ctx = AnswerContext(question=question, evidence=evidence, tools_worked=True,
                        bodies=[conns.line(), CPU_OK.line()])
    assert judge_answer("the most, 80, in fanout-71ed (pid 8804).", {"culprit": "fanout-71ed"}, ctx).problem is None
    assert judge_answer("kdamond uses 2 % of one core.", {}, ctx).problem is not None
    assert judge_answer("No problem found: connection counts are normal.", {}, ctx).problem is not None
    quiet = Finding("connections", OK, "connection counts are normal: the most, 4, in fanout-71ed (pid 8804); "
                                       "2 inbound to local listeners, 2 outbound")
    calm = AnswerContext(question=question, evidence=Evidence(findings=(quiet, CPU_OK), topics=("connections",)),
                         tools_worked=True, bodies=[quiet.line(), CPU_OK.line()])
    assert judge_answer("the most, 4, in fanout-71ed (pid 8804).", {}, calm).kind is Kind.CLAIMS_NO_FAULT
    assert judge_answer("No problem found: connection counts are normal.", {}, calm).problem is None


def test_a_retry_resting_on_a_contradicted_ok_verdict_is_steered_to_the_standout_the_rules_ask_for():
    """The class: an answer contradicting an ok verdict of its part ("bash runs in unusual numbers")
    where another ok verdict of the part puts one process far ahead. Steered to "No problem found: …",
    the retry was refused for not naming the standout; the steering follows the rule that judges it.
    Left alone: no standout (the all-clear), a problem in the part (its culprit)."""
    from appliance.analyzers.base import Standout
    from appliance.agent.question.question import read_question
    threads = Finding("threads", OK, "thread counts are normal: the most, 302, in threadfarm (pid 29), 19× the next",
                      standout=Standout("threadfarm", 29, 302, 16))
    names = Finding("process_names", OK, "no program runs in unusual numbers: the most common name is 3 processes "
                                         "named bash")
    question = read_question("something here is spawning a ton of threads i think. can u check")
    contradicts = Misfit(Kind.CONTRADICTS, "[contradicts-check: …]", names)
    got = steer(contradicts, question, Evidence(findings=(threads, names), topics=("threads", "process_names")), [])
    assert got.culprits == ("threadfarm",) and "threadfarm (pid 29)" in got.openings[0]
    plain = Finding("threads", OK, "thread counts are normal: the most, 20, in threadfarm (pid 29)")
    got = steer(contradicts, question, Evidence(findings=(plain, names), topics=("threads", "process_names")), [])
    assert got.openings == (NO_PROBLEM + "no program runs in unusual numbers",)


def test_a_yes_no_question_whose_verdict_is_ok_is_answered_no_not_with_the_top_entry():
    question = "Is any process using an unusual amount of memory? If so, which?"
    evidence = Evidence(findings=(MEM_OK,), topics=("memory",))
    ctx = AnswerContext(question=question, evidence=evidence, tools_worked=True,
                        bodies=[MEM_OK.line(), 'top: pid=999 name=cachehog memory="3.1 GiB"'])
    refused = judge_answer("The top process using the most memory is cachehog, 3.1 GiB.", {"culprit": "cachehog"}, ctx)
    assert refused.problem == f"[say-yes-or-no: {MEM_OK.line()}]"
    assert steer(refused.misfit, question, evidence, []).openings == (NO_PROBLEM + "no memory pressure",)
    verdict = judge_answer("No: no memory pressure; the top consumer, cachehog, has 3.1 GiB.", {"culprit": "cachehog"}, ctx)
    assert verdict.problem is None and "culprit" not in verdict.result  # a no keeps no culprit


def test_an_unsteered_retry_is_sampled_and_every_other_step_is_greedy():
    """Greedy decoding from nearly the same context writes a refused answer again word for word;
    the one step after a refusal that settled no opening samples (with the sampler's fixed seed)."""
    from appliance.agent import events as ev
    from appliance.agent.engine import Engine
    from appliance.llm.fake import ScriptedModel
    from appliance.tools.base import Registry

    class Recording(ScriptedModel):
        temperatures: list[float] = []

        def generate(self, messages, schema, *, max_tokens, temperature=0.0, **kw):
            self.temperatures.append(temperature)
            return super().generate(messages, schema, max_tokens=max_tokens, temperature=temperature, **kw)

    invented = {"thought": "t", "action": "finish",
                "action_input": {"answer": "The file /nowhere/at/all is to blame.", "result": {}, "evidence": []}}
    fixed = {"thought": "t", "action": "finish",
             "action_input": {"answer": "load=0.3 on 2 cores: no CPU hog.", "result": {}, "evidence": []}}
    model = Recording([invented, fixed])
    settings = EngineSettings(reflection=False, question_reader="words")  # the steps' calls only
    engine = Engine(model, Registry([]), settings, snapshot=lambda pids: {"load": "load=0.3 on 2 cores"})
    events = list(engine.run("what is the load?"))
    assert any(isinstance(e, ev.AnswerRejected) for e in events)
    assert model.temperatures == [0.0, settings.retry_temperature]


def test_a_yes_no_question_is_answered_yes_or_no_and_its_retry_must_begin_so():
    from appliance.agent.answer.fit import SAY_YES_OR_NO

    question = "Is any process close to its limit of open files? If so, which?"
    fds_ok = Finding("open_files", OK, "no process is near its open-file limit: the most open files, 253, are held "
                                       "by process_api (pid 1) (limit 32768)")
    evidence = Evidence(findings=(fds_ok,), topics=("open_files",))
    ctx = AnswerContext(question=question, evidence=evidence, tools_worked=True,
                        bodies=[fds_ok.line(), "pid=1 name=process_api status=sleeping"])
    problem = judge_answer("The process_api process is sleeping.", {}, ctx).problem
    assert problem is not None and problem.startswith("[say-yes-or-no")
    assert judge_answer("No: the most open files, 253, are held by process_api (limit 32768).", {}, ctx).problem is None
    # without a verdict of its own family the form is settled, not the answer: Yes or No
    plain = Evidence(findings=(CPU_OK,), topics=())
    ctx_plain = AnswerContext(question="Does the backup folder hold more than last week?", evidence=plain,
                              tools_worked=True, bodies=["path=/srv/backup total=\"3.1 GiB\""])
    assert judge_answer("The backup folder holds 3.1 GiB.", {}, ctx_plain).problem == SAY_YES_OR_NO
    assert steer(Misfit(Kind.SAY_YES_OR_NO, SAY_YES_OR_NO), "Does the backup folder hold more?", plain, []).openings == ("Yes", "No")


def test_a_which_answer_naming_the_culprit_a_verdict_names_in_prose_names_a_thing():
    flaky = Finding("restarts", WARNING, "flakyd-c15c is restarting: started 2 times in 1.5 s by minisuper-5950",
                    culprit="flakyd-c15c")
    ctx = AnswerContext(question="something keeps starting and dying over and over, can you find it?",
                        evidence=Evidence(findings=(flaky,), topics=("restarts",)), tools_worked=True,
                        bodies=[flaky.line(), "headline: top cpu: pid=15 name=rcu_preempt 0.5% cpu"])
    assert judge_answer("flakyd-c15c is restarting frequently.", {"culprit": "flakyd-c15c"}, ctx).problem is None


def test_a_claim_of_log_errors_against_a_clean_named_log_goes_back_steered_to_its_verdict():
    clean_log = Finding("log_errors", OK, "/srv/backup/weekly.log: no error lines in its last 48 lines", {},
                        path="/srv/backup/weekly.log")
    question = "Did the job whose log is /srv/backup/weekly.log report any errors? If so, which?"
    evidence = Evidence(findings=(clean_log,), topics=("log_errors",), places=(clean_log,))
    ctx = AnswerContext(question=question, evidence=evidence, tools_worked=True,
                        bodies=[clean_log.line(), "2024-05-14 02:22:33 DEBUG queue: cache hit ratio 0.366"])
    verdict = judge_answer("The log file shows errors: DEBUG queue: cache hit ratio 0.366.", {}, ctx)
    assert verdict.problem == f"[contradicts-check: {clean_log.line()}]"
    opening = NO_PROBLEM + "/srv/backup/weekly.log: no error lines in its last 48 lines"  # the place and its statement
    assert steer(verdict.misfit, question, evidence, []).openings == (opening,)
    assert judge_answer("No: the log shows no errors; its last line is DEBUG queue: cache hit ratio 0.366.", {},
                        ctx).problem is None
    # the retry begins with the opening but keeps the refused answer's fields: they claim what it denies
    retried = judge_answer(opening + ".", {"culprit": "backup job", "value": "logs contain errors"}, ctx)
    assert retried.problem is None and set(retried.dropped) >= {"culprit", "value"}


def test_a_settled_culprit_longer_than_a_free_one_is_a_valid_finish_under_its_grammar():
    """A verdict's culprit may be a path longer than the free culprit field allows; the retry the
    grammar made name it is checked against that grammar's schema, not refused as too long."""
    from appliance.agent import events as ev
    from appliance.agent.actions import Step, check_reserved
    from appliance.agent.engine import Engine
    from appliance.llm.fake import ScriptedModel
    from appliance.tools.base import Registry

    settings = EngineSettings(reflection=False)
    folder = "/srv/reports/" + "daily-exports-of-the-regional-billing-department" * 2
    assert len(folder) > settings.result_max_chars
    step = Step("t", "finish", {"answer": f"{folder} is not writable.", "result": {"culprit": folder}, "evidence": []})
    assert "at most" in (check_reserved(step, settings) or "")
    assert check_reserved(step, settings, culprits=(folder,)) is None

    denied = Finding("permissions", WARNING, f"permission denied: reportgen may not create files in {folder}",
                     culprit=folder, path=folder)
    evidence = Evidence(findings=(denied,), topics=("log_errors",), places=(denied,))

    class Fixed:
        def gather(self, question, self_pids):
            return evidence

    missed = {"thought": "t", "action": "finish",
              "action_input": {"answer": "The generator is broken.", "result": {}, "evidence": []}}
    named = {"thought": "t", "action": "finish",
             "action_input": {"result": {"culprit": folder}, "answer": f"{folder}: permission denied for reportgen.",
                              "evidence": []}}
    engine = Engine(ScriptedModel([missed, named]), Registry([]), settings,
                    snapshot=lambda pids: {"load": "load=0.3 on 2 cores"}, evidence=Fixed())
    events = list(engine.run("Why are no reports being written?"))
    final = [e for e in events if isinstance(e, ev.FinalAnswer)]
    assert any(isinstance(e, ev.AnswerRejected) for e in events)
    assert not any("invalid finish" in str(getattr(e, "evaluation", "")) for e in events)
    assert final and not final[0].forced and folder in final[0].answer


def test_a_word_cut_at_the_answers_length_bound_is_no_claim_and_is_not_shown():
    from appliance.agent import events as ev
    from appliance.agent.engine import Engine
    from appliance.llm.fake import ScriptedModel
    from appliance.tools.base import Registry

    settings = EngineSettings(reflection=False, answer_max_chars=90)
    shown = "load=0.3 on 2 cores; disk /srv/reports/daily-exports is fine"
    # the grammar stopped the answer at 90 characters, in the middle of a path
    answer = ("The load is 0.3 on 2 cores, so nothing is slow; the reports go to /srv/reports/di" + "x" * 90)[:90]
    cut = {"thought": "t", "action": "finish", "action_input": {"answer": answer, "result": {}, "evidence": []}}
    engine = Engine(ScriptedModel([cut]), Registry([]), settings, snapshot=lambda pids: {"load": shown})
    events = list(engine.run("is the machine slow?"))
    final = [e for e in events if isinstance(e, ev.FinalAnswer)]
    assert not any(isinstance(e, ev.AnswerRejected) for e in events)
    assert final and final[0].answer.endswith("…") and "/srv/reports/di" not in final[0].answer
    assert final[0].answer.startswith("The load is 0.3 on 2 cores")


def test_with_nothing_settled_a_yes_no_questions_retry_begins_yes_or_no_unless_the_refused_answer_did():
    question = "Is anything listening on port 37359?"
    copied = "The battery is at 12% and not plugged in, with about 25 minutes left."
    assert steer(Misfit(Kind.COPIED, "[copied-text: not from this machine]"), question, Evidence(), [], answer=copied).openings \
        == ("Yes", "No")
    assert steer(Misfit(Kind.COPIED, "[copied-text: not from this machine]"), question, Evidence(), [],
                 answer="No, the battery is at 12%.").openings == ()
    assert steer(Misfit(Kind.COPIED, "[copied-text: not from this machine]"), "what is using port 37359?", Evidence(), [],
                 answer=copied).openings == ()


def test_a_yes_no_retry_where_every_check_of_the_place_is_fine_begins_with_their_verdict():
    """"Is anything wrong with the billing app in /opt/billing?" answered "it is connected to the
    database": where the checks judged the place fine, the retry says so; with a problem there,
    or an answer that claims a fault, the form alone is settled."""
    from appliance.agent.answer.fit import SAY_YES_OR_NO

    question = "Is anything wrong with the billing app in /opt/billing?"
    space = Finding("filesystem_full", OK, "not full: /opt/billing is on / (ext4): 23 % used, 77.9 GiB free",
                    {"used_percent": 23.0, "mount": "/"}, path="/opt/billing")
    logs = Finding("log_errors", OK, "no errors: /opt/billing/logs/billing.log: 0 errors in its last 40 lines",
                   path="/opt/billing/logs/billing.log")
    fine = Evidence(findings=(space, logs), topics=("log_errors",), places=(space, logs))
    said = "The billing app is mentioned in the log, and it is connected to the database."
    assert steer(Misfit(Kind.SAY_YES_OR_NO, SAY_YES_OR_NO), question, fine, [], answer=said).openings == (NO_PROBLEM + "no errors",)
    assert steer(Misfit(Kind.SAY_YES_OR_NO, SAY_YES_OR_NO), question, fine, [], answer="The billing log shows errors.").openings == ("Yes", "No")
    broken = replace(logs, severity=WARNING, verdict="errors: /opt/billing/logs/billing.log: 3 errors", culprit="billing")
    bad = Evidence(findings=(space, broken), topics=("log_errors",), places=(space, broken))
    assert steer(Misfit(Kind.SAY_YES_OR_NO, SAY_YES_OR_NO), question, bad, [], answer=said).openings != (NO_PROBLEM + "no errors",)


def test_an_if_so_which_question_the_checks_answered_no_is_not_steered_to_the_top_entry():
    """"Is any deleted file still holding space on /srv/spool? If so, which process holds it?"
    where the checks found none: the retry begins with their verdict, not with the process their
    ranking happens to put first (a shell holding a 4 KiB deleted file elsewhere)."""
    question = "Is any deleted file still holding space on /srv/spool? If so, which process holds it?"
    space = Finding("filesystem_full", OK, "not full: /srv/spool is on / (ext4): 23 % used, 77.9 GiB free",
                    {"used_percent": 23.0, "mount": "/"}, path="/srv/spool")
    held = Finding("deleted_open", OK, "no space held by deleted files worth noting: the biggest, 4.0 KiB, in "
                                       "bash (pid 2178)")
    evidence = Evidence(findings=(space, held), topics=("deleted_open",), places=(space,))
    got = steer(Misfit(Kind.OUTSIDE_PLACE, "[not-under-the-place: the question asks about /srv/spool; name the entry under it]"), question,
                evidence, [held.line()], answer="The process 'bash' is sleeping.")
    assert got.openings and got.openings[0].startswith(NO_PROBLEM) and "bash" not in got.openings[0], got


def test_a_retry_steered_to_no_problem_keeps_none_of_the_refused_answers_fields():
    """Its result was written before the refusal (a culprit, the share of another place): the
    steered all-clear rests on the verdict it begins with, and those fields go."""
    from appliance.agent import events as ev
    from appliance.agent.engine import Engine
    from appliance.llm.fake import ScriptedModel
    from appliance.tools.base import Registry

    place = Finding("filesystem_full", OK, "not full: /srv/projects is on / (ext4): 26 % used, 75.6 GiB free",
                    {"used_percent": 26.0, "mount": "/"}, path="/srv/projects")
    ranking = Finding("disk_usage", OK, "no entry dominates: the largest under /srv/projects, docs, holds 25.6 %",
                      path="/srv/projects")
    evidence = Evidence(findings=(place, ranking), topics=("disk_usage", "filesystem_full"), places=(place, ranking))

    class Fixed:
        def gather(self, question, self_pids):
            return evidence

    stale = {"culprit": "filesystem", "value": "100.0% used"}
    other = {"thought": "t", "action": "finish",
             "action_input": {"answer": "Yes: /mnt/other is 100.0% used.", "result": stale, "evidence": []}}
    opening = NO_PROBLEM + "no entry dominates"
    steered = {"thought": "t", "action": "finish",
               "action_input": {"answer": opening + " under /srv/projects.", "result": stale, "evidence": []}}
    engine = Engine(ScriptedModel([other, steered]), Registry([]), EngineSettings(reflection=False),
                    snapshot=lambda pids: {"load": "load=0.3 on 2 cores"}, evidence=Fixed())
    events = list(engine.run("Does any one folder under /srv/projects take much more space than the others?"))
    rejected = [e for e in events if isinstance(e, ev.AnswerRejected)]
    final = [e for e in events if isinstance(e, ev.FinalAnswer)]
    assert rejected and final and not final[0].forced, [getattr(e, "reason", "") for e in rejected]
    assert final[0].answer.startswith(opening) and final[0].result == {}


def test_a_steered_all_clear_that_repeats_the_refused_claim_keeps_the_verdict_not_the_claim():
    """The retry begins with the engine's "No problem found: not full" and then writes the refused
    answer again: the claim goes, the all-clear stands (before, the run ended in a forced answer)."""
    from appliance.agent import events as ev
    from appliance.agent.engine import Engine
    from appliance.llm.fake import ScriptedModel
    from appliance.tools.base import Registry

    place = Finding("filesystem_full", OK, "not full: /srv/up is on /srv/up (tmpfs): 12 % used, 14.0 MiB free",
                    {"used_percent": 12.0, "mount": "/srv/up"}, path="/srv/up")
    evidence = Evidence(findings=(place,), topics=("filesystem_full",), places=(place,))

    class Fixed:
        def gather(self, question, self_pids):
            return evidence

    claim = "The disk is 26% used, which is about to fill up."
    first = {"thought": "t", "action": "finish",
             "action_input": {"answer": claim, "result": {"value": "26%"}, "evidence": []}}
    opening = NO_PROBLEM + "not full"
    again = {"thought": "t", "action": "finish",
             "action_input": {"answer": f"{opening}. {claim}", "result": {"value": "26%"}, "evidence": []}}
    engine = Engine(ScriptedModel([first, again]), Registry([]), EngineSettings(reflection=False),
                    snapshot=lambda pids: {"load": "load=0.3 on 2 cores"}, evidence=Fixed())
    events = list(engine.run("My uploads to /srv/up keep failing; is the disk about to fill up?"))
    final = [e for e in events if isinstance(e, ev.FinalAnswer)]
    assert final and not final[0].forced and final[0].answer == opening + ".", final
    step = [e for e in events if isinstance(e, ev.StepRecorded)][-1]
    assert "the answer's words after the opening" in step.evaluation


def test_a_retry_naming_a_real_path_is_no_copy_of_the_label_that_quoted_a_wrong_one():
    """The label "[answer-path '/srv/reports/di' …]" quotes the refused answer; its words are not
    the engine's, so a retry that names /srv/reports/daily-exports (which the run saw) stands."""
    from appliance.agent import events as ev
    from appliance.agent.engine import Engine
    from appliance.agent.answer.checks import check_answer
    from appliance.llm.fake import ScriptedModel
    from appliance.tools.base import Registry

    refused = check_answer("Writes to /srv/reports/dinner fail.", {}, ["/srv/reports/daily-exports"], tools_worked=True)
    assert refused.misfit is not None and "/srv/reports/dinner" in refused.misfit.reason
    assert "/srv/reports" not in refused.misfit.own_words  # what the answer wrote is not the engine's words
    seen = "ERROR reportgen: [Errno 13] Permission denied: '/srv/reports/daily-exports/daily-000.csv'"
    wrong = {"thought": "t", "action": "finish", "action_input": {
        "answer": "Writes to /srv/reports/dinner fail: permission denied.", "result": {}, "evidence": []}}
    right = {"thought": "t", "action": "finish", "action_input": {
        "answer": "Writes to /srv/reports/daily-exports fail: permission denied (Errno 13).", "result": {},
        "evidence": []}}
    log = Finding("log_errors", WARNING, f"/var/log/reportgen.log: 1 error line; it starts with: «{seen}»",
                  culprit="/var/log/reportgen.log", path="/var/log/reportgen.log")

    class Fixed:
        def gather(self, question, self_pids):
            return Evidence(findings=(log,), topics=("log_errors",), places=(log,))

    engine = Engine(ScriptedModel([wrong, right]), Registry([]), EngineSettings(reflection=False),
                    snapshot=lambda pids: {"load": "load=0.3 on 2 cores"}, evidence=Fixed())
    events = list(engine.run("The report generator logs to /var/log/reportgen.log. Why are no reports written?"))
    rejected = [e.reason for e in events if isinstance(e, ev.AnswerRejected)]
    final = [e for e in events if isinstance(e, ev.FinalAnswer)]
    assert rejected and rejected[0].startswith("[answer-path")
    assert final and not final[0].forced and "daily-exports" in final[0].answer


def test_a_refused_answer_to_how_long_begins_with_its_familys_verdict():
    from appliance.agent.answer.steer import topic_fact

    uptime = Finding("uptime", OK, "up 16 h 9 min since 2026-12-01 10:29; no boot history recorded")
    evidence = Evidence(findings=(MEM_OK, uptime), topics=("uptime",))
    got = steer(Misfit(Kind.SELF, "[names-the-appliance-itself: the assistant is never the answer]"), "how long since the last reboot?",
                evidence, [])
    assert got == Steer(openings=(uptime.verdict,))
    # not for other forms, and a long verdict gives its first clause with a number
    assert topic_fact("why did it reboot?", evidence) is None
    long = Finding("uptime", OK, "booted long ago: " + "x" * 200 + "; up 3 days 2 h")
    assert topic_fact("how long has it been up?", Evidence(findings=(long,), topics=("uptime",))) == "up 3 days 2 h"


def test_a_problem_whose_naming_clause_is_a_bare_log_path_is_steered_to_the_line_its_verdict_quotes():
    """Class: problems whose verdict names a log by its path alone in the clause that names it and
    quotes the line it rests on. Whatever the misfit, the retry begins with the log and that line
    ("/srv/app/app.log shows: «…»"), not the bare path. A problem whose naming clause says what is wrong, quoted or
    not, keeps that clause."""
    log = Finding("log_errors", WARNING, "/srv/app/app.log: 24 errors in the last 10 min (24 in 300 lines scanned); "
                  "it starts with: «2026-12-06T10:00:01 ERROR cannot open /srv/app/key.pem: permission denied»",
                  culprit="/srv/app/app.log", path="/srv/app/app.log")
    evidence = Evidence(findings=(MEM_OK, log), topics=("log_errors",))
    for kind in (Kind.NO_FACT, Kind.CONTRADICTS, Kind.MISSES_CULPRIT):
        got = steer(Misfit(kind, f"[{kind.value}]"), "my app stopped working, what is wrong?", evidence, [])
        assert got.openings == ("/srv/app/app.log shows: «ERROR cannot open /srv/app/key.pem: permission denied»",), kind
        assert got.culprits == ("/srv/app/app.log",)
    hog = Finding("cpu", WARNING, "CPU hog: spin (pid 42) uses 99 % of one core (threshold 75 %)", culprit="spin")
    got = steer(Misfit(Kind.NO_FACT, "[no-observed-fact-named]"), "why is it slow?",
                Evidence(findings=(hog,), topics=("cpu",)), [])
    assert got.openings == ("CPU hog: spin (pid 42) uses 99 % of one core (threshold 75 %)",)
    denied = Finding("permissions", WARNING, "svc (pid 7) may not write /srv/out (drwxr-xr-x root:root: only root may "
                     "create files); the log: «cannot create /srv/out/r.csv: Permission denied»", culprit="/srv/out",
                     path="/srv/out")
    got = steer(Misfit(Kind.NO_FACT, "[no-observed-fact-named]"), "why are no reports written?",
                Evidence(findings=(denied,), topics=("permissions",)), [])
    assert not got.openings[0].startswith(LOG_CAUSE)


def test_a_yes_no_question_about_a_fact_an_inventory_states_is_steered_to_yes_or_no_with_that_fact():
    """Class: yes/no questions whose lead family only states a fact (uptime, listeners). "Has this
    computer been running long?" refused for a claim about the CPU is steered to "Yes: <uptime>" or
    "No: <uptime>", not to a bare "Yes"/"No". Yes/no questions about a judging family, and other
    forms, keep their steering."""
    uptime = Finding("uptime", OK, "up 3 h 6 min since 2026-12-06 18:41; no boot history recorded (wtmp and the journal "
                     "have none)")
    cpu_ok = Finding("cpu", OK, "no CPU hog: the busiest process, sshd (pid 12), uses 0 % of one core")
    contradicts = Misfit(Kind.CONTRADICTS, "[contradicts-check: cpu]", cpu_ok)
    evidence = Evidence(findings=(cpu_ok, uptime), topics=("uptime",))
    got = steer(contradicts, "Has this computer been running long? I can't remember when I restarted it", evidence, [],
                answer="The CPU is overloaded.")
    assert got.openings == ("Yes: up 3 h 6 min since 2026-12-06 18:41", "No: up 3 h 6 min since 2026-12-06 18:41")
    said = Misfit(Kind.SAY_YES_OR_NO, "[say-yes-or-no]")
    assert steer(said, "has it been running long? i can't tell", evidence, [], answer="It is fine.").openings[0] \
        .startswith("Yes: up 3 h")
    # a judging family's yes/no question: its all-clear or a bare "Yes"/"No", never the inventory's fact
    judged = Evidence(findings=(cpu_ok, uptime), topics=("cpu",))
    for got in (steer(said, "is the cpu ok? it can't keep up", judged, [], answer="It is slow."),
                steer(contradicts, "is the cpu ok? it can't keep up", judged, [], answer="The CPU is overloaded.")):
        assert not any("up 3 h" in o for o in got.openings)
    # a question naming a port: that port's verdicts answer it, not the machine's list of listeners
    listening = Finding("listening", OK, "2 listening ports: tcp 22 sshd, tcp 8080 web")
    ports = Evidence(findings=(listening,), topics=("listening",))
    assert steer(said, "is anything listening on port 9090? it can't connect", ports, [], answer="It is fine.").openings \
        == ("Yes", "No")
    assert steer(said, "is anything listening at all? it can't connect", ports, [], answer="It is fine.").openings \
        == ("Yes: 2 listening ports", "No: 2 listening ports")
    # a how-long question keeps the whole verdict as its opening
    assert steer(Misfit(Kind.SELF, "[names-the-appliance-itself]"), "how long has it been up?", evidence, []).openings \
        == (uptime.verdict,)


def test_an_accepted_denial_to_a_yes_no_question_begins_with_the_verdict_that_backs_it():
    """"There are no crash-looping processes" answers "is anything crash-looping?" without the
    yes or no it asks for; where the checks judged the topic fine, the answer begins with their
    verdict. An answer that said no, claims a fault, or rests on no clear verdict stays as it is."""
    from appliance.agent.answer.steer import backed_no

    question = "is anything hogging the CPU?"
    fine = Evidence(findings=(CPU_OK,), topics=("cpu",))
    assert backed_no(question, "There are no CPU-hungry processes.", fine) == \
        "No problem found: no CPU hog. There are no CPU-hungry processes."
    assert backed_no(question, "No, kworker uses 2 % of one core.", fine) == "No, kworker uses 2 % of one core."
    assert backed_no(question, "hashminer is hogging the CPU.", fine) == "hashminer is hogging the CPU."
    hog = Finding("cpu", WARNING, "hashminer (pid 77) uses 99 % of one core", culprit="hashminer", pid=77)
    busy = Evidence(findings=(hog,), topics=("cpu",))
    assert backed_no(question, "There are no CPU-hungry processes.", busy) == "There are no CPU-hungry processes."
    assert backed_no("Which process uses the most CPU?", "There are no CPU-hungry processes.", fine) == \
        "There are no CPU-hungry processes."


def test_a_yes_no_question_naming_no_family_is_steered_to_the_general_verdict_only_on_a_clear_machine():
    """"is something odd going on?" names no fault family: with every check clear its retry begins
    with the general verdict; with a problem anywhere, only the form is settled."""
    from appliance.agent.answer.fit import SAY_YES_OR_NO
    from appliance.analyzers.runner import for_question

    question = "is something odd going on with this box?"
    clear = Evidence(findings=(CPU_OK, MEM_OK, ZOMBIES_OK))
    assert steer(Misfit(Kind.SAY_YES_OR_NO, SAY_YES_OR_NO), question, clear, [], answer="kworker uses 2 % of one core.").openings == (
        NO_PROBLEM + "no CPU hog",)
    troubled = Evidence(findings=(CPU_OK, MEM_OK, ZOMBIES))
    assert steer(Misfit(Kind.SAY_YES_OR_NO, SAY_YES_OR_NO), question, troubled, [], answer="kworker uses 2 % of one core.").openings == (
        "Yes", "No")
    assert "zombies" in for_question("Is something leaving dead processes lying around?")


def test_a_how_much_retry_resting_on_an_ok_verdict_begins_with_its_number():
    """'How full is my disk?' answered with a share the check did not back goes back; its retry
    rests on the ok verdict and begins with the verdict's numbered clause too, since an amount
    answer without a number is refused by the form check."""
    fs_ok = Finding("filesystem_full", OK, "no filesystem is full: the fullest, / (ext4) is 26 % used, "
                    "75.4 GiB free of 252.0 GiB (4 filesystems measured)")
    evidence = Evidence(findings=(fs_ok, CPU_OK), topics=("filesystem_full",))
    opening = steer(Misfit(Kind.NO_FACT, "[no-observed-fact-named]"), "How full is my disk?", evidence, [fs_ok.line()]).openings
    assert opening == (NO_PROBLEM + "no filesystem is full: the fullest, / (ext4) is 26 % used, 75.4 GiB free of "
                       "252.0 GiB (4 filesystems measured)",)
    # a question that asks no amount keeps the bare headline
    assert steer(Misfit(Kind.NO_FACT, "[no-observed-fact-named]"), "Is anything wrong with my disk?", evidence,
                 [fs_ok.line()]).openings == (NO_PROBLEM + "no filesystem is full",)


def test_a_steered_all_clear_loses_a_sentence_naming_a_path_no_observation_shows():
    """After "No problem found: …" the retry copies a long path with a word doubled; the sentence
    also names an observed process, so only the unobserved path tells it is the model's own. The
    sentence goes, as it would be refused on its own; the all-clear stands."""
    from appliance.agent import events as ev
    from appliance.agent.engine import Engine
    from appliance.llm.fake import ScriptedModel
    from appliance.tools.base import Registry

    fine = Finding("deleted_open", OK, "no deleted file is held open: the open files of 40 processes checked",
                   {"processes_checked": 40})
    held = Finding("open_files", OK, "no process is near its open-file limit: the most open files, 12, are held "
                                     "by keeper (pid 5), the largest /var/tmp/cache-store/blob.bin", {})
    evidence = Evidence(findings=(fine, held), topics=("deleted_open",))

    class Fixed:
        def gather(self, question, self_pids):
            return evidence

    claim = {"thought": "t", "action": "finish",
             "action_input": {"answer": "Yes, keeper (pid 5) is holding a deleted file open.", "result": {},
                              "evidence": []}}
    opening = NO_PROBLEM + "no deleted file is held open"
    doubled = "keeper (pid 5) has /var/tmp/cache-cache-store/blob.bin open."
    again = {"thought": "t", "action": "finish",
             "action_input": {"answer": f"{opening}. {doubled}", "result": {}, "evidence": []}}
    engine = Engine(ScriptedModel([claim, again]), Registry([]), EngineSettings(reflection=False),
                    snapshot=lambda pids: {"load": "load=0.3 on 2 cores"},
                    evidence=Fixed())
    events = list(engine.run("Is any deleted file still holding space on the disk? If so, which process holds it?"))
    final = [e for e in events if isinstance(e, ev.FinalAnswer)]
    rejected = [e for e in events if isinstance(e, ev.AnswerRejected)]
    assert rejected and final and not final[0].forced, [getattr(e, "reason", "") for e in rejected]
    assert final[0].answer == opening + ".", final[0].answer
    # the path as an observation shows it is no reason to cut (the sentence may go for others)
    from appliance.agent.answer.checks import unobserved_path
    haystack = held.verdict.lower()
    assert unobserved_path("keeper (pid 5) has /var/tmp/cache-store/blob.bin open.", haystack) is None
    assert unobserved_path(doubled, haystack) == "/var/tmp/cache-cache-store/blob.bin"


def test_a_place_question_whose_lead_family_judges_the_machine_is_settled_by_that_verdict():
    """Class: a question about a named place whose family judges the whole machine (deleted files
    still held open): the refusal and the retry rest on that family's verdict, not on the place's
    filesystem's ("inodes fine" read as the answer to "is any deleted file holding space?"). Must
    not touch: a question whose lead family has a verdict at the place ("is /x full?")."""
    from appliance.agent.answer.settled import first_fine_place
    from appliance.agent.question.question import read_question

    place = "/srv/spool"
    full = Finding("filesystem_full", OK, f"not full: {place} (tmpfs) is 3 % used", path=place)
    inodes = Finding("inodes", OK, f"inodes fine: {place} uses 0 % of its inodes", path=place)
    deleted = Finding("deleted_open", OK, "no deleted file is held open: the open files of 68 processes checked")
    findings = (full, inodes, deleted)
    held = read_question(f"Is any deleted file still holding space on {place}? If so, which process holds it?")
    evidence = Evidence(findings=findings, topics=held.families, places=(full, inodes))
    assert first_fine_place(evidence) is deleted
    misfit = Misfit(Kind.CONTRADICTS, "[contradicts-check]", deleted)
    assert steer(misfit, held, evidence, []).openings == (NO_PROBLEM + "no deleted file is held open",)
    filled = read_question(f"Is {place} full?")
    assert first_fine_place(Evidence(findings=findings, topics=filled.families, places=(full, inodes))) is full
