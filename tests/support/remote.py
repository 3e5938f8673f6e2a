"""Servers on loopback for the remote-model tests: a real llama-cpp-python server with the SmolLM2
test model, and tiny standard-library servers for the failures a real server will not produce on
demand (a reply that breaks the schema, a server that never answers)."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from appliance.cli import main

API_KEY = "test-key-7f3a"
MODEL_ALIAS = "smollm2"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """`python -m llama_cpp.server` on 127.0.0.1:PORT, serving the GGUF as MODEL_ALIAS with API_KEY."""

    def __init__(self, model_path: Path, log_path: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--model_alias", MODEL_ALIAS,
             "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", "8192", "--n_threads", "1", "--n_threads_batch", "1",
             "--api_key", API_KEY, "--verbose", "false"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        self._wait_ready(timeout=90)

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}; see {self.log.name}")
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                connection.request("GET", "/v1/models", headers={"Authorization": f"Bearer {API_KEY}"})
                if connection.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not come up within {timeout} s; see {self.log.name}")

    def kill(self) -> None:
        """SIGKILL, as a crash or a pulled plug: no goodbye to connected clients."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


class StubServer:
    """A standard-library HTTP server on loopback, in a thread, with the given handler."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class OpenAIStub(BaseHTTPRequestHandler):
    """Lists one model and streams `REPLY` as the completion, whatever it was asked: a server that
    ignores the schema it was sent."""

    REPLY = "Sure! The CPU is busy because of a process."
    USAGE: dict = {}  # a last chunk with `usage` (and `timings`), as servers send with include_usage

    def log_message(self, *args) -> None:
        pass

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def received(self, body: dict) -> None:
        """Called with each request body (tests record them)."""

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            self._send(200, json.dumps({"object": "list", "data": [{"id": "stub", "owned_by": "stub"}]}).encode(),
                       "application/json")
        else:
            self._send(404, b'{"error": {"message": "not found"}}', "application/json")

    def do_POST(self) -> None:
        self.received(json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0)))))
        chunks = [{"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                  for piece in re.findall(r"\S+\s*", self.REPLY)]  # streamed word by word
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if self.USAGE:
            chunks.append({"choices": [], **self.USAGE})
        body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self._send(200, body.encode(), "text/event-stream")


class SilentServer:
    """Accepts connections and never answers: a hung server."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def stop(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def add_remote(name: str, url: str, *options: str) -> None:
    """`appliance models add-remote NAME URL OPTIONS…` in this process (APPLIANCE_MODELS_DIR set by the test)."""
    assert main(["models", "add-remote", name, url, *options]) == 0


def error_lines(stderr: str) -> list[str]:
    """The lines that report a failure (the progress line 'loading the model…' aside)."""
    return [line for line in stderr.splitlines() if line.startswith("appliance:")]
