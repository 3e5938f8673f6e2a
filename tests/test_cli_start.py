"""`appliance COMMAND` builds only its own command's parser: another command's module (the analyzers,
the store, the tools behind it) is never imported to start it, and every command line parses to
what the whole parser makes of it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from support.store import REPO, checkout_env

from appliance.cli import build_parser, main, parsed_with_stand_in
from appliance.commands import COMMAND_MODULES

PROBE = """
import json, sys
from appliance.cli import build_parser
build_parser(sys.argv[1:]).parse_args(sys.argv[1:])
print(json.dumps(sorted(m for m in sys.modules if m.startswith("appliance."))))
"""


def imported_to_parse(*argv: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=checkout_env(),
                         cwd=str(REPO), timeout=60, check=True)
    return set(json.loads(out.stdout))


def test_a_command_imports_its_own_module_and_no_other():
    loaded = imported_to_parse("--db", "check", "runs", "list")  # `check` here is the database's name
    assert "appliance.commands.runs" in loaded
    assert not {f"appliance.commands.{name}" for name in COMMAND_MODULES if name != "runs"} & loaded
    assert not any(m.startswith("appliance.analyzers") for m in loaded), loaded
    bare = imported_to_parse("--verbose")  # the TUI's start: no command
    assert not any(m.startswith(("appliance.store", "appliance.analyzers", "appliance.tools")) for m in bare), bare


@pytest.mark.parametrize("argv", [
    ["runs", "list", "--limit", "3"],
    ["--db", "runs", "runs", "show", "7"],
    ["--db=x.db", "check", "--family", "cpu", "--json"],
    ["--mod", "ask", "runs", "list"],  # an abbreviated option whose value names another command
    ["--verbose", "tools", "list"],
    ["models", "list"],
    ["eval", "compare", "1", "2"],
    ["ask", "why is it slow?", "--max-steps", "4"],
    [],
])
def test_every_command_line_parses_as_the_whole_parser_parses_it(argv):
    quick = build_parser(argv).parse_args(argv)
    if parsed_with_stand_in(quick):
        quick = build_parser().parse_args(argv)
    assert vars(quick) == vars(build_parser().parse_args(argv))


def test_help_lists_every_command_with_its_line(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    listing = capsys.readouterr().out
    for name in COMMAND_MODULES:
        assert f"\n    {name} " in listing
    assert "browse, show, export and prune recorded runs" in listing


def test_a_word_that_names_no_command_is_one_line_naming_them_all(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["bogus"])
    err = capsys.readouterr().err.strip()
    assert exit_.value.code == 2 and len(err.splitlines()) == 1
    assert all(repr(name) in err for name in COMMAND_MODULES), err
