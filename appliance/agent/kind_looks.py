"""What a question of a kind no analyzer judges gets measured before the first step.

Why: "which kernel is this?" or "which user hogs the CPU?" is answered by one reading, not by a
verdict; a small model that has the reading in front of it names it, one that has to think of the
tool first often guesses instead (and is then sent back for naming nothing observed).
"""

from __future__ import annotations

from appliance.agent.question.kinds import Asks, Resource
from appliance.agent.question.question import Question

OVERVIEW: tuple[str, dict] = ("system_overview", {})

# The reading that answers a kind of question, with its arguments (cheap ones only: the user
# totals sample the CPU for about a second).
KIND_LOOKS: dict[Asks, tuple[tuple[str, dict], ...]] = {
    Asks.SYSTEM_FACT: (OVERVIEW,),
    Asks.USER: (("user_totals", {}),),
}


def kind_looks(question: Question) -> tuple[tuple[str, dict], ...]:
    """The readings measured for this question before the first step (none for a user question
    about a place it names: who owns a folder is answered by looking at the folder)."""
    if question.asks is Asks.USER and question.paths:
        return ()
    looks = KIND_LOOKS.get(question.asks, ())
    if question.asks in (Asks.AMOUNT, Asks.COUNT) and question.resource in (Resource.TIME, Resource.NONE) \
            and not question.paths and OVERVIEW not in looks:
        looks = (*looks, OVERVIEW)  # an amount of no part ("how long since the reboot?") is a fact of the machine
    return looks
