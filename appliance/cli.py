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
from appliance.commands.common import VALUE_OPTIONS, add_common_options
from appliance.errors import ApplianceError, terminal_safe


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments end in one line and a hint, exit 2, instead of a usage block. Subparsers are
    made of the same class (argparse builds them with the parent's type), so every command has it."""

    def error(self, message: str) -> NoReturn:
        print(terminal_safe(f"{self.prog}: {message} (see `{self.prog} --help`)"), file=sys.stderr)
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


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser when `argv` is None or asks for help; otherwise only the command `argv`
    names is built in full, every other command a stand-in that takes any arguments. Building a
    command imports its module, and some import the analyzers, the store or the tools (a third of
    a second each): a command pays only for its own. `main` builds the whole parser again when the
    guess was wrong (`parsed_with_stand_in`)."""
    whole = argv is None or any(word in ("-h", "--help") for word in argv)
    chosen = None if argv is None else command_named(argv)
    parser = OneLineParser(
        prog="appliance",
        description="An offline troubleshooting agent for this machine. Run without a command for the TUI.",
    )
    parser.add_argument("--version", action="version", version=f"appliance {__version__}")
    add_common_options(parser, top_level=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        if whole or name == chosen:
            module = importlib.import_module(f"appliance.commands.{name}")
            module.register(subparsers)  # each subparser calls add_common_options itself
        else:
            stand_in = subparsers.add_parser(name, add_help=False)
            stand_in.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The command the arguments name: their first word that is not an option or an option's value
    (None for none, or for a word that names no command)."""
    words = iter(argv)
    for word in words:
        if word in VALUE_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            return word if word in COMMAND_MODULES else None
    return None


def parsed_with_stand_in(args: argparse.Namespace) -> bool:
    """The command was parsed by a stand-in: `command_named` guessed another one."""
    return args.command is not None and getattr(args, "handler", None) is None


def main(argv: Sequence[str] | None = None) -> int:
    words = readable_argv(sys.argv[1:] if argv is None else argv)
    args = build_parser(words).parse_args(words)
    if parsed_with_stand_in(args):
        args = build_parser().parse_args(words)
    try:
        if args.command is None:
            from appliance.commands.tui import run_tui

            return run_tui(args)
        return int(args.handler(args) or 0)
    except ApplianceError as exc:
        print(terminal_safe(f"appliance: {exc.message}"), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("appliance: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
