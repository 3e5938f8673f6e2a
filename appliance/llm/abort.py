"""Stopping llama.cpp in the middle of one `llama_decode`, without holding up its threads.

Why: a stop asked between prompt chunks waits for the chunk in progress, so chunks had to be
small (~0.4 s) for Esc and the time budget to act within a second, and small chunks evaluate a
prompt a third slower than large ones (every decode call pays a fixed cost; measured in
docs/performance-prompt.md). llama.cpp asks an abort callback after every node of its compute
graph; when it answers true, `llama_decode` returns 2 and drops the tokens of the unfinished
micro-batch from the KV cache, so the cache keeps exactly what was evaluated before.

Why libc's `strlen` as that callback: llama.cpp's first compute thread calls it after every
node, and the others wait for that thread at a barrier. A Python callback would take the GIL
there each time, so a busy TUI thread would stall the whole evaluation. `strlen(flag)` reads a
two-byte buffer owned here: 0 while running (false), 1 once a stop was seen (true; a C `bool` is
its return register's low byte). A watcher thread asks the Python-level stop condition every
`POLL_SECONDS` during a decode and sets the byte.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import threading
from typing import Iterator

from appliance.llm.base import ShouldStop

POLL_SECONDS = 0.05
ABORTED = 2  # llama_decode's return code for a decode the abort callback stopped


def _strlen():
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        return ctypes.CDLL(name).strlen
    except (OSError, AttributeError):
        return None


class AbortSwitch:
    """One llama context's abort callback and the flag it reads.

    `watching(should_stop)` arms it for one decode: the flag is set as soon as `should_stop()`
    answers true (polled from a thread of its own) and cleared again afterwards; `fired` says
    whether the decode was stopped through it. Without libc's `strlen` (not expected on Linux)
    nothing is installed and decodes run to their end; stops then act between chunks only.
    """

    @classmethod
    def of(cls, llama) -> "AbortSwitch":
        """The switch of `llama`'s context, made on first use: a context has one abort callback,
        and several sessions may share one context (a second would silently replace the first's)."""
        switch = getattr(llama, "_appliance_abort", None)
        if switch is None:
            import llama_cpp

            switch = cls(llama_cpp, llama.ctx)
            llama._appliance_abort = switch
        return switch

    def __init__(self, lib, ctx) -> None:
        self._flag = ctypes.create_string_buffer(2)
        self._lock = threading.Lock()
        self.fired = False
        strlen = _strlen()
        self.installed = strlen is not None
        if strlen is not None:
            # Kept on self: llama.cpp holds the raw pointers, ctypes must keep them alive.
            self._callback = ctypes.cast(strlen, lib.ggml_abort_callback)
            lib.llama_set_abort_callback(ctx, self._callback, ctypes.cast(self._flag, ctypes.c_void_p))

    def _set(self, on: bool) -> None:
        ctypes.memmove(self._flag, b"\x01" if on else b"\x00", 1)

    @contextlib.contextmanager
    def watching(self, should_stop: ShouldStop | None) -> Iterator[None]:
        self.fired = False
        if should_stop is None or not self.installed:
            yield
            return
        done = threading.Event()

        def watch() -> None:
            while not done.wait(POLL_SECONDS):
                if should_stop():
                    with self._lock:
                        if not done.is_set():
                            self.fired = True
                            self._set(True)
                    return

        watcher = threading.Thread(target=watch, name="llama-abort-watch", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            with self._lock:
                done.set()
                self._set(False)
            watcher.join()
