"""A port the question names: its verdict is in the first step's evidence (a real listener, a real
free port), and an answer that filtered the socket table into saying something else goes back
once, steered to the verdict's own statement."""

from __future__ import annotations

import os
import socket

import psutil
import pytest

from appliance.agent.answer.misfit import Kind, Misfit

from appliance.agent import events as ev
from appliance.agent.engine import Engine
from appliance.agent.evidence import Evidence, MachineEvidence, named_ports
from appliance.agent.answer.rules import AnswerContext, judge_answer
from appliance.agent.answer.agreement import check_agreement
from appliance.agent.evidence import asked_ports
from appliance.agent.answer.ports import PORT_VERDICT, UNASKED_PORT, port_claim, port_fit, unasked_port
from appliance.agent.settings import EngineSettings
from appliance.agent.answer.steer import steer
from appliance.analyzers.base import OK, WARNING, Finding
from appliance.eval.sandbox import Sandbox, short_token
from appliance.llm.fake import ScriptedModel
from appliance.tools.registry import default_registry

LISTENS = Finding("listening", OK, "tcp port 44307 is listened on by ledgersync-e3f4 (pid 18652) on 127.0.0.1",
                  {"port": 44307, "proto": "tcp", "listening": True, "owner": "ledgersync-e3f4", "owner_pid": 18652})
FREE = Finding("listening", OK, "nothing listens on tcp port 37429: the port is free",
               {"port": 37429, "proto": "tcp", "listening": False})
WHICH = "Something is listening on TCP port 44307 on this machine. Which process is it?"
IS_FREE = "is port 37429 free? I want to start my server on it"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again: nothing listens there now


def test_what_an_answer_says_of_a_port():
    assert port_claim("Nothing listens on port 37429, so it is free.") == "free"
    assert port_claim("No process is listening on it.") == "free"
    assert port_claim("The port 37429 is not free.") == "in use"
    assert port_claim("Port 44307 is listened on by ledgersync (pid 18652).") == "in use"
    assert port_claim("There are no established connections on port 44307.") is None


def test_an_answer_about_what_the_model_filtered_is_not_an_answer_about_the_port():
    ports = named_ports(WHICH)
    assert port_fit(WHICH, "There are no established connections on port 44307.", {}, [LISTENS], ports) \
        .startswith(PORT_VERDICT + ": [ok] listening: tcp port 44307 is listened on by ledgersync-e3f4")
    assert port_fit(WHICH, "Port 44307 is free.", {}, [LISTENS], ports) is not None
    assert port_fit(WHICH, "ledgersync-e3f4 (pid 18652) listens on port 44307.", {}, [LISTENS], ports) is None
    assert port_fit(WHICH, "It is pid 18652.", {}, [LISTENS], ports) is None
    ports = named_ports(IS_FREE)
    assert port_fit(IS_FREE, "The port 37429 is not free.", {}, [FREE], ports) is not None
    assert port_fit(IS_FREE, "Yes, nothing listens on port 37429: it is free.", {}, [FREE], ports) is None
    # a verdict on another port, or none, judges nothing here
    assert port_fit(IS_FREE, "The port 37429 is not free.", {}, [LISTENS], ports) is None
    assert port_fit(IS_FREE, "The port 37429 is not free.", {}, [], ports) is None


def test_the_retry_begins_with_the_ports_verdict_and_may_name_only_its_owner():
    evidence = Evidence((LISTENS,), ("listening",))
    reason = port_fit(WHICH, "There are no established connections on port 44307.", {}, [LISTENS], [44307])
    got = steer(Misfit(Kind.PORT_VERDICT, reason, LISTENS), WHICH, evidence, [])
    assert got.openings == (LISTENS.verdict,) and got.culprits == ("ledgersync-e3f4",)
    reason = port_fit(IS_FREE, "The port 37429 is not free.", {}, [FREE], [37429])
    got = steer(Misfit(Kind.PORT_VERDICT, reason, FREE), IS_FREE, Evidence((FREE,), ("listening",)), [])
    assert got.openings == (FREE.verdict,) and got.culprits == ()


@pytest.fixture
def sandbox():
    with Sandbox(max_seconds=60) as box:
        yield box


LISTENER = """
import socket, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
ready(s.getsockname()[1])
time.sleep(60)
"""


def test_a_named_ports_verdict_is_gathered_before_the_first_step(sandbox):
    name = f"portowner-{short_token()}"
    pid, (port,) = sandbox.spawn(name, LISTENER)
    evidence = MachineEvidence(default_registry()).gather(f"Which process listens on port {port}?", frozenset({os.getpid()}))
    first = next(f for f in evidence.findings if f.family == "listening")
    assert first.values["port"] == int(port) and first.values["owner_pid"] == pid and name in first.verdict
    assert "listening" in evidence.topics and first in evidence.shown()
    free = free_port()
    evidence = MachineEvidence(default_registry()).gather(f"is port {free} free?", frozenset({os.getpid()}))
    verdict = next(f for f in evidence.findings if f.family == "listening")
    assert verdict.severity == OK and verdict.verdict == f"nothing listens on tcp port {free}: the port is free"
    # where the person reports trouble at the port, nothing listening there is the fault
    evidence = MachineEvidence(default_registry()).gather(f"my app can't connect to localhost:{free}",
                                                          frozenset({os.getpid()}))
    verdict = next(f for f in evidence.findings if f.family == "listening")
    assert verdict.severity == WARNING and verdict.values["port"] == free


