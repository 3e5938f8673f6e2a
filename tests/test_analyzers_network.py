"""The network analyzers against real sockets: a real listener and its owner, a real server and
client holding hundreds of loopback connections, a client left with CLOSE_WAIT sockets."""

from __future__ import annotations

import time

import socket

from appliance.analyzers import network
from support.analyzers import assert_verdicts, planted, problems, readings, wait_for

# A server on loopback that accepts every connection and keeps it (or closes it at once).
SERVER = """
import pathlib, resource, socket, threading, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1024)
held = []
def serve():
    while True:
        conn, _ = s.accept()
        conn.close() if CLOSE_AT_ONCE else held.append(conn)
threading.Thread(target=serve, daemon=True).start()
pathlib.Path(OUT_FILE).write_text(str(s.getsockname()[1]))
pathlib.Path(READY_FILE).write_text("ready")
time.sleep(120)
"""

CLIENT = """
import pathlib, resource, socket, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
held = [socket.create_connection(("127.0.0.1", PORT)) for _ in range(COUNT)]
time.sleep(0.3)
pathlib.Path(READY_FILE).write_text("ready")
time.sleep(120)
"""


# One process that connects COUNT clients to its own listener: 2 x COUNT sockets, no twin elsewhere.
TALKER = """
import pathlib, socket, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(256)
clients = [socket.create_connection(s.getsockname()) for _ in range(COUNT)]
served = [s.accept()[0] for _ in range(COUNT)]
pathlib.Path(READY_FILE).write_text("ready")
time.sleep(120)
"""


def _server(tmp_path, close_at_once: bool = False):
    return planted(SERVER, "appliance-test-server", tmp_path, CLOSE_AT_ONCE=close_at_once)


def test_a_listening_socket_is_named_with_its_owner(tmp_path):
    with _server(tmp_path) as (pid, out):
        port = int(wait_for(out))
        found = network.listening(readings())
        assert_verdicts(found, "listening")
        assert found[0].severity == "ok"
        assert any(r["port"] == port and r["pid"] == pid for r in found[0].values["ports"]), found
        assert network.is_listening(port)
        verdict = network.port_finding(port, readings())
        assert verdict.severity == "ok" and verdict.values["owner_pid"] == pid and f"port {port}" in verdict.verdict
        assert verdict.culprit is None  # a listening port is no fault
    # the server is gone: the dependency is down (the kernel drops the socket when the process
    # has fully exited, a moment after the kill on a busy machine)
    deadline = time.monotonic() + 5
    while network.is_listening(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not network.is_listening(port)
    down = network.port_finding(port, readings())
    assert down.severity == "warning" and "nothing listens" in down.verdict and down.culprit == f"tcp port {port}"


def test_own_listener_is_labelled_as_the_appliance(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    try:
        port = server.getsockname()[1]
        verdict = network.port_finding(port, readings())
        assert "(appliance itself)" in verdict.verdict
    finally:
        server.close()


def test_hundreds_of_connections_name_the_client_and_the_server(tmp_path):
    with _server(tmp_path) as (server_pid, out):
        port = int(wait_for(out))
        with planted(CLIENT, "appliance-test-client", tmp_path, PORT=port, COUNT=520) as (client_pid, _):
            found = network.connections(readings())
            assert_verdicts(found, "connections")
            by_pid = {f.pid: f for f in problems(found)}
            assert client_pid in by_pid and server_pid in by_pid, found
            assert by_pid[client_pid].values["outbound"] >= 520
            assert by_pid[server_pid].values["inbound"] >= 520
            assert by_pid[client_pid].values["connections"] >= 520
            # the same sockets inside the appliance: no culprit
            found = network.connections(readings(own={client_pid, server_pid}))
            assert not any(f.pid in (client_pid, server_pid) for f in found), found


def test_close_wait_sockets_are_a_leak_of_the_client(tmp_path):
    with _server(tmp_path, close_at_once=True) as (server_pid, out):
        port = int(wait_for(out))
        with planted(CLIENT, "appliance-test-client", tmp_path, PORT=port, COUNT=30) as (client_pid, _):
            found = network.connections(readings())
            mine = [f for f in problems(found) if f.pid == client_pid]
            assert mine and "CLOSE_WAIT" in mine[0].verdict, found
            assert mine[0].values["close_wait"] >= 30
            assert not any(f.pid == server_pid for f in problems(found))


def test_a_few_connections_are_normal(tmp_path):
    with _server(tmp_path) as (server_pid, out):
        port = int(wait_for(out))
        with planted(CLIENT, "appliance-test-client", tmp_path, PORT=port, COUNT=5) as (client_pid, _):
            found = network.connections(readings())
            assert not any(f.pid in (client_pid, server_pid) for f in problems(found)), found
            if not problems(found):
                assert found[0].severity == "ok" and "inbound" in found[0].verdict and found[0].values["inbound"] >= 5


def test_one_process_far_ahead_in_connections_stands_out_and_a_few_do_not(tmp_path):
    """80 connections are no fault (500 are) but, where no other process holds a third as many,
    the ok verdict carries the process as its standout; 4 connections never stand out."""
    with planted(TALKER, "appliance-test-talker", tmp_path, COUNT=40) as (pid, _):
        found = network.connections(readings())
        assert not any(f.pid == pid for f in problems(found)), found
        ok = [f for f in found if not f.is_problem]
        assert ok and ok[0].standout is not None and ok[0].standout.pid == pid, found
        assert ok[0].standout.amount >= 80 and f"(pid {pid}), " in ok[0].verdict
        mine = network.connections(readings(own={pid}))
        assert all(f.standout is None or f.standout.pid != pid for f in mine), mine
    with planted(TALKER, "appliance-test-talker", tmp_path, COUNT=2) as (pid, _):
        found = network.connections(readings())
        assert all(f.standout is None or f.standout.pid != pid for f in found), found
