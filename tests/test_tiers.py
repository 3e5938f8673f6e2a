"""The `model` marker means what it says: a test that asks for a real model is marked by conftest,
and a test without the marker that loads a GGUF fails, in the test process and in a child process.

The inner pytest session runs this suite's own conftest.py and support package on small inner
tests. The GGUF they load is a synthetic one (conftest's build_gguf) and the guard refuses the
load before llama.cpp reads a byte, so no real model is ever loaded here.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from support.gguf_guard import sitecustomize as gguf_guard

TESTS = Path(__file__).resolve().parent
UNUSED_PLUGINS = ("hypothesispytest", "textual-snapshot", "syrupy", "anyio")

INNER = '''
import subprocess
import sys

import pytest

from conftest import build_gguf

LOAD = "import sys; from appliance.llm.runtime import load_llama; load_llama(sys.argv[1], n_ctx=64, n_threads=1)"


def _load_in_process(path):
    from appliance.llm.runtime import load_llama
    try:
        load_llama(path, n_ctx=64, n_threads=1)
    except Exception:
        pass  # whatever the code makes of the refusal, the guard has written it down


def test_unmarked_in_process(tmp_path):
    _load_in_process(build_gguf(tmp_path / "m.gguf"))


def test_unmarked_child(tmp_path):
    subprocess.run([sys.executable, "-c", LOAD, str(build_gguf(tmp_path / "m.gguf"))])


@pytest.mark.model
def test_marked(tmp_path):
    _load_in_process(build_gguf(tmp_path / "m.gguf"))


def test_asks_for_a_model(smollm2_path):
    raise AssertionError("deselected by -m 'not model' before its fixture runs")


def test_no_model(tmp_path):
    assert build_gguf(tmp_path / "m.gguf").stat().st_size > 0
'''


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch) -> pytest.Pytester:
    monkeypatch.delenv(gguf_guard.ENV)  # this test's own guard stays out: the inner session has its own
    # the plugins no inner test uses stay unloaded: each inner session would import Hypothesis and
    # Textual (the snapshot plugin's) again, most of its start-up
    monkeypatch.setenv("PYTEST_ADDOPTS", " ".join(f"-p no:{name}" for name in UNUSED_PLUGINS))
    pytester.makeini("[pytest]\nmarkers =\n    model: needs a real GGUF model\n")
    pytester.makeconftest((TESTS / "conftest.py").read_text())
    shutil.copytree(TESTS / "support", pytester.path / "support", ignore=shutil.ignore_patterns("__pycache__"))
    pytester.makepyfile(test_inner=INNER)
    return pytester


def test_model_fixtures_mark_and_the_guard_fails_unmarked_loads(inner):
    result = inner.runpytest_subprocess("-m", "not model", "-p", "no:cacheprovider", "-rfE")
    # test_marked and test_asks_for_a_model carry the marker (one by hand, one through its fixture);
    # the two unmarked loads pass their call and fail at teardown, where the guard reads its record
    result.assert_outcomes(passed=3, errors=2, deselected=2)
    result.stdout.fnmatch_lines([
        "*ERROR at teardown of test_unmarked_in_process*",
        "*this test loads a GGUF but has no `model` marker: *m.gguf (pid *",
        "*ERROR at teardown of test_unmarked_child*",
    ])


# What a test module that plants or reads machine-wide state writes: the planting helpers, the
# evaluation's scenario set-ups, the analyzers over the whole host (also through the first step's
# evidence), the quiet check, the idle cores, a mount.
MACHINE_SIGNS = re.compile(r"spawn_detached|planted\(|resource_faults|run_all\(|machine_noise|\.setup\(\)"
                           r"|choose_threads|\.listen\(|tmpfs\(|\[\"mount\"|MachineEvidence\(registry\)")


def test_every_module_that_plants_or_reads_the_machine_is_a_machine_test():
    from conftest import MACHINE_FILES, MACHINE_TESTS

    signed = {path.name for path in TESTS.glob("test_*.py") if MACHINE_SIGNS.search(path.read_text())}
    signed -= {Path(__file__).name}  # this module only names the signs
    assert {"test_analyzers_processes.py", "test_eval_runner.py", "test_threads.py"} <= signed
    # a loopback server on a port of its own is no machine-wide state: tests/support/remote.py's
    # servers are not in test modules, so every module with a sign must be marked
    by_test = {test.split("::")[0] for test in MACHINE_TESTS}  # a module whose machine tests are named one by one
    assert signed - set(MACHINE_FILES) - by_test == set(), "mark these `machine` in tests/conftest.py MACHINE_FILES"
    assert set(MACHINE_FILES) <= {path.name for path in TESTS.glob("test_*.py")}, "a stale name in MACHINE_FILES"
    for test in MACHINE_TESTS:
        module, name = test.split("::")
        assert f"def {name}(" in (TESTS / module).read_text(), f"a stale name in MACHINE_TESTS: {test}"


def test_every_test_beside_the_parallel_phase_is_a_machine_test_that_exists():
    from conftest import BESIDE, MACHINE_FILES, MACHINE_TESTS, PLANTS_LANE

    assert set(PLANTS_LANE) <= {entry.partition("::")[0] for entry in BESIDE}, "a lane for a test not beside"

    for entry in BESIDE:
        module, _, name = entry.partition("::")
        assert module in MACHINE_FILES or entry in MACHINE_TESTS, f"{entry} in BESIDE is no machine test"
        if name:
            assert f"def {name.split('[')[0]}(" in (TESTS / module).read_text(), f"a stale name in BESIDE: {entry}"


def _one_test_a_phase(inner: pytest.Pytester) -> None:
    """Beside test_inner.py's test_no_model (phase 1): a beside machine test and one run alone."""
    inner.makepyfile(test_analyzers_processes="def test_plants_a_zombie():\n    pass\n",
                     test_threads="def test_reads_idle_cores():\n    pass\n")
    inner.makeini("[pytest]\nmarkers =\n    model: needs a real GGUF model\n    machine: machine-wide state\n"
                  "    beside: beside the parallel tests\n")


