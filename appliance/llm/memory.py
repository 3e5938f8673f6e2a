"""Will this model fit in the memory the machine has free right now?

People call the appliance when their machine is struggling. Loading a model that does not fit
pushes the machine into swap (or, with mmap and no swap, into re-reading the model from disk for
every token), which makes the very problem worse and the answer take minutes. So before loading,
the file size plus the KV cache and llama.cpp's working buffers are compared with the memory that
is available; if it does not fit, the load is refused with a message that says how much is needed
and offers the smaller catalog model that would fit. Readings are plain values so tests can
simulate a machine short of memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from appliance.errors import ModelError

MB = 1024 * 1024
# Beyond the weights and the KV cache, llama.cpp's compute buffers, repacked weight copies and the
# Python side add memory that grows with the model. Calibrated on this project's machine (resident
# memory after loading with n_ctx 8192 and evaluating a 3,000-token prompt): SmolLM2-135M 424 MB,
# Qwen 0.5B 811 MB, Qwen 1.5B 2,095 MB (MB = MiB here); the estimate below gives 522, 1,038 and
# 2,121 MB.
FIXED_OVERHEAD = 192 * MB
WEIGHT_OVERHEAD = 0.60
HEADROOM = 0.90  # leave a tenth of what is available for the tools and the rest of the machine


@dataclass(frozen=True)
class MemoryReading:
    """Bytes of memory available without swapping (psutil's `available`) and in total."""

    available: int
    total: int
    swap_free: int = 0


def read_memory() -> MemoryReading:
    import psutil

    vm = psutil.virtual_memory()
    try:
        swap_free = psutil.swap_memory().free
    except Exception:  # some containers refuse the swap reading
        swap_free = 0
    return MemoryReading(available=vm.available, total=vm.total, swap_free=swap_free)


MemoryReader = Callable[[], MemoryReading]


def estimate_need(file_size: int, *, kv_cache: int | None, n_ctx: int) -> int:
    """Bytes a loaded model will keep resident: the mapped weights, the KV cache and the buffers."""
    kv = kv_cache if kv_cache is not None else n_ctx * 64 * 1024  # rough when the header is silent
    return file_size + kv + int(file_size * WEIGHT_OVERHEAD) + FIXED_OVERHEAD


@dataclass(frozen=True)
class MemoryVerdict:
    fits: bool
    needed: int
    available: int
    suggestion: str | None = None  # a smaller model name that would fit

    def message(self, model_name: str) -> str:
        text = (
            f"model {model_name} needs about {self.needed / MB:,.0f} MB of memory but only "
            f"{self.available / MB:,.0f} MB is available; loading it would push this machine into swap"
        )
        if self.suggestion:
            text += f"; use the smaller model instead: appliance --model {self.suggestion}"
        else:
            text += "; close some programs and try again"
        return text


def check_memory(needed: int, reading: MemoryReading,
                 alternatives: Sequence[tuple[str, int]] = ()) -> MemoryVerdict:
    """Pure decision: does `needed` fit in the available memory (with headroom)?

    `alternatives` are (name, bytes needed) of smaller installed models, largest first; the first
    that fits is suggested.
    """
    budget = int(reading.available * HEADROOM)
    if needed <= budget:
        return MemoryVerdict(True, needed, reading.available)
    suggestion = next((name for name, need in alternatives if need <= budget), None)
    return MemoryVerdict(False, needed, reading.available, suggestion)


class NotEnoughMemory(ModelError):
    """A ModelError that carries its verdict, so a UI can offer `verdict.suggestion` as a button."""

    def __init__(self, model_name: str, verdict: MemoryVerdict) -> None:
        super().__init__(verdict.message(model_name))
        self.model_name = model_name
        self.verdict = verdict


def ensure_memory(model_name: str, needed: int, reading: MemoryReading,
                  alternatives: Sequence[tuple[str, int]] = ()) -> MemoryVerdict:
    """Raise NotEnoughMemory (a ModelError) with the verdict's message when the model does not fit."""
    verdict = check_memory(needed, reading, alternatives)
    if not verdict.fits:
        raise NotEnoughMemory(model_name, verdict)
    return verdict
