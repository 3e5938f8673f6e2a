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


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments end in one line and a hint, exit 2, instead of a usage block. Subparsers are
    made of the same class (argparse builds them with the parent's type), so every command has it."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message} (see `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(2)


def readable_argv(argv: Sequence[str]) -> list[str]:
    """The arguments with bytes that are not UTF-8 (kept by Python as lone surrogates) replaced by
    U+FFFD, and one line on stderr saying so: nothing after this can fail to encode them."""
    out = []
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            fixed = arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            print(f"appliance: an argument is not valid UTF-8; its undecodable bytes were replaced: {fixed!r}",
                  file=sys.stderr)
            arg = fixed
        out.append(arg)
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="appliance",
        description="An offline troubleshooting agent for this machine. Run without a command for the TUI.",
    )
    parser.add_argument("--version", action="version", version=f"appliance {__version__}")
    add_common_options(parser, top_level=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"appliance.commands.{name}")
        module.register(subparsers)  # each subparser calls add_common_options itself
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(readable_argv(sys.argv[1:] if argv is None else argv))
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
