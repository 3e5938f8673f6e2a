"""Facts about where this system runs that psutil does not give: the CPU model, the time zone, and
whether it is a virtual machine or a container (the clues systemd-detect-virt reads, read here
directly: nothing is run)."""

from __future__ import annotations

import os
import time

_DMI = "/sys/class/dmi/id"
# Words in the DMI vendor/product that name a hypervisor, as systemd-detect-virt matches them.
_VM_VENDORS = (("kvm", "KVM"), ("qemu", "QEMU"), ("vmware", "VMware"), ("virtualbox", "VirtualBox"),
               ("innotek", "VirtualBox"), ("xen", "Xen"), ("microsoft corporation", "Hyper-V"),
               ("amazon ec2", "Amazon EC2"), ("google", "Google Compute Engine"), ("bochs", "Bochs"),
               ("parallels", "Parallels"), ("openstack", "OpenStack"))
_CGROUP_CONTAINERS = (("docker", "docker"), ("kubepods", "kubernetes"), ("lxc", "lxc"), ("libpod", "podman"),
                      ("containerd", "containerd"))


def _read(path: str, limit: int = 64 * 1024) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(limit)
    except OSError:
        return ""


def cpu_model() -> str | None:
    """The CPU's model name from /proc/cpuinfo (None on CPUs that do not give one)."""
    for line in _read("/proc/cpuinfo", 256 * 1024).splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "cpu model", "Processor") and value.strip():
            return " ".join(value.split())
    return None


def time_zone() -> str:
    """The zone name (TZ, /etc/timezone or the /etc/localtime link) and the current UTC offset."""
    offset = time.strftime("%z")
    name = os.environ.get("TZ", "").lstrip(":") or _read("/etc/timezone", 256).strip()
    if not name:
        try:
            target = os.readlink("/etc/localtime")
            name = target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else ""
        except OSError:
            name = ""
    return f"{name or time.strftime('%Z')} (UTC{offset[:3]}:{offset[3:]})"


def container() -> str | None:
    """The container technology this system runs in, or None on a host."""
    if os.path.exists("/.dockerenv"):
        return "docker"
    if os.path.exists("/run/.containerenv"):
        return "podman"
    environ = _read("/proc/1/environ").split("\0")
    for entry in environ:
        if entry.startswith("container="):
            return entry.split("=", 1)[1] or "a container"
    cgroups = _read("/proc/1/cgroup")
    return next((name for word, name in _CGROUP_CONTAINERS if word in cgroups), None)


def virtual_machine() -> str | None:
    """The hypervisor under this system ("KVM"; "vendor not exposed" when only the CPU flag says so), or None."""
    vendor = " ".join(_read(os.path.join(_DMI, f), 256).strip().lower()
                      for f in ("sys_vendor", "product_name", "bios_vendor"))
    named = next((name for word, name in _VM_VENDORS if word in vendor), None)
    if named:
        return named
    hypervisor = _read("/sys/hypervisor/type", 64).strip()
    if hypervisor:
        return hypervisor.capitalize()
    flags = next((line for line in _read("/proc/cpuinfo", 256 * 1024).splitlines() if line.startswith("flags")), "")
    return "vendor not exposed" if " hypervisor" in flags else None


def virtualization() -> str:
    """One line: "container (docker) on a virtual machine (KVM)", "virtual machine (KVM)", "none (bare metal)"."""
    box, vm = container(), virtual_machine()
    parts = ([f"container ({box})"] if box else []) + ([f"virtual machine ({vm})"] if vm else [])
    return " on a ".join(parts) if parts else "none (bare metal)"
