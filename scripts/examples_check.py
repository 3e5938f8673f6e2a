"""The TUI's three example questions, asked with the default model on this machine as it is and then
with a matching fault planted (a busy loop, a large file, a listener on the port asked about), the
answers printed for a person to read. A measurement to run and report, not a test.

    .venv/bin/python scripts/examples_check.py [--model NAME]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

QUESTIONS = ("why is my computer slow?", "what is filling my disk?", "is anything listening on port 22?")


def ask(question: str, model: str | None) -> tuple[float, str]:
    """One `appliance ask` with no database record of ours beyond the default; its answer and seconds."""
    command = [sys.executable, "-m", "appliance.cli", "ask", question, "--no-ask"]
    if model:
        command += ["--model", model]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    return time.perf_counter() - started, (done.stdout.strip() or done.stderr.strip())


@contextlib.contextmanager
def busy_loop() -> Iterator[None]:
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(2)
        yield
    finally:
        hog.kill()
        hog.wait()


@contextlib.contextmanager
def large_file() -> Iterator[None]:
    folder = Path(tempfile.mkdtemp(prefix="examples-", dir="/var/tmp"))
    try:
        with open(folder / "render-cache.bin", "wb") as out:
            out.truncate(0)
            block = os.urandom(1 << 20)
            for _ in range(3 << 10):  # 3 GiB, real blocks
                out.write(block)
        yield
    finally:
        for child in folder.iterdir():
            child.unlink()
        folder.rmdir()


@contextlib.contextmanager
def listener(port: int) -> Iterator[None]:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        server.bind(("0.0.0.0", port))
    except OSError as exc:
        print(f"(port {port} is taken already: {exc}; the planted case asks about it as it is)")
        server.close()
        yield
        return
    server.listen()
    try:
        yield
    finally:
        server.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model")
    args = parser.parse_args()
    plants = (busy_loop, large_file, lambda: listener(22))
    for question, plant in zip(QUESTIONS, plants):
        seconds, answer = ask(question, args.model)
        print(f"## {question}  (as the machine is, {seconds:.0f} s)\n{answer}\n")
        with plant():
            seconds, answer = ask(question, args.model)
        print(f"## {question}  (with a matching fault planted, {seconds:.0f} s)\n{answer}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
