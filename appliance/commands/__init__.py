"""The command-line subcommands, one module each.

Each module exposes `register(subparsers)`, which adds its parser and sets `handler=fn` where
`fn(args) -> int` returns the exit code. Handlers raise `ApplianceError` for anything the person
must fix; `appliance.cli.main` turns that into one line on stderr and the error's exit code.
"""

# Order here is the order of `appliance --help`.
COMMAND_MODULES = ("ask", "check", "models", "runs", "tools", "eval", "doctor")
