"""Pulling a missing model from the missing-model screen: the download runs on a thread of its
own, reports its progress to that screen, and loads the model once it is saved."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from appliance.errors import one_line
from appliance.tui import messages as msg
from appliance.tui.screens import ModelMissingScreen

if TYPE_CHECKING:
    from appliance.tui.loading import Puller


class PullsModels:
    """The app's share in pulling: a mixin, so the handlers stay the app's own message handlers."""

    _puller: Puller | None
    model_spec: str | None

    if TYPE_CHECKING:  # provided by textual.app.App
        screen: Any

        def post_message(self, message: Any) -> bool: ...
        def notify(self, message: str, **kwargs: Any) -> None: ...
        def pop_screen(self) -> Any: ...
        def load_model(self, spec: str | None) -> None: ...

    def on_pull_requested(self, message: msg.PullRequested) -> None:
        # A daemon thread, not a Textual worker: a pull of a gigabyte cannot be interrupted, and
        # quitting must not wait for it (the pull writes to a temporary file and renames at the end).
        threading.Thread(target=self._pull, args=(message.name,), name="pull-model", daemon=True).start()

    def _pull(self, name: str) -> None:
        assert self._puller is not None  # the missing-model screen offers a pull only with one
        last = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.1 or done >= total:  # at most ten updates a second
                last[0] = now
                self.post_message(msg.PullProgressed(done, total))

        try:
            path = self._puller(name, progress)
        except Exception as exc:
            self.post_message(msg.PullFailed(one_line(exc)))
        else:
            self.post_message(msg.PullFinished(str(path)))

    def on_pull_progressed(self, message: msg.PullProgressed) -> None:
        if isinstance(self.screen, ModelMissingScreen):
            self.screen.show_progress(message.done, message.total)

    def on_pull_failed(self, message: msg.PullFailed) -> None:
        if isinstance(self.screen, ModelMissingScreen):
            self.screen.show_failure(message.error)
        else:
            self.notify(f"Pull failed: {message.error}", severity="error")

    def on_pull_finished(self, message: msg.PullFinished) -> None:
        self.notify(f"Model saved to {message.path}")
        if isinstance(self.screen, ModelMissingScreen):
            self.pop_screen()
        self.load_model(self.model_spec)
