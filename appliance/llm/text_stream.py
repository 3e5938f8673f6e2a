"""Tokens to streamed text, never splitting a UTF-8 character between two pieces."""

from __future__ import annotations

import codecs
from typing import Callable

from appliance.llm.session import Session


class TextStream:
    """Turns tokens into text pieces for `on_text`, never splitting a UTF-8 character."""

    def __init__(self, session: Session, on_text: Callable[[str], None] | None) -> None:
        self._session = session
        self._on_text = on_text
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []

    def push(self, token: int) -> None:
        text = self._decoder.decode(self._session.piece(token))
        if text:
            self._parts.append(text)
            if self._on_text is not None:
                self._on_text(text)

    def text(self) -> str:
        tail = self._decoder.decode(b"", final=True)
        if tail:
            self._parts.append(tail)
            if self._on_text is not None:
                self._on_text(tail)
            self._decoder.reset()
        return "".join(self._parts)
