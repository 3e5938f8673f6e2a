"""Reading one text file and listing one directory, both through the path policy."""

from __future__ import annotations

import os
import stat
from typing import Annotated, Any

from appliance.tools import units
from appliance.tools.base import EMPTY, ERROR, ok, result, fail, tool
from appliance.tools.context import ToolContext
from appliance.tools.paths import read_capped
from appliance.tools.redaction.cmdline import show_argv
from appliance.tools.redact import redact
from appliance.tools.schema import Doc, MaxLen, Range
from appliance.tools.shown_names import shown_path

PathArg = Annotated[str, MaxLen(512), Doc("absolute path (or ~/...)")]
REDACT_MARGIN = 4096  # read this much past the cut so secrets crossing it are still recognised


def cut_shown(full: str, keep: int) -> str:
    """The first `keep` characters of the (redacted) `full`; a marker is never cut in half."""
    if len(full) <= keep:
        return full
    cut = full[:keep]
    start = cut.rfind("[REDACTED:")
    if start != -1 and "]" not in cut[start:]:
        cut = full[: full.index("]", start) + 1]
    return cut


def looks_binary(sample: bytes) -> bool:
    """NUL bytes or mostly undecodable bytes: not something to show as text."""
    if b"\x00" in sample[:8192]:
        return True
    text = sample[:8192].decode("utf-8", errors="replace")
    return text.count("\ufffd") > max(8, len(text) // 20)


@tool(reads="file", ttl=10.0, timeout=10.0, example={"path": "/etc/fstab"})
def read_file(
    ctx: ToolContext,
    path: PathArg,
    max_bytes: Annotated[int, Range(64, 32768), Doc("how much of the start of the file")] = 4096,
) -> dict:
    """The start of one text file (config, unit file, /proc or /sys entry), capped; secrets redacted.
    Use to check a configuration file's settings. Not for logs (use read_log: it reads the end and summarises errors)."""
    fd, real, st = ctx.policy.open_file(path)
    try:
        raw = read_capped(fd, max_bytes + REDACT_MARGIN)
    finally:
        os.close(fd)
    if str(real).startswith("/proc/") and str(real).endswith("/cmdline"):  # an argument vector: redacted word by word
        argv = raw.decode("utf-8", errors="replace").rstrip("\x00").split("\x00")
        raw = show_argv(argv).encode("utf-8") if any(argv) else b""
    elif str(real).startswith("/proc/"):
        raw = raw.replace(b"\x00", b" ")  # /proc/PID/environ's friends separate fields with NULs
    if looks_binary(raw):
        return fail(f"{path} is a binary file ({units.size(st.st_size)}); only text files are shown", ERROR)
    # Redact the whole read (past the cut, so a secret that straddles it is recognised), then cut
    # the redacted text: markers change lengths, so the cut is made, and reported, on what is shown.
    # (A file that is mostly secrets never gets here: open_file refused it, see tools/credential_content.py.)
    whole = len(raw) <= max_bytes
    full = redact(raw.decode("utf-8", errors="replace"))
    text = full if whole else cut_shown(full, max_bytes)
    data = {
        "path": shown_path(str(real)),
        "size": units.size(st.st_size) if st.st_size else "unknown (virtual file)",
        "modified": units.when(st.st_mtime),
        "truncated": not whole,
        "text": text,
    }
    if not whole:
        data["note"] = f"showing the first {len(text)} characters (redacted) only"
    if not text.strip():
        return result(EMPTY, data, f"{path} is empty")
    return ok(data)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device"


@tool(reads="folder", ttl=10.0, timeout=10.0, example={"path": "/var/log"})
def list_dir(
    ctx: ToolContext,
    path: PathArg,
    n: Annotated[int, Range(1, 200), Doc("how many entries at most")] = 60,
) -> dict:
    """The entries of one directory: name, type, size and modification time, largest first.
    Use to see what is in a folder. Not for total sizes of subfolders (use dir_sizes)."""
    fd, real = ctx.policy.open_dir(path, "list")
    entries = []
    hidden_secrets = 0
    try:
        with os.scandir(fd) as listing:
            for entry in listing:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                item: dict[str, Any] = {"name": shown_path(entry.name), "type": _kind(st.st_mode), "modified": units.when(st.st_mtime)}
                if ctx.policy.is_secret(real / entry.name):
                    item["off_limits"] = True  # its name is shown, never its contents or size
                    hidden_secrets += 1
                elif stat.S_ISREG(st.st_mode):
                    item["size"] = units.size(st.st_size)
                    item["_bytes"] = st.st_size
                elif stat.S_ISLNK(st.st_mode):
                    try:
                        item["target"] = shown_path(os.readlink(entry.name, dir_fd=fd))
                    except OSError:
                        pass
                entries.append(item)
    finally:
        os.close(fd)
    entries.sort(key=lambda e: (-e.get("_bytes", -1) if e["type"] == "file" else 1, e["type"] != "dir", e["name"]))
    shown = entries[:n]
    for item in entries:
        item.pop("_bytes", None)
    data = {
        "path": shown_path(str(real)),
        "entries_total": len(entries),
        "dirs": sum(1 for e in entries if e["type"] == "dir"),
        "files": sum(1 for e in entries if e["type"] == "file"),
        "entries": shown,
    }
    if len(entries) > n:
        data["more"] = len(entries) - n
    if hidden_secrets:
        data["off_limits"] = f"{hidden_secrets} entries hold secrets and are not inspected"
    if not entries:
        return result(EMPTY, data, f"{path} is empty")
    return ok(data)
