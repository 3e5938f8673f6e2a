"""The path policy: escapes are refused with a reason, secrets win over every allow, and opening
re-checks what was decided."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from appliance.tools import paths as paths_module
from appliance.tools.paths import PathDenied, PathPolicy, secret_reason


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    allowed = tmp_path / "allowed"
    outside = tmp_path / "outside"
    home = tmp_path / "home"
    (allowed / "sub").mkdir(parents=True)
    outside.mkdir()
    (home / ".ssh").mkdir(parents=True)
    (allowed / "app.log").write_text("hello\n")
    (allowed / "sub" / "notes.txt").write_text("notes\n")
    (outside / "other.txt").write_text("other\n")
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nCANARY\n")
    return {"allowed": allowed, "outside": outside, "home": home, "root": tmp_path}


def policy(tree) -> PathPolicy:
    return PathPolicy.confined([tree["allowed"]])


def denied(pol: PathPolicy, path: str, purpose: str = "read") -> str:
    with pytest.raises(PathDenied) as info:
        pol.resolve(path, purpose)
    assert str(info.value)  # a denial always says why
    return str(info.value)


def test_paths_inside_the_roots_resolve_to_their_real_location(tree):
    pol = policy(tree)
    assert pol.resolve(str(tree["allowed"] / "app.log")) == tree["allowed"].resolve() / "app.log"
    assert pol.resolve(str(tree["allowed"] / "sub" / ".." / "app.log")).name == "app.log"


def test_dotdot_out_of_a_root_is_refused(tree):
    why = denied(policy(tree), f"{tree['allowed']}/../outside/other.txt")
    assert "outside the allowed places" in why and "--allow-path" in why


def test_absolute_path_outside_the_roots_is_refused(tree):
    assert "outside the allowed places" in denied(policy(tree), str(tree["outside"] / "other.txt"))


def test_roots_are_compared_by_component_not_by_string_prefix(tree):
    sibling = tree["root"] / "allowed-evil"
    sibling.mkdir()
    (sibling / "x").write_text("x")
    denied(policy(tree), str(sibling / "x"))


def test_symlink_inside_a_root_pointing_outside_is_refused(tree):
    link = tree["allowed"] / "innocent.txt"
    link.symlink_to(tree["outside"] / "other.txt")
    why = denied(policy(tree), str(link))
    assert "really" in why  # the reason names where it actually leads


def test_symlink_inside_a_root_pointing_at_ssh_keys_is_refused_even_when_that_place_is_allowed(tree):
    (tree["allowed"] / "keys").symlink_to(tree["home"] / ".ssh")
    (tree["allowed"] / "key").symlink_to(tree["home"] / ".ssh" / "id_ed25519")
    pol = PathPolicy.confined([tree["allowed"], tree["home"]])  # home allowed: the deny-list still wins
    assert "off limits" in denied(pol, str(tree["allowed"] / "keys" / "id_ed25519"))
    assert "off limits" in denied(pol, str(tree["allowed"] / "key"))
    assert "off limits" in denied(pol, str(tree["home"] / ".ssh"), "list")


def test_symlink_to_etc_shadow_is_refused_even_with_etc_allowed(tree):
    (tree["allowed"] / "passwords").symlink_to("/etc/shadow")
    pol = PathPolicy.confined([tree["allowed"], "/etc"])
    assert "/etc/shadow" in denied(pol, str(tree["allowed"] / "passwords"))
    assert "/etc/shadow" in denied(pol, "/etc/../etc/shadow")


@pytest.mark.parametrize("path", [
    "/proc/self/environ", "/proc/1/environ", "/proc/self/mem", "/proc/self/task/1/environ", "/proc/kcore",
    "/proc/kmsg", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d/90-users", "/root/.aws/credentials",
    "/home/bob/.gnupg/pubring.kbx", "/home/bob/.config/gcloud/credentials.db", "/home/bob/.netrc",
    "/home/bob/.pgpass", "/home/bob/.git-credentials", "/srv/app/.env", "/srv/app/.env.production",
    "/etc/ssl/private/server.key", "/srv/tls/cert.pem", "/home/bob/id_rsa", "/home/bob/.kube/config",
    "/home/bob/.mozilla/firefox/x.default/logins.json", "/home/bob/.local/share/keyrings/login.keyring",
    "/home/bob/.config/google-chrome/Default/Cookies", "/etc/ssh/ssh_host_ed25519_key",
])
def test_secret_places_are_refused_with_the_default_policy(path):
    pol = PathPolicy.default(["/home", "/srv"])
    why = denied(pol, path)
    assert "off limits" in why


def test_public_keys_and_ordinary_config_are_not_secret():
    assert secret_reason(Path("/home/bob/.ssh_notes.txt")) is None
    assert secret_reason(Path("/etc/ssh/sshd_config")) is None
    assert secret_reason(Path("/srv/keys/id_ed25519.pub")) is None
    assert secret_reason(Path("/proc/self/status")) is None


def test_nul_byte_relative_path_and_empty_path_are_refused(tree):
    pol = policy(tree)
    assert "NUL" in denied(pol, f"{tree['allowed']}/app.log\x00.txt")
    assert "not absolute" in denied(pol, "app.log")
    assert "no path" in denied(pol, "  ")


def test_tilde_is_expanded_to_the_home_directory(monkeypatch, tree):
    monkeypatch.setenv("HOME", str(tree["allowed"]))
    pol = PathPolicy.confined([tree["allowed"]])
    assert pol.resolve("~/app.log") == tree["allowed"].resolve() / "app.log"


def test_a_fifo_is_refused_without_blocking(tree):
    fifo = tree["allowed"] / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(PathDenied, match="FIFO"):
        policy(tree).open_file(str(fifo))


def test_devices_are_refused(tmp_path):
    pol = PathPolicy.confined(["/dev"])
    with pytest.raises(PathDenied, match="device"):
        pol.open_file("/dev/zero")


def test_open_file_returns_a_descriptor_of_exactly_the_checked_file(tree):
    fd, real, st = policy(tree).open_file(str(tree["allowed"] / "app.log"))
    try:
        assert os.read(fd, 100) == b"hello\n"
        assert (st.st_ino, st.st_dev) == (os.stat(real).st_ino, os.stat(real).st_dev)
    finally:
        os.close(fd)


def test_a_file_swapped_between_check_and_open_is_refused(tree, monkeypatch):
    """Simulate the race: the check sees one inode, the open finds another."""
    other = os.stat(tree["outside"] / "other.txt")
    real_stat = os.stat

    def stale_stat(path, *args, **kwargs):
        if str(path).endswith("app.log"):
            return other
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(paths_module.os, "stat", stale_stat)
    with pytest.raises(PathDenied, match="changed while"):
        policy(tree).open_file(str(tree["allowed"] / "app.log"))


def test_opening_does_not_update_the_access_time(tree):
    target = tree["allowed"] / "app.log"
    old = 1_600_000_000_000_000_000
    os.utime(target, ns=(old, os.stat(target).st_mtime_ns))  # atime < mtime: relatime would update it
    fd, _, _ = policy(tree).open_file(str(target))
    try:
        os.read(fd, 100)
    finally:
        os.close(fd)
    assert os.stat(target).st_atime_ns == old


def test_listing_is_allowed_everywhere_by_default_but_reading_is_not(tree):
    pol = PathPolicy.default()
    assert pol.explain(str(tree["home"]), "list") is None
    assert pol.explain("/usr/bin", "read") is not None
    assert pol.explain("/var/log", "read") is None or not os.path.exists("/var/log")


def test_extra_roots_from_allow_path_become_readable(tree):
    pol = PathPolicy.default([tree["outside"]])
    assert pol.resolve(str(tree["outside"] / "other.txt")).name == "other.txt"


# --- properties -------------------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

COMPONENTS = st.sampled_from(["..", ".", "sub", "app.log", "link-out", "link-in", "link-ssh", ".ssh", "x", "", "//"])


@pytest.fixture(scope="module")
def maze(tmp_path_factory) -> dict[str, Path]:
    """An allowed root with symlinks that lead out, in, and to a secret place."""
    base = tmp_path_factory.mktemp("maze")
    allowed, outside = base / "allowed", base / "outside"
    (allowed / "sub").mkdir(parents=True)
    (outside / ".ssh").mkdir(parents=True)
    (allowed / "app.log").write_text("x")
    (allowed / "link-out").symlink_to(outside)
    (allowed / "sub" / "link-in").symlink_to(allowed)
    (allowed / "link-ssh").symlink_to(outside / ".ssh")
    return {"allowed": allowed, "outside": outside}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(COMPONENTS, max_size=8))
def test_whatever_the_path_an_allowed_result_is_inside_the_root_and_not_secret(maze, parts):
    pol = PathPolicy.confined([maze["allowed"]])
    path = str(maze["allowed"]) + "/" + "/".join(parts)
    try:
        real = pol.resolve(path, "read")
    except PathDenied as exc:
        assert str(exc)
        return
    root = maze["allowed"].resolve()
    assert real == root or root in real.parents
    assert real == Path(os.path.realpath(path))
    assert secret_reason(real) is None and ".ssh" not in real.parts


def test_a_missing_path_names_the_nearest_existing_folder_above_it(tmp_path):
    (tmp_path / "opt/billing/logs").mkdir(parents=True)
    policy = PathPolicy.default(extra_roots=[tmp_path])
    for opener in (lambda p: policy.open_dir(p), lambda p: policy.open_file(p)):
        with pytest.raises(FileNotFoundError) as caught:
            opener(str(tmp_path / "opt/billing/db/settings"))
        assert str(caught.value) == (f"{tmp_path}/opt/billing/db/settings does not exist: {tmp_path}/opt/billing has "
                                     f"no entry db; the last folder reached is {tmp_path}/opt/billing (list_dir "
                                     "shows what is there)")


def test_a_missing_path_does_not_reveal_a_folder_outside_the_allowed_places(tmp_path):
    policy = PathPolicy(read_roots=[tmp_path / "inside"], list_roots=[tmp_path / "inside"])
    (tmp_path / "inside").mkdir()
    with pytest.raises(FileNotFoundError) as caught:
        policy.open_dir(str(tmp_path / "inside/a/b"))
    assert "last folder reached" in str(caught.value)
    with pytest.raises((FileNotFoundError, PathDenied)) as caught:
        policy.open_dir(str(tmp_path / "elsewhere/x"))
    assert "last folder reached" not in str(caught.value) and str(tmp_path) + " " not in str(caught.value)
