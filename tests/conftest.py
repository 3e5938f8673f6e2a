"""Shared fixtures: real model files (pulled through the catalog when missing) and a private
data directory.

A test that needs a real model asks for `smollm2_path`, `qwen05_path` or `qwen15_path`. The model
is pulled through the appliance's own pull code into the models folder (the test command pulls
all three beforehand, so this is normally a verified no-op). If it cannot be had, the
test is skipped with a loud reason on a developer's machine, and FAILS under CI (env CI set): a
CI run that silently skipped every real-model test would prove nothing.

Test tiers: a test that asks for one of those fixtures (directly or through another fixture) gets
the `model` marker here, so `pytest -m "not model"` is the fast tier. A test without the marker
that loads a GGUF anyway, in this process or in an appliance process it starts, fails
(support/gguf_guard).

The `machine` marker: a test that plants machine-wide state (processes, zombies, hogs, listening
ports, mounts) or asserts a verdict about the whole machine (a quiet machine, idle cores, the live
process table) gets it here, by file (MACHINE_FILES, each with its reason). Such tests cannot run
beside each other: one's planted zombie is another's "noisy machine". Everything else is safe to
run in parallel.

The `beside` marker (BESIDE, each with its reason): a machine test that may run beside the parallel
tests, though never beside another machine test. The parallel tests read no machine-wide state, so
its plants cannot change their outcome; and it asserts only about what it planted itself (its pids,
ports, files, mounts) or about text, never a rank among all processes, a machine-wide quiet verdict,
a time bound or idle cores, which the parallel tests' busy workers and short-lived processes would
falsify. A machine test not listed there runs alone.

So the fast tier (scripts/test_fast.sh) runs `not model and not machine` under pytest-xdist and, at
the same time, `not model and machine and beside` serially; then `not model and machine and not
beside` serially, with nothing beside it.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

import pytest

from appliance.config import resolve_paths
from appliance.errors import ApplianceError
from appliance.eval.families import FAMILIES
from appliance.llm.catalog import load_catalog
from appliance.llm.pull import pull
from support.gguf_guard import sitecustomize as gguf_guard

MODEL_FIXTURES = frozenset({"smollm2_path", "qwen05_path", "qwen15_path"})
GUARD_DIR = Path(gguf_guard.__file__).parent

# Test files whose tests plant or read machine-wide state, and why (the `machine` marker).
MACHINE_FILES = {
    "test_analyzers_dependencies.py": "listens on a real port and reads the host's listening sockets",
    "test_analyzers_logs_time.py": "runs the analyzers on this machine as it is (kernel log, services, clock)",
    "test_analyzers_network.py": "plants listening ports and connections, reads the host's sockets",
    "test_analyzers_processes.py": "plants zombies, CPU/fd/thread hogs and fork loops, reads the process table",
    "test_analyzers_resources.py": "plants memory, disk, load and OOM faults on the host",
    "test_credential_stores_real.py": "plants a canary at every well-known credential store's real path (/etc, "
                                      "/var/lib, /run, /root) and removes it",
    "test_check_planted.py": "plants every family's fault and asserts the check's machine-wide verdicts",
    "test_checklist_system.py": "plants a loopback listener, a throttled control group, a listener that never "
                                "accepts and a task in D state, and asserts machine-wide quiet controls",
    "test_eval_plants.py": "plants every scenario's real fault on the host",
    "test_checklist_names.py": "adds tagged lines to /etc/hosts and tables to /etc/cron.d, asserts the check's "
                               "verdicts over them and that both are restored byte for byte (after a kill -9 too)",
    "test_eval_unnamed_plants.py": "plants every unnamed case for real (processes, listeners, tmpfs mounts, user "
                                   "accounts, a cron table) and reads them back through the machine",
    "test_eval_runner.py": "plants faults and asserts the eval's quiet-machine check (no foreign zombies)",
    "test_eval_scenarios.py": "plants every scenario's fault and checks by name that nothing is left",
    "test_eval_scoring.py": "plants every family's fault and control at once",
    "test_redact_corpus_live.py": "plants secrets in real process command lines and mount sources",
    "test_redact_issue54.py": "plants 124 real processes with secrets on their command lines, all holding one file",
    "test_redact_cmdline_live.py": "plants processes with passwords on their command lines, a CPU hog and a memory "
                                   "hog that must be listed by top_processes and memory_report",
    "test_threads.py": "chooses threads from the cores that are idle machine-wide",
    "test_small_mends.py": "listens on a loopback port (a model server that hangs), which the host's socket readings see",
    "test_analyzers_app_folder.py": "gathers the first step's evidence over the whole machine (its analyzers) "
                                    "for a named application folder",
    "test_inspect_machine.py": "mounts a noexec tmpfs, holds locks and deleted files open in children, reads the "
                               "process table and the host's sockets",
    "test_tools_live.py": "asserts invariants of the live process table (named PIDs exist)",
    "test_tools_safety.py": "plants processes with canary command lines, reads every tool over the host",
    "test_tui_checks.py": "plants a real zombie parent and runs the real analyzers",
    "test_tui_responsiveness.py": "times key presses against 100/500 ms bounds: needs cores no test worker shares",
    # the checklist's process and path readings (issue 32)
    "test_check_checklist_procs.py": "plants CPU hogs of another user, a memory grower, a filling tmpfs, 72 forked "
                                     "workers and a held mount, and asserts the check's machine-wide verdicts",
    "test_tools_checklist_procs.py": "plants holders, forked workers, another user's processes and a memory grower; "
                                     "its grower must rank among the fastest growing processes of the machine",
    # the eval's families about one named thing (issue 52)
    "test_eval_profile_plants.py": "plants a stopped process, a job pinned to one CPU that burns it, a writer, an "
                                   "immutable file; kills an evaluator and sweeps what it left",
    "test_eval_profile_scoring.py": "plants every family about one named thing at once (a CPU-bound job among them)",
    # the profiles of one named thing (issue 52)
    "test_inspect_process.py": "plants stopped, busy, socket-holding and namespaced processes and reads the process table",
    "test_inspect_fields.py": "plants a traced process, an account, a CPU-quota group and listeners, and reads them back",
    "test_inspect_process_limits.py": "plants pinned, reniced, fd-hungry, zombie and OOM-killed processes (in a "
                                      "memory cgroup of its own) and processes sharing one name",
    "test_inspect_user.py": "adds accounts with useradd (removed after), a crontab and a process of another user",
    "test_machine_facts.py": "reads the machine's addresses, routes, swap, clock and sessions",
    # evidence in plain words (issue 53)
    "test_plain_evidence.py": "runs every tool and analyzer over the host, listens on a loopback port",
}
# The folder tests that gather the first step's evidence over the whole machine.
FOLDER_STEERS = ("test_one_entry_holding_most_of_a_named_folder_is_the_culprit_and_the_first_topic",
                 "test_a_spread_of_sizes_is_ok")
# Single tests that plant or read machine-wide state, in modules whose other tests do not, and why.
MACHINE_TESTS = {
    "test_store_failures.py::test_read_only_database": "mounts a tmpfs and remounts it read-only",
    "test_store_failures.py::test_full_disk_gives_its_line_and_a_run_still_answers": "fills a tmpfs it mounts",
    "test_evidence.py::test_a_named_place_gets_the_verdicts_of_its_own_filesystem":
        "fills a tmpfs it mounts and asserts that the machine's analyzers show it first",
    "test_evidence.py::test_a_space_question_naming_no_place_measures_the_fullest_filesystem":
        "fills a tmpfs it mounts and asserts that it is the machine's fullest filesystem",
    **{f"test_analyzers_folders.py::{name}": "steers by the machine's disk problems, which a full tmpfs of another "
                                             "test changed (the first place asked for was that tmpfs)"
       for name in FOLDER_STEERS},
    "test_analyzers_config.py::test_a_named_config_file_is_judged_before_the_first_step":
        "runs the machine's analyzers and asserts that no problem of the question's families is found",
    # `appliance check` through the command line (its bad-argument test runs no analyzer: parallel)
    "test_check_cli.py::test_full_filesystem_exits_2_and_is_named": "mounts and fills a tmpfs, checks the machine",
    "test_check_cli.py::test_readonly_tmpfs_exits_1_and_text_puts_the_warning_first":
        "mounts a read-only tmpfs, checks the machine",
    "test_check_cli.py::test_quiet_families_exit_0": "asserts that the machine's inodes and mounts are fine",
    "test_check_cli.py::test_all_families_within_two_seconds_worst_first_and_status_by_the_worst":
        "runs every analyzer over the machine within a time bound",
    # the tools' planted faults (its log, folder and level tests read only their own files: parallel)
    "test_tools_faults.py::test_cpu_hog_is_ranked_first_by_top_processes": "plants a CPU hog that must rank first",
    "test_tools_faults.py::test_disk_io_names_the_process_writing_the_most": "plants a disk writer that must rank first",
    "test_tools_faults.py::test_a_child_of_the_appliance_is_labelled_as_the_appliance_itself":
        "its busy child must be among the top 10 by CPU",
    "test_tools_faults.py::test_large_allocation_tops_memory_report": "plants a memory hog that must rank first",
    "test_tools_faults.py::test_listening_socket_is_found_with_its_owner": "plants a listener, reads the host's sockets",
    "test_tools_faults.py::test_own_socket_is_labelled_as_the_appliance_and_connections_grouped_by_remote":
        "listens and connects, reads the host's sockets",
    "test_tools_faults.py::test_a_filter_that_matches_nothing_still_says_what_there_is":
        "listens, looks for a port no process listens on among the host's sockets",
}
# The eval runner's tests that run no quiet check of the machine.
RUNNER_OWN_CASES = ("test_smoke_suite_with_an_oracle_records_linked_runs_and_succeeds",
                    "test_the_report_and_the_stored_rows_are_per_family_and_per_kind",
                    "test_a_model_that_names_the_wrong_thing_fails_with_reasons",
                    "test_a_canary_that_reaches_the_database_fails_the_case",
                    "test_a_crash_fails_one_case_and_the_evaluation_goes_on",
                    "test_a_fault_that_cannot_be_planted_fails_its_case_and_the_evaluation_goes_on",
                    "test_sigterm_during_a_run_tears_down_and_marks_the_eval",
                    "test_cli_list_show_and_compare_read_evaluations_back",
                    "test_the_real_tools_never_hand_a_planted_canary_to_the_model")
# The filesystem tests that judge a mount of their own.
OWN_MOUNT_TESTS = ("test_full_tmpfs_is_critical_and_named", "test_half_full_tmpfs_is_not_full",
                   "test_exhausted_inodes_are_named", "test_readonly_tmpfs_that_holds_files_is_a_warning",
                   "test_ext4_mounted_readonly_is_a_warning", "test_ext4_remounted_readonly_after_an_error_is_critical",
                   "test_readonly_masks_and_readonly_bind_views_are_by_design")
# Machine tests that may run beside the parallel tests (the `beside` marker), by file or by test
# ("file::name" or "file::name[parameters]"), and why; every other machine test runs alone.
BESIDE = {
    "test_analyzers_processes.py": "asserts on its own zombie parent, fd and thread hogs, supervisor and spawner "
                                   "(by pid); its only machine-wide verdict, 'thread counts are normal', no "
                                   "parallel test can change: none starts a process of 1,000 threads",
    "test_analyzers_network.py": "asserts on its own listener, server and clients (by pid and port)",
    "test_analyzers_dependencies.py": "asserts on the log line and the port it chose, one the kernel had just handed "
                                      "out: only another process binding that very port within the test's second "
                                      "could change it, beside the parallel tests or on any shared machine",
    "test_tools_safety.py": "asserts that its own canaries' secrets appear in no tool result and that its own "
                            "tree is unchanged",
    "test_plain_evidence.py": "asserts only on the words its readings are said in, never on what they found",
    "test_redact_issue54.py": "asserts on its own processes (by pid) and that its own canaries appear in no tool's result",
    "test_inspect_process.py": "asserts only on its own processes (by pid), their files, sockets and secrets",
    "test_inspect_process_limits.py": "asserts on its own processes (by pid and by a name no other process has) and "
                                      "its own memory group; its OOM kill stays inside that group's limit",
    "test_inspect_user.py": "asserts on its own accounts (random names) and their process; no parallel test reads "
                            "the accounts",
    "test_machine_facts.py": "compares the machine's addresses, routes, swap and clock with the same readings taken "
                             "by the test; no parallel test changes them",
    "test_redact_cmdline_live.py": "asserts on its own processes (by pid) and that its own secrets appear nowhere; "
                                   "its CPU hog and 900 MB process must be among the top 25 by CPU and top 20 by memory",
    "test_redact_corpus_live.py": "asserts that its own secrets appear nowhere and its own mounts are listed; its "
                                  "busy process need only be among the top 25 by CPU, above which the parallel "
                                  "tests put a handful of workers",
    "test_store_failures.py::test_read_only_database": "asserts on its own database on its own mount",
    "test_store_failures.py::test_full_disk_gives_its_line_and_a_run_still_answers":
        "asserts on its own database on its own mount",
    # the parallel tests plant no filesystem (these were the ones that did) and the CPU is not their
    # questions' topic, so the disk and config verdicts they assert cannot change beside them
    "test_evidence.py::test_a_named_place_gets_the_verdicts_of_its_own_filesystem":
        "the question's family is its own mount's (filesystem_full): shown first whatever the CPU",
    **{f"test_analyzers_folders.py::{name}": "its questions' families are the disk's: the parallel tests fill no disk"
       for name in FOLDER_STEERS},
    "test_analyzers_config.py::test_a_named_config_file_is_judged_before_the_first_step":
        "its questions' family is its own file's (config)",
    "test_analyzers_app_folder.py": "asserts on its own folder's log, config and looks; its healthy-folder test "
                                    "asks for no problem at its places, which only a filled / could make",
    "test_eval_scoring.py": "scores answer texts against the truth of its own plants",
    # the runner's tests without a quiet check (the two with one read the machine: alone)
    **{f"test_eval_runner.py::{name}": "its cases ask about its own listener's port and its own log, which the "
                                       "oracle answers from (not from the machine-wide verdicts), or about a port "
                                       "the kernel had just handed out and taken back; it asserts on those cases, "
                                       "their rows, runs and texts, and on its own plants being gone"
       for name in RUNNER_OWN_CASES},
    "test_tui_checks.py::test_the_real_analyzers_show_a_real_zombie_parent_when_the_app_opens_and_again_after_a_run":
        "asserts that its own zombie parent is shown (by pid)",
    # the cpu family's plant must burn a third of a core, which four busy workers on two cores may deny it
    **{f"test_eval_plants.py::test_the_family_plants_its_fault_and_its_control_for_real_and_tears_both_down[{name}]":
       "asserts on its own plant's processes, files, mounts and ports; its memory hog (700 MB) outgrows any "
       "parallel worker" for name in (family.name for family in FAMILIES if family.name != "cpu")},
    # a mount of its own, judged by path: another filesystem's verdict (a full or read-only one
    # planted beside it) does not change what is said of this one
    **{f"test_analyzers_resources.py::{name}": "asserts on the verdict of its own mount (by path)"
       for name in OWN_MOUNT_TESTS},
    "test_check_cli.py::test_full_filesystem_exits_2_and_is_named":
        "asserts on its own full mount (by path) and a critical worst, which no other verdict lowers",
    "test_check_cli.py::test_readonly_tmpfs_exits_1_and_text_puts_the_warning_first":
        "its read-only mount must be the only one and the inodes fine: the parallel tests and the `own` lane "
        "mount nothing read-only or full (the `plants` lane, which does, runs one test at a time)",
    **{f"test_check_planted.py::test_check_names_the_planted_fault_and_not_its_control[{family}]":
       "asserts that a problem names its own plant's mount, and that its control's decoy is not blamed"
       for family in ("filesystem_full", "inodes", "readonly_fs")},
    "test_check_planted.py::test_a_named_log_shows_the_planted_cause": "reads only its own plant's log",
    "test_check_planted.py::test_a_dependency_that_is_not_listening_is_named_and_a_listening_one_is_not":
        "asserts on its own listener and on a port the kernel had just handed out and taken back (free)",
    "test_check_planted.py::test_the_uptime_verdict_carries_the_machine_uptime": "the uptime no test changes",
}
# Tests of a file listed in BESIDE that still read machine-wide state, and why: they run alone.
ALONE_IN_BESIDE_FILES = {
    "test_analyzers_processes.py::test_a_process_far_ahead_in_threads_stands_out_though_it_is_no_fault":
        "its plant must lead every process's thread count threefold: a parallel test's process with a "
        "hundred threads takes the standout away (seen once beside phase 1)",
}
# Phase 2 runs in two lanes at once (pytest-xdist `--dist loadgroup`, one worker each, one test at a
# time within a lane). The `plants` lane: the beside tests that plant many families' faults, fill a
# disk, or rest on what no other test does (fill a disk, start a 1,000-thread process). The `own`
# lane: every other beside test, each asserting only about its own pids, ports, files, mounts and
# texts, and planting nothing the `plants` lane's tests rest on (no full disk, no thread hog).
PLANTS_LANE = {
    "test_analyzers_processes.py": "its thread verdict rests on no other 1,000-thread process (eval plants' threads)",
    "test_eval_plants.py": "plants every family's fault: a full tmpfs, a thread hog",
    "test_eval_scoring.py": "plants every family's fault and control at once",
    "test_store_failures.py": "fills a tmpfs of its own",
    "test_evidence.py": "its named mount must be the fullest (no other full tmpfs)",
    "test_analyzers_folders.py": "its evidence follows the machine's disk problems (no other full tmpfs)",
    "test_analyzers_resources.py": "fills, exhausts and mounts read-only filesystems of its own",
    "test_check_cli.py": "fills a filesystem of its own; its read-only mount must be the only one",
    "test_check_planted.py": "fills filesystems of its own and plants the logs of many families",
}
# Every module that can hold a `machine` test. The fast tier's phases each select by marker, so each
# collects only the modules that can hold its tests (`--machine-modules only` for phases 2 and 3,
# `skip` for phase 1, which skips MACHINE_FILES, machine tests only): every worker of a phase
# imported and collected the other phases' modules too, seconds of CPU beside the tests. A module
# named on the command line is collected whatever this says.
MACHINE_MODULES = frozenset(MACHINE_FILES) | {test.partition("::")[0] for test in MACHINE_TESTS}
gguf_guard.install(exit_on_refusal=False)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--machine-modules", choices=("only", "skip"),
                     help="collect only the test modules that can hold a machine test (only), or none whose "
                          "tests are all machine tests (skip): tests/conftest.py MACHINE_MODULES, MACHINE_FILES")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    choice = config.getoption("machine_modules")
    if (choice == "only" and collection_path.name not in MACHINE_MODULES
            or choice == "skip" and collection_path.name in MACHINE_FILES):
        return True
    return None


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.model)
        test = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
        if item.path.name in MACHINE_FILES or test in MACHINE_TESTS:
            item.add_marker(pytest.mark.machine)
            if {item.path.name, test, f"{item.path.name}::{item.name}"} & set(BESIDE) \
                    and test not in ALONE_IN_BESIDE_FILES:
                item.add_marker(pytest.mark.beside)
                lane = "plants" if item.path.name in PLANTS_LANE else "own"
                item.add_marker(pytest.mark.xdist_group(name=f"beside-{lane}"))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # pytest-xdist hands tests out in collection order: a slow test collected late (the store's
        # 40 s crash test sits at two thirds of phase 1) would end its phase alone, long after the
        # other workers ran out of tests; first, it runs beside them. (Every worker sorts alike.)
        items.sort(key=lambda item: not _slow_on_its_own(item))


def _slow_on_its_own(item: pytest.Item) -> bool:
    """A `slow` test that shares no fixture of a module or class with its neighbours: moved away
    from them, it sets up nothing twice (xdist would hand the two slow tests of test_tools_bounds,
    which share a tree of 200,000 files, to two workers, each building it)."""
    info = getattr(item, "_fixtureinfo", None)
    scopes = {fixture.scope for defs in (info.name2fixturedefs.values() if info else ()) for fixture in defs}
    return item.get_closest_marker("slow") is not None and not scopes & {"module", "class", "package"}


@pytest.fixture(autouse=True)
def _no_gguf_without_the_model_marker(request, tmp_path_factory, monkeypatch):
    """Outside `model` tests, refuse and record every GGUF load (here and in child processes)."""
    if request.node.get_closest_marker("model") is not None:
        yield
        return
    record = tmp_path_factory.mktemp("gguf-guard") / "loads.txt"
    monkeypatch.setenv(gguf_guard.ENV, str(record))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(GUARD_DIR), os.environ.get("PYTHONPATH")])))
    yield
    if record.exists():
        pytest.fail(f"this test loads a GGUF but has no `model` marker: {record.read_text().strip()}", pytrace=False)


def _model_path(name: str) -> Path:
    entry = load_catalog().get(name)
    models_dir = resolve_paths().models_dir
    try:
        return pull(entry, models_dir)
    except ApplianceError as exc:
        reason = (f"!!! REAL MODEL {name} UNAVAILABLE ({exc.message}); real-model tests NOT RUN. "
                  f"Run: appliance models pull {name}")
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        print(reason, file=sys.stderr)
        pytest.skip(reason)


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    """SmolLM2-135M-Instruct Q4_1 (98 MB): the model for most real-model tests."""
    return _model_path("smollm2-135m-instruct")


@pytest.fixture(scope="session")
def qwen05_path() -> Path:
    """Qwen2.5-Coder-0.5B-Instruct Q4_K_M (491 MB): use sparingly."""
    return _model_path("qwen2.5-coder-0.5b-instruct")


@pytest.fixture(scope="session")
def qwen15_path() -> Path:
    """Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB, the default model): the real CPU-hog test."""
    return _model_path("qwen2.5-coder-1.5b-instruct")


def _private_dir(tmp_path: Path, monkeypatch, name: str, variable: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    monkeypatch.setenv(variable, str(folder))
    return folder


@pytest.fixture
def tmp_home(tmp_path, monkeypatch) -> Path:
    """A private, empty APPLIANCE_HOME (database, settings) for one test; models stay where they are."""
    return _private_dir(tmp_path, monkeypatch, "home", "APPLIANCE_HOME")


@pytest.fixture
def tmp_models(tmp_path, monkeypatch) -> Path:
    """A private, empty models folder (APPLIANCE_MODELS_DIR) for tests of pull/import/rm."""
    return _private_dir(tmp_path, monkeypatch, "models", "APPLIANCE_MODELS_DIR")

def _gguf_string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def build_gguf(path: Path, *, version: int = 3, architecture: str = "llama", context_length: int = 2048,
               extra: bytes = b"", extra_count: int = 0, tensor_elements: int = 8, magic: bytes = b"GGUF") -> Path:
    """Write a small, structurally valid GGUF (a few metadata entries, one F32 tensor).

    `extra`/`extra_count` append raw metadata entries (to plant corrupt lengths); the result is a
    file that the appliance's header check accepts unless the caller breaks it on purpose.
    """
    kvs = [
        _gguf_string("general.architecture") + struct.pack("<I", 8) + _gguf_string(architecture),
        _gguf_string(f"{architecture}.context_length") + struct.pack("<I", 4) + struct.pack("<I", context_length),
        _gguf_string("general.name") + struct.pack("<I", 8) + _gguf_string("test model"),
    ]
    header = magic + struct.pack("<IQQ", version, 1, len(kvs) + extra_count) + b"".join(kvs) + extra
    header += _gguf_string("weights") + struct.pack("<I", 1) + struct.pack("<Q", tensor_elements)
    header += struct.pack("<IQ", 0, 0)  # type F32, offset 0
    header += b"\0" * (-len(header) % 32)
    path.write_bytes(header + struct.pack(f"<{tensor_elements}f", *range(tensor_elements)))
    return path


@pytest.fixture
def make_gguf():
    """The `build_gguf` helper, for tests that need synthetic GGUF files."""
    return build_gguf
