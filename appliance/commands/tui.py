"""Bare `appliance`: open the TUI, wired to the real model, engine, store and system readings.

Everything the app needs is built here and injected, so the app itself never reads globals and
tests can inject fakes instead. Imports of the heavy parts are lazy: the screen appears first and
the model loads in a worker.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, Callable

from appliance.commands.common import command_paths
from appliance.config import Paths
from appliance.wiring import prepare


def make_model_loader(paths: Paths, *, verbose: bool = False) -> Callable[[str | None], Any]:
    """A loader that tells "not downloaded yet" (offer a pull) apart from every other failure."""

    def load(spec: str | None) -> Any:
        from appliance.llm.catalog import load_catalog, model_spec
        from appliance.llm.runtime import open_chat_model
        from appliance.tui.loading import ModelNotOnDisk

        catalog = load_catalog()
        entry = catalog.find(model_spec(spec, os.environ, catalog))
        if entry is not None and not entry.path_in(paths.models_dir).exists():
            raise ModelNotOnDisk(
                entry.name,
                size=entry.size,
                detail=f"It is kept in {paths.models_dir}. {entry.description}",
            )
        return open_chat_model(spec, paths=paths, verbose=verbose)

    return load


def make_puller(paths: Paths) -> Callable[[str, Callable[[int, int], None]], Any]:
    def pull_model(name: str, progress: Callable[[int, int], None]) -> Any:
        from appliance.llm.catalog import load_catalog
        from appliance.llm.pull import pull

        entry = load_catalog().get(name)
        return pull(entry, paths.models_dir, lambda p: progress(p.done_bytes, p.total_bytes or entry.size))

    return pull_model


def model_choices(paths: Paths) -> Callable[[], list[tuple[str, str]]]:
    """Catalog models (noting the ones not downloaded), imported files and remote models, for the palette."""

    def choices() -> list[tuple[str, str]]:
        from appliance.llm.catalog import load_catalog, load_imported
        from appliance.llm.remotes import load_remotes

        catalog = load_catalog()
        found: list[tuple[str, str]] = []
        for entry in catalog.entries:
            present = entry.path_in(paths.models_dir).exists()
            found.append((entry.name + ("" if present else " (not downloaded)"), entry.name))
        try:
            found += [(item.name + " (imported)", item.name) for item in load_imported(paths.models_dir)]
            found += [(f"{item.name} (remote: {item.url})", item.name) for item in load_remotes(paths.models_dir)]
        except Exception:  # an unreadable import list must not break the palette
            pass
        return found

    return choices


def run_checks() -> list:
    """Every analyzer over one fresh reading of the machine (the TUI's own process is the
    appliance: never a culprit). Imported here, in the checks worker, after start-up."""
    from appliance.analyzers import Readings, run_all

    return run_all(Readings())


def open_recorder(db: Any) -> Any:
    """The run's recorder (imported here: sqlite-utils takes ~0.3 s to import, after start-up)."""
    from appliance.store import open_recorder as open_safe_recorder

    return open_safe_recorder(db)


def build_app(args: argparse.Namespace, env: dict[str, str] | None = None) -> Any:
    from appliance.agent.settings import EngineSettings
    from appliance.tui.app import ApplianceApp
    from appliance.tui.export import MarkdownExporter
    from appliance.tui.history_source import StoreHistory
    from appliance.tui.system_sampler import PsutilSampler

    paths = command_paths(args, env)
    prepared = prepare()  # one machine check per question, begun while it is typed
    return ApplianceApp(
        model_loader=make_model_loader(paths, verbose=bool(getattr(args, "verbose", False))),
        engine_factory=prepared.engine,
        begin_check=prepared.begin_check,
        settings=EngineSettings(),
        recorder_factory=lambda: open_recorder(paths.db),  # in the run's thread, after the screen is up
        history=StoreHistory(paths.db),
        model_spec=getattr(args, "model", None),
        model_choices=model_choices(paths),
        puller=make_puller(paths),
        sampler=PsutilSampler(),
        exporter=MarkdownExporter(paths.home / "exports"),
        checker=run_checks,
        read_ahead=(env if env is not None else os.environ).get("APPLIANCE_READ_AHEAD", "").strip() != "0",
    )


def run_tui(args: argparse.Namespace) -> int:
    """Run the TUI until the person quits; the exit code is 0 unless the app says otherwise."""
    app = build_app(args)
    app.run()
    return int(app.return_code or 0)
