"""The answer rules on their own: the question's form, the verdict agreement, the appliance itself."""

import pytest

from appliance.agent.answer.misfit import Kind, Misfit

from appliance.agent.answer.agreement import check_agreement, names_self
from appliance.agent.answer.fit import AMOUNT, OPEN, WHICH, WHY, YES_NO, check_fit, question_form, ranked_firsts
from appliance.analyzers.base import CRITICAL, OK, WARNING, Finding


@pytest.mark.parametrize("question, form", [
    ("how long has this machine been up?", AMOUNT),
    ("How full is /srv?", AMOUNT),
    ("how many zombie processes are there", AMOUNT),
    ("what percentage of memory is used?", AMOUNT),
    ("which process is listening on port 8080?", WHICH),
    ("what is filling my disk?", WHICH),
    ("What's using all my CPU?", WHICH),
    ("the disk is busy all the time, what's hammering it?", WHICH),
    ("what is slowing my laptop down?", WHICH),
    ("what's going on with my disk?", WHY),  # asks what happens: a cause, never a thing
    ("which folder under /data is biggest?", WHICH),
    ("who is holding the deleted file open", WHICH),
    ("why did the backup fail?", WHY),
    ("what went wrong with the app in /opt/app?", WHY),
    ("is anything hogging the CPU?", YES_NO),
    ("are there errors in /var/log/app.log?", YES_NO),
    ("anything wrong with the daily reports? log is /var/log/reportgen/reportgen.log", YES_NO),
    ("any errors in /var/log/app.log?", YES_NO),
    ("my laptop is slow", OPEN),
    ("I can't save files anymore", OPEN),
    ("something is wrong with my disk", OPEN),
])
def test_the_form_of_a_question(question, form):
    assert question_form(question) == form


def test_an_amount_needs_a_number_an_observation_shows():
    bodies = ["uptime: up 3 d 4 h (since 2026-11-28 06:12); boot_seconds=274000"]
    q = "how long has this machine been up?"
    assert check_fit(q, "The top memory process is firefox.", {}, bodies).startswith("[no-number")
    assert check_fit(q, "It has been up 9 days.", {}, bodies).startswith("[number '9'")
    assert check_fit(q, "It has been up 3 d 4 h.", {}, bodies) is None


def test_a_conditional_amount_is_owed_only_on_a_yes():
    """Class: "is X …? if so, how much / how fast?" — a no answers it whole. Questions of other
    classes keep the number they ask for: a plain how-much answered with an all-clear, and the
    conditional answered yes without a number."""
    bodies = ["headline: 0 file(s) grew under /srv/spool in 1.2 s; the filesystem is not filling"]
    conditional = "is anything filling up /srv/spool? if so which file and how fast?"
    assert check_fit(conditional, "No problem found: nothing under /srv/spool grows fast.", {}, bodies) is None
    assert check_fit(conditional, "Yes, a file under /srv/spool is growing.", {}, bodies).startswith("[no-number")
    plain = "how fast is /srv/spool filling up?"
    assert check_fit(plain, "No problem found: nothing under /srv/spool grows fast.", {}, bodies).startswith("[no-number")
    assert check_fit("how much memory does it use? is it leaking?", "Nothing is leaking.", {},
                     ["rss=120.0 MiB"]).startswith("[no-number")


def test_a_rate_is_answered_with_a_rate():
    """Class: "how fast / at what rate …?" where an observation shows a rate — the file's size is
    not how fast it grows. Other amounts (a size, a duration), a rate answered as one, and a no to
    the growth are left alone."""
    bodies = ["headline: 1 file(s) grew under /srv/spool in 1.2 s; fastest: /srv/spool/a.log 2.1 MiB/s",
              "headline: largest file: /srv/spool/a.log 125.2 MiB", "filesystem_free_change_per_second=\"+0 B/s\""]
    q = "space on /srv/spool keeps disappearing, which file and how quickly?"
    problem = check_fit(q, "/srv/spool/a.log is the largest file and is growing at 125.2 MiB.", {}, bodies)
    assert problem is not None and problem.startswith("[no-rate") and "2.1 MiB/s" in problem
    assert check_fit(q, "/srv/spool/a.log grows at 2.1 MiB/s.", {}, bodies) is None
    # the rate is in the evidence already: the retry gets no other tool run first
    from appliance.agent.answer.fit import fit_misfit
    from appliance.agent.answer.misfit import LACKS_FACT
    misfit = fit_misfit(q, "/srv/spool/a.log is the largest file and is growing at 125.2 MiB.", {}, bodies)
    assert misfit is not None and misfit.kind not in LACKS_FACT
    assert check_fit("at what rate is /srv/spool growing?", "About 2.1 MiB per second, in a.log.", {}, bodies) is None
    assert check_fit("how big is /srv/spool/a.log?", "It is 125.2 MiB.", {}, bodies) is None
    assert check_fit("how long has this machine been up?", "3 d 4 h.", {}, ["up 3 d 4 h; load 2.1 per s"]) is None
    assert check_fit(q, "/srv/spool/a.log is 125.2 MiB.", {}, bodies[1:]) is None  # no rate was observed
    # a symptom's frequency is no rate asked
    assert check_fit("which file gets written every minute?", "/srv/spool/a.log is written then.", {}, bodies) is None
    assert check_fit("how many errors per minute does /srv/spool/a.log get?", "125.2 errors", {}, bodies) \
        .startswith("[no-rate")


def test_a_rounded_number_is_the_observed_one():
    assert check_fit("how full is /srv?", "/srv is 97% full.", {}, ["/srv used_pct=96.8"]) is None


SIZES = ("headline: largest: /data/b 900.0 MiB (90.0%)\n"
         "largest: path=/data/b size=900.0 MiB; path=/data/a size=50.0 MiB; path=/data/c size=40.0 MiB")


def test_a_biggest_question_must_name_what_the_ranking_put_first():
    assert ranked_firsts([SIZES])[0].subject == "/data/b"
    q = "which folder under /data is biggest?"
    problem = check_fit(q, "The biggest folder is /data/a.", {"path": "/data/a"}, [SIZES])
    assert problem and problem.startswith("[not-the-first") and "/data/b" in problem
    assert check_fit(q, "/data/b is the biggest, 900 MiB.", {"path": "/data/b"}, [SIZES]) is None


def test_a_why_answer_about_a_log_with_errors_must_quote_the_cause():
    log = "counts: errors=1\nlines:\n2024-05-14 02:00:01 ERROR upload failed: quota exceeded (507)"
    q = "why does the app in /opt/app fail?"
    problem = check_fit(q, "The log file is app.log and is 29.9 KiB.", {}, [log], log_bodies=[log])
    assert problem and "quota exceeded" in problem
    assert check_fit(q, "The upload failed: quota exceeded (507).", {}, [log], log_bodies=[log]) is None
    assert check_fit(q, "Uploads fail.", {"error": "quota exceeded"}, [log], log_bodies=[log]) is None


