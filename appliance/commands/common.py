"""Options every subcommand accepts, before or after its name (`appliance --db X runs list` and
`appliance runs list --db X` mean the same)."""

from __future__ import annotations

import argparse
import os
from typing import Mapping

from appliance.config import Paths, home_problem, resolve_paths
from appliance.errors import UsageError, terminal_safe

# The common options that take a value (the word after one is its value, not a command's name).
VALUE_OPTIONS = ("--db", "--model")


def add_common_options(parser: argparse.ArgumentParser, *, top_level: bool = False) -> None:
    """Add --db, --model and --verbose. On subcommands the default is SUPPRESS, so a value given
    before the subcommand name is not overwritten by the subparser's default."""
    default = None if top_level else argparse.SUPPRESS
    parser.add_argument("--db", metavar="PATH", default=default,
                        help="the trajectory database (default: appliance.db in the data directory)")
    parser.add_argument("--model", metavar="NAME|PATH", default=default,
                        help="a model name or alias from the catalog, or a path to a GGUF file")
    parser.add_argument("--verbose", action="store_true",
                        default=False if top_level else argparse.SUPPRESS,
                        help="show llama.cpp's own log")


def readable_text(text: str) -> bool:
    """`text` holds something a person could read: a visible character once every control character
    and escape sequence is taken out (a question of `\\x01\\x1b[2J` asks nothing)."""
    return any(c.isprintable() and not c.isspace() for c in terminal_safe(text))


def command_paths(args: argparse.Namespace | None = None, env: Mapping[str, str] | None = None) -> Paths:
    """The data directory, database and models folder of this command (`--db` from `args`), or one
    line saying why the data directory cannot be one (`APPLIANCE_HOME` naming a file)."""
    paths = resolve_paths(env=os.environ if env is None else env, db=getattr(args, "db", None))
    problem = home_problem(paths.home)
    if problem is not None:
        raise UsageError(problem)
    return paths
