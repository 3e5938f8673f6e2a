"""The command palette (Ctrl+P): switch model, set the step limit, toggle panels, export, copy.

One provider lists the app's commands as (title, help, callback) triples, so the same list serves
the palette's empty-query discovery and its fuzzy search.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Callable, Iterator

from textual.command import DiscoveryHit, Hit, Hits, Provider

from appliance.agent.settings import MAX_STEPS_LIMIT

if TYPE_CHECKING:
    from appliance.tui.app import ApplianceApp

STEP_LIMITS = (2, 3, 4, 6, 8, 10, 12, 16, 20)


def app_commands(app: "ApplianceApp") -> Iterator[tuple[str, str, Callable[[], object]]]:
    yield ("Toggle system panel", "CPU, memory and top processes, refreshed every second", app.action_toggle_system)
    yield ("Toggle checks panel", "The machine's checks (what `appliance check` prints), problems first; Ctrl+G",
           app.action_toggle_checks)
    yield ("Open history", "Past runs: search, replay, ask again, export", app.action_history)
    yield ("Export run", "Write the last run (steps and answer) to a Markdown file", app.action_export_run)
    yield ("Copy answer", "Copy the last answer to the clipboard", app.action_copy_answer)
    yield ("Toggle light/dark theme", "Switch between the light and dark themes", app.action_toggle_theme)
    for limit in STEP_LIMITS:
        yield (
            f"Set step limit: {limit}",
            f"Stop runs after {limit} steps (now {app.settings.max_steps})",
            partial(app.set_step_limit, limit),
        )
    for name, spec in app.model_choices():
        yield (f"Switch model: {name}", f"Load {spec}", partial(app.switch_model, spec))


class ApplianceCommands(Provider):
    async def discover(self) -> Hits:
        for title, help_text, callback in app_commands(self.app):  # type: ignore[arg-type]
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        app: "ApplianceApp" = self.app  # type: ignore[assignment]
        limit = typed_step_limit(query)
        if limit is not None:  # "step limit 7": exactly that number, whatever the preset list holds
            title = f"Set step limit: {limit}"
            yield Hit(1.0, title, partial(app.set_step_limit, limit), help=f"now {app.settings.max_steps}", text=title)
        matcher = self.matcher(query)
        for title, help_text, callback in app_commands(app):
            if limit is not None and title.startswith("Set step limit"):
                continue
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text, text=title)


def typed_step_limit(query: str) -> int | None:
    """The number in a query like "step limit 12" / "set step limit: 5", when it is a valid limit."""
    words = query.lower().replace(":", " ").split()
    if "step" not in " ".join(words) or not words or not words[-1].isdigit():
        return None
    value = int(words[-1])
    return value if 1 <= value <= MAX_STEPS_LIMIT else None