def test_an_answer_naming_a_checked_cause_need_not_quote_the_log_that_shows_its_symptom():
    """The log says "connection refused"; the checks found that nothing listens on its port. An
    answer naming that cause answers why; one that describes the log still goes back."""
    from appliance.agent.evidence import Evidence, Look
    from appliance.agent.answer.rules import AnswerContext, judge_answer

    log = ("counts: errors=2\nlines:\n2026-12-03 06:38:21 ERROR db: cannot connect to postgres at 127.0.0.1:41833: "
           "[Errno 111] Connection refused")
    errors = Finding("log_errors", WARNING, "/srv/orders/app.log: 2 error lines; it starts with: «ERROR db: cannot "
                     "connect to postgres at 127.0.0.1:41833: [Errno 111] Connection refused»",
                     culprit="/srv/orders/app.log", path="/srv/orders/app.log")
    down = Finding("listening", WARNING, "nothing listens on tcp port 41833: a service that should answer there is down",
                   culprit="tcp port 41833")
    ctx = AnswerContext(question="The orders app cannot reach its database; its log is /srv/orders/app.log. What is wrong?",
                        evidence=Evidence(findings=(errors, down), topics=("log_errors", "listening"), places=(errors,),
                                          looks=(Look("/srv/orders/app.log", "read_log", {"path": "/srv/orders/app.log"},
                                                      {"status": "ok", "data": log}),)),
                        bodies=[log, errors.line(), down.line()], log_bodies=[log], tools_worked=True)
    assert judge_answer("Nothing listens on tcp port 41833, so the database is down.", {}, ctx).problem is None
    problem = judge_answer("The log /srv/orders/app.log shows 2 errors related to database connectivity.", {}, ctx).problem
    assert problem and problem.startswith("[log-errors-not-quoted")


CPU_OK = Finding("cpu", OK, "no CPU hog: the busiest process, kdamond, uses 2 % of one core; load 0.3 on 2 cores")
DISK_OK = Finding("filesystem_full", OK, "no filesystem is full: the fullest, / is 22.5 % used (78.6 GiB free)")
DISK_FULL = Finding("filesystem_full", CRITICAL, "/mnt/x is 100 % full: 0 B free", culprit="/mnt/x", path="/mnt/x")
ZOMBIES = Finding("zombies", WARNING, "12 zombies, parent reaper (pid 4242)", culprit="reaper", pid=4242)


def test_a_fault_claim_contradicting_an_ok_verdict_is_sent_back_with_the_verdict():
    problem = check_agreement("The disk is full, with 22.5% used and 78.6 GiB free.", {}, [CPU_OK, DISK_OK],
                              ["filesystem_full"])
    assert problem and "22.5 %" in problem
    problem = check_agreement("kdamond is hogging the CPU.", {"process": "kdamond"}, [CPU_OK, DISK_OK], ["cpu"])
    assert problem and "no CPU hog" in problem


def test_growth_or_copies_claimed_against_an_ok_verdict_of_the_checklist_are_sent_back():
    """The checklist's families judge what their words claim: a file said to keep growing where
    nothing grows, a program said to run in unusual numbers where none does. Memory that grows
    is another family's claim, and a denial claims nothing."""
    growth_ok = Finding("disk_growth", OK, "nothing under /srv/in grows fast: 0 file(s) grew in 1.2 s")
    names_ok = Finding("process_names", OK, "no program runs in unusual numbers: the most, 3, pdfrender")
    claim = "The largest file in /srv/in keeps growing at 16.6 KiB/s."
    assert "nothing under /srv/in grows fast" in check_agreement(claim, {}, [growth_ok], ["disk_growth"])
    copies = "There are 9 processes named python running in unusual numbers."
    assert "no program runs in unusual numbers" in check_agreement(copies, {}, [names_ok], ["process_names"])
    assert check_agreement("The memory of api keeps growing at 8 MiB/s.", {}, [growth_ok], ["disk_growth"]) is None
    assert check_agreement("No file under /srv/in is growing.", {}, [growth_ok], ["disk_growth"]) is None
    # in the other words of growth ("getting bigger", "ballooning"), the same claim
    for said in ("The file /srv/in/trace.log is getting bigger at a rate of 51.8 KiB/s.",
                 "the log under /srv/in keeps ballooning", "/srv/in/spool.db was steadily climbing"):
        assert "nothing under /srv/in grows fast" in check_agreement(said, {}, [growth_ok], ["disk_growth"]), said
    assert check_agreement("The file /srv/in/trace.log is not getting bigger.", {}, [growth_ok], ["disk_growth"]) is None
    assert check_agreement("3 copies of pdfrender run, a normal number.", {}, [names_ok], ["process_names"]) is None


def test_an_all_clear_answer_contradicting_a_problem_of_its_topic_is_sent_back():
    problem = check_agreement("No filesystem is full; nothing is wrong.", {}, [DISK_FULL, CPU_OK], ["filesystem_full"])
    assert problem and "/mnt/x is 100 % full" in problem
    # a problem of another family is not this answer's business
    assert check_agreement("No CPU hog: nothing is wrong.", {}, [DISK_FULL, CPU_OK], ["cpu"]) is None


def test_answers_that_agree_with_the_verdicts_pass():
    assert check_agreement("/mnt/x is full: 0 B free.", {"path": "/mnt/x"}, [DISK_FULL, CPU_OK], ["filesystem_full"]) is None
    assert check_agreement("There are no zombies.", {}, [Finding("zombies", OK, "no zombies")], ["zombies"]) is None
    assert check_agreement("reaper holds 12 zombies.", {"process": "reaper"}, [ZOMBIES], ["zombies"]) is None
    assert check_agreement("anything", {}, [], ["cpu"]) is None  # no check ran: nothing to contradict


def test_the_appliance_is_never_the_answer():
    bodies = ["top: pid=321 name=python3 (appliance itself) cpu_percent=95.0; pid=40 name=kdamond cpu_percent=1.0"]
    assert names_self("python3 uses 95% CPU.", {"pid": 321}, {321}, (), bodies)
    assert names_self("python3 uses 95% CPU.", {"process": "python3"}, {321}, (), bodies)
    assert names_self("The most recent process is the appliance itself.", {}, {321}, (), bodies)
    assert names_self("kdamond uses 1% CPU.", {"process": "kdamond", "pid": 40}, {321}, (), bodies) is None
    assert names_self("Nothing but the appliance itself uses CPU; no hog.", {}, {321}, (), bodies) is None


def test_a_which_answer_must_name_a_thing_an_observation_shows():
    bodies = ["headline: fullest: / 23.4% used, 77.8 GiB free\nfilesystems:\n  mount=/ device=/dev/vda used_percent=23.4",
              "[ok] cpu: no CPU hog: the busiest process, kdamond (pid 77), uses 2 % of one core"]
    q = "what is filling my disk?"
    problem = check_fit(q, "The disk is 23.4% full, with 77.8 GiB free.", {"culprit": "disk"}, bodies)
    assert problem and problem.startswith("[names-no-thing")
    assert check_fit(q, "Nothing unusual fills it: / is 23.4% used.", {}, bodies) is None
    sizes = bodies + ["headline: largest: /var 12.0 GiB (60.0%)\nlargest: path=/var size=12.0 GiB; path=/usr size=5.0 GiB"]
    assert check_fit(q, "/var holds most of it: 12 GiB.", {"path": "/var"}, sizes) is None
    assert check_fit("which process uses the most cpu?", "kdamond (pid 77) uses 2%.", {}, bodies) is None


