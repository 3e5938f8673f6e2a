"""A llama.cpp grammar sampler used as a matcher, and the probe tokens that read what it forces.

Why a matcher rather than a sampler: the fast decoder asks the grammar three different questions
(is this one token allowed; mask the whole vocabulary, only when it is not; which text is forced
next), and each must cost as little as the question needs.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from appliance.errors import ModelError
from appliance.llm.grammar import CompiledGrammar
from appliance.llm.sampling import NEG_INF, TOKEN_DATA, Candidates, token_data_array
from appliance.llm.session import Session


class GrammarMatcher:
    """A llama.cpp grammar sampler used as a matcher: does it allow this token, which tokens
    does it allow at all, and what text does it force next."""

    def __init__(self, session: Session, grammar: CompiledGrammar, probes: "ProbeSet") -> None:
        lib = session.lib
        self._lib = lib
        self._session = session
        self._probes = probes
        self._smpl = lib.llama_sampler_init_grammar(
            session.vocab, grammar.gbnf.encode("utf-8"), grammar.root.encode("utf-8")
        )
        if not self._smpl:
            raise ModelError("llama.cpp refused the grammar compiled from the JSON schema")
        self._one = np.zeros(1, dtype=TOKEN_DATA)
        self._one_array = token_data_array(lib, self._one)
        self._full = Candidates(lib, session.n_vocab)
        self._probe_data = np.zeros(len(probes.ids), dtype=TOKEN_DATA)
        self._probe_data["id"] = probes.ids
        self._probe_array = token_data_array(lib, self._probe_data)

    def close(self) -> None:
        if self._smpl:
            self._lib.llama_sampler_free(self._smpl)
            self._smpl = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def reset(self) -> None:
        self._lib.llama_sampler_reset(self._smpl)

    def accept(self, token: int) -> None:
        self._lib.llama_sampler_accept(self._smpl, token)

    def allows(self, token: int) -> bool:
        self._one["id"][0] = token
        self._one["logit"][0] = 0.0
        self._one_array.size = 1
        self._one_array.selected = -1
        self._lib.llama_sampler_apply(self._smpl, ctypes.byref(self._one_array))
        return self._one["logit"][0] != NEG_INF

    def masked(self, logits: np.ndarray) -> np.ndarray:
        """`logits` with every token the grammar rejects set to -inf (a copy)."""
        data, array = self.constrained(logits)
        # The grammar sampler only rewrites logits in place; it does not reorder the array.
        return data["logit"].copy()

    def constrained(self, logits: np.ndarray):
        """The full candidate array with the grammar applied (for a sampler chain or a mask)."""
        data, array = self._full.fill(logits)
        self._lib.llama_sampler_apply(self._smpl, ctypes.byref(array))
        return data, array

    def _allowed_probes(self, smpl) -> np.ndarray:
        self._probe_data["logit"] = 0.0
        self._probe_array.size = len(self._probe_data)
        self._probe_array.selected = -1
        self._lib.llama_sampler_apply(smpl, ctypes.byref(self._probe_array))
        return self._probe_data["id"][self._probe_data["logit"] != NEG_INF]

    def forced(self, max_chars: int = 48) -> tuple[str, bool]:
        """(text the grammar forces next, whether the grammar is complete with nothing else allowed).

        Probes the grammar's current state with single-character tokens and end-of-generation:
        while exactly one character is allowed, that character is forced. Characters outside the
        probe set (non-ASCII) are not probed, so a forced text is a draft to verify, not a promise.
        """
        probes = self._probes
        allowed = self._allowed_probes(self._smpl)
        if len(allowed) == 1 and int(allowed[0]) in probes.eog:
            return "", True
        if len(allowed) != 1 or int(allowed[0]) in probes.eog:
            return "", False
        lib = self._lib
        clone = lib.llama_sampler_clone(self._smpl)
        try:
            chars: list[str] = []
            while len(allowed) == 1 and int(allowed[0]) not in probes.eog and len(chars) < max_chars:
                token = int(allowed[0])
                chars.append(probes.char[token])
                lib.llama_sampler_accept(clone, token)
                allowed = self._allowed_probes(clone)
            return "".join(chars), False
        finally:
            lib.llama_sampler_free(clone)


@dataclass(frozen=True)
class ProbeSet:
    """The vocabulary's single-character tokens (printable ASCII and newline/tab) and its
    end-of-generation tokens: enough to see which characters a JSON grammar allows next."""

    ids: np.ndarray
    char: dict[int, str]
    eog: frozenset[int]

    @classmethod
    def for_session(cls, session: Session) -> "ProbeSet":
        char: dict[int, str] = {}
        for code in list(range(0x20, 0x7F)) + [0x0A, 0x09]:
            c = chr(code)
            tokens = session.tokenize(c)
            if len(tokens) == 1 and session.piece(tokens[0]) == c.encode():
                char[tokens[0]] = c
        eog = frozenset(session.eog_ids)
        ids = np.array(sorted(char) + sorted(eog), dtype=np.intc)
        return cls(ids=ids, char=char, eog=eog)
