"""Remote models against servers that misbehave on purpose (standard-library servers on loopback),
and the catalog entry itself: each failure is one line, a non-zero exit and a run recorded as error."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess

import pytest

from appliance.agent import events as ev
from appliance.cli import main
from appliance.store import open_store
from support.remote import OpenAIStub, SilentServer, StubServer, add_remote, error_lines

QUESTION = "what is using the most cpu?"


@pytest.fixture
def db(tmp_models, tmp_home):
    return tmp_home / "appliance.db"


def ask_fails(capsys, model: str) -> str:
    """Run `appliance ask` on `model`; it must fail with exactly one error line, which is returned."""
    code = main(["ask", QUESTION, "--model", model, "--max-steps", "1", "--no-ask"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err, err
    [line] = error_lines(err)
    return line


def only_run(db) -> dict:
    with open_store(db, readonly=True) as store:
        [run] = [store.get_run(r["id"]) for r in store.list_runs()]
    return run


def test_a_reply_that_breaks_the_schema_is_an_error_not_a_step(db, capsys):
    stub = StubServer(OpenAIStub)
    try:
        add_remote("liar", stub.url, "--structured", "json_schema")
        line = ask_fails(capsys, "liar")
    finally:
        stub.stop()
    assert "ignored the JSON schema (json_schema): its reply is not one JSON object ('Sure!" in line
    run = only_run(db)
    assert run["status"] == ev.ERROR and "ignored the JSON schema" in run["error"]
    assert [s["step"] for s in run["steps"]] == [0]  # the snapshot step is kept


def test_a_server_that_never_answers_times_out(db, capsys):
    silent = SilentServer()
    try:
        add_remote("hung", silent.url, "--timeout", "1")
        line = ask_fails(capsys, "hung")
    finally:
        silent.stop()
    assert f"the model server at 127.0.0.1:{silent.port} did not answer within 1 s" in line
    assert only_run(db)["status"] == ev.ERROR


def test_what_the_server_is_sent(db, capsys):
    """The schema as response_format or as the GBNF grammar, prompt caching asked for, streaming
    with usage, and the key only in the Authorization header."""
    seen: list[tuple[dict, dict]] = []

    class Recording(OpenAIStub):
        REPLY = '{"thought": "x", "action": "finish", "action_input": {}}'

        def received(self, body):
            seen.append((dict(self.headers), body))

    stub = StubServer(Recording)
    os.environ["STUB_KEY"] = "k-123"
    try:
        for mode in ("json_schema", "grammar"):
            add_remote(f"rec-{mode.replace('_', '')}", stub.url, "--structured", mode, "--api-key-env", "STUB_KEY")
            main(["ask", QUESTION, "--model", f"rec-{mode.replace('_', '')}", "--max-steps", "1", "--no-ask"])
    finally:
        del os.environ["STUB_KEY"]
        stub.stop()
    # each run first asks for the question's labels (agent/question/classify.py), then for its step
    from appliance.agent.question.classify import LABEL_REQUEST

    steps = [(h, b) for h, b in seen if not b["messages"][-1]["content"].startswith(LABEL_REQUEST)]
    assert len(seen) == 4 and len(steps) == 2
    (headers_a, as_schema), (_, as_grammar) = steps[0], steps[1]
    assert headers_a["Authorization"] == "Bearer k-123"
    assert as_schema["response_format"]["type"] == "json_schema" and "grammar" not in as_schema
    sent_schema = as_schema["response_format"]["json_schema"]["schema"]
    assert "anyOf" in sent_schema or sent_schema.get("type") == "object"  # the engine's step schema as it is
    assert "root ::=" in as_grammar["grammar"] and "response_format" not in as_grammar
    for body in (as_schema, as_grammar):
        assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
        assert body["cache_prompt"] is True and body["model"] == "stub" and body["temperature"] == 0.0
        assert [m["role"] for m in body["messages"]][:2] == ["system", "user"]
    assert "k-123" not in json.dumps(only_runs_json(db))


def only_runs_json(db) -> list:
    with open_store(db, readonly=True) as store:
        return [store.get_run(r.id).to_dict() for r in store.list_runs()]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_tls_is_verified_and_a_site_ca_file_is_honoured(db, tmp_path, capsys):
    cert, key = tmp_path / "site-ca.pem", tmp_path / "site-ca.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    stub = StubServer(OpenAIStub)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    stub.httpd.socket = context.wrap_socket(stub.httpd.socket, server_side=True)
    https = stub.url.replace("http://", "https://")
    try:
        add_remote("untrusted", https, "--structured", "json_schema")
        line = ask_fails(capsys, "untrusted")
        assert "has a TLS certificate this machine does not trust" in line and "--ca-file" in line
        add_remote("trusted", https, "--structured", "json_schema", "--ca-file", str(cert))
        line = ask_fails(capsys, "trusted")  # trusted now: it gets as far as the stub's non-JSON reply
        assert "ignored the JSON schema" in line
    finally:
        stub.stop()


@pytest.mark.parametrize("url, expected", [
    ("ftp://gpu-box/v1", "must be http://HOST"),
    ("http://admin:hunter2@gpu-box:8080", "must not hold a user or password"),
    ("http://gpu-box:8080/v1?key=abc", "must not have a query"),
    ("http://gpu-box:99999", "not a usable server URL"),
])
def test_add_remote_refuses_bad_urls_in_one_line(tmp_models, capsys, url, expected):
    assert main(["models", "add-remote", "x", url]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("appliance: ") and expected in line
    assert not (tmp_models / "remote.json").exists()


def test_remote_entries_are_listed_removed_and_hold_no_key(tmp_models, tmp_path, capsys, monkeypatch):
    keyfile = tmp_path / "key"
    keyfile.write_text("s3cret-key\n")
    keyfile.chmod(0o644)
    add_remote("site", "https://llm.site.lan", "--model", "qwen2.5-32b", "--api-key-file", str(keyfile))
    stored = (tmp_models / "remote.json").read_text()
    assert "s3cret" not in stored and str(keyfile) in stored
    assert main(["models", "list"]) == 0
    assert "https://llm.site.lan:443/v1 (qwen2.5-32b)" in capsys.readouterr().out
    # a key file others can read is refused before anything is sent
    assert main(["ask", QUESTION, "--model", "site", "--no-ask"]) == 3
    assert "readable by others; run: chmod 600" in capsys.readouterr().err
    assert main(["models", "add-remote", "tiny", "http://x:1"]) == 2  # a catalog model's alias
    capsys.readouterr()
    assert main(["models", "rm", "site"]) == 0
    assert "forgot the remote model site" in capsys.readouterr().out
    assert json.loads((tmp_models / "remote.json").read_text()) == {"models": []}


def test_doctor_contacts_the_remote_model_it_would_use(tmp_models, tmp_home, capsys):
    stub = StubServer(OpenAIStub)
    try:
        add_remote("site", stub.url)
        main(["doctor", "--model", "site"])
        ready = capsys.readouterr().out
        add_remote("gone", stub.url, "--model", "llama-70b")
        assert main(["doctor", "--model", "gone"]) == 1
        missing = capsys.readouterr().out
    finally:
        stub.stop()
    assert "site: stub on stub at " in ready and "(structured output: json_schema)" in ready
    assert "does not serve model 'llama-70b' (it serves: stub)" in missing


FINISH = json.dumps({"thought": "The snapshot shows the busiest process.", "action": "finish",
                     "action_input": {"stance": "value", "cites": ["F1"], "subject": "", "value": "",
                                      "answer": "python uses the most CPU."}})


@pytest.mark.parametrize("usage, expected", [
    # OpenAI / vLLM style: usage with cached prompt tokens
    ({"usage": {"prompt_tokens": 900, "completion_tokens": 17, "prompt_tokens_details": {"cached_tokens": 800}}},
     (100, 800, 17)),
    # llama-server: timings say what it evaluated and what it took from its cache
    ({"usage": {"prompt_tokens": 900, "completion_tokens": 17},
      "timings": {"prompt_n": 40, "cache_n": 860, "predicted_n": 17, "prompt_ms": 12.5, "predicted_ms": 80.0}},
     (40, 860, 17)),
])
def test_token_counts_come_from_the_servers_usage(db, usage, expected):
    class Counting(OpenAIStub):
        REPLY = FINISH
        USAGE = usage

    stub = StubServer(Counting)
    try:
        add_remote("counted", stub.url, "--structured", "json_schema")
        main(["ask", QUESTION, "--model", "counted", "--max-steps", "1", "--no-ask"])
    finally:
        stub.stop()
    step = only_run(db)["steps"][1]
    assert (step["prompt_tokens"], step["prompt_tokens_reused"], step["completion_tokens"]) == expected


def test_a_cancel_closes_the_connection_so_the_server_stops(tmp_models):
    """Esc in the TUI / Ctrl+C in `ask` reach the model as should_stop: the stream is dropped
    between two pieces and the server's next write fails (it stops generating)."""
    import time

    from appliance.config import resolve_paths
    from appliance.llm.base import Message
    from appliance.llm.runtime import open_chat_model

    outcome = {}

    class Slow(OpenAIStub):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            try:
                for i in range(200):
                    chunk = {"choices": [{"index": 0, "delta": {"content": f"w{i} "}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    time.sleep(0.02)
                outcome["finished"] = True
            except OSError:  # the client went away
                outcome["stopped_at"] = i

    stub = StubServer(Slow)
    try:
        add_remote("slow", stub.url, "--structured", "json_schema")
        model = open_chat_model("slow", paths=resolve_paths())
        pieces = []
        gen = model.generate([Message("user", "hi")], {"type": "object"}, max_tokens=500, on_text=pieces.append,
                             should_stop=lambda: len(pieces) >= 3)
        time.sleep(0.5)
    finally:
        stub.stop()
    assert gen.finish_reason == "cancelled" and gen.text == "w0 w1 w2 "
    assert "finished" not in outcome and outcome["stopped_at"] < 100
