"""Reading an export file with bounds: `runs import /dev/zero` or a file of gigabytes must end in one
line, not in memory growing until the machine swaps.

The file is opened once and must be a regular file (a device, a FIFO or a socket never ends); it is
read in chunks up to MAX_EXPORT_BYTES, and no line may be longer than MAX_LINE_BYTES (a JSON Lines
export holds one run per line; a JSON export is indented, so its lines are short too).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from appliance.errors import UsageError

MAX_EXPORT_BYTES = 512 << 20
MAX_LINE_BYTES = 64 << 20
CHUNK = 1 << 20


def read_export_text(path: Path) -> str:
    """The whole text of the export at `path`, or UsageError with the one line saying why not."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{path} is not a regular file (a device, pipe or folder); give an export file "
                             "written by `appliance runs export`")
        if st.st_size > MAX_EXPORT_BYTES:
            raise UsageError(f"{path} is {st.st_size >> 20} MiB, more than an import takes "
                             f"({MAX_EXPORT_BYTES >> 20} MiB); export fewer runs per file (runs export ID)")
        raw = _bounded(handle, path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not a text file; `appliance runs export` writes JSON Lines or JSON") from None


def _bounded(handle, path: Path) -> bytes:
    """Chunks until the end, refusing a file that grows past the bound or a line without end."""
    chunks: list[bytes] = []
    total = line = 0
    while chunk := handle.read(CHUNK):
        total += len(chunk)
        if total > MAX_EXPORT_BYTES:
            raise UsageError(f"{path} grew past {MAX_EXPORT_BYTES >> 20} MiB while it was read; not imported")
        newline = chunk.rfind(b"\n")
        line = line + len(chunk) if newline == -1 else len(chunk) - newline - 1
        if line > MAX_LINE_BYTES:
            raise UsageError(f"{path} has a line longer than {MAX_LINE_BYTES >> 20} MiB; it is not an export "
                             "written by `appliance runs export`")
        chunks.append(chunk)
    return b"".join(chunks)
