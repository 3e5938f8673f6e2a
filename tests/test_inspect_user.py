"""inspect_user on real accounts made with useradd (removed after): a service account with a nologin
shell, a locked password whose hash must never come out and a process running as it; an account
that can log in, with its own home, a supplementary group and a crontab; one whose shell does not
exist."""

from __future__ import annotations

import contextlib
import json
import secrets
import subprocess
import time
from pathlib import Path
from typing import Iterator

from support.tools import check_invariants, kill, registry_for

REGISTRY = registry_for("/tmp", default=True, self_pids=frozenset())
CRONTABS = Path("/var/spool/cron/crontabs")


def inspect(user: str | int) -> dict:
    outcome = REGISTRY.call("inspect_user", {"user": str(user)})
    check_invariants("inspect_user", outcome)
    assert outcome["status"] == "ok", outcome
    return outcome


def kinds(outcome: dict) -> dict[str, dict]:
    return {f["kind"]: f for f in outcome["data"]["flags"]}


def shadow_field(name: str) -> str:
    for line in Path("/etc/shadow").read_text().splitlines():
        if line.split(":")[0] == name:
            return line.split(":")[1]
    raise AssertionError(f"{name} has no shadow entry")


@contextlib.contextmanager
def account(*options: str, password: str | None = None) -> Iterator[str]:
    name = f"apt{secrets.token_hex(4)}"
    subprocess.run(["useradd", *options, name], check=True, capture_output=True)
    try:
        if password is not None:
            subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)
        yield name
    finally:
        subprocess.run(["userdel", "-r", name], capture_output=True)
        subprocess.run(["groupdel", name], capture_output=True)


def test_a_service_account_cannot_log_in_its_hash_never_shows_and_its_process_is_counted(tmp_path):
    with account("-M", "-d", f"/nonexistent-{secrets.token_hex(3)}", "-s", "/usr/sbin/nologin",
                 password=secrets.token_hex(12)) as name:
        subprocess.run(["usermod", "-L", name], check=True)
        locked = shadow_field(name)
        assert locked.startswith("!") and len(locked) > 20
        uid = int(subprocess.run(["id", "-u", name], capture_output=True, text=True, check=True).stdout)
        proc = subprocess.Popen(["sleep", "300"], user=uid, group=uid)
        try:
            time.sleep(0.3)
            for asked in (name, uid):
                outcome = inspect(asked)
                data = outcome["data"]
                text = json.dumps(outcome)
                assert locked[1:] not in text and locked[1:20] not in text
                assert data["user"] == name and data["uid"] == uid and data["primary_group"] == name
                assert data["shell"] == "/usr/sbin/nologin" and data["password_state"] == "locked"
                assert data["can_log_in"] == "no: its shell /usr/sbin/nologin refuses logins"
                assert data["home"]["exists"] is False
                assert data["processes"]["count"] == 1 and data["processes"]["largest"][0]["pid"] == proc.pid
                assert data["crontab"] == "none" and data["sessions"] == "none logged in"
                flags = kinds(outcome)
                assert flags["cannot_log_in"]["severity"] == "ok" and flags["home_missing"]["severity"] == "ok"
                assert all(f["severity"] == "ok" for f in flags.values())
        finally:
            kill(proc.pid)
            proc.wait()
    shadow = REGISTRY.call("read_file", {"path": "/etc/shadow"})
    assert shadow["status"] == "denied"


def test_an_account_that_can_log_in_with_its_home_groups_and_crontab(tmp_path):
    made = not CRONTABS.exists()
    with account("-m", "-s", "/bin/bash", "-G", "users", password=secrets.token_hex(12)) as name:
        CRONTABS.mkdir(parents=True, exist_ok=True)
        (CRONTABS / name).write_text("* * * * * true\n")
        try:
            outcome = inspect(name)
            data = outcome["data"]
            assert data["password_state"] == "set" and data["can_log_in"] == "yes, with /bin/bash"
            assert data["groups"] == [name, "users"]
            assert data["home"]["exists"] and data["home"]["owned_by_the_account"] and data["home"]["owner"] == name
            assert data["crontab"] == f"present ({CRONTABS / name})" and data["processes"] == "none running"
            assert "cannot_log_in" not in kinds(outcome) and "home_missing" not in kinds(outcome)
            assert f"user {name}" in data["headline"] and "can log in" in data["headline"]
        finally:
            (CRONTABS / name).unlink()
            if made:
                CRONTABS.rmdir()


def test_a_shell_that_does_not_exist_and_a_missing_home_are_warnings():
    with account("-M", "-d", "/home/absent-home", "-s", "/bin/no-such-shell") as name:
        outcome = inspect(name)
        flags = kinds(outcome)
        assert flags["shell_missing"]["severity"] == "warning"
        assert outcome["data"]["can_log_in"].startswith("no: its shell /bin/no-such-shell does not exist")
    with account("-M", "-d", f"/home/absent-{secrets.token_hex(3)}", "-s", "/bin/bash") as name:
        home = kinds(inspect(name))["home_missing"]
        assert home["severity"] == "warning" and "does not exist" in home["says"]


def test_an_unknown_user_is_an_empty_result():
    outcome = REGISTRY.call("inspect_user", {"user": "no-such-user-here"})
    assert outcome["status"] == "empty" and outcome["data"]["exists"] is False
    assert "no user 'no-such-user-here'" in outcome["data"]["headline"]
