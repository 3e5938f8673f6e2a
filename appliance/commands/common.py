"""Options every subcommand accepts, before or after its name (`appliance --db X runs list` and
`appliance runs list --db X` mean the same)."""

from __future__ import annotations

import argparse

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
