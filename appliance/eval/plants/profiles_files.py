"""Faults of one named file (issue 52): a file that refuses changes even to root, a script nobody may
run, a certificate that has expired, a script with Windows line endings, a pid file naming a process
that is gone. Each control is the same file in good health, at the same path.

All real: the immutable attribute is set with the FS_IOC_SETFLAGS ioctl (what `chattr +i` does) and
cleared before the sandbox is removed (appliance/eval/file_flags.py); the certificate is made and
signed with `cryptography`; the dead pid was a real process of the plant's, killed before the
question is asked.
"""

from __future__ import annotations

import datetime
import os
import signal
import time
from pathlib import Path

from appliance.eval import file_flags
from appliance.eval.fault import SLEEP_FOREVER, Fault, process_name
from appliance.eval.reaper import SandboxError, running
from appliance.eval.sandbox import Sandbox
from appliance.eval.scoring import mentions, never_says, no_culprit

# -- a file that refuses changes even to root -------------------------------------------------------

_SETTINGS = ("[server]\nlisten = 127.0.0.1:8080\nworkers = 4\n\n[payments]\nprovider = sandbox\n"
             "timeout_seconds = 30\n\n[mail]\nfrom = shop@example.com\n")


def _settings(sandbox: Sandbox) -> Path:
    path = sandbox.write("srv/shop/config/settings.ini", _SETTINGS)
    os.chmod(path, 0o644)
    return path


def plant_immutable(sandbox: Sandbox) -> Fault:
    path = _settings(sandbox)
    file_flags.add(path, file_flags.IMMUTABLE)
    return Fault(sandbox, {"path": str(path), "attribute": "immutable"},
                 [mentions("attribute that refuses changes", ["immutable", "chattr", "lsattr", "attribute", "+i"])],
                 slots={"path": str(path)})


def control_immutable(sandbox: Sandbox) -> Fault:
    path = _settings(sandbox)
    fine = ("writable", "can be changed", "can be edited", "can be written", "can edit", "can change", "can write",
            "nothing prevents", "nothing is preventing", "nothing stops", "not immutable", "not locked")
    return Fault(sandbox, {"path": str(path), "fault": None}, [no_culprit(fine=fine)], slots={"path": str(path)})


# -- a script nobody may run ------------------------------------------------------------------------

_ROTATE = ("#!/bin/sh\n# keep the last 7 nightly backups\nset -eu\nkeep=7\n"
           "echo \"would keep the last $keep backups\"\n")


def _script(sandbox: Sandbox, mode: int) -> Path:
    path = sandbox.write("opt/backup/bin/rotate-backups.sh", _ROTATE)
    for folder in ("opt", "opt/backup", "opt/backup/bin"):
        os.chmod(sandbox.path(folder), 0o755)
    os.chmod(path, mode)
    return path


def plant_not_executable(sandbox: Sandbox) -> Fault:
    path = _script(sandbox, 0o644)  # no execute bit for anyone: even root's execve is refused
    words = ("not executable", "isn't executable", "no execute", "not marked executable", "lacks execute",
             "without execute", "missing execute", "execute permission", "execute bit", "executable bit",
             "exec bit", "x bit", "chmod", "644", "-rw-r--r--")
    return Fault(sandbox, {"path": str(path), "mode": "0644"}, [mentions("missing execute permission", words)],
                 slots={"path": str(path)})


def control_not_executable(sandbox: Sandbox) -> Fault:
    path = _script(sandbox, 0o755)
    fine = ("executable", "can be run", "can run", "can be executed", "runnable", "755", "rwxr-xr-x",
            "nothing stops", "nothing prevents", "nothing is stopping", "will run", "should run")
    return Fault(sandbox, {"path": str(path), "fault": None, "mode": "0755"}, [no_culprit(fine=fine)],
                 slots={"path": str(path)})


# -- a certificate that has expired -----------------------------------------------------------------

HOST = "shop.example.com"


