"""Shared pieces of the store tests (no tests in here): synthetic event streams, the CLI as a real
subprocess, and scratch file systems (tmpfs) for the full-disk and read-only cases."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

from appliance.agent import events as ev
from appliance.llm.base import GenerationStats, ModelInfo

REPO = Path(__file__).resolve().parents[2]
MODEL = ModelInfo(name="smollm2-135m", path="/models/smollm2.gguf", size=98_000_000,
                  sha256="ab" * 32, context_length=4096)
SETTINGS = {"temperature": 0.0, "max_steps": 8, "context_length": 4096, "threads": 2}


def run_events(run_id: str, steps: int = 3, *, question: str = "why is the fan loud?",
               answer: str = "hogzilla uses the CPU", status: str = ev.FINISHED, start: float | None = None,
               observation: str = "pid 4711 hogzilla 98.5% cpu", end: bool = True) -> list:
    """A plausible run as the engine emits it: start, steps 0..steps-1, final answer, end."""
    t0 = time.time() if start is None else start
    events: list = [ev.RunStarted(run_id, question, MODEL, SETTINGS, t0, "0.1.0")]
    for n in range(steps):
        stats = GenerationStats(prompt_tokens_evaluated=100 + n, prompt_tokens_reused=50 * n,
                                completion_tokens=20, generation_ms=400.0, prompt_ms=80.0, threads=1, threads_batch=2)
        events.append(ev.StepRecorded(
            run_id, n, t0 + n + 1, f"thought {n} of {run_id}", "top_processes", {"sort_by": "cpu", "n": 5 + n},
            "ok", f"{observation} (step {n})", f"summary {n}", {"reason": "checking"} if n == 1 else None,
            "", stats, 3.5))
    if end:
        events.append(ev.FinalAnswer(run_id, steps, answer, {"process": "hogzilla"}, ("pid=4711",)))
        events.append(ev.RunEnded(run_id, status, answer, {"process": "hogzilla"}, "", steps,
                                  sum(100 + n for n in range(steps)), sum(50 * n for n in range(steps)),
                                  20 * steps, steps + 1.5, t0 + steps + 2))
    return events


def record_all(store, events) -> None:
    for event in events:
        store.record(event)


def checkout_env() -> dict[str, str]:
    """This process's environment with the checkout first on PYTHONPATH, what was there kept (the
    GGUF guard of tests/conftest.py rides on it into every child process)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}


def cli(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """`appliance ARGS` in a real child process (what a person types), output captured."""
    full_env = {**checkout_env(), **(env or {})}
    return subprocess.run([sys.executable, "-m", "appliance.cli", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, cwd=str(REPO))


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """Non-zero exit, exactly one line on stderr, no traceback, and it says what it should."""
    assert proc.returncode != 0, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@contextlib.contextmanager
def tmpfs(size_kb: int) -> Iterator[Path]:
    """A small real file system of its own (root only), so it can really fill up or go read-only."""
    if not is_root():
        pytest.skip("SKIPPED LOUDLY: needs root to mount a small tmpfs (full disk / read-only file system)")
    mount_point = Path(tempfile.mkdtemp(prefix="store-tmpfs-"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(mount_point)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        mount_point.rmdir()
        pytest.skip(f"SKIPPED LOUDLY: cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)
        with contextlib.suppress(OSError):
            mount_point.rmdir()


def fill_disk(directory: Path) -> Path:
    """Write a filler file until the file system is full; returns it (delete it to free space)."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler
