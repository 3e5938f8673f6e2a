"""The llama.cpp settings that change speed, as one value recorded with every run.

Why these defaults: they were chosen by a side-by-side run on this project's 2-core machines
(`scripts/bench_settings.py`, numbers in docs/performance-prompt.md), not taken from the library.
$APPLIANCE_FLASH_ATTN (0/1), $APPLIANCE_N_BATCH, $APPLIANCE_N_UBATCH, $APPLIANCE_KV_TYPE
(f16, q8_0), $APPLIANCE_EXTRA_BUFFERS (0/1) and $APPLIANCE_LOOKUP (0/1) override them, for
measuring on another machine.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

from appliance.errors import ModelError

KV_TYPES = {"f16": 1, "q8_0": 8}  # ggml type ids (llama_cpp.GGML_TYPE_F16 / GGML_TYPE_Q8_0)


@dataclass(frozen=True)
class SpeedSettings:
    """flash_attn: llama.cpp's flash attention kernel. n_batch / n_ubatch: the logical and physical
    batch sizes of prompt evaluation. kv_type: the KV cache's element type (q8_0 needs flash_attn).
    extra_buffers: llama.cpp's repacked weight buffers (AMX on CPUs that have it): off, because on
    this project's AMX hosts every llama_decode of more than one token crashed the process with
    them (llama-cpp-python 0.3.36, 2026-12-01), and with the AMX-free build scripts/setup.sh makes
    there they change nothing measurable (docs/performance-prompt.md); $APPLIANCE_EXTRA_BUFFERS=1
    turns them back on. lookup: the fast decoder's drafts copied from the context (llm/lookup.py;
    scripts/bench_lookup.py measures it)."""

    flash_attn: bool = False
    n_batch: int = 512
    n_ubatch: int = 512
    kv_type: str = "f16"
    extra_buffers: bool = False
    lookup: bool = True

    def __post_init__(self) -> None:
        if self.kv_type not in KV_TYPES:
            raise ModelError(f"unknown KV cache type {self.kv_type!r} (use {', '.join(KV_TYPES)})")
        if self.kv_type != "f16" and not self.flash_attn:
            raise ModelError("a quantized KV cache needs flash attention (APPLIANCE_FLASH_ATTN=1)")
        if self.n_batch < 1 or self.n_ubatch < 1:
            raise ModelError("batch sizes must be positive")

    def kv_type_id(self) -> int:
        return KV_TYPES[self.kv_type]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "SpeedSettings":
        default = cls()

        def number(name: str, fallback: int) -> int:
            raw = env.get(name, "").strip()
            if not raw:
                return fallback
            if not raw.isdigit() or int(raw) < 1:
                raise ModelError(f"{name} must be a positive whole number, not {raw!r}")
            return int(raw)

        def switch(name: str, fallback: bool) -> bool:
            raw = env.get(name, "").strip()
            if raw not in ("", "0", "1"):
                raise ModelError(f"{name} must be 0 or 1, not {raw!r}")
            return fallback if not raw else raw == "1"

        return cls(
            flash_attn=switch("APPLIANCE_FLASH_ATTN", default.flash_attn),
            extra_buffers=switch("APPLIANCE_EXTRA_BUFFERS", default.extra_buffers),
            lookup=switch("APPLIANCE_LOOKUP", default.lookup),
            n_batch=number("APPLIANCE_N_BATCH", default.n_batch),
            n_ubatch=number("APPLIANCE_N_UBATCH", default.n_ubatch),
            kv_type=env.get("APPLIANCE_KV_TYPE", "").strip() or default.kv_type,
        )
