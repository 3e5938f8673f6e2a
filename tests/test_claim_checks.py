"""The general checks a claim passes, each on typed facts (agent/claim_checks.py): what each refuses,
why in one line, how it narrows the retry, and the right claims of several kinds it lets stand."""

from __future__ import annotations

import pytest

from appliance.agent.claim import Choices, Claim, Narrowing, claim_schema
from appliance.agent.claim_backing import completed, same_number
from appliance.agent.claim_checks import CHECKS, Situation, judge
from appliance.agent.facts import FactBook, Quantity
from appliance.agent.question.kinds import Asks
from appliance.analyzers.base import CRITICAL, OK, WARNING, Finding

MEMORY_OK = Finding("memory", OK, "no memory pressure: 22.2 GiB of 23.4 GiB available (95 %); the top consumer is "
                                  "indexer (pid 812) with 11.2 MiB (0 % of RAM)")
FULL = Finding("filesystem_full", CRITICAL, "/srv is 100 % full: 0 B free of 4.0 GiB", culprit="/srv", path="/srv")
OOM_PAST = Finding("oom", WARNING, "the kernel killed worker (pid 300) for memory 40 minutes ago",
                   culprit="worker", pid=300)


def book(*findings: Finding, lines: tuple[tuple[str, str, str], ...] = (), self_pids=frozenset({999})) -> FactBook:
    facts = FactBook(self_pids)
    facts.number_findings(findings, past_families=("oom",))
    for source, line, status in lines:
        facts.add_line(source, line, status)
    return facts


def situation(facts: FactBook, asks: Asks = Asks.EXPLANATION, families=(), mentions=(), question="q",
              retries=0, call_for=lambda m: None) -> Situation:
    return Situation(asks=asks, families=tuple(families), mentions=tuple(mentions), question_text=question,
                     book=facts, retries=retries, call_for=call_for)


def claim(stance, cites, answer, subject="", value="") -> Claim:
    return Claim(stance, tuple(cites), answer, subject, value)


def test_a_cite_that_was_never_shown_and_an_empty_sentence_go_back():
    facts = book(MEMORY_OK)
    assert judge(claim("value", ["F9"], "x"), situation(facts)).check == "cites"
    assert judge(claim("value", ["F1"], ""), situation(facts)).check == "cites"


def test_the_appliance_itself_is_never_the_subject_and_the_retry_drops_it():
    facts = book(lines=(("top_processes", "pid=999 name=\"appliance (appliance itself)\" cpu_percent=80.0", "ok"),
                        ("top_processes", "pid=812 name=indexer cpu_percent=2.0", "ok")))
    retry = judge(claim("problem", ["F1"], "the appliance uses 80% CPU", subject="appliance (appliance itself) (pid 999)"),
                  situation(facts, Asks.PROCESS))
    assert retry.check == "self" and "appliance (appliance itself) (pid 999)" in retry.narrowing.drop_subjects
    assert "appliance (appliance itself) (pid 999)" not in facts.subjects()


def test_a_number_an_uncited_fact_holds_is_cited_for_it_and_one_no_fact_holds_goes_back():
    facts = book(lines=(("memory_report", 'total="23.4 GiB" used="833.9 MiB" available="22.2 GiB"', "ok"),
                        ("memory_report", "pid=812 name=indexer memory=\"11.2 MiB\"", "ok")))
    s = situation(facts, Asks.AMOUNT)
    found = completed(claim("value", ["F2"], "22.2 GiB is available.", value="22.2 GiB"), s)
    assert found.cites == ("F2", "F1") and found.answer == "22.2 GiB is available." and judge(found, s) is None
    made_up = completed(claim("value", ["F1"], "17.5 GiB is available.", value="17.5 GiB"), s)
    assert made_up.cites == ("F1",)
    retry = judge(made_up, s)
    assert retry.check == "backed" and "17.5 GiB" in retry.reason


@pytest.mark.parametrize("said, unit, held, ok", [
    (99, "%", Quantity(98.7, "%", None), True),  # said at the precision stated
    (1.5, "GB", Quantity(1430.0, "MiB", None), True),  # the same bytes in another unit
    (2, "GiB", Quantity(2.0, "MiB", None), False),
    (42, "", Quantity(24.0, "", None), False),
])
def test_numbers_match_as_stated(said, unit, held, ok):
    assert same_number(said, unit, held) is ok


def test_a_path_and_a_name_no_cited_fact_shows_go_back():
    facts = book(FULL, lines=(("top_processes", "pid=812 name=indexer cpu_percent=2.0", "ok"),))
    assert judge(claim("problem", ["F1"], "/srv/cache fills /srv."), situation(facts)).check == "backed"
    named = claim("problem", ["F1"], "indexer fills /srv.")
    assert completed(named, situation(facts)).cites == ("F1", "F2")  # F2 shows indexer: it is cited for it
    assert judge(named, situation(facts)) is None
    assert judge(claim("problem", ["F1"], "/srv is 100 % full, with 0 B free."), situation(facts)) is None


