"""Network faults with real loopback sockets: who listens on a port, who holds many connections, an
app whose database (a port) does not answer. Each control is the same question in good health."""

from __future__ import annotations

from appliance.eval.fault import SLEEP_FOREVER, Fault, free_port, log_lines, process_name
from appliance.eval.sandbox import Sandbox
from appliance.eval.scoring import mentions, no_culprit, whole_number

_LISTENER = (
    "import socket\n"
    "s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
    "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "s.bind(('127.0.0.1', {port}))\ns.listen(64)\n"
)


def _spawn_listener(sandbox: Sandbox, name: str, port: int = 0) -> tuple[int, int]:
    code = _LISTENER.format(port=port) + (
        "ready(s.getsockname()[1])\n"
        "while True:\n    conn, _ = s.accept()\n    conn.close()\n"
    )
    pid, values = sandbox.spawn(name, code, args=["--listen", "127.0.0.1"])
    return pid, int(values[0])


# -- listening ------------------------------------------------------------------------------------

def plant_listening(sandbox: Sandbox) -> Fault:
    name = process_name("ledgersync")
    pid, port = _spawn_listener(sandbox, name)
    return Fault(sandbox, {"pid": pid, "name": name, "port": port},
                 [mentions("listening process", [name, "ledgersync"], pid=pid)], slots={"port": port}, names=(name,))


def control_listening(sandbox: Sandbox) -> Fault:
    port = free_port()
    # "Is port N free?" is rightly answered "Yes, it's free".
    free = ("is free", "'s free", "is available", "is unused", "not in use")
    return Fault(sandbox, {"port": port, "fault": None}, [no_culprit(fine=free)], slots={"port": port})


# -- connections ----------------------------------------------------------------------------------

def _connector(sandbox: Sandbox, count: int) -> tuple[int, str]:
    """One process that listens and connects `count` clients to itself: 2 x count ESTABLISHED."""
    name = process_name("fanout")
    code = _LISTENER.format(port=0) + (
        f"clients = [socket.create_connection(s.getsockname()) for _ in range({count})]\n"
        f"served = [s.accept()[0] for _ in range({count})]\n"
        "ready(s.getsockname()[1])" + SLEEP_FOREVER
    )
    pid, _ = sandbox.spawn(name, code, args=["--peers", str(count)])
    return pid, name


def plant_connections(sandbox: Sandbox) -> Fault:
    pid, name = _connector(sandbox, 40)
    return Fault(sandbox, {"pid": pid, "name": name, "connections": 80},
                 [mentions("process with the most connections", [name, "fanout"], pid=pid)], names=(name,))


def control_connections(sandbox: Sandbox) -> Fault:
    pid, name = _connector(sandbox, 1)
    return Fault(sandbox, {"fault": None, "decoy": name, "decoy_pid": pid, "connections": 2},
                 [no_culprit(decoys=[name, "fanout"])], names=(name,))


# -- a dependency that does not answer --------------------------------------------------------

def _orders_app(sandbox: Sandbox, port: int) -> tuple[int, str, str]:
    """An app that tries its database every second and logs what happened, truthfully."""
    log = sandbox.write("var/log/orders/app.log", "\n".join(log_lines(120, seed=81, warnings=False)) + "\n")
    name = process_name("ordersapi")
    code = (
        "import socket\n"
        f"out = open({str(log)!r}, 'a')\nfirst = True\n"
        "while True:\n"
        "    stamp = time.strftime('%Y-%m-%d %H:%M:%S')\n"
        "    try:\n"
        f"        socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
        f"        out.write(stamp + ' INFO db: connected to postgres at 127.0.0.1:{port}\\n')\n"
        "    except OSError as exc:\n"
        f"        out.write(stamp + ' ERROR db: cannot connect to postgres at 127.0.0.1:{port}: ' + str(exc) + '\\n')\n"
        "    out.flush()\n"
        "    if first:\n        ready()\n        first = False\n"
        "    time.sleep(1)\n"
    )
    pid, _ = sandbox.spawn(name, code, args=["--db", f"127.0.0.1:{port}"])
    return pid, name, str(log)


_REFUSED_WORDS = ("refused", "listen", "not running", "down", "unreachable", "not reachable", "not available")


def plant_dependency(sandbox: Sandbox) -> Fault:
    port = free_port()
    pid, name, log = _orders_app(sandbox, port)
    return Fault(sandbox, {"port": port, "log": log, "app": name, "app_pid": pid, "error": "Connection refused"},
                 [whole_number("database port", port), mentions("cause", _REFUSED_WORDS)],
                 slots={"log": log, "port": port}, names=(name,))


def control_dependency(sandbox: Sandbox) -> Fault:
    db = process_name("pgstub")
    db_pid, port = _spawn_listener(sandbox, db)
    pid, name, log = _orders_app(sandbox, port)
    return Fault(sandbox, {"port": port, "log": log, "app": name, "db": db, "db_pid": db_pid, "fault": None},
                 [no_culprit(decoys=[name, db])], slots={"log": log, "port": port}, names=(name, db))