def test_the_tools_suggested_for_a_question_follow_its_families():
    from appliance.agent.prompt import suggested_tools
    from appliance.analyzers import for_question
    from appliance.tools.registry import default_registry

    specs = default_registry().specs
    q = "Which process is using the most CPU? Give its name and PID."
    assert for_question(q)[0] == "cpu" and suggested_tools(q, specs, families=for_question(q))[0] == "top_processes"
    q = "Which process is writing the most to disk right now?"
    assert for_question(q)[0] == "disk_io" and suggested_tools(q, specs, families=for_question(q))[0] == "disk_io"
    q = "what is listening on port 8080?"
    assert "network_connections" in suggested_tools(q, specs, families=for_question(q))[:1]


def test_an_answer_that_misses_the_culprit_the_check_found_goes_back():
    from appliance.agent.answer.said import misses_culprit

    problems = [ZOMBIES]
    problem = misses_culprit("The process with PID 28760 is a child of run.sh.", {"pid": 28760}, problems)
    assert problem and "reaper (pid 4242)" in problem
    assert misses_culprit("reaper (pid 4242) does not reap its children.", {}, problems) is None
    assert misses_culprit("Its parent is pid 4242.", {"pid": 4242}, problems) is None
    assert misses_culprit("anything", {}, []) is None


def test_an_answer_quoting_a_verdict_names_an_observed_fact():
    from appliance.agent.answer.checks import check_answer

    bodies = ["[warning] zombies: reaper (pid 4242) holds 7 zombie children it has not reaped; load 2 % of one core"]
    assert check_answer("reaper holds them.", {"process": "reaper", "pid": 4242}, bodies, tools_worked=True).problem is None
    # "2 % of one" across the dropped '%' sign is still three words in a row of the observation
    assert check_answer("It uses 2 % of one core.", {}, bodies, tools_worked=True).problem is None


@pytest.mark.parametrize("question, seeks", [
    ("What kernel does this machine run?", False),
    ("what version of python is installed?", False),
    ("my computer feels slow today", True),
    ("Which process is using the most CPU?", True),
    ("is anything wrong with my disk?", True),
    ("something keeps starting and dying", True),
])
def test_whether_a_question_seeks_a_fault(question, seeks):
    from appliance.agent.answer.fit import seeks_fault

    assert seeks_fault(question) is seeks


def test_a_yes_no_question_about_a_fine_family_keeps_no_culprit_and_a_yes_goes_back():
    from appliance.agent.answer.agreement import yes_no_fit

    mem_ok = Finding("memory", OK, "no memory pressure: 92 % available; the top consumer is python (pid 7) 6 %")
    problem, drop = yes_no_fit("Yes, python (pid 7) uses an unusual amount of memory.", {"process": "python"},
                               [mem_ok], "memory")
    assert problem and "no memory pressure" in problem
    problem, drop = yes_no_fit("python uses a lot of memory, 1.4 GiB.", {}, [mem_ok], "memory")
    assert problem
    problem, drop = yes_no_fit("No: memory is fine; python (pid 7) is the largest at 6 %.",
                               {"process": "python", "pid": 7}, [mem_ok], "memory")
    assert problem is None and set(drop) == {"process", "pid"}
    # a family whose verdict is never a fault (a listener is no fault) is not judged this way
    assert yes_no_fit("Yes, nginx listens.", {"process": "nginx"}, [Finding("listening", OK, "1 port")], "listening") == (None, ())
    hog = Finding("cpu", WARNING, "CPU hog: x (pid 9) 99 %", culprit="x", pid=9)
    assert yes_no_fit("Yes, x (pid 9).", {"process": "x"}, [hog], "cpu") == (None, ())


def test_a_free_text_culprit_beside_an_answer_naming_observed_facts_is_dropped_not_sent_back():
    from appliance.agent.answer.checks import check_answer

    bodies = ["headline: fullest: /srv/uploads 100.0% used, 0 B free"]
    verdict = check_answer("/srv/uploads is 100.0% used, 0 B free.", {"culprit": "disk", "value": "full"}, bodies,
                           tools_worked=True)
    assert verdict.problem is None and "culprit" not in verdict.result
    # an invented process name stays fatal
    assert check_answer("/srv/uploads is full.", {"process": "uploadd"}, bodies, tools_worked=True).invented


def test_fields_all_in_the_models_own_words_go_when_the_answer_names_what_was_observed():
    """"how long since the last reboot?" answered with the uptime the check read, and result fields
    of the model's own words ("no reboot"): the fields go, the answer stands; with an answer that
    names nothing observed, the same fields still send it back."""
    from appliance.agent.answer.checks import check_answer

    bodies = ["[ok] uptime: up 3 h 37 min since 2026-12-04 20:19; no boot history recorded"]
    fields = {"culprit": "system", "value": "no reboot"}
    kept = check_answer("The machine has been up 3 h 37 min, since 2026-12-04 20:19.", fields, bodies,
                        tools_worked=True)
    assert kept.problem is None and kept.result == {} and set(kept.dropped) == {"culprit", "value"}
    refused = check_answer("It was rebooted recently.", fields, bodies, tools_worked=True)
    assert refused.kind is Kind.UNBACKED_FIELD


def test_an_answer_that_says_nothing_is_wrong_names_no_culprit_unless_the_checks_found_it():
    from appliance.agent.answer.agreement import all_clear_drops

    problem = Finding("cpu", WARNING, "CPU hog: hashminer (pid 12) 99 %", culprit="hashminer", pid=12)
    # a denial in the answer's own words (no all-clear phrase): the culprit is a contradiction
    assert all_clear_drops("The daily reports are running without errors or warnings.",
                           {"culprit": "reportgen"}, [], asks_which=False) == ("culprit",)
    assert set(all_clear_drops("No process is hogging the CPU; the busiest is process_api at 0.5 %.",
                               {"culprit": "process_api", "process": "process_api", "pid": 40}, [],
                               asks_which=False)) == {"culprit", "process", "pid"}
    # for "which process …?" the process is the thing asked about, not a culprit
    assert all_clear_drops("Nothing is wrong; python uses the most memory, 42 MiB.",
                           {"process": "python"}, [], asks_which=True) == ()
    # a culprit the checks found stays; an answer that claims a fault keeps its culprit
    assert all_clear_drops("The log shows no errors.", {"culprit": "hashminer"}, [problem], asks_which=False) == ()
    assert all_clear_drops("reportgen fails with permission denied.", {"culprit": "reportgen"}, [],
                           asks_which=False) == ()
    # a field that claims the fault the answer denies goes too; one stating a plain fact stays
    assert all_clear_drops("No problem found: /srv/app.log: no error lines.",
                           {"value": "the log contains errors", "error": "none seen"}, [], asks_which=False) == ("value",)


def test_the_judge_drops_a_culprit_beside_an_all_clear_in_the_answers_own_words():
    from appliance.agent.evidence import Evidence
    from appliance.agent.answer.rules import AnswerContext, judge_answer

    cpu_ok = Finding("cpu", OK, "no CPU hog: the busiest process, process_api (pid 40), uses 0.5 % of one core")
    ctx = AnswerContext(question="Is something slowing my computer down?", bodies=[cpu_ok.line()],
                        evidence=Evidence(findings=(cpu_ok,), topics=("cpu",)), tools_worked=True)
    verdict = judge_answer("Nothing is slowing it down: process_api is the busiest at 0.5 % of one core.",
                           {"culprit": "process_api"}, ctx)
    assert verdict.problem is None and verdict.result == {} and "culprit" in verdict.dropped