def test_fact_ids_stay_out_of_the_sentence_the_person_reads():
    facts = book(FULL)
    assert judge(claim("problem", ["F1"], "As F1 shows, /srv is 100 % full."), situation(facts)).check == "cites"
    assert judge(claim("problem", ["F1"], "/srv is 100 % full."), situation(facts)) is None


def test_a_value_of_the_thing_the_question_names_needs_no_subject():
    facts = book(lines=(("dir_sizes", 'path=/data/in total="300.0 MiB"', "ok"),
                        ("top_processes", 'pid=812 name=indexer memory="12.0 MiB"', "ok")))
    named = situation(facts, Asks.AMOUNT, mentions=("/data/in",))
    assert judge(claim("value", ["F1"], "/data/in holds 300 MiB.", value="300 MiB"), named) is None
    retry = judge(claim("value", ["F2"], "It holds 12 MiB.", value="12 MiB"), named)
    assert retry.check == "value" and "indexer" in retry.reason


def test_a_value_held_by_another_entity_is_refused_by_the_entity_not_by_words():
    facts = book(MEMORY_OK)
    asked = situation(facts, Asks.AMOUNT, families=("memory",))
    retry = judge(claim("value", ["F1"], "11.2 MiB of memory is available.", value="11.2 MiB"), asked)
    assert retry.check == "value" and "indexer (pid 812)" in retry.reason
    assert judge(claim("value", ["F1"], "22.2 GiB of memory is available.", value="22.2 GiB"), asked) is None
    about_it = claim("value", ["F1"], "indexer uses 11.2 MiB.", subject="indexer (pid 812)", value="11.2 MiB")
    assert judge(about_it, situation(facts, Asks.PROCESS, families=("memory",))) is None


def test_an_all_clear_over_a_current_problem_of_the_part_asked_goes_back_narrowed_but_a_past_event_does_not():
    facts = book(FULL, MEMORY_OK, OOM_PAST)
    retry = judge(claim("no_problem", ["F2"], "Nothing is wrong."), situation(facts, families=("filesystem_full",)))
    assert retry.check == "overlooked" and retry.narrowing.drop_stances == {"no_problem"}
    assert retry.narrowing.first_cite == ("F1",)
    # an OOM kill of 40 minutes ago is an event, not the state of the memory asked about
    assert judge(claim("no_problem", ["F2"], "No memory pressure: 22.2 GiB available."),
                 situation(facts, families=("memory", "oom"))) is None
    # another part's problem does not refuse an all-clear about this one
    assert judge(claim("no_problem", ["F2"], "No memory pressure."), situation(facts, families=("memory",))) is None


def test_a_problem_claimed_where_the_checks_found_none_goes_back_without_the_problem_stance():
    facts = book(MEMORY_OK)
    retry = judge(claim("problem", ["F1"], "Memory is exhausted."), situation(facts, families=("memory",)))
    assert retry.check == "unshown" and retry.narrowing.drop_stances == {"problem"}
    log = book(MEMORY_OK, lines=(("read_log", "2026-12-07 10:00 ERROR export: disk quota exceeded", "ok"),))
    assert judge(claim("problem", ["F2"], "The export failed: disk quota exceeded."), situation(log)) is None


def test_a_problem_about_the_part_asked_names_what_its_verdict_is_about():
    zombies = Finding("zombies", WARNING, "7 zombie processes, all children of reaper (pid 42)", culprit="reaper", pid=42)
    hot = Finding("cpu", CRITICAL, "CPU saturated: busiest python (pid 99)", culprit="python", pid=99)
    facts = book(zombies, hot)
    asked = situation(facts, Asks.PROCESS, families=("zombies",))
    assert judge(claim("problem", ["F2"], "python (pid 99) is busy.", subject="python (pid 99)"), asked).check == "overlooked"
    wrong = judge(claim("problem", ["F1", "F2"], "python (pid 99) is their parent.", subject="python (pid 99)"), asked)
    assert wrong.check == "overlooked" and "python (pid 99)" in wrong.narrowing.drop_subjects
    assert judge(claim("problem", ["F1"], "reaper (pid 42) is their parent.", subject="reaper (pid 42)"), asked) is None


def test_an_absence_needs_a_search_and_the_retry_runs_one_when_none_was_made():
    facts = book(MEMORY_OK)
    call = ("inspect_program", {"name": "pgbouncer"})
    retry = judge(claim("no", ["F1"], "No, pgbouncer is not running."),
                  situation(facts, Asks.YES_NO, mentions=("pgbouncer",), call_for=lambda m: call))
    assert retry.check == "absence" and retry.run == call
    searched = book(MEMORY_OK, lines=(("process_tree", "(nothing found)", "empty"),))
    assert searched.get("F2").search
    assert judge(claim("no", ["F2"], "No, pgbouncer is not running."),
                 situation(searched, Asks.YES_NO, mentions=("pgbouncer",))) is None
    # a port is a whole token: 22 is not in a date
    dated = book(lines=(("read_log", "2026-12-22 sshd started", "ok"),))
    assert judge(claim("no", ["F1"], "No, nothing listens on 22."),
                 situation(dated, Asks.YES_NO, mentions=("22",))).check == "absence"


