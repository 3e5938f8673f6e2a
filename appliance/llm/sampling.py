"""How tokens are chosen: the sampling settings and llama.cpp's sampler chain over a candidate array.

The candidate array is a numpy buffer laid out as llama.cpp's `llama_token_data`, allocated once
per decoder and refilled for each token, so llama.cpp's samplers work on it in place without a
copy of the vocabulary's logits into ctypes objects.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from appliance.errors import ModelError
from appliance.llm.session import Session

TOKEN_DATA = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
NEG_INF = float("-inf")


def token_data_array(lib, data: np.ndarray):
    """A `llama_token_data_array` over `data` (a TOKEN_DATA buffer), unsorted, nothing selected."""
    return lib.llama_token_data_array(
        data=data.ctypes.data_as(lib.llama_token_data_p), size=len(data), selected=-1, sorted=False
    )


@dataclass(frozen=True)
class SamplingSettings:
    """How tokens are chosen. temperature 0 means greedy (the default for actions)."""

    temperature: float = 0.0
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    repeat_penalty: float = 1.0
    repeat_last_n: int = 64
    seed: int = 0

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0 and self.repeat_penalty == 1.0


class Candidates:
    """A reusable full-vocabulary `llama_token_data_array` over a numpy buffer."""

    def __init__(self, lib, n_vocab: int) -> None:
        self.data = np.zeros(n_vocab, dtype=TOKEN_DATA)
        self._ids = np.arange(n_vocab, dtype=np.intc)
        self.array = token_data_array(lib, self.data)

    def fill(self, logits: np.ndarray):
        """Load `logits` (samplers reorder and shrink the array, so everything is reset)."""
        self.data["id"] = self._ids
        self.data["logit"] = logits
        self.data["p"] = 0.0
        self.array.size = len(self.data)
        self.array.selected = -1
        self.array.sorted = False
        return self.data, self.array


class SamplerChain:
    """llama.cpp's penalties / top-k / top-p / min-p / temperature / dist chain, without grammar."""

    def __init__(self, session: Session, settings: SamplingSettings) -> None:
        lib = session.lib
        self._lib = lib
        params = lib.llama_sampler_chain_default_params()
        self._chain = lib.llama_sampler_chain_init(params)
        add = lambda s: lib.llama_sampler_chain_add(self._chain, s)  # noqa: E731
        if settings.repeat_penalty != 1.0:
            add(lib.llama_sampler_init_penalties(settings.repeat_last_n, settings.repeat_penalty, 0.0, 0.0))
        if settings.temperature <= 0.0:
            add(lib.llama_sampler_init_greedy())
        else:
            add(lib.llama_sampler_init_top_k(settings.top_k))
            add(lib.llama_sampler_init_top_p(settings.top_p, 1))
            add(lib.llama_sampler_init_min_p(settings.min_p, 1))
            add(lib.llama_sampler_init_temp(settings.temperature))
            add(lib.llama_sampler_init_dist(settings.seed & 0xFFFFFFFF))

    def pick(self, data: np.ndarray, array) -> int:
        self._lib.llama_sampler_apply(self._chain, ctypes.byref(array))
        selected = int(array.selected)
        if selected < 0:
            raise ModelError("the sampler chose no token")
        return int(data["id"][selected])

    def accept(self, token: int) -> None:
        self._lib.llama_sampler_accept(self._chain, token)

    def close(self) -> None:
        if self._chain:
            self._lib.llama_sampler_free(self._chain)
            self._chain = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
