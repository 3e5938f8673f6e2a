"""Inputs a person (or a broken server) can hand the real `appliance` command: each ends in one plain
line on stderr, no traceback, and a non-zero exit. Every test runs the installed console script as
a child process with this checkout first on PYTHONPATH, as a person would type it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from support.remote import StubServer
from support.store import checkout_env

APPLIANCE = Path(sys.executable).with_name("appliance")
QUESTION = "what is using the most cpu?"


def appliance(*args: str, env: dict[str, str], timeout: float = 90) -> tuple[int, str]:
    """Run the real command; return its exit code and its one stderr line (asserted to be one)."""
    done = subprocess.run([str(APPLIANCE), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          env={**checkout_env(), **env}, timeout=timeout)
    lines = [line for line in done.stderr.splitlines() if line.strip() and line != "loading the model…"]
    assert "Traceback" not in done.stderr, done.stderr
    assert len(lines) == 1 and lines[0].startswith("appliance: "), done.stderr
    assert done.returncode != 0, (done.returncode, done.stdout, done.stderr)
    return done.returncode, lines[0]


@pytest.fixture
def dirs(tmp_path) -> dict[str, str]:
    (tmp_path / "home").mkdir()
    (tmp_path / "models").mkdir()
    return {"APPLIANCE_HOME": str(tmp_path / "home"), "APPLIANCE_MODELS_DIR": str(tmp_path / "models")}


def test_a_model_that_is_a_symlink_loop(tmp_path, dirs):
    loop = tmp_path / "loop.gguf"
    loop.symlink_to(tmp_path / "other.gguf")
    (tmp_path / "other.gguf").symlink_to(loop)
    for args in (["ask", QUESTION, "--model", str(loop), "--no-ask"], ["models", "import", str(loop)]):
        code, line = appliance(*args, env=dirs)
        assert code == 3 and f"model file {loop} is a symbolic link loop" in line, line


@pytest.mark.parametrize("question", ["\x01\x02\x03", "\x1b[2J\x1b]0;title\x07", "\x7f\x9b\u200b", "\t\x0b\x0c\x1b"])
def test_a_question_without_printable_characters_is_refused(dirs, question):
    code, line = appliance("ask", question, "--no-ask", env=dirs)
    assert code == 2 and "the question has no printable characters" in line, line


@pytest.mark.parametrize("command", [["ask", QUESTION, "--no-ask"], ["runs", "list"], []], ids=["ask", "runs-list", "tui"])
def test_a_data_directory_that_is_a_file(tmp_path, dirs, command):
    home = tmp_path / "home-file"
    home.write_text("not a folder\n")
    code, line = appliance(*command, env={**dirs, "APPLIANCE_HOME": str(home)})
    assert code == 2 and f"the data directory {home} cannot be used: {home} is a file, not a folder" in line, line
    below = home / "sub"  # a folder that would have to be made inside the file
    code, line = appliance(*command, env={**dirs, "APPLIANCE_HOME": str(below)})
    assert code == 2 and f"(it would be inside {home})" in line, line


def _models_reply(handler: BaseHTTPRequestHandler) -> None:
    body = json.dumps({"object": "list", "data": [{"id": "stub", "owned_by": "stub"}]}).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class EndlessStream(BaseHTTPRequestHandler):
    """Answers a completion with a stream that never ends: keep-alive comments, or spaces without a
    line end, a little every 50 ms (each read gets bytes: no per-read timeout fires). Bounded at
    60 s, so a client that never hangs up cannot keep the test's thread forever."""

    PIECE = b": keep-alive\n\n"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        _models_reply(self)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        ends = time.monotonic() + 60
        try:
            while time.monotonic() < ends:
                self.wfile.write(self.PIECE)
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            return  # the client cut the request


class EndlessSpaces(EndlessStream):
    PIECE = b" " * 64


@pytest.mark.parametrize("handler", [EndlessStream, EndlessSpaces], ids=["keep-alive", "spaces"])
def test_a_server_that_streams_forever_is_cut_at_the_whole_request_deadline(dirs, handler):
    stub = StubServer(handler)
    try:
        subprocess.run([str(APPLIANCE), "models", "add-remote", "endless", stub.url, "--timeout", "2",
                        "--structured", "json_schema"], check=True, capture_output=True, env={**checkout_env(), **dirs})
        started = time.monotonic()
        code, line = appliance("ask", QUESTION, "--model", "endless", "--max-steps", "1", "--no-ask", env=dirs)
        took = time.monotonic() - started
    finally:
        stub.stop()
    assert code == 1 and f"127.0.0.1:{stub.port} did not finish its reply within 2 s" in line, line
    assert took < 30, took  # the deadline, not the server's 60 s stream, ended it


class Malformed(BaseHTTPRequestHandler):
    """A 200 whose JSON is not a chat completion: REPLY as one JSON body, or streamed as one event."""

    REPLY: object = {"choices": "nope"}
    STREAM = False

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        _models_reply(self)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        text = json.dumps(self.REPLY)
        body = (f"data: {text}\n\ndata: [DONE]\n\n" if self.STREAM else text).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if self.STREAM else "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


MALFORMED = [
    ({"choices": "nope"}, False, "choices are not a list of objects"),
    ({"choices": "nope"}, True, "choices are not a list of objects"),
    ({"choices": [1, 2]}, True, "choices are not a list of objects"),
    ({"choices": [{"delta": "text"}]}, True, "delta is not an object"),
    ({"choices": [{"message": ["a"]}]}, False, "delta is not an object"),
    ({"choices": [{"delta": {"content": 7}}]}, True, "content that is not text"),
    ([1, 2, 3], False, "an event that is not an object"),
    ("just a string", True, "an event that is not an object"),
]


@pytest.mark.parametrize("reply,stream,said", MALFORMED)
def test_a_malformed_but_json_reply_is_one_line(dirs, reply, stream, said):
    handler = type("Reply", (Malformed,), {"REPLY": reply, "STREAM": stream})
    stub = StubServer(handler)
    try:
        subprocess.run([str(APPLIANCE), "models", "add-remote", "odd", stub.url, "--structured", "json_schema"],
                       check=True, capture_output=True, env={**checkout_env(), **dirs})
        code, line = appliance("ask", QUESTION, "--model", "odd", "--max-steps", "1", "--no-ask", env=dirs)
    finally:
        stub.stop()
    assert code == 1 and said in line and "AttributeError" not in line, line


def test_runs_import_of_a_device_or_a_huge_file_is_bounded(tmp_path, dirs):
    code, line = appliance("runs", "import", "/dev/zero", env=dirs, timeout=30)
    assert code == 2 and "/dev/zero is not a regular file" in line, line
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as handle:
        handle.truncate(600 << 20)  # sparse: 600 MiB of zeros, no disk used
    started = time.monotonic()
    code, line = appliance("runs", "import", str(huge), env=dirs, timeout=30)
    assert code == 2 and "is 600 MiB, more than an import takes" in line, line
    one_line = tmp_path / "one-line.jsonl"
    with open(one_line, "wb") as handle:
        handle.truncate(100 << 20)  # under the size bound, but one line of 100 MiB
    code, line = appliance("runs", "import", str(one_line), env=dirs, timeout=30)
    assert code == 2 and "has a line longer than 64 MiB" in line, line
    assert time.monotonic() - started < 30
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)  # a pipe nobody writes to would block a plain open forever
    code, line = appliance("runs", "import", str(fifo), env=dirs, timeout=30)
    assert code == 2 and "is not a regular file" in line, line