def test_an_all_clear_is_not_refused_for_a_culprit_word_no_observation_shows():
    """The culprit of an all-clear goes before the facts are checked: "did not report any errors"
    with culprit "job" (a word of the question, in no observation) is a right answer, not an
    invented culprit."""
    from appliance.agent.evidence import Evidence
    from appliance.agent.answer.rules import AnswerContext, judge_answer

    log_ok = Finding("log_errors", OK, "/var/log/backup/weekly.log: no error lines (484 lines scanned, 0 warnings)",
                     path="/var/log/backup/weekly.log")
    body = "path=/var/log/backup/weekly.log lines_scanned=484 top_errors=[]\ncounts:\n  error=0 warning=0"
    ctx = AnswerContext(question="Did the job whose log is /var/log/backup/weekly.log report any errors? If so, which?",
                        bodies=[log_ok.line(), body], evidence=Evidence(findings=(log_ok,), topics=("log_errors",)),
                        tools_worked=True)
    verdict = judge_answer("The job did not report any errors.", {"culprit": "job", "value": "no errors reported"}, ctx)
    assert verdict.problem is None and "culprit" not in verdict.result and "culprit" in verdict.dropped
    # a culprit beside a claimed fault is still checked against the observations
    verdict = judge_answer("The job failed: the disk quota was exceeded.", {"culprit": "quotad"}, ctx)
    assert verdict.problem is not None


def test_a_question_of_fact_keeps_no_culprit_and_a_placeholder_value_states_nothing():
    """"How long has this machine been up?" answered right, with culprit "system" (a word no
    observation shows) or value "unknown": the fields go, the answer stands."""
    from appliance.agent.evidence import Evidence
    from appliance.agent.answer.rules import AnswerContext, judge_answer

    up = Finding("uptime", OK, "up 4 h 25 min since 2026-12-01 10:29; no boot history recorded")
    ctx = AnswerContext(question="How long has this machine been up?", bodies=[up.line(), 'uptime="4 h 25 min"'],
                        evidence=Evidence(findings=(up,), topics=("uptime",)), tools_worked=True)
    verdict = judge_answer("The machine has been up for 4 h 25 min.", {"culprit": "system", "value": "4 h 25 min"}, ctx)
    assert verdict.problem is None and verdict.result == {"value": "4 h 25 min"} and "culprit" in verdict.dropped
    verdict = judge_answer("It has been running for 4 h 25 min since the last reboot.",
                           {"culprit": "unknown", "value": "unknown"}, ctx)
    assert verdict.problem is None and verdict.result == {}
    # a question about a fault still holds its culprit to the observations
    fault_ctx = AnswerContext(question="Which process is hogging the CPU?", bodies=[up.line()],
                              evidence=Evidence(findings=(up,), topics=("cpu",)), tools_worked=True)
    assert judge_answer("cpuburner is hogging the CPU.", {"culprit": "cpuburner"}, fault_ctx).problem is not None


def test_a_clause_ends_at_a_sentence_stop_not_at_the_dot_of_a_file_name_or_number():
    from appliance.agent.answer.agreement import check_agreement, clauses

    assert clauses("The setting in relay.conf is invalid. Load is 0.3; fine!") == [
        "The setting in relay.conf is invalid", "Load is 0.3", "fine"]
    settings_fine = Finding("config", OK, "settings fine: /etc/relay.conf: 9 settings read, none malformed",
                            path="/etc/relay.conf")
    claim = "The `max_connections` setting in `/etc/relay.conf` is invalid."
    assert check_agreement(claim, {}, [settings_fine], ("config",)) == f"[contradicts-check: {settings_fine.line()}]"
    assert check_agreement("No setting in /etc/relay.conf is invalid.", {}, [settings_fine], ("config",)) is None


def test_an_answer_that_reports_an_error_line_is_no_denial_though_it_says_not():
    from appliance.agent.answer.agreement import denies_all
    from appliance.agent.evidence import Evidence
    from appliance.agent.answer.rules import AnswerContext, judge_answer

    line = "2026-12-01 19:54:55 ERROR reportgen: cannot write report: [Errno 13] Permission denied: '/srv/r/d.csv'"
    answer = f"The report generator may not write to that folder: the user does not have permission. The log: '{line}'"
    assert not denies_all(answer)
    assert denies_all("The log does not show any errors.")
    # a tool's own refusal, told in words, is no "nothing is wrong" either
    assert not denies_all("The process is sleeping, but it does not have the necessary privileges to access "
                          "its executable, working directory, I/O, open file.")
    assert not denies_all("Its open files are not readable without root.")
    assert denies_all("No process is close to its open-file limit.")
    log = Finding("log_errors", WARNING, f"/var/log/gen.log: 1 error line; it starts with: «{line}»",
                  culprit="/var/log/gen.log", path="/var/log/gen.log")
    ctx = AnswerContext(question="The report generator logs to /var/log/gen.log. Why are no reports written?",
                        evidence=Evidence(findings=(log,), topics=("log_errors",), places=(log,)),
                        bodies=[log.line(), line], tools_worked=True)
    assert judge_answer(answer, {"culprit": "reportgen"}, ctx).problem is None


def test_a_ranking_question_is_answered_with_the_process_its_own_familys_verdict_ranks_first():
    from appliance.agent.answer.fit import asks_ranking
    from appliance.agent.evidence import Evidence
    from appliance.agent.answer.rules import AnswerContext, judge_answer
    from appliance.agent.answer.steer import steer

    threads = Finding("threads", OK, "thread counts are normal: the most, 302, in threadfarm-2376 (pid 29368); "
                                     "435 threads on the machine of a limit of 32768")
    top_cpu = "headline: top cpu: pid=26061 name=python 19.9% cpu"
    question = "Which process has the most threads? Give its name and PID."
    ctx = AnswerContext(question=question, evidence=Evidence(findings=(threads,), topics=("threads",)),
                        bodies=[threads.line(), top_cpu], tools_worked=True)
    verdict = judge_answer("The process with the most threads is python.", {"process": "python"}, ctx)
    assert verdict.problem is not None and verdict.problem.startswith("[not-the-first: the check ranks first: [ok] threads:")
    # the retry begins with the verdict's ranking clause, its number with it
    got = steer(verdict.misfit, question, ctx.evidence, ctx.bodies)
    assert got.openings == ("the most, 302, in threadfarm-2376 (pid 29368)",) and got.culprits == ("threadfarm-2376",)
    assert judge_answer("threadfarm-2376 (pid 29368) has the most threads, 302.", {}, ctx).problem is None
    # a conditional which-question is no ranking: "none" answers it
    assert asks_ranking(question) and not asks_ranking("Is any process hogging the CPU right now? If so, which one?")
    cpu_ok = Finding("cpu", OK, "no CPU hog: the busiest process, kworker (pid 12), uses 2 % of one core")
    conditional = AnswerContext(question="Is any process hogging the CPU right now? If so, which one?",
                                evidence=Evidence(findings=(cpu_ok,), topics=("cpu",)), bodies=[cpu_ok.line()],
                                tools_worked=True)
    assert judge_answer("No process is hogging the CPU; the busiest uses 2 % of one core.", {},
                        conditional).problem is None


