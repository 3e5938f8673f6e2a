"""A firewall listing runs only when its kernel tables already exist (listing could load a module):
the check reads /proc/net and /sys/module, pointed here at a tree of the test's own; the backend
of an iptables binary is read from where its link points."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.tools import kernel_tables, reach


@pytest.fixture
def kernel(tmp_path, monkeypatch) -> tuple[Path, Path]:
    proc_net, sys_module = tmp_path / "proc" / "net", tmp_path / "sys" / "module"
    proc_net.mkdir(parents=True)
    sys_module.mkdir(parents=True)
    monkeypatch.setattr(kernel_tables, "PROC_NET", proc_net)
    monkeypatch.setattr(kernel_tables, "SYS_MODULE", sys_module)
    return proc_net, sys_module


def _binary(tmp_path: Path, program: str, target: str) -> str:
    real = tmp_path / "bin" / target
    real.parent.mkdir(exist_ok=True)
    real.write_text("#!/bin/sh\nexit 1\n")
    real.chmod(0o755)
    link = tmp_path / "bin" / program
    link.symlink_to(real)
    return str(link)


def test_legacy_iptables_runs_only_over_tables_that_exist(kernel, tmp_path):
    proc_net, _ = kernel
    legacy = _binary(tmp_path, "iptables", "xtables-legacy-multi")
    assert kernel_tables.backend("iptables", legacy) == "legacy"
    why = kernel_tables.not_loaded("iptables", legacy)
    assert why and why.startswith("no iptables rules loaded in the kernel") and "ip_tables_names" in why
    (proc_net / "ip_tables_names").write_text("")  # the module is there, but no table: listing makes one
    assert kernel_tables.not_loaded("iptables", legacy)
    (proc_net / "ip_tables_names").write_text("filter\n")
    assert kernel_tables.not_loaded("iptables", legacy) is None
    six = _binary(tmp_path, "ip6tables", "xtables-legacy-multi6")
    assert "ip6_tables_names" in (kernel_tables.not_loaded("ip6tables", six) or "")


def test_nft_and_the_nf_tables_backend_run_only_when_the_module_is_loaded(kernel, tmp_path):
    _, sys_module = kernel
    backed = _binary(tmp_path, "iptables", "xtables-nft-multi")
    assert kernel_tables.backend("iptables", backed) == "nft"
    assert "nf_tables" in (kernel_tables.not_loaded("iptables", backed) or "")
    assert (kernel_tables.not_loaded("nft") or "").startswith("no nftables rules loaded in the kernel")
    (sys_module / "nf_tables").mkdir()
    assert kernel_tables.not_loaded("nft") is None and kernel_tables.not_loaded("iptables", backed) is None
    assert kernel_tables.not_loaded("uname") is None  # not a firewall listing


def test_the_reach_tool_says_plainly_that_no_rules_are_loaded_and_runs_nothing(kernel, tmp_path, monkeypatch):
    programs = {"iptables": _binary(tmp_path, "iptables", "xtables-legacy-multi"),
                "ip6tables": _binary(tmp_path, "ip6tables", "xtables-legacy-multi6")}
    monkeypatch.setattr(reach, "find_program", programs.get)

    def never(command, timeout):
        raise AssertionError(f"{command} ran although its tables are not in the kernel")

    monkeypatch.setattr(reach, "run_allowed", never)
    wall = reach.read_firewall()
    assert not wall.readable and len(wall.unloaded) == 2
    assert wall.summary().startswith("no firewall rules loaded in the kernel")
    assert "nft is not installed" in wall.summary() and "no iptables rules loaded" in wall.summary()


def test_run_readonly_does_not_list_rules_the_kernel_does_not_have(kernel, tmp_path, monkeypatch):
    from appliance.tools import commands
    from appliance.tools.registry import default_registry
    legacy = _binary(tmp_path, "iptables", "xtables-legacy-multi")
    monkeypatch.setattr(commands, "find_program", {"iptables": legacy}.get)
    monkeypatch.setattr(commands, "run_capped", lambda *a, **k: pytest.fail("iptables -S ran"))
    out = default_registry().call("run_readonly", {"command": "iptables -S"})
    assert out["status"] == "ok" and out["data"]["not_run"].startswith("no iptables rules loaded in the kernel")
