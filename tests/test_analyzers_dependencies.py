"""A refused local connection in a named log, checked against the real listening sockets."""

from __future__ import annotations

import socket

from appliance.analyzers import Readings
from appliance.analyzers.dependencies import log_findings, refused_ports
from appliance.tools.paths import PathPolicy


def test_the_ports_a_log_says_were_refused_are_read_from_its_lines():
    lines = ["2026-12-01 ERROR db: cannot connect to postgres at 127.0.0.1:53069: [Errno 111] Connection refused",
             "WARN redis: ECONNREFUSED localhost:6379", "ERROR api: 10.0.0.5:443 refused (remote: not checked)",
             "INFO connected to 127.0.0.1:8080"]
    assert refused_ports(lines) == [53069, 6379]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_refused_port_nothing_listens_on_is_a_warning_and_a_listened_one_is_not(tmp_path):
    readings = lambda: Readings(policy=PathPolicy.default([tmp_path]))  # noqa: E731
    port = _free_port()
    log = tmp_path / "app.log"
    log.write_text(f"2026-12-01 14:44:08 ERROR db: cannot connect to postgres at 127.0.0.1:{port}: "
                   "[Errno 111] Connection refused\n")
    found = log_findings(str(log), readings())
    dependency = [f for f in found if f.family == "listening"]
    assert [f.severity for f in dependency] == ["warning"] and f"port {port}" in dependency[0].verdict
    assert any(f.family == "log_errors" and f.is_problem for f in found)
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))
        server.listen()
        again = [f for f in log_findings(str(log), readings()) if f.family == "listening"]
        assert again[0].severity == "ok" and "listened on by" in again[0].verdict