def test_naming_the_culprit_of_a_problem_at_the_place_answers_a_which_question_about_it():
    """"Which process holds the space?" of a folder whose deleted files a process keeps open: the
    process is the answer, though it is no entry under the folder; another process is not."""
    from appliance.agent.evidence import Evidence, Look
    from appliance.agent.answer.rules import AnswerContext, judge_answer

    held = Finding("deleted_open", CRITICAL, "48.0 MiB held by the deleted file /srv/spool/out.log, still open in "
                   "logshipper (pid 4321), 75 % of /srv/spool", culprit="logshipper", pid=4321, path="/srv/spool/out.log")
    listing = Look("/srv/spool", "list_dir", {"path": "/srv/spool"}, {"status": "ok", "data": {"entries": []}})
    bodies = [held.line(), "pid=4321 name=logshipper status=sleeping user=root"]
    ctx = AnswerContext(question="df says /srv/spool is mostly used, but du finds almost nothing there. Which process "
                                 "holds the space?", bodies=bodies, tools_worked=True,
                        evidence=Evidence(findings=(held,), topics=("deleted_open",), looks=(listing,)))
    assert judge_answer("logshipper (pid 4321) holds 48.0 MiB of a deleted file.", {"culprit": "logshipper"},
                        ctx).problem is None
    other = judge_answer("sshd holds the space.", {"culprit": "sshd"}, ctx).problem or ""
    assert other.startswith(("[not-under-the-place", "[result.culprit")), other


def test_a_quantity_with_its_unit_in_prose_is_an_observed_fact_in_any_spelling():
    """"up 13 h 20 min" is what the uptime verdict says; "13 hours and 20 minutes" states it, "14
    hours" does not, and a zero ("0 s ago") is no fact."""
    from appliance.agent.answer.checks import check_answer, quantities

    body = "[ok] uptime: up 13 h 20 min since 2026-12-01 10:29; 12.0 MiB free; started 0 s ago"
    assert quantities(body) == {"13 h", "20 min", "12.0 mib"}
    assert check_answer("It has been up for 13 hours and 20 minutes.", {}, [body], tools_worked=True).problem is None
    assert check_answer("It has been up for 14 hours.", {}, [body], tools_worked=True).problem == "[no-observed-fact-named]"


def test_a_fault_claimed_before_a_negated_reason_is_claimed():
    """"X is invalid because it is not in range" asserts the fault; the "not" belongs to the reason.
    "The disk is not full" still denies it."""
    from appliance.agent.answer.agreement import claims_fault, denies_all

    said = "The `listen_port` setting is invalid because it is not in the range of valid ports (1-65535)."
    assert claims_fault(said, "config") and not denies_all(said)
    fine = Finding("config", OK, "settings fine: /etc/relay.conf: 9 settings read, none malformed")
    assert check_agreement(said, {}, [fine], ("config",)).startswith("[contradicts-check")
    assert not claims_fault("The disk is not full.", "filesystem_full") and denies_all("The disk is not full.")
    assert denies_all("No setting is invalid.")


def test_a_share_of_cpu_or_memory_is_no_share_of_another_filesystem():
    from appliance.agent.answer.agreement import wrong_place

    place = Finding("filesystem_full", OK, "not full: /srv/x is on /srv (xfs): 23 % used", {"used_percent": 23, "mount": "/srv"})
    assert wrong_place("python (pid 7) uses 94.6% of one core.", {}, [place]) is None
    assert wrong_place("It uses 3 % of the memory.", {}, [place]) is None
    assert wrong_place("/ is 50% used.", {}, [place]).startswith("[another-place")


def test_an_all_clear_with_a_hyphenated_modifier_reads_as_all_clear():
    """"no crash-looping processes" says nothing is wrong as plainly as "no looping processes"; the
    problem word inside the modifier goes with its all-clear clause, while a claim beside it stays."""
    from appliance.agent.answer.checks import says_all_clear

    assert says_all_clear("There are no crash-looping processes.")
    assert says_all_clear("I found no CPU-hungry programs on this machine.")
    assert says_all_clear("The job did not report out-of-memory errors.")
    assert not says_all_clear("There are no crash-looping processes, but worker crashes every second.")
    assert not says_all_clear("worker is crash-looping.")


def test_a_because_clause_after_an_all_clear_phrase_claims_what_it_says():
    """"nothing listens on tcp port 48585 because the log shows errors" is no all-clear: the
    "because" clause reports the errors; and naming one of the topic's problems (the port) in the
    verdict's own negative words denies none of them, even when another problem is listed first."""
    from appliance.agent.answer.checks import says_all_clear

    answer = "nothing listens on tcp port 48585 because the log shows errors related to database connectivity."
    assert not says_all_clear(answer)
    assert says_all_clear("No errors in the log because the job succeeded.")
    log = Finding("log_errors", WARNING, "/srv/orders/app.log: 2 error lines in the newest run",
                  path="/srv/orders/app.log")
    port = Finding("dependency", WARNING, "nothing listens on tcp port 48585: the orders app's database is down",
                   culprit="tcp port 48585")
    assert check_agreement("Nothing listens on tcp port 48585.", {}, [log, port], ["log_errors", "dependency"]) is None
    assert check_agreement("Nothing is wrong.", {}, [log, port], ["log_errors", "dependency"]) is not None


def test_a_setting_named_by_its_own_key_claimed_invalid_contradicts_a_clean_config_verdict():
    """"`listen_port` in relay.conf is invalid" claims a config fault though no word of it is
    "setting" or "port" on its own; where the check read every setting fine, it is sent back."""
    path = "/srv/relay.conf"
    fine = Finding("config", OK, f"settings fine: {path}: 9 settings read, none malformed (ports in range)", path=path)
    said = f"The `listen_port` in `{path}` is invalid. It should be between 0 and 65535."
    assert check_agreement(said, {"value": "2525"}, [fine], ["config"]) is not None
    assert check_agreement(f"No: every setting in {path} is valid; listen_port is not invalid.", {}, [fine],
                           ["config"]) is None


def test_if_so_which_on_clear_verdicts_is_answered_no_and_names_no_culprit():
    """"Is any process hogging the CPU? If so, which one?" where the check found no hog: the which
    is asked only on a yes, so the top of the ok ranking is no answer, and an answer that says no
    keeps no culprit field (the checks found none)."""
    from appliance.agent.answer.fit import SAY_YES_OR_NO
    from appliance.agent.evidence import Evidence
    from appliance.agent.answer.rules import AnswerContext, judge_answer
    from appliance.agent.answer.steer import steer

    cpu_ok = Finding("cpu", OK, "no CPU hog: the busiest process, kworker/0:1 (pid 12), uses 0 % of one core; load 0.3 "
                                "on 2 cores")
    question = "Is any process hogging the CPU right now? If so, which one?"
    ctx = AnswerContext(question=question, evidence=Evidence(findings=(cpu_ok,), topics=("cpu",)),
                        bodies=[cpu_ok.line()], tools_worked=True)
    verdict = judge_answer("kworker/0:1 (pid 12) uses 0 % of one core.", {"culprit": "kworker/0:1"}, ctx)
    assert verdict.problem == SAY_YES_OR_NO
    assert steer(verdict.misfit, question, ctx.evidence, ctx.bodies).openings == ("No problem found: no CPU hog",)
    verdict = judge_answer("No: the busiest process, kworker/0:1, uses 0 % of one core.",
                           {"culprit": "kworker/0:1", "process": "kworker/0:1", "pid": 12}, ctx)
    assert verdict.problem is None and verdict.result == {}
    assert {"culprit", "process", "pid"} <= set(verdict.dropped)
    # a real hog is still named: the culprit the check found stays
    hog = Finding("cpu", WARNING, "CPU hog: hashminer (pid 99) uses 98 % of one core", culprit="hashminer", pid=99)
    hot = AnswerContext(question=question, evidence=Evidence(findings=(hog,), topics=("cpu",)), bodies=[hog.line()],
                        tools_worked=True)
    verdict = judge_answer("Yes: hashminer (pid 99) uses 98 % of one core.", {"culprit": "hashminer", "pid": 99}, hot)
    assert verdict.problem is None and verdict.result == {"culprit": "hashminer", "pid": 99}


