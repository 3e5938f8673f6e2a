"""The KV state of the fixed system prompt, kept on disk so a new process does not evaluate it again.

Why: every run starts with the same system prompt (the protocol and the tool list, about 1,300
tokens), and evaluating it is most of a fresh question's time on two cores (45–60 s for 2,650
tokens on Qwen 1.5B). llama.cpp can copy one sequence's KV cells out of a context and back in
(`llama_state_seq_get_data` / `llama_state_seq_set_data`: the KV cache only, not the logits array,
which would be hundreds of MB with Qwen's 151,936-token vocabulary); loading them takes a fraction
of a second.

A file is trusted only when everything that shapes those cells matches: the model file, the exact
prompt tokens (and the text they came from), the context size, the KV cache types, flash
attention, and the llama.cpp build. The key says all of it and names the file; the file repeats
the key and carries a sha256 of its payload, so a file that is stale, truncated or corrupt is
refused with a one-line reason (the caller evaluates the prompt afresh and writes a new file).
Files are bounded in size and number; the least recently used go first.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

MAGIC = b"APPLIANCE-KV1\n"
SUFFIX = ".kv"
DEFAULT_MAX_BYTES = 512 * 1024 * 1024  # all files together
DEFAULT_MAX_FILES = 6
_HEADER = struct.Struct("<I")
_FINGERPRINT_HEAD = 1024 * 1024


class CacheMiss(Exception):
    """No usable file for this key; the message is the one-line reason (empty: simply none yet)."""


def model_fingerprint(path: str | os.PathLike, sha256: str = "") -> str:
    """The model file's identity: its verified sha256 when known (the catalog's, checked at load),
    else size, modification time and a hash of its first MiB (cheap, and changes when the file does)."""
    if sha256:
        return f"sha256:{sha256}"
    stat = os.stat(path)
    with open(path, "rb") as handle:
        head = hashlib.sha256(handle.read(_FINGERPRINT_HEAD)).hexdigest()[:16]
    return f"stat:{stat.st_size}:{stat.st_mtime_ns}:{head}"


def llama_build() -> str:
    """The llama-cpp-python version and a hash of llama.cpp's system info (its build features)."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info() or b""
    return f"{llama_cpp.__version__}:{hashlib.sha256(info).hexdigest()[:12]}"


def context_key(llama, model: str) -> dict[str, Any]:
    """Everything about a loaded context that changes the KV cells of a prompt."""
    params = llama.context_params
    return {
        "model": model,
        "n_ctx": int(llama.n_ctx()),
        "type_k": int(params.type_k),
        "type_v": int(params.type_v),
        "flash_attn": int(getattr(params, "flash_attn_type", getattr(params, "flash_attn", 0))),
        "llama": llama_build(),
    }


def prompt_key(context: Mapping[str, Any], text: str, tokens: Sequence[int]) -> dict[str, Any]:
    token_bytes = np.asarray(tokens, dtype="<i4").tobytes()
    return dict(context,
                text_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
                tokens_sha256=hashlib.sha256(token_bytes).hexdigest(),
                n_tokens=len(tokens))


def key_name(key: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(dict(key), sort_keys=True).encode()).hexdigest()[:32] + SUFFIX


@dataclass(frozen=True)
class CacheFile:
    path: Path
    size: int
    used: float  # last use (mtime)


