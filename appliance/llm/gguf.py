"""Check a GGUF file before llama.cpp sees it, and read what its header says.

llama.cpp answers a bad file with a C-level log line and a NULL (or worse, a crash on a truncated
mmap); the person deserves one line that names the file and what is wrong with it. So the header is
parsed here, in pure Python, with every read bounded by the file's size and sanity limits: a
corrupt length field can never make us allocate gigabytes or read past the end. Walking the tensor
table also gives the size the file must at least have, which catches a truncated copy even when the
catalog does not know the file.
"""

from __future__ import annotations

import errno
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from appliance.errors import ModelError

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32

# Sanity limits: far above any real model, far below what a corrupt count would ask for.
MAX_TENSORS = 1_000_000
MAX_METADATA = 100_000
MAX_KEY_BYTES = 64 * 1024
MAX_KEPT_STRING_BYTES = 1024 * 1024  # the longest metadata value we keep (chat templates are ~10 KB)
MAX_DIMS = 8

# Value types of GGUF metadata: type id -> struct format (fixed-size scalars).
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9

# ggml tensor types: type id -> (elements per block, bytes per block), from gguf-py's GGML_QUANT_SIZES.
_QK = 256
GGML_BLOCK_SIZES: dict[int, tuple[int, int]] = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 36),
    10: (_QK, 2 + 2 + _QK // 16 + _QK // 4), 11: (_QK, 2 + _QK // 4 + _QK // 8 + 12),
    12: (_QK, 2 + 2 + _QK // 2 + 12), 13: (_QK, 2 + 2 + _QK // 2 + _QK // 8 + 12),
    14: (_QK, 2 + _QK // 2 + _QK // 4 + _QK // 16), 15: (_QK, 4 + _QK + _QK // 8),
    16: (_QK, 2 + _QK // 4), 17: (_QK, 2 + _QK // 4 + _QK // 32), 18: (_QK, 2 + _QK // 4 + _QK // 8),
    19: (_QK, 2 + _QK // 8 + _QK // 16), 20: (32, 18), 21: (_QK, 2 + _QK // 4 + _QK // 8 + _QK // 32 + 4),
    22: (_QK, 2 + _QK // 4 + _QK // 16), 23: (_QK, 2 + 2 + _QK // 2 + _QK // 64),
    24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8),
    29: (_QK, _QK // 8 + _QK // 16 + _QK // 32), 30: (1, 2), 34: (_QK, 2 + 4 * 13), 35: (_QK, 2 + 64),
    39: (32, 17),
}


@dataclass(frozen=True)
class GGUFInfo:
    """What a GGUF header says about the model, as far as the appliance cares."""

    path: str
    size: int
    version: int
    tensor_count: int
    metadata_count: int
    architecture: str | None = None
    name: str | None = None
    context_length: int | None = None  # the context the model was trained with
    chat_template: str | None = None
    vocab_size: int | None = None
    block_count: int | None = None  # layers
    kv_heads: int | None = None
    head_dim: int | None = None
    min_size: int = 0  # bytes the tensor table says the file needs

    def summary(self) -> dict:
        """The header facts worth recording (for the import registry and `doctor`)."""
        return {
            "architecture": self.architecture,
            "name": self.name,
            "context_length": self.context_length,
            "vocab_size": self.vocab_size,
            "layers": self.block_count,
            "gguf_version": self.version,
            "tensors": self.tensor_count,
            "has_chat_template": bool(self.chat_template),
        }


class _Corrupt(Exception):
    """Internal: the header cannot be parsed; the message says why."""


class _Reader:
    """Little-endian reads that never go past the end of the file."""

    def __init__(self, handle: BinaryIO, size: int) -> None:
        self.handle = handle
        self.size = size
        self.pos = 0

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.size:
            raise _Corrupt(f"the header is cut short while reading {what} (at byte {self.pos:,} of {self.size:,})")

    def read(self, n: int, what: str) -> bytes:
        self.need(n, what)
        data = self.handle.read(n)
        if len(data) != n:
            raise _Corrupt(f"the file ended early while reading {what}")
        self.pos += n
        return data

    def skip(self, n: int, what: str) -> None:
        self.need(n, what)
        self.handle.seek(n, os.SEEK_CUR)
        self.pos += n

    def scalar(self, fmt: str, what: str):
        return struct.unpack(fmt, self.read(struct.calcsize(fmt), what))[0]

    def u32(self, what: str) -> int:
        return self.scalar("<I", what)

    def u64(self, what: str) -> int:
        return self.scalar("<Q", what)

    def string(self, what: str, limit: int) -> str:
        length = self.u64(f"the length of {what}")
        if length > limit:
            raise _Corrupt(f"{what} claims {length:,} bytes (limit {limit:,})")
        return self.read(length, what).decode("utf-8", errors="replace")

    def skip_string(self, what: str) -> None:
        self.skip(self.u64(f"the length of {what}"), what)


def _read_value(reader: _Reader, value_type: int, key: str, keep: bool):
    """Read (keep=True) or skip one metadata value; arrays are skipped, their length returned."""
    if value_type in _SCALARS:
        return reader.scalar(_SCALARS[value_type], f"the value of {key!r}")
    if value_type == _STRING:
        if keep:
            return reader.string(f"the value of {key!r}", MAX_KEPT_STRING_BYTES)
        reader.skip_string(f"the value of {key!r}")
        return None
    if value_type == _ARRAY:
        item_type = reader.u32(f"the item type of {key!r}")
        count = reader.u64(f"the item count of {key!r}")
        if count > reader.size - reader.pos:  # every item takes at least one byte
            raise _Corrupt(f"array {key!r} claims {count:,} items, more than the file could hold")
        if item_type in _SCALARS:
            reader.skip(count * struct.calcsize(_SCALARS[item_type]), f"array {key!r}")
        elif item_type == _STRING:
            for _ in range(count):
                reader.skip_string(f"an item of {key!r}")
        else:
            raise _Corrupt(f"array {key!r} has unsupported item type {item_type}")
        return count
    raise _Corrupt(f"metadata {key!r} has unknown value type {value_type}")


def _tensor_bytes(dims: list[int], ggml_type: int) -> int | None:
    block = GGML_BLOCK_SIZES.get(ggml_type)
    if block is None:
        return None
    elements = 1
    for d in dims:
        elements *= d
    per_block, block_bytes = block
    return (elements // per_block) * block_bytes


def _parse(handle: BinaryIO, path: Path, size: int) -> GGUFInfo:
    reader = _Reader(handle, size)
    version, tensor_count, kv_count = _read_header(reader, path, size)
    meta, arrays = _read_metadata(reader, kv_count)
    data_needed = _read_tensor_table(reader, tensor_count)
    alignment = meta.get("general.alignment") or DEFAULT_ALIGNMENT
    if not isinstance(alignment, int) or alignment <= 0:
        alignment = DEFAULT_ALIGNMENT
    data_start = -(-reader.pos // alignment) * alignment
    return GGUFInfo(
        path=str(path),
        size=size,
        version=version,
        tensor_count=tensor_count,
        metadata_count=kv_count,
        name=_meta_str(meta, "general.name"),
        chat_template=_meta_str(meta, "tokenizer.chat_template") or None,
        vocab_size=arrays.get("tokenizer.ggml.tokens"),
        min_size=data_start + data_needed,
        **_architecture_facts(meta),
    )


def _meta_str(meta: dict[str, object], key: str) -> str | None:
    value = meta.get(key)
    return value if isinstance(value, str) else None


def _read_header(reader: _Reader, path: Path, size: int) -> tuple[int, int, int]:
    """(version, tensor count, metadata count), after the magic and version are checked."""
    magic = reader.read(4, "the magic") if size >= 4 else b""
    if magic != GGUF_MAGIC:
        raise ModelError(f"model file {path} is not a GGUF file (starts with {magic[:4]!r}, expected b'GGUF')")
    version = reader.u32("the version")
    if version not in SUPPORTED_VERSIONS:
        raise ModelError(f"model file {path} is GGUF version {version}; supported versions are 2 and 3")
    tensor_count = reader.u64("the tensor count")
    kv_count = reader.u64("the metadata count")
    if tensor_count > MAX_TENSORS or kv_count > MAX_METADATA:
        raise _Corrupt(f"implausible header counts ({tensor_count:,} tensors, {kv_count:,} metadata entries)")
    return version, tensor_count, kv_count


def _read_metadata(reader: _Reader, kv_count: int) -> tuple[dict[str, object], dict[str, int]]:
    """(kept values by key, array lengths by key): every scalar (a few bytes each) and the
    strings the appliance uses; other strings and every array's items are skipped."""
    meta: dict[str, object] = {}
    arrays: dict[str, int] = {}
    wanted = ("general.architecture", "general.name", "general.alignment", "tokenizer.chat_template")
    for index in range(kv_count):
        key = reader.string(f"metadata key {index}", MAX_KEY_BYTES)
        value_type = reader.u32(f"the type of {key!r}")
        keep = key in wanted  # strings we need; every scalar is kept (they are a few bytes)
        value = _read_value(reader, value_type, key, keep)
        if value_type == _ARRAY:
            arrays[key] = value
        elif keep or value_type in _SCALARS:
            meta[key] = value
    return meta, arrays


def _read_tensor_table(reader: _Reader, tensor_count: int) -> int:
    """Bytes of tensor data the table needs after the data start (the end of its last tensor)."""
    data_needed = 0
    for index in range(tensor_count):
        name = reader.string(f"the name of tensor {index}", MAX_KEY_BYTES)
        n_dims = reader.u32(f"the dimensions of tensor {name!r}")
        if n_dims > MAX_DIMS:
            raise _Corrupt(f"tensor {name!r} claims {n_dims} dimensions")
        dims = [reader.u64(f"the shape of tensor {name!r}") for _ in range(n_dims)]
        ggml_type = reader.u32(f"the type of tensor {name!r}")
        offset = reader.u64(f"the offset of tensor {name!r}")
        nbytes = _tensor_bytes(dims, ggml_type) or 0
        data_needed = max(data_needed, offset + nbytes)
    return data_needed


def _architecture_facts(meta: dict[str, object]) -> dict:
    """The GGUFInfo fields read from `<architecture>.*` keys (None where absent or not an integer)."""
    architecture = meta.get("general.architecture")

    def arch_int(suffix: str) -> int | None:
        value = meta.get(f"{architecture}.{suffix}") if architecture else None
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else None

    heads = arch_int("attention.head_count")
    embedding = arch_int("embedding_length")
    return {
        "architecture": architecture if isinstance(architecture, str) else None,
        "context_length": arch_int("context_length"),
        "block_count": arch_int("block_count"),
        "kv_heads": arch_int("attention.head_count_kv") or heads,
        "head_dim": arch_int("attention.key_length") or (embedding // heads if embedding and heads else None),
    }


def real_path(path: str | os.PathLike) -> Path:
    """`path` with `~` expanded and every link followed. A link loop is one line naming the file
    (pathlib raises RuntimeError for it on this Python, OSError ELOOP on later ones)."""
    try:
        return Path(path).expanduser().resolve()
    except (RuntimeError, OSError):
        raise ModelError(_LOOP.format(path=path)) from None


_LOOP = "model file {path} is a symbolic link loop: its links never reach a file"


def check_file(path: str | os.PathLike, *, expected_size: int | None = None) -> GGUFInfo:
    """Check that `path` is a complete GGUF file llama.cpp can be given; return its header info.

    Raises ModelError with one line naming the file and the reason: missing, not a regular file,
    empty, wrong magic, unsupported version, implausible or cut-short header, smaller than its
    tensor table needs (truncated), or a size different from the one the catalog expects.
    """
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ModelError(f"model file {path} does not exist") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ModelError(_LOOP.format(path=path)) from None
        raise ModelError(f"model file {path} cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ModelError(f"model file {path} is a directory, not a GGUF file")
    if not stat.S_ISREG(st.st_mode):
        raise ModelError(f"model file {path} is not a regular file")
    if st.st_size == 0:
        raise ModelError(f"model file {path} is empty (0 bytes)")
    try:
        with open(path, "rb", buffering=1024 * 1024) as handle:
            info = _parse(handle, path, st.st_size)
    except _Corrupt as exc:
        raise ModelError(f"model file {path} is corrupt or truncated: {exc}") from None
    except OSError as exc:
        raise ModelError(f"model file {path} cannot be read: {exc.strerror or exc}") from None
    if info.min_size > st.st_size:
        raise ModelError(
            f"model file {path} is truncated: its tensors need {info.min_size:,} bytes, the file has {st.st_size:,}"
        )
    if expected_size is not None and st.st_size != expected_size:
        raise ModelError(
            f"model file {path} has {st.st_size:,} bytes, the catalog expects {expected_size:,} "
            "(incomplete or different file)"
        )
    return info


def kv_cache_bytes(info: GGUFInfo, n_ctx: int) -> int | None:
    """Bytes llama.cpp's f16 K and V caches take for `n_ctx` tokens, or None if the header is silent."""
    if not (info.block_count and info.kv_heads and info.head_dim):
        return None
    return 2 * 2 * info.block_count * info.kv_heads * info.head_dim * n_ctx  # K and V, 2 bytes each