def test_the_fast_tier_splits_machine_tests_from_the_parallel_phase(inner):
    """The three selections of scripts/test_fast.sh: each test in exactly one of them."""
    _one_test_a_phase(inner)
    files = ("test_analyzers_processes.py", "test_threads.py", "test_inner.py::test_no_model")
    phases = {"not model and not machine": "test_inner.py::test_no_model",
              "not model and machine and beside": "test_analyzers_processes.py::test_plants_a_zombie",
              "not model and machine and not beside": "test_threads.py::test_reads_idle_cores"}
    for selection, only in phases.items():
        result = inner.runpytest_subprocess("-m", selection, "-p", "no:cacheprovider", "-v", *files)
        result.assert_outcomes(passed=1, deselected=2)
        result.stdout.fnmatch_lines([f"*{only} PASSED*"])


def test_each_phase_collects_the_modules_that_hold_its_tests(inner):
    """scripts/test_fast.sh's collection options (`--machine-modules`): phase 1 skips the modules of
    machine tests only, phases 2 and 3 collect only those that can hold one; no test is lost."""
    _one_test_a_phase(inner)
    phases = {("not model and not machine", "skip"): ("test_inner.py::test_no_model", 4),
              ("not model and machine and beside", "only"): ("test_analyzers_processes.py::test_plants_a_zombie", 1),
              ("not model and machine and not beside", "only"): ("test_threads.py::test_reads_idle_cores", 1)}
    for (selection, modules), (only, deselected) in phases.items():
        result = inner.runpytest_subprocess("-m", selection, "--machine-modules", modules, "-p", "no:cacheprovider",
                                            "-v", "-k", "no_model or plants_a_zombie or reads_idle_cores")
        result.assert_outcomes(passed=1, deselected=deselected)
        result.stdout.fnmatch_lines([f"*{only} PASSED*"])


LANE_TEST = '''
import json, os, time
def _spell(tmp_path_factory, name):
    start = time.monotonic()
    time.sleep(0.6)
    with open(os.environ["LANE_LOG"], "a") as log:
        log.write(json.dumps([name, start, time.monotonic()]) + "\\n")
'''


def test_phase_two_runs_its_two_lanes_at_once_and_each_lane_one_test_at_a_time(inner, tmp_path, monkeypatch):
    """scripts/test_fast.sh's phase 2: a `plants` lane test never beside another of its lane, and
    the `own` lane beside it."""
    log = tmp_path / "lanes.jsonl"
    monkeypatch.setenv("LANE_LOG", str(log))
    body = LANE_TEST + "".join(f"def test_{n}(tmp_path_factory):\n    _spell(tmp_path_factory, '{n}')\n"
                               for n in ("first", "second"))
    inner.makepyfile(test_analyzers_processes=body.replace("'first'", "'plants-1'").replace("'second'", "'plants-2'"),
                     test_tools_safety=body.replace("'first'", "'own-1'").replace("'second'", "'own-2'"))
    inner.makeini("[pytest]\nmarkers =\n    model: needs a real GGUF model\n    machine: machine-wide state\n"
                  "    beside: beside the parallel tests\n")
    result = inner.runpytest_subprocess("-m", "not model and machine and beside", "-n", "2", "--dist", "loadgroup",
                                        "-p", "no:cacheprovider", "test_analyzers_processes.py", "test_tools_safety.py")
    result.assert_outcomes(passed=4)
    spells = {name: (start, end) for name, start, end in map(json.loads, log.read_text().splitlines())}

    def overlap(a: str, b: str) -> bool:
        return spells[a][0] < spells[b][1] and spells[b][0] < spells[a][1]

    assert not overlap("plants-1", "plants-2") and not overlap("own-1", "own-2"), spells
    assert any(overlap(p, o) for p in ("plants-1", "plants-2") for o in ("own-1", "own-2")), spells