class PromptCache:
    """One directory of prompt-state files (under the data directory: `<home>/prompt-cache`)."""

    def __init__(self, directory: str | os.PathLike, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 max_files: int = DEFAULT_MAX_FILES) -> None:
        self.directory = Path(directory)
        self.max_bytes = int(max_bytes)
        self.max_files = int(max_files)

    def files(self) -> list[CacheFile]:
        """The cache's files, most recently used first."""
        try:
            entries = [p for p in self.directory.iterdir() if p.suffix == SUFFIX and p.is_file()]
        except OSError:
            return []
        out = []
        for path in entries:
            try:
                stat = path.stat()
            except OSError:
                continue
            out.append(CacheFile(path, stat.st_size, stat.st_mtime))
        return sorted(out, key=lambda f: -f.used)

    def summary(self) -> str:
        """One line for `appliance doctor`: files, bytes of the bound, and any that look damaged."""
        files = self.files()
        if not files:
            return f"empty ({self.directory}); the first question writes it"
        damaged = [f.path.name for f in files if header_problem(f.path)]
        total = sum(f.size for f in files)
        text = (f"{len(files)} file{'s' if len(files) != 1 else ''}, {total / 1e6:,.0f} MB of at most "
                f"{self.max_bytes / 1e6:,.0f} MB, in {self.directory}")
        if damaged:
            text += f"; damaged (will be rebuilt): {', '.join(damaged)}"
        return text

    # ---- load ------------------------------------------------------------------------------
    def load(self, llama, key: Mapping[str, Any], tokens: Sequence[int]) -> Path:
        """Put the saved KV state for `key` into sequence 0 of `llama`'s context and mark `tokens`
        as present in its bookkeeping. Raises CacheMiss (with the reason) when there is none usable."""
        path = self.directory / key_name(key)
        if not path.is_file():
            raise CacheMiss("")
        try:
            blob = path.read_bytes()
        except OSError as exc:
            raise CacheMiss(f"prompt cache file {path} cannot be read ({exc.strerror or exc})") from None
        state = _payload(blob, key, tokens, path)
        import llama_cpp

        llama.reset()
        llama._ctx.kv_cache_seq_rm(-1, 0, -1)
        buffer = (ctypes.c_uint8 * len(state)).from_buffer(state)
        if not llama_cpp.llama_state_seq_set_data(llama.ctx, buffer, len(state), 0):
            llama._ctx.kv_cache_seq_rm(-1, 0, -1)
            raise CacheMiss(f"llama.cpp refused the prompt cache file {path}")
        n = len(tokens)
        llama.input_ids[:n] = np.asarray(tokens, dtype=llama.input_ids.dtype)
        llama.n_tokens = n
        llama._requires_eval = True  # no logits yet: the next prefill evaluates at least one token
        os.utime(path)  # least recently used goes first when pruning
        return path

    # ---- save ------------------------------------------------------------------------------
    def save(self, llama, key: Mapping[str, Any], tokens: Sequence[int]) -> Path | None:
        """Write the KV state of sequence 0 (which must hold exactly `tokens`) for `key`; then prune.
        Returns the file, or None when the state is larger than the whole cache may be."""
        import llama_cpp

        size = int(llama_cpp.llama_state_seq_get_size(llama.ctx, 0))
        if size <= 0 or size > self.max_bytes:
            return None
        buffer = (ctypes.c_uint8 * size)()
        written = int(llama_cpp.llama_state_seq_get_data(llama.ctx, buffer, size, 0))
        if written <= 0:
            return None
        state = memoryview(buffer).cast("B")[:written]
        token_bytes = np.asarray(tokens, dtype="<i4").tobytes()
        header = json.dumps({"key": dict(key), "n_tokens": len(tokens), "state_bytes": written,
                             "sha256": _digest(token_bytes, state), "saved_at": time.time()},
                            sort_keys=True).encode()
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / key_name(key)
        partial = path.with_suffix(f".{os.getpid()}.part")
        with open(partial, "wb") as handle:
            handle.write(MAGIC + _HEADER.pack(len(header)) + header)
            handle.write(token_bytes)
            handle.write(state)
        os.replace(partial, path)  # readers see the old file or the whole new one
        self.prune(keep=path)
        return path

    def prune(self, keep: Path | None = None) -> list[Path]:
        """Delete the least recently used files beyond max_files or max_bytes (never `keep`)."""
        removed: list[Path] = []
        total = 0
        for index, entry in enumerate(self.files()):
            total += entry.size
            if entry.path == keep or (index < self.max_files and total <= self.max_bytes):
                continue
            try:
                entry.path.unlink()
                removed.append(entry.path)
                total -= entry.size
            except OSError:
                continue
        return removed


def header_problem(path: Path) -> str:
    """Why a file is unusable judging by its header and size alone ('' when it looks whole)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(MAGIC) + _HEADER.size)
            if not head.startswith(MAGIC) or len(head) < len(MAGIC) + _HEADER.size:
                return "not a prompt cache file"
            (header_len,) = _HEADER.unpack_from(head, len(MAGIC))
            header = json.loads(handle.read(header_len))
            expected = len(head) + header_len + 4 * int(header["n_tokens"]) + int(header["state_bytes"])
        size = path.stat().st_size
    except (OSError, ValueError, KeyError, TypeError):
        return "unreadable header"
    return "" if size == expected else f"truncated ({size} of {expected} bytes)"


def _digest(token_bytes: bytes, state) -> str:
    digest = hashlib.sha256(token_bytes)
    digest.update(state)
    return digest.hexdigest()


def _payload(blob: bytes, key: Mapping[str, Any], tokens: Sequence[int], path: Path) -> bytearray:
    """The KV state bytes of a cache file, after every check; CacheMiss says which one failed."""
    def refuse(why: str) -> CacheMiss:
        return CacheMiss(f"prompt cache file {path.name} ignored ({why}); evaluating the prompt afresh")

    start = len(MAGIC) + _HEADER.size
    if not blob.startswith(MAGIC) or len(blob) < start:
        raise refuse("not a prompt cache file")
    (header_len,) = _HEADER.unpack_from(blob, len(MAGIC))
    try:
        header = json.loads(blob[start : start + header_len])
        n_tokens, state_bytes, digest = int(header["n_tokens"]), int(header["state_bytes"]), header["sha256"]
    except (ValueError, KeyError, TypeError):
        raise refuse("its header is damaged") from None
    if header.get("key") != dict(key) or n_tokens != len(tokens):
        raise refuse("it was made for another model, prompt or context")
    body = start + header_len
    if len(blob) != body + 4 * n_tokens + state_bytes:
        raise refuse(f"truncated: {len(blob)} bytes instead of {body + 4 * n_tokens + state_bytes}")
    token_bytes = blob[body : body + 4 * n_tokens]
    state = bytearray(blob[body + 4 * n_tokens :])
    if _digest(token_bytes, state) != digest:
        raise refuse("its checksum does not match: corrupt")
    if token_bytes != np.asarray(tokens, dtype="<i4").tobytes():
        raise refuse("its tokens differ from the prompt's")
    return state