def write_certificate(path: Path, not_before: datetime.datetime, not_after: datetime.datetime,
                      host: str = HOST) -> None:
    """A self-signed certificate for `host` (P-256, SHA-256), as PEM; its key is not kept."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Example Shop")])
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(not_before)
                   .not_valid_after(not_after)
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
                   .sign(key, hashes.SHA256()))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    os.chmod(path, 0o644)


def _certificate(sandbox: Sandbox, *, expired: bool) -> tuple[Path, datetime.datetime]:
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    if expired:
        not_before, not_after = now - datetime.timedelta(days=368), now - datetime.timedelta(days=3)
    else:
        not_before, not_after = now - datetime.timedelta(days=1), now + datetime.timedelta(days=365)
    path = sandbox.path(f"etc/ssl/shop/{HOST}.crt")
    write_certificate(path, not_before, not_after)
    return path, not_after


def plant_certificate(sandbox: Sandbox) -> Fault:
    path, not_after = _certificate(sandbox, expired=True)
    day = not_after.date().isoformat()
    return Fault(sandbox, {"path": str(path), "subject": HOST, "not_after": not_after.isoformat(), "expired": True},
                 [mentions("expiry", ["expired", "no longer valid", "not valid anymore", "out of date", day])],
                 slots={"path": str(path)})


def control_certificate(sandbox: Sandbox) -> Fault:
    path, not_after = _certificate(sandbox, expired=False)
    day = not_after.date().isoformat()
    expired = ("has expired", "is expired", "already expired", "expired on", "expired at", "no longer valid",
               "expires in a few days", "expires soon", "about to expire")
    fine = ("valid", "not expired", "hasn't expired", "has not expired", "expires in", "until", day)
    return Fault(sandbox, {"path": str(path), "subject": HOST, "not_after": not_after.isoformat(), "fault": None},
                 [never_says("says it has expired", expired), no_culprit(fine=fine)], slots={"path": str(path)})


# -- a script with Windows line endings -------------------------------------------------------------

_DEPLOY = ("#!/bin/bash", "# copy the built site into place", "set -euo pipefail",
           "echo \"deploying the site from ${1:-build}\"")


def _deploy(sandbox: Sandbox, newline: str) -> Path:
    path = sandbox.path("home/deploy/bin/deploy-site.sh")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((newline.join(_DEPLOY) + newline).encode())
    os.chmod(path, 0o755)
    return path


def plant_script_format(sandbox: Sandbox) -> Fault:
    path = _deploy(sandbox, "\r\n")  # the kernel looks for an interpreter named "/bin/bash\r"
    words = ("crlf", "windows", "dos ", "dos-", "dos2unix", "carriage return", "\\r", "^m", "line ending",
             "line-ending")
    return Fault(sandbox, {"path": str(path), "line_endings": "CRLF"}, [mentions("Windows line endings", words)],
                 slots={"path": str(path)})


def control_script_format(sandbox: Sandbox) -> Fault:
    path = _deploy(sandbox, "\n")
    fine = ("will run", "should run", "can run", "runs fine", "run fine", "runs ok", "unix line endings",
            "nothing wrong", "nothing would stop", "nothing stops", "nothing that would stop", "looks fine")
    return Fault(sandbox, {"path": str(path), "fault": None, "line_endings": "LF"}, [no_culprit(fine=fine)],
                 slots={"path": str(path)})


# -- a pid file naming a process that is gone -------------------------------------------------------

def _service(sandbox: Sandbox) -> tuple[int, str, Path]:
    """The mail queue service, which writes its own pid file as it starts."""
    pidfile = sandbox.path("var/run/mailqueue/mailqueue.pid")
    pidfile.parent.mkdir(parents=True, exist_ok=True)
    name = process_name("mailqueued")
    code = (f"with open({str(pidfile)!r}, 'w') as handle:\n    handle.write(str(os.getpid()) + '\\n')\n"
            "ready()" + SLEEP_FOREVER)
    pid, _ = sandbox.spawn(name, code, args=["--pidfile", str(pidfile), "--foreground"])
    return pid, name, pidfile


def plant_stale_pidfile(sandbox: Sandbox) -> Fault:
    pid, name, pidfile = _service(sandbox)
    os.kill(pid, signal.SIGKILL)  # it dies without removing its pid file, as after a crash or a power cut
    deadline = time.monotonic() + 10
    while running(pid):
        if time.monotonic() > deadline:
            raise SandboxError(f"the service {name} (pid {pid}) did not die")
        time.sleep(0.02)
    words = ("stale", "not running", "isn't running", "no process", "no such process", "doesn't exist",
             "does not exist", "no longer running", "no longer exists", "not alive", "dead", "left over",
             "leftover", "left behind", "exited", "crashed", "gone")
    return Fault(sandbox, {"pidfile": str(pidfile), "pid": pid, "name": name, "running": False},
                 [mentions("pid file naming a process that is gone", words)],
                 slots={"pidfile": str(pidfile)}, names=(name,))


def control_stale_pidfile(sandbox: Sandbox) -> Fault:
    pid, name, pidfile = _service(sandbox)
    gone = ("not running", "isn't running", "stale", "no such process", "does not exist", "doesn't exist",
            "no process", "no longer running", "not alive")
    return Fault(sandbox, {"pidfile": str(pidfile), "fault": None, "pid": pid, "name": name, "running": True},
                 [never_says("says the process is gone", gone),
                  no_culprit(fine=("running", "alive", "is up"), asked_pid=pid)],
                 slots={"pidfile": str(pidfile)}, names=(name,))
