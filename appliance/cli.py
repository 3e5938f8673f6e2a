"""The `appliance` command: the TUI when run bare, headless subcommands otherwise.

Errors the person can cause end in one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn, Sequence

from appliance import __version__
from appliance.commands import COMMAND_MODULES
from appliance.commands.common import add_common_options
from appliance.errors import ApplianceError


class _Parser(argparse.ArgumentParser):
    """argparse, but a wrong argument is one line on stderr (exit 2), not a usage block; the
    subcommands' parsers are of this class too (argparse makes them of their parent's class)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="appliance",
        description="An offline troubleshooting agent for this machine. Run without a command for the TUI.",
    )
    parser.add_argument("--version", action="version", version=f"appliance {__version__}")
    add_common_options(parser, top_level=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"appliance.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"appliance.commands.{name}":
                continue  # a command not built yet in this checkout
            raise
        module.register(subparsers)  # each subparser calls add_common_options itself
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command is None:
            from appliance.commands.tui import run_tui

            return run_tui(args)
        return int(args.handler(args) or 0)
    except ApplianceError as exc:
        print(f"appliance: {exc.message}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("appliance: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