def test_a_no_to_if_so_which_keeps_no_sentence_naming_the_top_of_an_ok_ranking():
    """"Is any process using an unusual amount of memory? If so, which?" answered "No problem found:
    no memory pressure. The process with PID 8134 uses the most memory": the no is the answer; the
    sentence naming the top consumer answers a which nobody asked and goes. Where the checks found a
    problem, or the answer says yes, nothing goes."""
    from appliance.agent.evidence import Evidence
    from appliance.agent.answer.steer import without_unasked_which

    mem_ok = Finding("memory", OK, "no memory pressure: 22.8 GiB of 23.5 GiB available (97 %); the top consumer is "
                                   "cachehoard-40d9 (pid 8134) with 30.2 MiB (0 % of RAM)")
    question = "Is any process using an unusual amount of memory? If so, which?"
    clear = Evidence(findings=(mem_ok,), topics=("memory",))
    answer = "No problem found: no memory pressure. The process with PID 8134 is using the most memory (30.2 MiB)."
    assert without_unasked_which(question, answer, clear) == "No problem found: no memory pressure."
    named = "No, memory use is normal. cachehoard-40d9 uses the most, 30.2 MiB. 97 % of memory is available."
    assert without_unasked_which(question, named, clear) == "No, memory use is normal. 97 % of memory is available."
    # not a conditional question (a ranking asks for its top), or a problem found: kept whole
    assert without_unasked_which("Which process uses the most memory?", answer, clear) == answer
    hog = Finding("memory", WARNING, "memory pressure: cachehoard-40d9 (pid 8134) holds 20 GiB",
                  culprit="cachehoard-40d9", pid=8134)
    assert without_unasked_which(question, answer, Evidence(findings=(hog,), topics=("memory",))) == answer
    yes = "Yes. cachehoard-40d9 (pid 8134) holds 20 GiB."
    assert without_unasked_which(question, yes, clear) == yes
    # the same blame as a clause of the no's own sentence goes too; a "No," head alone is no sentence
    clause = "No problem found: no memory pressure, with 30.2 MiB held by cachehoard-40d9 (pid 8134)."
    assert without_unasked_which(question, clause, clear) == "No problem found: no memory pressure."
    short = "No, cachehoard-40d9 (pid 8134) uses the most."
    assert without_unasked_which(question, short, clear) == short
    assert without_unasked_which("Which process uses the most memory?", clause, clear) == clause


def test_a_culprit_field_no_verdict_backs_goes_where_the_checks_found_the_place_fine():
    from appliance.agent.evidence import Evidence, Look
    from appliance.agent.answer.rules import AnswerContext, judge_answer

    deleted_ok = Finding("deleted_open", OK, "no space held by deleted files worth noting: 3 deleted files still open, "
                                             "0 B in all; the biggest, 0 B, in process_api (pid 1)")
    place = Finding("filesystem_full", OK, "/mnt/cache is 3 % used, 62.0 MiB free of 64.0 MiB",
                    {"mount": "/mnt/cache", "used_percent": 3.0}, path="/mnt/cache")
    listing = Look("/mnt/cache", "dir_sizes", {"path": "/mnt/cache"}, {"status": "ok", "data": {}})
    ctx = AnswerContext(question="Is any deleted file still holding space on /mnt/cache? If so, which process holds it?",
                        evidence=Evidence(findings=(deleted_ok, place), topics=("deleted_open",), looks=(listing,),
                                          places=(place,)),
                        bodies=[deleted_ok.line(), place.line()], tools_worked=True)
    verdict = judge_answer("No: /mnt/cache is 3 % used; process_api (pid 1) holds the biggest deleted file, 0 B.",
                           {"culprit": "process_api", "process": "process_api"}, ctx)
    assert verdict.problem is None and "culprit" not in verdict.result and "process" not in verdict.result


def test_a_storage_question_about_a_named_place_names_the_fault_the_checks_found_there():
    """Writing to a named folder fails and the checks found its filesystem read-only: an answer
    about another filesystem ("/ is mounted rw") misses the asked place's fault and goes
    back, its retry beginning with the place's verdict."""
    from appliance.agent.evidence import Evidence, Look
    from appliance.agent.answer.rules import AnswerContext, judge_answer
    from appliance.agent.answer.steer import steer

    ro = Finding("readonly_fs", WARNING, "/srv/docs (tmpfs) is mounted read-only: writes there fail with 'Read-only "
                                         "file system'", {"mount": "/srv/docs"}, culprit="/srv/docs", path="/srv/docs")
    root_ok = Finding("filesystem_full", OK, "no filesystem is full: the fullest, / (ext4) is 23 % used")
    listing = Look("/srv/docs/reports", "dir_sizes", {"path": "/srv/docs/reports"}, {"status": "ok", "data": {}})
    question = "Writing to /srv/docs/reports fails. How is the filesystem there mounted, and is that the problem?"
    ctx = AnswerContext(question=question, evidence=Evidence(findings=(root_ok, ro), topics=("readonly_fs",),
                                                             looks=(listing,), places=(ro,)),
                        bodies=[root_ok.line(), ro.line(), "mount=/ fstype=ext4 options=rw,relatime"], tools_worked=True)
    verdict = judge_answer("The / filesystem (ext4) is mounted rw,relatime.", {}, ctx)
    assert verdict.problem is not None and verdict.problem.startswith("[misses-the-check: [warning] readonly_fs:")
    assert steer(verdict.misfit, question, ctx.evidence, ctx.bodies).openings == ("/srv/docs (tmpfs) is mounted read-only",)
    assert judge_answer("/srv/docs is mounted read-only, so writes there fail with 'Read-only file system'.", {},
                        ctx).problem is None
    # a full place whose space a process holds in deleted files: naming that process answers it
    full = Finding("filesystem_full", CRITICAL, "full: /srv/docs (tmpfs) is 97 % used, 2.0 MiB free of 64.0 MiB",
                   {"mount": "/srv/docs", "used_percent": 97.0}, culprit="/srv/docs", path="/srv/docs")
    held = Finding("deleted_open", WARNING, "58.0 MiB held by deleted files: the most, 58.0 MiB, by logshipper (pid 77)",
                   culprit="logshipper", pid=77)
    filling = AnswerContext(question="/srv/docs keeps filling up but I can't find any big files in it, what's taking the space?",
                            evidence=Evidence(findings=(held, full), topics=("deleted_open", "filesystem_full"),
                                              looks=(listing,), places=(full,)),
                            bodies=[held.line(), full.line()], tools_worked=True)
    assert judge_answer("logshipper (pid 77) holds 58.0 MiB in deleted files.", {}, filling).problem is None
    assert judge_answer("The / filesystem (ext4) is mounted rw,relatime.", {}, filling).problem is not None


