"""Choosing llama.cpp's threads from the cores that are really idle."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from appliance.llm.threads import (
    AdaptiveThreadPolicy,
    LoadSampler,
    cgroup_cpu_limit,
    choose_threads,
    physical_cores,
)


# --- the pure decision -------------------------------------------------------------------------------

def test_idle_machine_uses_every_physical_core():
    assert choose_threads([0.0, 0.0], 2) == (2, 2)
    assert choose_threads([0.05] * 8, 4) == (4, 4)  # 8 logical CPUs, 4 physical cores


def test_a_busy_core_takes_one_thread_away():
    assert choose_threads([1.0, 0.0], 2) == (1, 1)
    assert choose_threads([0.0, 1.0, 0.0, 0.0], 4) == (3, 3)
    assert choose_threads([1.0, 1.0, 0.0, 0.0], 4) == (2, 2)


def test_partial_load_counts_from_the_threshold():
    assert choose_threads([0.2, 0.1], 2) == (2, 2)  # background noise: keep both
    assert choose_threads([0.4, 0.0], 2) == (1, 1)  # a third of a core already stalls lock-step threads
    assert choose_threads([0.7, 0.7], 4) == (2, 2)  # 1.4 cores of others' work
    assert choose_threads([0.5, 0.5, 0.0, 0.0], 4) == (3, 3)  # one hog hopping between two CPUs
    assert choose_threads([0.3] * 8, 4) == (1, 1)  # 2.4 cores of load spread over 8 CPUs


def test_own_threads_are_not_counted_as_load():
    # The previous generation kept both cores busy itself: nobody else is there.
    assert choose_threads([1.0, 1.0], 2, own_busy_cores=2.0) == (2, 2)
    # Both busy, one of them with our work: another program holds the other core.
    assert choose_threads([1.0, 1.0], 2, own_busy_cores=1.0) == (1, 1)
    # Our two threads and a hog sharing two cores: we got 4/3 of a core, the hog 2/3.
    assert choose_threads([1.0, 1.0], 2, own_busy_cores=4 / 3) == (1, 1)


def test_bounds():
    assert choose_threads([1.0, 1.0, 1.0, 1.0], 4) == (1, 1)  # never below one
    assert choose_threads([], 2) == (2, 2)
    assert choose_threads([0.0], 0) == (1, 1)
    assert choose_threads([5.0, -3.0], 2) == (1, 1)  # readings clamped to 0..1 per CPU
    assert choose_threads([0.0, 0.0], 2, own_busy_cores=-1) == (2, 2)


def test_container_cpu_quota(tmp_path):
    quota = tmp_path / "cpu.max"
    quota.write_text("150000 100000\n")
    assert cgroup_cpu_limit(str(quota)) == 2
    quota.write_text("max 100000\n")
    assert cgroup_cpu_limit(str(quota)) is None
    assert cgroup_cpu_limit(str(tmp_path / "missing")) is None


# --- with real processes --------------------------------------------------------------------------------

def _choices(policy: AdaptiveThreadPolicy, count: int, window: float, until: int | None = None) -> list[int]:
    """Up to `count` choices, `window` seconds apart; stops early at the first that is `until`."""
    found: list[int] = []
    for _ in range(count):
        time.sleep(window)
        found.append(policy()[0])
        if found[-1] == until:
            break
    return found


def _ambient() -> tuple[tuple[float, ...], float]:
    sampler = LoadSampler()
    time.sleep(0.5)
    sample = sampler.sample()
    return sample.per_core_busy, sample.own_busy_cores


def test_a_real_busy_process_drops_a_thread():
    physical = physical_cores()
    if physical < 2:
        pytest.skip("one core: there is no thread to drop")
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        policy = AdaptiveThreadPolicy(physical)
        time.sleep(0.3)
        policy()  # the window now starts with the hog running
        choices = _choices(policy, 3, 0.4)
        assert all(threads <= physical - 1 for threads in choices), choices
        assert policy.last is not None and sum(policy.last.per_core_busy) >= 0.9
    finally:
        hog.kill()
        hog.wait()


def test_no_load_uses_every_core_even_while_we_work_ourselves():
    """No other process: all cores, also when the appliance's own threads were busy in the window
    (here a busy thread in this process). Retried a few times: a shared machine has blips."""
    physical = physical_cores()
    busy, own = _ambient()
    quiet = choose_threads(busy, physical, own)[0] == physical
    if not quiet and not os.environ.get("CI"):
        pytest.skip("this machine is busy with other programs right now: the no-load case cannot be tested")
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            pass

    worker = threading.Thread(target=spin, daemon=True)
    policy = AdaptiveThreadPolicy(physical, LoadSampler(min_window=0.3))
    worker.start()
    try:
        choices = _choices(policy, 8, 0.3, until=physical)
    finally:
        stop.set()
        worker.join()
    assert physical in choices, f"never chose all {physical} cores: {choices}, last {policy.last}"
    assert policy.last.own_busy_cores > 0.3 or physical in choices


def test_old_readings_are_refreshed():
    sampler = LoadSampler(max_window=0.2, fresh_window=0.05)
    time.sleep(0.4)
    sample = sampler.sample()
    assert 0.04 <= sample.window < 0.3  # a fresh short window, not the stale 0.4 s one


def test_a_new_run_reads_the_load_afresh_and_sees_a_hog_that_just_started():
    """The eval case that found this: a quiet window of a few seconds, then a busy process starts
    one second before the next question. The window since the last reading is mostly quiet and
    would hide it; after `expire()` (the engine calls it through `begin_run` at each question) the
    reading is fresh and drops a thread."""
    physical = physical_cores()
    if physical < 2:
        pytest.skip("one core: there is no thread to drop")
    busy, own = _ambient()
    if choose_threads(busy, physical, own)[0] != physical and not os.environ.get("CI"):
        pytest.skip("this machine is busy with other programs right now: a quiet window cannot be made")
    policy = AdaptiveThreadPolicy(physical, LoadSampler(max_window=30.0, fresh_window=0.3))
    policy()
    time.sleep(2.0)  # quiet: a hog's 0.4 s in this window alone would be a sixth of a core, under the threshold
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.4)
        policy.expire()
        threads, _ = policy()
        assert threads <= physical - 1, policy.last
    finally:
        hog.kill()
        hog.wait()


def test_expire_makes_the_next_window_short():
    sampler = LoadSampler(max_window=30.0, fresh_window=0.05)
    time.sleep(0.4)
    sampler.expire()
    assert 0.04 <= sampler.sample().window < 0.3
    time.sleep(0.2)
    assert sampler.sample().window >= 0.2  # one fresh reading only: afterwards the window is back


def test_fixed_threads_from_the_environment():
    from appliance.errors import ModelError
    from appliance.llm.runtime import default_thread_policy

    assert default_thread_policy({"APPLIANCE_THREADS": "3"}, 2)() == (3, 3)
    assert isinstance(default_thread_policy({}, 2), AdaptiveThreadPolicy)
    with pytest.raises(ModelError, match="must be a positive whole number, not 'two'"):
        default_thread_policy({"APPLIANCE_THREADS": "two"}, 2)
