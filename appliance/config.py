"""Where the appliance keeps its data, decided once and passed in (never read from globals later).

Resolution: `APPLIANCE_HOME` if set, else `$XDG_DATA_HOME/appliance`, else `~/.local/share/appliance`.
Model files live in the checkout's `models/` folder when running from a clone (so a developer's
`git clean` never surprises them and they are never committed, see .gitignore), otherwise under the
data directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

PACKAGE_DIR = Path(__file__).resolve().parent
CHECKOUT_DIR = PACKAGE_DIR.parent
CATALOG_FILE = CHECKOUT_DIR / "models" / "catalog.json"


def running_from_checkout() -> bool:
    """True when the package is imported from a clone (pyproject.toml beside the package)."""
    return (CHECKOUT_DIR / "pyproject.toml").is_file() and (CHECKOUT_DIR / "models").is_dir()


@dataclass(frozen=True)
class Paths:
    """The on-disk locations one invocation uses."""

    home: Path
    db: Path
    models_dir: Path


def data_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("APPLIANCE_HOME"):
        return Path(env["APPLIANCE_HOME"]).expanduser()
    xdg = env.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "appliance"


def resolve_paths(env: Mapping[str, str] | None = None, db: str | os.PathLike | None = None) -> Paths:
    """Work out the data directory, database file and model folder for this run."""
    env = os.environ if env is None else env
    home = data_home(env)
    if env.get("APPLIANCE_MODELS_DIR"):
        models_dir = Path(env["APPLIANCE_MODELS_DIR"]).expanduser()
    elif running_from_checkout():
        models_dir = CHECKOUT_DIR / "models"
    else:
        models_dir = home / "models"
    db_path = Path(db).expanduser() if db else home / "appliance.db"
    return Paths(home=home, db=db_path, models_dir=models_dir)


def home_problem(home: Path) -> str | None:
    """Why `home` cannot be the data directory, or None: the nearest part of it that exists must be
    a folder (a file there would turn every later step into a puzzling error, or into "no runs")."""
    for where in (home, *home.parents):
        try:
            is_dir = where.is_dir()
            exists = is_dir or where.exists() or where.is_symlink()
        except OSError as exc:
            return f"the data directory {home} cannot be used: {where}: {exc.strerror or exc}"
        if is_dir:
            return None
        if exists:
            what = "is a file, not a folder" if where.is_file() else "is not a folder"
            inside = "" if where == home else f" (it would be inside {where})"
            return f"the data directory {home}{inside} cannot be used: {where} {what}; set APPLIANCE_HOME to a folder"
    return None