def test_a_place_the_question_names_is_no_answer_without_what_the_checks_found_there():
    """Class: a complaint about a place it names ("I can't save files in /srv/docs anymore", "the mail
    thing won't start, config is in /etc/relay/relay.conf") where a check found the fault there:
    naming the place alone echoes the question ("budget.csv is the largest file in /srv/docs"); the
    fault said, or the setting and value the verdict found, answers it. A culprit named by itself
    (a setting) answers it as before."""
    from appliance.agent.evidence import Evidence, Look
    from appliance.agent.answer.rules import AnswerContext, judge_answer
    from appliance.agent.question.kinds import Asks
    from appliance.agent.question.question import read_question

    ro = Finding("readonly_fs", WARNING, "/srv/docs (tmpfs) is mounted read-only: writes there fail with 'Read-only "
                                         "file system'", {"mount": "/srv/docs"}, culprit="/srv/docs", path="/srv/docs")
    root_ok = Finding("filesystem_full", OK, "no filesystem is full: the fullest, / (ext4) is 23 % used")
    listing = Look("/srv/docs", "dir_sizes", {"path": "/srv/docs"}, {"status": "ok", "data": {}})
    question = read_question("I can't save files in /srv/docs anymore")
    assert question.asks is Asks.EXPLANATION and question.paths == ("/srv/docs",)
    ctx = AnswerContext(question=question, evidence=Evidence(findings=(root_ok, ro), topics=("readonly_fs",),
                                                             looks=(listing,), places=(ro,)),
                        bodies=[root_ok.line(), ro.line(), 'path=/srv/docs/budget.csv size="4.0 KiB"'], tools_worked=True)
    echo = judge_answer("budget.csv is the largest file in /srv/docs, 4.0 KiB.", {}, ctx)
    assert echo.problem is not None and echo.problem.startswith("[misses-the-check: [warning] readonly_fs:")
    assert judge_answer("/srv/docs is mounted read-only, so nothing can be saved there.", {}, ctx).problem is None

    conf = "/etc/relay/relay.conf"
    bad = Finding("config", WARNING, f"invalid setting: {conf} line 4: listen_port = 99999 is not a valid port (1–65535)",
                  {"path": conf, "line": 4, "setting": "listen_port"}, culprit="listen_port", path=conf)
    read = Look(conf, "read_file", {"path": conf}, {"status": "ok", "data": {}})
    mail = read_question(f"the mail thing won't start, config is in {conf}")
    ctx = AnswerContext(question=mail, evidence=Evidence(findings=(bad,), topics=(), looks=(read,), places=(bad,)),
                        bodies=[bad.line(), f"path={conf}\n  listen_port = 99999"], tools_worked=True)
    echo = judge_answer(f"The mail relay configuration is in {conf}, which is not in the allowed list.", {}, ctx)
    assert echo.problem is not None and "[warning] config:" in echo.problem
    assert judge_answer(f"listen_port = 99999 in {conf} is not a valid port.", {}, ctx).problem is None


def test_a_share_in_percent_is_an_observed_fact_written_or_rounded():
    """An answer that states the share a verdict or a tool showed ("26 % used", used_percent=25.6)
    names an observed fact, as written or rounded to a whole number; a share no observation shows
    does not."""
    from appliance.agent.answer.checks import check_answer

    verdict = ["[ok] filesystem_full: no filesystem is full: the fullest, / (ext4) is 26 % used, 75.4 GiB free"]
    tool = ["headline: fullest: / 25.6% used\nfilesystems:\n  mount=/ used_percent=25.6 read_only=no"]
    for bodies in (verdict, tool):
        assert check_answer("The disk is 26% full.", {"value": "26% full"}, bodies, tools_worked=True).problem is None
    assert check_answer("The disk is 25% full.", {}, tool, tools_worked=True).problem is None  # cut, as before
    assert check_answer("The disk is 61% full.", {}, verdict, tools_worked=True).problem == "[no-observed-fact-named]"


def test_an_entrys_share_of_the_folder_asked_about_is_no_share_of_another_filesystem():
    """"what is eating the space in /x/projects?" answered "render-farm, 96.2% usage" (the share the
    folder verdict gives the entry) names what fills the place; it was refused as the share of
    another filesystem, after the retry had been steered to that very entry."""
    from appliance.agent.answer.agreement import wrong_place

    place = Finding("filesystem_full", OK, "not full: /x/projects is on / (ext4): 24 % used", {"used_percent": 24, "mount": "/"})
    folder = Finding("disk_usage", WARNING, "one entry takes most of the space: /x/projects/render-farm holds 96.2 % "
                     "of /x/projects (48.0 MiB of 49.9 MiB), 74.0× the next (/x/projects/docs-site, 1.3 %)",
                     {"largest_percent": 96.2, "next_percent": 1.3}, culprit="/x/projects/render-farm")
    for answer in ("render-farm.", "render-farm takes 96% of it."):
        assert wrong_place(answer, {"value": "96.2% usage"}, [place], [place, folder]) is None
    # a share no folder verdict states is still another filesystem's
    assert wrong_place("render-farm: the disk is 60% used.", {}, [place], [place, folder]).startswith("[another-place")
    assert wrong_place("render-farm.", {"value": "96.2% usage"}, [place]).startswith("[another-place")  # no verdict given


@pytest.mark.parametrize("question", [
    "Which process has the most threads? Give its name and PID.",  # a process
    "why is my laptop so slow today?",  # an explanation
    "is anything using a lot of the cpu?",  # yes/no
    "how busy is the processor?",  # an amount
])
def test_a_share_no_observation_shows_is_refused_whatever_the_question(question):
    """"302% of the CPU" beside a right name (the thread count said as a share) goes back for
    every kind of question; a share an observation shows, rounded, stays, as do 0 % and 100 %
    and a share the question itself gave."""
    from appliance.agent.evidence import Evidence
    from appliance.agent.answer.rules import AnswerContext, judge_answer

    threads = Finding("threads", OK, "thread counts are normal: the most, 302, in threadfarm-2376 (pid 29368), 19× the "
                                     "next; 435 threads on the machine of a limit of 32768")
    cpu = Finding("cpu", OK, "no CPU hog: the busiest process, threadfarm-2376 (pid 29368), uses 61.2 % of one core")
    ctx = AnswerContext(question=question, evidence=Evidence(findings=(threads, cpu), topics=("threads", "cpu")),
                        bodies=[threads.line(), cpu.line()], tools_worked=True)
    invented = judge_answer("threadfarm-2376 (pid 29368) has 302 threads and is running 302% of the CPU.", {}, ctx)
    assert invented.kind is Kind.UNBACKED_SHARE and invented.invented and "'302%'" in invented.problem
    for shown in ("threadfarm-2376 (pid 29368) has 302 threads and uses 61 % of one core.",
                  "threadfarm-2376 (pid 29368) has 302 threads; it uses 0% of nothing else, 100% of its quota."):
        assert judge_answer(shown, {}, ctx).kind is not Kind.UNBACKED_SHARE, shown
    asked = AnswerContext(question=question + " it says 87% in top", evidence=ctx.evidence, bodies=ctx.bodies,
                          tools_worked=True)
    assert judge_answer("threadfarm-2376 (pid 29368) has 302 threads, the 87% top shows.", {},
                        asked).kind is not Kind.UNBACKED_SHARE


