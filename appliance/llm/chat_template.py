"""Rendering a conversation into the prompt text the model was trained on.

The template comes from the GGUF file itself (`tokenizer.chat_template`, rendered by
llama-cpp-python's Jinja2ChatFormatter, the same sandboxed environment Transformers uses), so a
model is prompted the way its authors intended. Files without a template, or whose template
refuses the conversation, get ChatML, which both bundled models use anyway.

The rendering must be deterministic and append-only: the decoder reuses the KV cache of every token
the previous step already evaluated, which only works if the text of earlier messages does not
change from one step to the next.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from appliance.llm.base import Message


def render_chatml(messages: Sequence[Message], *, add_generation_prompt: bool = True) -> str:
    """ChatML: `<|im_start|>role\\ncontent<|im_end|>\\n` per message."""
    parts = [f"<|im_start|>{m.role}\n{m.content}<|im_end|>\n" for m in messages]
    if add_generation_prompt:
        parts.append("<|im_start|>assistant\n")
    return "".join(parts)


@dataclass
class ChatTemplate:
    """A model's chat template; `source` says where it came from ('gguf' or 'chatml')."""

    template: str | None
    bos_token: str = ""
    eos_token: str = ""
    source: str = "chatml"

    def __post_init__(self) -> None:
        self._formatter = None
        if self.template:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            try:
                self._formatter = Jinja2ChatFormatter(
                    template=self.template,
                    eos_token=self.eos_token,
                    bos_token=self.bos_token,
                    add_generation_prompt=True,
                )
                self.source = "gguf"
            except Exception:  # a template Jinja cannot parse: ChatML is the safe default
                self._formatter = None
                self.source = "chatml"

    @classmethod
    def from_llama(cls, llama) -> "ChatTemplate":
        """The template stored in the loaded model's GGUF metadata (ChatML when absent)."""
        metadata = getattr(llama, "metadata", None) or {}
        template = metadata.get("tokenizer.chat_template")
        return cls(
            template=template,
            bos_token=_token_text(llama, llama.token_bos()),
            eos_token=_token_text(llama, llama.token_eos()),
        )

    def render(self, messages: Sequence[Message], *, add_generation_prompt: bool = True) -> str:
        """The prompt text for `messages`, ending with the assistant header when asked."""
        if self._formatter is not None:
            as_dicts: list[Any] = [{"role": m.role, "content": m.content} for m in messages]  # llama_cpp's message TypedDicts
            try:
                self._formatter.add_generation_prompt = add_generation_prompt
                return self._formatter(messages=as_dicts).prompt
            except Exception:
                # A template that raises (e.g. it insists on strict user/assistant alternation)
                # must not end the run; ChatML is understood by most instruction-tuned models.
                pass
        return render_chatml(messages, add_generation_prompt=add_generation_prompt)


def _token_text(llama, token: int) -> str:
    if token is None or token < 0:
        return ""
    try:
        return llama.detokenize([token], special=True).decode("utf-8", errors="replace")
    except Exception:
        return ""
