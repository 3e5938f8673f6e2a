"""Issue 33's small mends: a bad import file is the file's fault (exit 2, one line, nothing
imported); a model server that hangs and then drops the connection is asked once, never twice
behind the person's back; a server's error body reaches the screen without control sequences."""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
import time

import pytest

from appliance.cli import main
from appliance.llm.http_client import HttpClient, RemoteError
from appliance.llm.remotes import parse_url
from appliance.store import export, open_store
from support.store import record_all, run_events


def _export(tmp_path, db) -> list[dict]:
    store = open_store(db)
    record_all(store, run_events("eeee1111", 2))
    record_all(store, run_events("eeee2222", 3))
    runs = [store.get_run(run_id) for run_id in ("eeee1111", "eeee2222")]
    store.close()
    return [run.to_dict() for run in runs]


def test_an_export_with_two_steps_numbered_alike_is_the_files_fault_and_nothing_is_imported(tmp_path, capsys):
    runs = _export(tmp_path, tmp_path / "source.db")
    runs[1]["steps"][2]["step"] = runs[1]["steps"][1]["step"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(run, default=str) for run in runs) + "\n")
    target = tmp_path / "target.db"
    code = main(["runs", "import", str(bad), "--db", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "two steps numbered 1" in err and "nothing was imported" in err, err
    if target.exists():
        assert sqlite3.connect(target).execute("SELECT count(*) FROM runs").fetchone() == (0,)


class _HangingServer:
    """Accepts connections, reads each request, waits `hang` seconds and closes without a byte."""

    def __init__(self, hang: float) -> None:
        self.hang = hang
        self.requests = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.requests += 1
            conn.recv(65536)
            time.sleep(self.hang)
            conn.close()


def test_a_hung_model_server_is_asked_once():
    server = _HangingServer(hang=1.0)
    client = HttpClient(parse_url(f"http://127.0.0.1:{server.port}/v1"), timeout=10)
    started = time.monotonic()
    with pytest.raises(RemoteError):
        list(client.stream("/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "stream": True}))
    took = time.monotonic() - started
    server.sock.close()
    assert server.requests == 1 and took < 1.9, (server.requests, took)


def test_a_servers_error_body_is_shown_without_control_sequences():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    body = b'{"error": {"message": "overloaded \\u001b]0;pwned\\u0007\\u001b[2Jtry later"}}'

    def serve() -> None:
        conn, _ = sock.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    client = HttpClient(parse_url(f"http://127.0.0.1:{sock.getsockname()[1]}/v1"), timeout=10)
    with pytest.raises(RemoteError) as info:
        list(client.stream("/chat/completions", {"messages": [], "stream": True}))
    sock.close()
    assert "overloaded try later" in str(info.value) and "\x1b" not in str(info.value) and "\x07" not in str(info.value)