def test_a_filtered_answer_goes_back_and_the_steered_retry_names_the_owner(sandbox):
    name = f"portowner-{short_token()}"
    pid, (port,) = sandbox.spawn(name, LISTENER)
    question = f"Something is listening on TCP port {port}. Which process is it? Give its name and PID."
    evidence = MachineEvidence(default_registry())
    verdict = evidence.gather(question, frozenset({os.getpid()})).findings[0]
    assert psutil.pid_exists(pid) and verdict.values["owner_pid"] == pid

    def retry(messages, schema):  # the retry as a grammar-bound model writes it: the opening, then its words
        return {"thought": "The check names the owner.", "action": "finish",
                "action_input": {"answer": verdict.verdict + ", so that process owns the port.",
                                 "result": {"culprit": name, "pid": pid}, "evidence": [verdict.verdict]}}

    wrong = {"thought": "done", "action": "finish",
             "action_input": {"answer": f"There are no established connections on port {port}.",
                              "result": {}, "evidence": []}}
    engine = Engine(ScriptedModel([wrong, retry]), default_registry(), EngineSettings(max_steps=4),
                    snapshot=lambda pids: {}, evidence=evidence)
    events = list(engine.run(question))
    rejected = [e for e in events if isinstance(e, ev.AnswerRejected)]
    assert rejected and rejected[0].reason.startswith(PORT_VERDICT)
    final = [e for e in events if isinstance(e, ev.FinalAnswer)][-1]
    assert not final.forced and final.answer.startswith(verdict.verdict) and str(pid) in final.answer


def test_the_judge_sends_back_a_free_port_called_taken():
    ctx = AnswerContext(question=IS_FREE, evidence=Evidence((FREE,), ("listening",)),
                        bodies=["headline: port 37429: no process listens on it"], tools_worked=True)
    verdict = judge_answer("The port 37429 is not free. The kernel killed a process on it.", {}, ctx)
    assert verdict.problem is not None and verdict.problem.startswith(PORT_VERDICT)
    verdict = judge_answer("Yes: nothing listens on tcp port 37429, the port is free.", {}, ctx)
    assert verdict.problem is None


def test_a_denial_about_a_port_the_question_never_named_answers_another_question():
    question = "Does any process hold an unusually large number of network connections? If so, which?"
    said = "There are no established connections on port 443."
    assert unasked_port(said, named_ports(question)).startswith(UNASKED_PORT + ": the answer is about port 443")
    assert unasked_port("fanout (pid 7) holds 80 connections to port 443.", []) is None  # no denial
    assert unasked_port("Nothing listens on port 44307.", named_ports(WHICH)) is None  # the asked port
    connections_ok = Finding("connections", OK, "connections are normal: 40 inbound to local listeners, 40 outbound")
    evidence = Evidence((connections_ok,), ("connections",))
    ctx = AnswerContext(question=question, evidence=evidence, tools_worked=True,
                        bodies=["error: no matching sockets on port 443\nestablished_by_remote=[]"])
    verdict = judge_answer(said, {}, ctx)
    assert verdict.problem is not None and verdict.problem.startswith(UNASKED_PORT)
    got = steer(verdict.misfit, question, evidence, list(ctx.bodies))
    assert got.openings == ("No problem found: connections are normal",)


def test_a_port_a_verdict_names_is_not_unasked():
    """A log's refused connection gets a verdict on its port; an answer that states that verdict
    talks about a port the run was shown, not one the model made up."""
    question = "The orders app cannot reach its database; its log is /srv/orders/app.log. What is wrong?"
    refused = Finding("dependencies", WARNING, "nothing listens on tcp port 54161: a service that should answer "
                                               "there is down or listens elsewhere", {"port": 54161},
                      culprit="tcp port 54161")
    answer = "nothing listens on tcp port 54161: a service that should answer there is down or listens elsewhere"
    assert unasked_port(answer, asked_ports(named_ports(question), [refused])) is None
    assert unasked_port("Nothing listens on port 8804.", asked_ports(named_ports(question), [refused]))
    ctx = AnswerContext(question=question, evidence=Evidence((refused,), ("dependencies",)), tools_worked=True,
                        bodies=[refused.line(), "ERROR db: cannot connect to postgres at 127.0.0.1:54161: "
                                                "[Errno 111] Connection refused"])
    # ... nor, in the verdict's own negative words, a denial of the problem it states
    assert judge_answer(answer, {"culprit": "tcp port 54161"}, ctx).problem is None
    assert check_agreement("No problems: the orders app is fine.", {}, [refused], ("dependencies",)) \
        .startswith("[contradicts-check")