@pytest.mark.parametrize("question", [
    "Are there zombie processes? If so, which?",  # yes/no, if so which
    "why is my laptop so slow today?",  # an explanation
    "which process left zombies behind?",  # a process
])
def test_a_share_only_a_result_field_states_is_dropped_and_the_right_answer_stays(question):
    """Class: answers whose own words are backed but one of whose result fields states a share no
    observation shows (the prompt's example copied into `value`, "12% charge"). The field goes and
    the answer is judged on the rest; an answer whose own words state that share is still refused."""
    from appliance.agent.evidence import Evidence
    from appliance.agent.answer.rules import AnswerContext, judge_answer

    # its number (12) is observed, so the field's words pass the fact check; its share is not
    zombies = Finding("zombies", WARNING, "12 zombie processes: their parent reaper-7 (pid 4100) does not reap them",
                      culprit="reaper-7")
    ctx = AnswerContext(question=question, evidence=Evidence(findings=(zombies,), topics=("zombies",)),
                        bodies=[zombies.line()], tools_worked=True)
    answer = "12 zombie processes: their parent reaper-7 (pid 4100) does not reap them."
    got = judge_answer(answer, {"culprit": "reaper-7", "value": "12% charge"}, ctx)
    assert got.kind is not Kind.UNBACKED_SHARE and "value" in got.dropped and "value" not in got.result
    assert got.result.get("culprit") == "reaper-7"
    refused = judge_answer(answer[:-1] + ", at 12% charge.", {"value": "12% charge"}, ctx)
    assert refused.kind is Kind.UNBACKED_SHARE


def test_a_steered_retrys_words_stating_an_unseen_share_are_cut():
    """The retry begun with the ranking's clause keeps it; its own words after it that state a
    share no observation shows go, as any piece that would be refused on its own."""
    from appliance.agent.answer.steer import kept_after_opening
    from appliance.agent.answer.shares import shown_in_run, unbacked_share

    opening = "the most, 302, in threadfarm-2376 (pid 29368), 19× the next"
    shown = shown_in_run("which program spawned so many threads?", ["uses 61.2 % of one core"], ())
    said = opening + ", which is running 302% of the CPU."
    kept = kept_after_opening(said, (opening,), [], lambda text: unbacked_share(text, shown) is not None,
                              lambda text: True)
    assert kept.startswith(opening) and "302%" not in kept


def test_a_share_a_tool_gives_under_its_own_key_is_shown():
    from appliance.agent.answer.shares import shares_shown, unbacked_share

    shown = shares_shown(["pid=4242 name=burn cpu_percent=99.0 memory_mb=12", '{"mem_pct": 4.2}'])
    assert unbacked_share("burn keeps one core at 99% CPU and 4 % of memory", shown) is None
    assert unbacked_share("burn uses 12% of memory", shown) == "12%"  # its megabytes are no share


def test_a_port_verdict_is_named_by_the_address_a_quoted_log_line_gives():
    """Class: a log's cause line quoted whole ("cannot connect to postgres at 127.0.0.1:60683 …")
    for a log question where a check found nothing listening on that port: the line names the
    port as an address, which names the verdict's culprit ("tcp port 60683"); another port does not."""
    from appliance.agent.answer.said import names_any

    down = Finding("listening", WARNING, "nothing listens on tcp port 60683: a service that should answer there is "
                                         "down or listens elsewhere", culprit="tcp port 60683")
    assert names_any("The log shows 'ERROR db: cannot connect to postgres at 127.0.0.1:60683: [Errno 111]'", [down])
    assert names_any("nothing answers on port 60683", [down])
    assert not names_any("cannot connect to postgres at 127.0.0.1:6068", [down])
    assert not names_any("the log has 60683 lines", [down])


def test_a_result_field_that_claims_a_fault_the_checks_deny_goes_and_the_right_answer_stands():
    """"Why can't I save in DIR?" answered "DIR (tmpfs) is mounted read-only" with the refused
    answer's value "root filesystem is full" kept through the retry: the field goes, the answer
    stands. An answer whose own words claim that fault is still sent back (the rule is about fields
    only), and a field that claims a fault the checks found stays."""
    from appliance.agent.evidence import Evidence
    from appliance.agent.answer.rules import AnswerContext, judge_answer

    ro = Finding("readonly_fs", WARNING, "/srv/docs (tmpfs) is mounted read-only: writes there fail with "
                                         "'Read-only file system'", culprit="/srv/docs")
    full_ok = Finding("filesystem_full", OK, "no filesystem is full: the fullest, / (ext4) is 25 % used")
    evidence = Evidence(findings=(ro, full_ok), topics=("readonly_fs", "filesystem_full"))
    ctx = AnswerContext(question="I can't save files in /srv/docs anymore", evidence=evidence,
                        bodies=[ro.line(), full_ok.line()], tools_worked=True)
    verdict = judge_answer("/srv/docs (tmpfs) is mounted read-only.",
                           {"culprit": "/srv/docs", "value": "root filesystem is full"}, ctx)
    assert verdict.problem is None and "value" in verdict.dropped and verdict.result == {"culprit": "/srv/docs"}
    wrong = judge_answer("The root filesystem is full.", {"culprit": "/"}, ctx)
    assert wrong.problem is not None and wrong.rule is not None
    kept = judge_answer("/srv/docs (tmpfs) is mounted read-only.", {"value": "mounted read-only"}, ctx)
    assert kept.problem is None and kept.result == {"value": "mounted read-only"}


def test_a_denial_worded_answer_that_names_a_problem_of_another_family_is_no_all_clear():
    """Class: a question about one thing (a log's errors) whose cause the checks found in another
    family (the port its program connects to is down). "Nothing listens on tcp port N" is the
    port's warning in its own negative words, not a denial of the log's warning; an all-clear that
    names no problem is still refused, and so is one naming only what an ok verdict names."""
    from appliance.agent.answer.agreement import agreement_misfit
    log = Finding("log_errors", WARNING, "/srv/orders/app.log: 12 errors in the last hour: «cannot connect to "
                                         "127.0.0.1:54161: Connection refused»", {}, path="/srv/orders/app.log")
    down = Finding("listening", WARNING, "nothing listens on tcp port 54161: a service that should answer there "
                                         "is down or listens elsewhere", {"port": 54161}, culprit="tcp port 54161")
    cpu = Finding("cpu", OK, "no CPU hog: the busiest process, orders (pid 40), uses 2 % of one core", {})
    findings = [log, down, cpu]
    said = "Nothing listens on tcp port 54161, so the app cannot reach its database."
    assert agreement_misfit(said, {}, findings, ("log_errors",)) is None
    for clear in ("No errors: the orders app is fine.", "Nothing is wrong with orders (pid 40)."):
        misfit = agreement_misfit(clear, {}, findings, ("log_errors",))
        assert misfit is not None and misfit.finding is log, clear
