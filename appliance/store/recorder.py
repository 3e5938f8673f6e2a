"""Recording that can fail without failing the run.

The person asked a question; the answer matters more than the log of it. A full disk, a locked or
read-only database must not stop the run (issue 9): `SafeRecorder.record` never raises, keeps the
first failure as one line in `.failure` for the CLI/TUI to show ("the run could not be recorded:
..."), and writes nothing more after it, so the database never holds a run with a gap in the
middle of its steps.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol

from appliance.errors import ApplianceError

if TYPE_CHECKING:
    from appliance.agent.events import Event
    from appliance.store.store import Store


class Recorder(Protocol):
    """What the consumers of a run (the TUI, `ask`, eval) hand each event to: a `Store`, a
    `SafeRecorder`, or the TUI's in-memory history when there is no database."""

    def record(self, event: Event) -> None: ...


class SafeRecorder:
    """Wraps a Store (or None when it could not be opened) with a `record` that never raises."""

    def __init__(self, store: Store | None, *, failure: str | None = None) -> None:
        self.store = store
        self.failure: str | None = failure

    @property
    def ok(self) -> bool:
        return self.failure is None and self.store is not None

    def record(self, event: Event) -> None:
        if self.store is None or self.failure is not None:
            return
        try:
            self.store.record(event)
        except ApplianceError as exc:
            self.failure = exc.message
        except Exception as exc:  # noqa: BLE001 - by design: a log failure never ends a run
            self.failure = f"recording failed: {type(exc).__name__}: {exc}".splitlines()[0]

    def close(self) -> None:
        """Close the wrapped store; never raises either."""
        if self.store is None:
            return
        try:
            self.store.close()
        except Exception:  # noqa: BLE001
            pass


def open_recorder(path: str | os.PathLike, **options: Any) -> SafeRecorder:
    """Open the store for writing, or a recorder that carries the reason it could not be opened.

    For `appliance ask` and the TUI: the run goes ahead either way.
    """
    from appliance.store.store import open_store

    try:
        return SafeRecorder(open_store(path, **options))
    except ApplianceError as exc:
        return SafeRecorder(None, failure=exc.message)
    except Exception as exc:  # noqa: BLE001
        return SafeRecorder(None, failure=f"cannot open the run database {path}: {exc}".splitlines()[0])
