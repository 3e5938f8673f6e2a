"""A computation started in a background thread ahead of the moment it is needed.

Why: `appliance ask` knows its question before the model is loaded, and the machine-wide check
spends most of its 1–2 s waiting out its windows (the process sample, the restart watch); started
first, those windows pass while llama.cpp loads the model and its prompt cache, and the first step
waits only for what is left.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Generic, Hashable, TypeVar

T = TypeVar("T")


class Early(Generic[T]):
    """`compute()` running in a daemon thread from now, for one `key`; `take(key, max_age)` waits
    for it and returns its value, or None when it was started for another key or longer than
    `max_age` seconds ago (too old to stand for the machine now). A failure is raised by `take`."""

    def __init__(self, key: Hashable, compute: Callable[[], T]) -> None:
        self.key = key
        self.started = time.monotonic()
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(compute,), name="appliance-early", daemon=True)
        self._thread.start()

    def _run(self, compute: Callable[[], T]) -> None:
        try:
            self._value = compute()
        except BaseException as exc:  # kept for `take`, which raises it in the caller's thread
            self._error = exc

    def take(self, key: Hashable, max_age: float) -> T | None:
        if key != self.key or time.monotonic() - self.started > max_age:
            return None
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


__all__ = ["Early"]
