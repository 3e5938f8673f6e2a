"""What a file holds, told from its first bytes (what `file` says): empty, text (encoding, line
endings), a script and its interpreter, ELF and its loader, compressed, archive, SQLite, a
certificate; a private key is named and nothing of it is shown.

Why: "cannot execute: required file not found" is a missing interpreter or loader, "bad
interpreter: /bin/bash^M" a script saved with Windows line endings, "not in gzip format" a file
that is something else. Only the sample the caller read (within the path policy) is looked at.
"""

from __future__ import annotations

import os
import shutil
import struct

from appliance.tools.certs import certificates
from appliance.tools.config_syntax import syntax_of

SAMPLE_BYTES = 64 * 1024
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x1f\x8b", "gzip-compressed data"), (0, b"\xfd7zXZ\x00", "xz-compressed data"),
    (0, b"\x28\xb5\x2f\xfd", "zstd-compressed data"), (0, b"BZh", "bzip2-compressed data"),
    (0, b"PK\x03\x04", "zip archive"), (0, b"PK\x05\x06", "zip archive (empty)"), (257, b"ustar", "tar archive"),
    (0, b"SQLite format 3\x00", "SQLite database"), (0, b"%PDF-", "PDF document"), (0, b"\x89PNG", "PNG image"),
    (0, b"\xff\xd8\xff", "JPEG image"),
)
PRIVATE_KEY_MARKS = (b"PRIVATE KEY-----", b"OPENSSH PRIVATE KEY", b"PuTTY-User-Key-File")
ELF_MACHINES = {3: "x86 (32-bit)", 62: "x86-64", 40: "ARM (32-bit)", 183: "AArch64 (ARM 64-bit)", 243: "RISC-V",
                8: "MIPS", 20: "PowerPC", 21: "PowerPC 64", 22: "IBM S/390", 2: "SPARC", 43: "SPARC 64", 258: "LoongArch"}
ELF_TYPES = {1: "relocatable object", 2: "executable", 3: "shared object or position-independent executable", 4: "core dump"}
PT_INTERP = 3


def holds_private_key(sample: bytes) -> bool:
    return any(mark in sample for mark in PRIVATE_KEY_MARKS)


def sniff(sample: bytes, whole: bool, name: str) -> dict:
    """The kind of content of a file whose first bytes are `sample` (`whole`: the file entire)."""
    if not sample:
        return {"kind": "empty"}
    if holds_private_key(sample):
        return {"kind": "private key", "note": "a private key: its content is never read or shown"}
    if sample[:4] == b"\x7fELF":
        return elf(sample)
    for offset, magic, kind in MAGIC:
        if sample[offset:offset + len(magic)] == magic:
            return {"kind": kind}
    certs = certificates(sample)
    if certs:
        return certs
    text = text_of(sample, whole)
    if text is None:
        return {"kind": "binary data"}
    out = dict(text)
    if sample.startswith(b"#!"):
        out.update(interpreter(sample))
    elif whole:
        out.update(syntax_of(sample, name))
    return out


def text_of(sample: bytes, whole: bool) -> dict | None:
    """Encoding and line endings of text, or None for binary data."""
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return {"kind": "text", "encoding": "UTF-16 (with byte-order mark)"}
    body = sample if whole else sample[:-4]  # a character may be cut at the end of the sample
    if b"\x00" in body:
        return None
    try:
        body.decode("utf-8")
        encoding = "ASCII" if body.isascii() else "UTF-8"
    except UnicodeDecodeError:
        printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in body)
        if printable < 0.9 * len(body):
            return None
        encoding = "8-bit, not UTF-8 (perhaps Latin-1)"
    if sample.startswith(b"\xef\xbb\xbf"):
        encoding = "UTF-8 with byte-order mark"
    crlf = body.count(b"\r\n")
    lf = body.count(b"\n") - crlf
    endings = "none (one line)" if not crlf and not lf else "CRLF (Windows)" if crlf and not lf else \
        "LF (Unix)" if lf and not crlf else f"mixed ({crlf} CRLF, {lf} LF)"
    return {"kind": "text", "encoding": encoding, "line_endings": endings, "windows_line_endings": crlf > 0}


def find_program(name: str) -> str | None:
    return shutil.which(name, path=SAFE_PATH)


def interpreter(sample: bytes) -> dict:
    """A script's `#!` line: the interpreter the kernel runs (with a `\\r` kept, as the kernel
    keeps it), and whether it exists; `/usr/bin/env NAME` is looked up on the system PATH."""
    line = sample[2:].split(b"\n", 1)[0].decode("utf-8", errors="replace")
    words = line.strip(" \t").split(" ", 1)
    program = words[0]
    out: dict = {"kind": "script", "interpreter_line": "#!" + line.rstrip("\r")}
    if line.endswith("\r"):
        out["interpreter_note"] = "the line ends in a carriage return, so the kernel looks for a program whose name ends in \\r"
    if not program.strip():
        return {**out, "interpreter": "", "interpreter_exists": False}
    out["interpreter"] = program.rstrip("\r")
    exists = os.path.isfile(program) and os.access(program, os.X_OK)
    out["interpreter_exists"] = exists
    if exists and os.path.basename(program) == "env" and len(words) > 1:
        args = [w for w in words[1].split() if not w.startswith("-")]
        if args:
            named = args[0]
            found = find_program(named) if not line.endswith("\r") else None  # env looks for "NAME\r"
            out["runs_program"] = named
            out["program_found_at"] = found or ""
            out["interpreter_exists"] = found is not None
    return out


def elf(sample: bytes) -> dict:
    """An ELF file's class, architecture, type and its loader (PT_INTERP) with whether it exists."""
    out: dict = {"kind": "ELF"}
    if len(sample) < 64:
        return {**out, "note": "too short to be a whole ELF header"}
    is64, little = sample[4] == 2, sample[5] == 1
    end = "<" if little else ">"
    etype, machine = struct.unpack_from(end + "HH", sample, 16)
    out.update({"bits": 64 if is64 else 32, "architecture": ELF_MACHINES.get(machine, f"machine {machine}"),
                "elf_type": ELF_TYPES.get(etype, f"type {etype}")})
    if is64:
        phoff = struct.unpack_from(end + "Q", sample, 32)[0]
        phentsize, phnum = struct.unpack_from(end + "HH", sample, 54)
    else:
        phoff = struct.unpack_from(end + "I", sample, 28)[0]
        phentsize, phnum = struct.unpack_from(end + "HH", sample, 42)
    for i in range(min(phnum, 64)):
        at = phoff + i * phentsize
        if at + (56 if is64 else 32) > len(sample):
            break
        if struct.unpack_from(end + "I", sample, at)[0] != PT_INTERP:
            continue
        offset, size = (struct.unpack_from(end + "Q", sample, at + 8)[0], struct.unpack_from(end + "Q", sample, at + 32)[0]) \
            if is64 else (struct.unpack_from(end + "I", sample, at + 4)[0], struct.unpack_from(end + "I", sample, at + 16)[0])
        loader = sample[offset:offset + min(size, 256)].split(b"\x00", 1)[0].decode("utf-8", errors="replace")
        out["loader"] = loader
        out["loader_exists"] = os.path.exists(loader)
        return out
    out["loader"] = ""
    out["linking"] = "static (no loader)" if etype == 2 else "no loader named"
    return out