@pytest.mark.parametrize("asks, bad, narrowing", [
    (Asks.COUNT, claim("value", ["F1"], "There are some."), Narrowing(drop_stances=frozenset({"yes", "no"}), need_value=True)),
    (Asks.PROCESS, claim("value", ["F1"], "A process uses it."), Narrowing(need_subject=True)),
    (Asks.SYSTEM_FACT, claim("value", ["F1"], "It is recent."), Narrowing(need_value=True)),
])
def test_the_form_fits_what_is_asked(asks, bad, narrowing):
    facts = book(MEMORY_OK)
    retry = judge(bad, situation(facts, asks))
    assert retry.check == "form" and retry.narrowing == narrowing


def test_why_asks_for_a_problem_or_an_all_clear_and_cannot_tell_stands_only_where_it_should():
    facts = book(MEMORY_OK)
    assert judge(claim("value", ["F1"], "indexer uses 11.2 MiB.", value="11.2 MiB",
                       subject="indexer (pid 812)"), situation(facts, Asks.EXPLANATION)).check == "form"
    assert judge(claim("no_problem", ["F1"], "Nothing is slowing it: 22.2 GiB of memory available."),
                 situation(facts, Asks.EXPLANATION)) is None
    assert judge(claim("cannot_tell", ["F1"], "That is not about this computer."),
                 situation(facts, Asks.OUT_OF_SCOPE)) is None
    assert judge(claim("cannot_tell", ["F1"], "I cannot tell."), situation(facts, Asks.COUNT)).check == "gave_up"
    assert judge(claim("cannot_tell", ["F1"], "I cannot tell."), situation(facts, Asks.COUNT, retries=1)) is None


def test_right_claims_of_many_kinds_stand():
    facts = book(FULL, MEMORY_OK, lines=(
        ("system_overview", 'kernel=6.1.0-18-amd64 cores=2 hostname=build-7', "ok"),
        ("network_connections", "port=22 pid=640 name=sshd address=0.0.0.0", "ok"),
        ("dir_sizes", "headline: largest: /srv/cache 3.9 GiB (97%)", "ok")))
    cases = [
        (Asks.SYSTEM_FACT, claim("value", ["F3"], "It runs kernel 6.1.0-18-amd64.", value="6.1.0-18-amd64")),
        (Asks.COUNT, claim("value", ["F3"], "The machine has 2 CPU cores.", value="2")),
        (Asks.YES_NO, claim("yes", ["F4"], "Yes: sshd (pid 640) listens on port 22.", subject="sshd (pid 640)")),
        (Asks.FOLDER, claim("problem", ["F1", "F5"], "/srv is full: /srv/cache holds 3.9 GiB of it.", subject="/srv/cache")),
        (Asks.FILESYSTEM, claim("problem", ["F1"], "/srv is 100 % full.", subject="/srv")),
        (Asks.AMOUNT, claim("value", ["F2"], "22.2 GiB of memory is available.", value="22.2 GiB")),
    ]
    for asks, right in cases:
        assert judge(right, situation(facts, asks, families=("filesystem_full",) if asks is Asks.FOLDER else ())) is None, right


def test_the_claim_grammar_offers_only_what_was_shown_and_what_a_retry_still_may_choose():
    choices = Choices(("F1", "F2", "F3"), ("indexer (pid 812)", "/srv"),
                      Narrowing(frozenset({"no_problem"}), frozenset({"/srv"}), ("F1",), need_subject=True, since=2))
    schema = claim_schema(choices, answer_max=240, value_max=60)
    props = schema["properties"]
    assert list(props) == ["stance", "cites", "subject", "value", "answer"] and schema["required"] == list(props)
    assert "no_problem" not in props["stance"]["enum"]
    assert props["cites"]["items"]["enum"] == ["F1", "F3"]  # the one it must rest on, and what was shown since
    assert props["subject"]["enum"] == ["indexer (pid 812)"]  # "" (none) is gone, and so is the refuted one


def test_the_checks_are_one_short_tuple():
    assert len(CHECKS) <= 10 and len({c.__name__ for c in CHECKS}) == len(CHECKS)


def test_a_sentence_written_as_the_value_is_judged_by_what_the_answer_states():
    facts = book(FULL)
    said = claim("value", ["F1"], "/srv is 100 % full.", value="the filesystem holding srv is full now")
    assert judge(said, situation(facts, Asks.AMOUNT)) is None
    made_up = claim("value", ["F1"], "/srv is 71 % full.", value="the filesystem holding srv is full now")
    assert judge(made_up, situation(facts, Asks.AMOUNT)).check == "backed"
