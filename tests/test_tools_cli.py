"""`appliance tools list` and `appliance tools run`: what a person (or script) sees."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from appliance.cli import main
from appliance.commands.tools import parse_args_list
from appliance.tools.registry import TOOL_FUNCTIONS


def run(capsys, *argv):
    code = main(["tools", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_prints_every_tool_with_description_and_arguments(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0
    for name in ("system_overview", "top_processes", "dir_sizes", "read_log", "run_readonly"):
        assert f"\n{name}\n" in f"\n{out}"
    assert "--arg sort_by=…  (cpu|memory|io, default \"cpu\")" in out
    assert "--arg pid=…  (integer, 1..4194304, required)" in out


def test_list_json_has_schemas(capsys):
    code, out, _ = run(capsys, "list", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["name"] for r in rows] == [f.__tool__.name for f in TOOL_FUNCTIONS]  # every tool, in order
    top = next(r for r in rows if r["name"] == "top_processes")
    assert top["parameters"]["properties"]["n"]["maximum"] == 25 and top["ttl"] == 3.0


def test_run_prints_the_result_as_json(capsys):
    code, out, _ = run(capsys, "run", "read_file", "--arg", "path=/etc/hostname")
    result = json.loads(out)
    assert code == 0 and result["status"] == "ok" and result["data"]["path"] == "/etc/hostname"


def test_run_values_are_json_unless_the_argument_is_a_string(capsys):
    code, out, _ = run(capsys, "run", "top_processes", "--arg", "n=2", "--arg", "sample_seconds=0.2")
    rows = json.loads(out)["data"]["top"]
    # n counts the processes that are not the appliance's (the appliance's are shown beside them)
    assert code == 0 and len([r for r in rows if not r.get("self")]) == 2
    assert parse_args_list(["pattern=123", "lines=5"], {"properties": {"pattern": {"type": "string"}}}) == \
        {"pattern": "123", "lines": 5}


def test_denied_result_is_printed_and_exits_1(capsys):
    code, out, _ = run(capsys, "run", "read_file", "--arg", "path=/etc/shadow")
    assert code == 1 and json.loads(out)["status"] == "denied"


def test_allow_path_opens_a_directory_for_reading(capsys, tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("hello from an allowed place\n")
    outside = "/usr/share/common-licenses/Apache-2.0"
    code, out, _ = run(capsys, "run", "read_file", "--arg", f"path={outside}")
    assert code == 1 and "--allow-path" in json.loads(out)["error"]
    code, out, _ = run(capsys, "run", "read_file", "--arg", f"path={outside}", "--allow-path", "/usr/share/common-licenses")
    if code == 0:
        assert "Apache" in json.loads(out)["data"]["text"]
    else:  # the file is not on every machine
        assert "does not exist" in json.loads(out)["error"]


@pytest.mark.parametrize("argv,message", [
    (["run", "nope"], "unknown tool 'nope'"),
    (["run", "top_processes", "--arg", "n=abc"], "must be of type integer"),
    (["run", "top_processes", "--arg", "n=99"], "must be <= 25"),
    (["run", "read_file"], "missing the required argument 'path'"),
    (["run", "read_file", "--arg", "path"], "expects KEY=VALUE"),
    (["run", "read_file", "--arg", "path=/etc/hostname", "--arg", "bogus=1"], "unknown argument 'bogus'"),
    (["run", "list_dir", "--arg", "path=/", "--allow-path", "/no/such/dir"], "not an existing directory"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_the_installed_command_runs_a_tool_end_to_end():
    done = subprocess.run([sys.executable, "-m", "appliance.cli", "tools", "run", "run_readonly", "--arg", "command=uname -a"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["data"]["exit_code"] == 0
