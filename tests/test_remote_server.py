"""A real OpenAI-compatible server on loopback (llama-cpp-python's, with SmolLM2) behind
`--model NAME`: `appliance ask` and the TUI run against it, and its failures end runs in one line."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

from appliance.agent import events as ev
from appliance.agent.settings import EngineSettings
from appliance.cli import main
from appliance.config import resolve_paths
from appliance.llm.runtime import open_chat_model
from appliance.store import open_recorder, open_store
from support.remote import API_KEY, MODEL_ALIAS, LlamaServer, add_remote, error_lines, free_port
from support.tui import ask as tui_ask
from support.tui import make_app, run, wait_for

pytestmark = [pytest.mark.model, pytest.mark.slow]

# Kept to one model call where possible (the machine is shared): a question the snapshot answers,
# so step 1 may finish, with one step. The server keeps the system prompt's KV cache across tests.
QUESTION = "what is using the most cpu?"
TOOL_QUESTION = "what is listening on port 8080?"  # not answered by the snapshot: step 1 must use a tool


@pytest.fixture(scope="module")
def server(smollm2_path, tmp_path_factory):
    srv = LlamaServer(smollm2_path, tmp_path_factory.mktemp("server") / "server.log")
    yield srv
    srv.stop()


@pytest.fixture
def site(server, tmp_models, tmp_home, monkeypatch):
    """A workstation with the server as remote model `srv` (key from $SRV_KEY)."""
    monkeypatch.setenv("SRV_KEY", API_KEY)
    add_remote("srv", server.url, "--model", MODEL_ALIAS, "--api-key-env", "SRV_KEY")
    return tmp_home / "appliance.db"


def recorded(db):
    with open_store(db, readonly=True) as store:
        return [store.get_run(r["id"]) for r in store.list_runs(limit=None)]


def test_ask_runs_against_the_server_and_contacts_only_it(site, server, capsys, monkeypatch):
    contacted = []
    real_connect = socket.socket.connect

    def connect(self, address):
        contacted.append(address[:2] if isinstance(address, tuple) else address)
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    code = main(["ask", QUESTION, "--model", "srv", "--max-steps", "1", "--no-ask", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == ev.FINISHED and out["answer"], out
    assert out["model"] == "srv" and out["completion_tokens"] > 0
    assert set(contacted) == {("127.0.0.1", server.port)}  # the configured host and nothing else
    [run_] = recorded(site)
    assert run_["status"] == out["status"] and run_["model_path"] == f"{server.url}/v1#{MODEL_ALIAS}"
    assert run_["host"] == socket.gethostname()
    assert [s["step"] for s in run_["steps"]] == [0, 1] and run_["steps"][1]["action"] == "finish"
    assert all("unparsable" not in (s["evaluation"] or "") for s in run_["steps"])  # every step parsed
    assert API_KEY not in json.dumps(run_.to_dict())  # the key is never in the database


def test_the_tui_asks_the_server_and_streams_its_steps(site, server):
    paths = resolve_paths()
    # The TUI tests' one-tool registry and fixed snapshot: a short prompt, so the run stays quick.
    app = make_app(loader=lambda spec: open_chat_model("srv", paths=paths),
                   settings=EngineSettings(max_steps=1, allow_ask=False), recorder_factory=lambda: open_recorder(site))

    async def scenario():
        async with app.run_test(size=(100, 30)) as pilot:
            await tui_ask(pilot, QUESTION)
            await wait_for(pilot, lambda: any(isinstance(e, ev.RunEnded) for e in app.run_screen.events_seen), timeout=500)
            await pilot.pause(0.1)
            assert app.run_screen.transcript.cards[1].thought  # the streamed thought is on the step's card

    run(scenario())
    events = app.run_screen.events_seen
    end = events[-1]
    assert isinstance(end, ev.RunEnded) and end.status == ev.FINISHED, end
    pieces = [e.text for e in events if isinstance(e, ev.TextDelta) and e.step == 1 and e.kind == "step"]
    [thought] = [e.thought for e in events if isinstance(e, ev.ThoughtMade)]
    assert len(pieces) > 5  # streamed token by token, not in one piece at the end
    reply = json.loads("".join(pieces))  # the grammar held on the server: the pieces make one object
    assert reply["thought"] == thought and reply["action"] == "finish"
    assert app.model.structured == "grammar" and app.model.server_kind == "llama-cpp-python's server"
    [run_] = recorded(site)
    assert run_["model_name"] == "srv" and run_["status"] == ev.FINISHED and [s["step"] for s in run_["steps"]] == [0, 1]


@pytest.mark.parametrize("how, options, expected", [
    ("wrong URL path", ("/nothing/here", "--api-key-env", "SRV_KEY"), "has no /nothing/here/v1/models (HTTP 404)"),
    ("refused key", ("", "--api-key-env", "WRONG_KEY"), "refused the API key (HTTP 401)"),
    ("no key", ("",), "wants an API key"),
    ("unknown model", ("", "--api-key-env", "SRV_KEY", "--model", "llama-70b"),
     "does not serve model 'llama-70b' (it serves: smollm2)"),
])
def test_a_misconfigured_server_ends_the_run_in_one_line(site, server, capsys, monkeypatch, how, options, expected):
    monkeypatch.setenv("WRONG_KEY", "not-the-key")
    add_remote("bad", server.url + options[0], *options[1:])
    code = main(["ask", QUESTION, "--model", "bad", "--max-steps", "2", "--no-ask"])
    err = capsys.readouterr().err
    [line] = error_lines(err)
    assert code == 1 and expected in line and "Traceback" not in err, line
    assert "not-the-key" not in err and API_KEY not in err
    [run_] = recorded(site)
    assert run_["status"] == ev.ERROR and expected in run_["error"]


def test_a_server_that_is_down_ends_the_run_in_one_line(site, capsys):
    add_remote("down", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    code = main(["ask", QUESTION, "--model", "down", "--no-ask"])
    [line] = error_lines(capsys.readouterr().err)
    assert code == 1 and "connection refused (is the server running?)" in line
    assert recorded(site)[0]["status"] == ev.ERROR


def test_a_server_killed_mid_run_ends_it_in_one_line_with_its_steps_kept(site, server):
    """Last in this module: it kills the module's server (its KV cache makes step 1 quick)."""
    ask = subprocess.Popen([sys.executable, "-m", "appliance.cli", "ask", TOOL_QUESTION, "--model", "srv",
                            "--max-steps", "2", "--no-ask"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in ask.stdout:  # step 1 used a tool (the question needs one); kill during step 2
        if line.startswith("step 2/"):
            time.sleep(0.3)
            server.kill()
            break
    rest, err = ask.communicate(timeout=120)
    assert ask.returncode == 1, (rest, err)
    [line] = error_lines(err)
    assert f"the model server at 127.0.0.1:{server.port}" in line and "closed the connection" in line, line
    [run_] = recorded(site)
    assert run_["status"] == ev.ERROR and "closed the connection" in run_["error"]
    assert [s["step"] for s in run_["steps"]] == [0, 1]  # the snapshot and step 1 are kept
