"""The scorers of the families about one named thing (issue 52), on their real plants: for each family
a right answer passes and a wrong one fails, on the fault and on the control (texts written here,
never a model's). Also: the gateway is not this machine's address, nor is a longer address that
begins with it; an installed program answered with a no fails however it is put."""

from __future__ import annotations

import contextlib

import pytest

from appliance.eval.families_profiles import SEALED_FAMILIES, TUNED_FAMILIES
from appliance.eval.scenarios import by_name
from appliance.eval.scoring import Outcome

NAMES = [f.name for f in (*TUNED_FAMILIES, *SEALED_FAMILIES)]


def finished(answer: str) -> Outcome:
    return Outcome(status="finished", answer=answer)


@pytest.fixture(scope="module")
def planted():
    """Every family's fault (its precise case) and control, planted once, torn down at the end."""
    with contextlib.ExitStack() as stack:
        yield {f"{name}.{kind}": stack.enter_context(by_name()[f"{name}.{kind}"].setup())
               for name in NAMES for kind in ("precise", "control")}


def _day(truth) -> str:
    return truth["not_after"][:10]


# family: (fault truth -> (right, wrong), control truth -> (right, wrong))
ANSWERS = {
    "immutable": (
        lambda t: ("The file has the immutable attribute (lsattr shows i); run chattr -i to allow changes.",
                   "The folder belongs to root with mode 755, so only root can write there."),
        lambda t: ("No, nothing prevents it: the file is writable (mode 644, no immutable attribute).",
                   "Yes, the file is marked so that nobody may change it.")),
    "certificate": (
        lambda t: (f"The certificate expired on {_day(t)}, so browsers reject it.",
                   "The certificate is fine; clear the browser's cache."),
        lambda t: (f"No, it is valid until {_day(t)}, about a year from now.",
                   "Yes, the certificate has expired.")),
    "stopped_process": (
        lambda t: (f"{t['name']} (pid {t['pid']}) is stopped (state T): it got SIGSTOP. Send SIGCONT to resume it.",
                   f"{t['name']} (pid {t['pid']}) is sleeping while it waits for work."),
        lambda t: (f"Yes, {t['name']} (pid {t['pid']}) is running normally; it is sleeping between polls, not "
                   f"stopped.", f"{t['name']} (pid {t['pid']}) is stopped by SIGSTOP.")),
    "stale_pidfile": (
        lambda t: (f"The pid file names pid {t['pid']}, but no process with that pid is running: the file is stale. "
                   f"Remove it and start the service.", "The service is already running as pid 1; stop it first."),
        lambda t: (f"Yes, pid {t['pid']} ({t['name']}) is running.",
                   f"No, the pid file is stale: pid {t['pid']} is not running.")),
    "writing_to": (
        lambda t: (f"It is writing to {t['path']}, which it holds open for appending.",
                   "It is writing to customers.csv."),
        lambda t: ("No, it only reads exportd.conf and customers.csv; nothing is open for writing.",
                   "It writes to customers.csv every half second.")),
    "not_executable": (
        lambda t: ("The script has no execute permission (mode 644, -rw-r--r--); run chmod +x on it.",
                   "The folder it is in cannot be read by your user."),
        lambda t: ("No, nothing stops it: the script is executable (mode 755).",
                   "Yes, nobody may run it.")),
    "script_format": (
        lambda t: ("The script has Windows (CRLF) line endings, so the kernel looks for '/bin/bash\\r'; convert it "
                   "with dos2unix.", "bash is missing from /bin; install it again."),
        lambda t: ("No, it has Unix line endings and will run.", "Yes, the first line names a shell that is missing.")),
    "cpu_pinned": (
        lambda t: (f"Its CPU affinity is CPU {t['allowed_cpus'][0]} only (taskset shows it pinned), so all its "
                   f"threads share one core.", f"{t['name']} is single-threaded, so it uses one core at most."),
        lambda t: (f"No, it may run on all {len(t['machine_cpus'])} CPUs; it is not pinned.",
                   f"Yes, it is pinned to CPU {t['machine_cpus'][0]}.")),
    "installed": (
        lambda t: (f"No, {t['program']} is not installed: no folder on PATH has it and no package provides it.",
                   f"Yes, {t['program']} is installed at /usr/bin/{t['program']}."),
        lambda t: (f"Yes, {t['program']} is installed at {t['path']}, from the {t['package'] or 'system'} package.",
                   f"No, {t['program']} is not installed.")),
    "own_address": (
        lambda t: (f"This machine's address is {t['addresses'][0]}.", f"The address is {t['gateway']}."),
        lambda t: (f"It has {t['addresses'][-1]} on its network interface.", "Its address is 127.0.0.1.")),
}


def test_every_family_has_answers():
    assert set(ANSWERS) == set(NAMES)


@pytest.mark.parametrize("family", NAMES)
def test_a_right_answer_passes_and_a_wrong_one_fails_on_the_fault_and_on_the_control(planted, family):
    for kind, answers in zip(("precise", "control"), ANSWERS[family]):
        case = planted[f"{family}.{kind}"]
        right, wrong = answers(case.truth)
        verdict = case.score(finished(right))
        assert verdict.success, (kind, right, verdict.reason)
        assert not case.score(finished(wrong)).success, (kind, wrong)
        forced = Outcome(status="finished", answer=right, model_answered=False)
        assert not case.score(forced).success  # the engine's summary is no answer of the model's


def test_an_all_clear_fails_on_every_fault(planted):
    for family in (f for f in NAMES if f != "own_address"):  # a question of fact has no fault
        assert not planted[f"{family}.precise"].score(finished("Nothing is wrong: everything looks fine.")).success


def test_the_gateway_or_a_longer_address_is_not_this_machines_address(planted):
    case = planted["own_address.precise"]
    addresses, gateway = case.truth["addresses"], case.truth["gateway"]
    if not addresses:
        pytest.skip("this machine has no address but loopback")
    assert case.score(finished(f"It is {addresses[0]}, and the gateway is {gateway}.")).success
    assert case.score(finished(f"ip: {addresses[0]}.")).success  # a full stop after it is no longer address
    assert not case.score(finished(f"It is {addresses[0]}5.")).success
    if gateway:
        assert not case.score(finished(f"Your gateway is {gateway}; that is how others reach you.")).success


def test_an_installed_program_answered_with_a_no_fails_however_it_is_put(planted):
    case = planted["installed.control"]
    program = case.truth["program"]
    for answer in (f"No, {program} isn't on this machine.", "No.", f"{program} could not be found anywhere.",
                   f"I could not find {program} on PATH."):
        assert not case.score(finished(answer)).success, answer
    assert case.score(finished(f"Yes, {case.truth['path']}.")).success
