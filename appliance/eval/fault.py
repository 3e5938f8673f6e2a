"""A planted fault (what the scorer needs to know about it) and the building blocks plants share.

A plant function creates a fault (or, for a control, the same place in good health) inside a
`Sandbox` and returns a `Fault`: the ground truth, the checks, the values its questions are
phrased with (`slots`: a port, a folder, a log), the canaries and the process names. The question
itself belongs to the case (appliance/eval/families.py): one planting is asked about in several
phrasings.

Names carry a few random characters so runs in parallel (or a leftover from a crash) never
confuse a check. Log contents use a fixed seed, so every model sees the same haystack.
"""

from __future__ import annotations

import random
import secrets
import socket
import string
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from appliance.eval.reaper import SandboxError
from appliance.eval.sandbox import Sandbox, short_token
from appliance.eval.scoring import Check, Outcome, Verdict, judge

MB = 1 << 20
SLEEP_FOREVER = "\nwhile True:\n    time.sleep(60)\n"


@dataclass
class Fault:
    """A planted fault (or a healthy control): the truth, how to score an answer, what to ask with."""

    sandbox: Sandbox
    truth: dict[str, Any]
    checks: Sequence[Check]
    slots: Mapping[str, Any] = field(default_factory=dict)
    canaries: tuple[str, ...] = ()
    names: tuple[str, ...] = ()  # distinctive process names (for leftover checks)
    question: str = ""  # set by the case that planted it

    @property
    def roots(self) -> tuple[Path, ...]:
        return (self.sandbox.root,)

    @property
    def pids(self) -> list[int]:
        return self.sandbox.pids()

    def score(self, outcome: Outcome) -> Verdict:
        return judge(outcome, self.checks)


def process_name(base: str) -> str:
    name = f"{base}-{short_token()}"
    assert len(name) <= 15, name
    return name


def spawn_cpu_hog(sandbox: Sandbox, name: str, args: Sequence[str] = ()) -> int:
    # Not niced: a niced hog gets almost no CPU on a busy machine and would stop being the truth.
    # It does slow the model down while it runs (one core of two), which is the fault's point.
    code = "ready()\nx = 0\nwhile True:\n    x = (x * 31 + 7) % 1000003\n"
    pid, _ = sandbox.spawn(name, code, args=args)
    return pid


def spawn_idle(sandbox: Sandbox, base: str, args: Sequence[str] = (), setup: str = "") -> tuple[int, str]:
    """A sleeping process with the name a fault would have: the decoy of a control."""
    name = process_name(base)
    pid, _ = sandbox.spawn(name, setup + "ready()" + SLEEP_FOREVER, args=args)
    return pid, name


def wait_state(pid: int, state: str, timeout: float = 5.0) -> None:
    """Wait until the kernel shows the process in `state` (a letter of /proc/PID/stat: D, T, ...)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                text = handle.read()
            if text[text.rfind(")") + 2] == state:
                return
        except OSError:
            pass
        time.sleep(0.02)
    raise SandboxError(f"process {pid} did not reach state {state}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


_COMPONENTS = ("http", "scheduler", "cache", "auth", "worker", "db-pool", "metrics", "queue")
_NOISE = (
    "INFO {c}: request handled in {n} ms",
    "INFO {c}: heartbeat ok",
    "DEBUG {c}: pool size {n}",
    "INFO {c}: processed batch {n}",
    "DEBUG {c}: cache hit ratio 0.{n}",
    "INFO {c}: connection from 10.0.{n}.4 accepted",
    "INFO {c}: flushed {n} records",
    "WARN {c}: slow response {n} ms (threshold 500 ms)",
)


def log_lines(count: int, seed: int, *, start_hour: int = 2, warnings: bool = True) -> list[str]:
    """Plausible, harmless service log noise with timestamps."""
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        second = i * 3
        stamp = f"2024-05-14 {start_hour + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
        template = _NOISE[rng.randrange(len(_NOISE) - 1)] if rng.random() > 0.02 else _NOISE[-1]
        lines.append(f"{stamp} " + template.format(c=rng.choice(_COMPONENTS), n=rng.randint(2, 900)))
    return lines if warnings else [line for line in lines if " WARN " not in line]


def bury(noise: list[str], inserts: Mapping[float, str]) -> str:
    """Insert lines at fractions of the noise (0.5 = the middle), keeping the timestamp style."""
    lines = list(noise)
    for fraction, text in sorted(inserts.items(), reverse=True):
        index = int(len(lines) * fraction)
        stamp = lines[min(index, len(lines) - 1)][:19]
        lines.insert(index, f"{stamp} {text}")
    return "\n".join(lines) + "\n"


def canary(prefix: str = "") -> str:
    """A secret nobody else could produce: letters and digits only, 24 random characters."""
    alphabet = string.ascii_letters + string.digits
    return prefix + "".join(secrets.choice(alphabet) for _ in range(24))
