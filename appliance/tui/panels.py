"""Where the side panels go, so the answer keeps room to be read on a small terminal (80x24 over SSH).

Pure bookkeeping, no widgets: RunScreen says which panels are open and who opened them, and asks
`arrange` what to show at the screen's width. Open panels sit beside the transcript while it keeps
ANSWER_MIN columns; a panel that does not fit is collapsed, or, when the person asked for it,
shown alone in place of the transcript until they close it or ask a question.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

ANSWER_MIN = 60  # columns the answer box keeps beside the open panels
TRANSCRIPT_FRAME = 3  # the transcript's padding (1 each side) and its scrollbar around the answer box


@dataclass(frozen=True)
class Arrangement:
    beside: frozenset[str]  # panels shown beside the transcript
    front: str | None  # the panel shown instead of the transcript, if any

    def shows(self, name: str) -> bool:
        return name in self.beside or name == self.front


class PanelLayout:
    """The open panels, the most recently opened last, and whether the person opened each one
    (the checks panel also opens by itself when the first check finds a problem)."""

    def __init__(self) -> None:
        self._open: dict[str, bool] = {}  # name -> opened by the person; insertion order = recency

    def is_open(self, name: str) -> bool:
        return name in self._open

    def open(self, name: str, *, by_person: bool) -> None:
        self._open.pop(name, None)
        self._open[name] = by_person

    def close(self, name: str) -> None:
        self._open.pop(name, None)

    def tuck(self) -> None:
        """A question was asked: a panel shown in place of the transcript steps back (it stays open
        and comes back beside the transcript when the terminal is wide enough, or when asked for)."""
        self._open = dict.fromkeys(self._open, False)

    def arrange(self, width: int, widths: Mapping[str, int]) -> Arrangement:
        """The most recent open panels that leave the answer ANSWER_MIN columns sit beside it; when
        not even the most recent one fits and the person opened it, it is shown alone."""
        room = width - ANSWER_MIN - TRANSCRIPT_FRAME
        beside: set[str] = set()
        for name in reversed(self._open):
            if widths[name] > room:
                break
            beside.add(name)
            room -= widths[name]
        if beside or not self._open:
            return Arrangement(frozenset(beside), None)
        latest = next(reversed(self._open))
        return Arrangement(frozenset(), latest if self._open[latest] else None)
