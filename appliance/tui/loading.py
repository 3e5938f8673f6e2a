"""How the TUI gets a model: the loader contract, and the one error that means "not downloaded".

The app only sees `ModelLoader = Callable[[str | None], ChatModel]`. A loader raises
`ModelNotOnDisk` when the model is known (catalog) but its file is absent, so the app can offer to
pull it; any other `ApplianceError` (corrupt file, wrong format, not enough memory) is shown as a
clear error. Tests pass a loader that returns a ScriptedModel.
"""

from __future__ import annotations

from typing import Callable

from appliance.errors import ModelError
from appliance.llm.base import ChatModel

ModelLoader = Callable[["str | None"], ChatModel]
Puller = Callable[[str, Callable[[int, int], None]], object]


class ModelNotOnDisk(ModelError):
    """A catalog model whose file has not been pulled yet."""

    def __init__(self, name: str, *, size: int = 0, detail: str = "", can_pull: bool = True) -> None:
        super().__init__(detail or f"model {name} is not downloaded")
        self.name = name
        self.size = size
        self.detail = detail or f"model {name} is not downloaded"
        self.can_pull = can_pull
