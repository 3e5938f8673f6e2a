"""A question of fact is answered with the measured value of each fact it asks for (agent/answer/facts.py)."""

from __future__ import annotations

import pytest

from appliance.agent.answer.facts import facts_missed, stating
from appliance.agent.answer.rules import AnswerContext, judge_answer
from appliance.agent.answer.steer import steer
from appliance.agent.answer.misfit import Kind, Misfit
from appliance.agent.evidence import Evidence, Look
from appliance.agent.question.facts import facets_in
from appliance.agent.question.kinds import Asks
from appliance.agent.question.question import read_question

DATA = {"os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0-18-amd64", "hostname": "web1",
        "architecture": "x86_64", "time_zone": "Europe/Berlin (UTC+01:00)",
        "virtualization": "container (docker) on a virtual machine (KVM)",
        "cpu": {"model": "AMD EPYC 7B13 64-Core Processor", "logical_cores": 2}}
BODY = ("os=\"Debian GNU/Linux 12 (bookworm)\" kernel=6.1.0-18-amd64 hostname=web1 time_zone=\"Europe/Berlin\" "
        "virtualization=\"container (docker) on a virtual machine (KVM)\" model=\"AMD EPYC 7B13 64-Core Processor\"")


def _evidence(data=DATA) -> Evidence:
    return Evidence(measured=(Look("this machine", "system_overview", {}, {"status": "ok", "data": data}),))


@pytest.mark.parametrize("text, facets", [
    ("which kernel is this box on, and is it virtualized or a container?", ("kernel", "virtualization")),
    ("what distro is this?", ("os",)),
    ("whats the hostname", ("hostname",)),
    ("what cpu does this thing have and how many cores", ("cpu_model", "cores")),
    ("which time zone is the server set to?", ("time_zone",)),
    ("is this bare metal?", ("virtualization",)),
    ("which linux kernel am i on? container or not?", ("kernel", "virtualization")),
    ("why is my laptop slow?", ()),
    ("when did this thing last restart?", ("uptime",)),
    ("how many days since the last reboot", ("uptime",)),
    ("has the computer been on all night?", ("uptime",)),
    ("when did nginx last restart", ()),  # a program's restart is no boot
    ("how long has the worker been running?", ()),
    ("my app keeps restarting", ()),
])
def test_the_facts_a_question_asks_for(text, facets):
    assert facets_in(text) == facets


def _judge(question: str, answer: str, data=DATA):
    q = read_question(question)
    assert q.asks is Asks.SYSTEM_FACT
    ctx = AnswerContext(question=q, evidence=_evidence(data), bodies=[BODY], tools_worked=True)
    return judge_answer(answer, {}, ctx)


def test_the_distribution_for_the_kernel_goes_back_and_the_retry_begins_with_the_measured_release():
    q = "which kernel is this box on, and is it a container?"
    verdict = _judge(q, "The kernel is Debian GNU/Linux 12 (bookworm), and this is not a VM.")
    assert verdict.rule == "names-the-fact" and verdict.kind is Kind.FACT_NOT_NAMED
    assert "6.1.0-18-amd64" in verdict.problem and "container (docker)" in verdict.problem
    misfit = Misfit(verdict.kind, verdict.problem, verdict.finding, own=verdict.own, name=verdict.name)
    opening = steer(misfit, read_question(q), _evidence(), [BODY]).openings[0]
    assert opening.startswith("The kernel release is 6.1.0-18-amd64")
    right = "The kernel release is 6.1.0-18-amd64, and it runs in a docker container on a KVM virtual machine."
    assert _judge(q, right).problem is None


@pytest.mark.parametrize("question, answer, named", [
    ("what distro is this?", "Debian 12 (bookworm).", True),
    ("what distro is this?", "It is Ubuntu.", False),
    ("which time zone is the server set to?", "It is set to Europe/Berlin.", True),
    ("which time zone is the server set to?", "UTC+01:00", True),
    ("what cpu does this thing have?", "An AMD EPYC 7B13.", True),
    ("is this bare metal?", "No: it runs in a docker container.", True),
    ("is this bare metal?", "Yes, it is bare metal.", False),
])
def test_a_fact_is_named_in_the_words_people_use_for_it(question, answer, named):
    assert (not facts_missed(answer, read_question(question).facts, _evidence())) is named


def test_bare_metal_is_named_by_saying_so_and_a_fact_not_measured_is_not_asked_of_the_answer():
    metal = {**DATA, "virtualization": "none (bare metal)"}
    assert not facts_missed("It is a physical machine, not a VM.", ("virtualization",), _evidence(metal))
    assert facts_missed("It is a KVM virtual machine.", ("virtualization",), _evidence(metal))
    assert not facts_missed("I cannot tell.", ("kernel",), Evidence())  # nothing measured: other rules judge
    assert stating(facts_missed("?", ("hostname", "kernel"), _evidence())) == \
        "The hostname is web1; the kernel release is 6.1.0-18-amd64"


