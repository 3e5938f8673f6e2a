"""The system prompt brought into the model's context while step 0 is gathered.

Why: a run's first model call needs the system prompt in the context (restored from the prompt
cache in a fraction of a second, or evaluated on a first start) and the machine check begun ahead
of the run (whose sampling windows last about two seconds). The check waits on /proc windows and the
restore on the model's context, so a run does both at once instead of one after the other; its
first model call then finds the prompt in place, or waits for it and is shown its progress
(LlamaChatModel._acquire).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from appliance.llm.base import Message

END_WAIT = 2.0  # seconds a run's end waits for its stopped warm-up


class WarmBeside:
    """One run's warm-up of its system prompt, in a thread of its own; a model without `warm`
    (the ChatModel protocol's optional method) gets none and the first call does it."""

    def __init__(self, model: Any, system: Message, should_stop: Callable[[], bool]) -> None:
        self._report: Any = None
        self._ended = threading.Event()
        self._thread: threading.Thread | None = None
        warm = getattr(model, "warm", None)
        if warm is None:
            return

        def stop() -> bool:
            return self._ended.is_set() or should_stop()

        def work() -> None:
            try:
                self._report = warm([system], should_stop=stop)
            except Exception:  # the run's first call brings the prompt in itself and reports a failure
                self._report = None

        self._thread = threading.Thread(target=work, name="engine-warm", daemon=True)
        self._thread.start()

    def end(self) -> tuple[float, int]:
        """Stop the warm-up if it still runs (the run ended before its first model call) and say
        what it cost the run: its seconds and the tokens it evaluated (none when the prompt was
        already in the context)."""
        if self._thread is None:
            return 0.0, 0
        self._ended.set()
        self._thread.join(timeout=END_WAIT)  # a stop takes effect within a graph node or 50 ms of waiting
        if self._thread.is_alive():
            return 0.0, 0
        report = self._report
        if report is None or getattr(report, "status", "") == "present":
            return 0.0, 0
        return float(getattr(report, "seconds", 0.0) or 0.0), int(getattr(report, "evaluated", 0) or 0)