def test_a_retry_states_every_fact_asked_not_only_the_one_missed():
    """Told only the fact it missed, a small model drops the one it had right: the retry's opening
    states them all."""
    q = "give me the kernel release and tell me if this is a physical machine"
    verdict = _judge(q, "The kernel release is 6.1.0-18-amd64; this is a physical machine.")
    assert verdict.rule == "names-the-fact" and "6.1.0-18-amd64" not in verdict.problem
    assert verdict.name == ("The kernel release is 6.1.0-18-amd64; the virtualization is container (docker) on a "
                            "virtual machine (KVM)")


def test_the_engines_own_answer_to_a_question_of_fact_begins_with_the_facts_asked():
    from appliance.agent.answer.assemble import assemble
    from appliance.analyzers.base import WARNING, Finding
    errors = Finding("kernel_errors", WARNING, "the kernel logged 4 errors in the last hour")
    evidence = Evidence((errors,), ("kernel_errors",), measured=_evidence().measured)
    text = assemble(read_question("what kernel version does this box run?"), evidence, "no answer held").text
    assert text.startswith("The kernel release is 6.1.0-18-amd64.")
    assert "the kernel logged 4 errors" in text


def test_when_the_machine_last_restarted_is_answered_with_the_time_since_boot():
    """Class: the machine's restart asked as a fact ("when did this thing last restart?"): an answer
    that says nothing restarts, or another duration, goes back; the measured uptime, in any units,
    passes."""
    from dataclasses import replace
    q = replace(read_question("when did this thing last restart?"), asks=Asks.SYSTEM_FACT)
    ctx = AnswerContext(question=q, evidence=_evidence({**DATA, "uptime": "3 h 31 min"}),
                        bodies=[BODY + ' uptime="3 h 31 min"'], tools_worked=True)
    wrong = judge_answer("The system is running fine, it was up 9 hours.", {}, ctx)
    assert wrong.kind is Kind.FACT_NOT_NAMED and "3 h 31 min" in wrong.problem
    assert judge_answer("It restarted about 3 hours and 32 minutes ago.", {}, ctx).problem is None
    # the same uptime said twice (in the text and the result field, or twice in the text) is one
    # duration, not their sum; two different durations pass when one of them is the uptime
    twice = judge_answer("The machine has been up for 3 hours and 31 minutes.", {"value": "3 hours and 31 minutes"}, ctx)
    assert twice.problem is None
    assert judge_answer("Up 3 h 31 min. That is 3 hours and 31 minutes since the boot.", {}, ctx).problem is None
    assert judge_answer("Up 2 h, and the job ran 1 h 31 min ago.", {}, ctx).kind is Kind.FACT_NOT_NAMED


def test_durations_are_read_one_at_a_time():
    from appliance.agent.answer.quantities import duration, durations
    assert durations("up 16 hours and 14 minutes") == [16 * 3600 + 14 * 60]
    assert durations("16 h 14 min; 16 hours, and 14 minutes") == [58440.0, 58440.0]
    assert durations("took 5 s, then 12.0 MiB, then 3 min") == [5.0, 180.0]
    assert duration("no time here") is None and durations("") == []


@pytest.mark.parametrize("text, owed", [
    # the class: an amount (a count) that is itself a fact of the overview
    ("how long since the last reboot?", ("uptime",)),
    ("how long has this box been up", ("uptime",)),
    ("how many cores does this machine have?", ("cores",)),
    # other kinds and other amounts owe none: a fact named, not asked; a complaint's how-long
    ("how much memory does the vm use?", ()),
    ("how long has the server been running slow?", ()),
    ("has the computer been rebooted lately?", ()),
    ("why did the machine reboot?", ()),
    ("how much disk space is free?", ()),
])
def test_an_amount_that_is_a_plain_fact_is_owed_by_its_answer(text, owed):
    from appliance.agent.kind_looks import OVERVIEW, kind_looks
    q = read_question(text)
    assert q.facts_owed == owed, q
    assert (OVERVIEW in kind_looks(q)) is bool(owed)  # its value is measured before the first step


def test_how_long_since_the_last_reboot_is_answered_with_the_uptime_not_other_numbers():
    """"how long since the last reboot?" answered with the CPU's clock and the RAM (numbers an
    observation shows, so the shape holds) goes back; the retry begins with the uptime."""
    q = read_question("how long since the last reboot?")
    assert q.asks is Asks.AMOUNT
    data = {**DATA, "uptime": "11 h 45 min"}
    ctx = AnswerContext(question=q, evidence=_evidence(data), bodies=[BODY + ' uptime="11 h 45 min" total="23.6 GiB"'],
                        tools_worked=True)
    wrong = judge_answer("The system runs on a virtual machine with 23.6 GiB of RAM.", {}, ctx)
    assert wrong.rule == "names-the-fact" and wrong.name == "The time since the last boot is 11 h 45 min"
    assert judge_answer("It was last rebooted 11 h 45 min ago.", {}, ctx).problem is None
