"""One-line descriptions of where a run's time went, shared by `runs show`, `ask` and the TUI.

Why here: every consumer of the event stream says the same thing the same way, and none of them
is imported by another (the CLI and the TUI are separate layers above the store).
"""

from __future__ import annotations

from typing import Any, Mapping

TIMING_PARTS = (("model_load", "model load"), ("prompt", "prompt"), ("generation", "generation"),
                ("tools", "tools"), ("engine", "engine"))


def timing_line(timing: Mapping[str, Any]) -> str:
    """`12.3 s: model load 1.2 s · prompt 3.4 s · generation 6.0 s · tools 0.5 s · engine 1.2 s`.

    The total includes the model load this run waited for (the run's own clock starts after it);
    a run that reached the model ends with when its first token came, counted from the run's start
    (after the load): `(first token after 2.9 s)`."""
    parts = [(label, float(timing.get(key) or 0.0)) for key, label in TIMING_PARTS]
    total = max(float(timing.get("total") or 0.0) + float(timing.get("model_load") or 0.0),
                sum(value for _, value in parts))  # a test's fixed clock says 0
    line = f"{total:.1f} s: " + " · ".join(f"{label} {value:.1f} s" for label, value in parts)
    if timing.get("first_token") is not None:
        line += f" (first token after {float(timing['first_token']):.1f} s)"
    return line


def runtime_line(runtime: Mapping[str, Any]) -> str:
    """The llama.cpp settings and how the system prompt got into the context."""
    facts = []
    if "flash_attn" in runtime:
        facts.append(f"flash_attn {'on' if runtime['flash_attn'] else 'off'}")
    for key in ("n_batch", "n_ubatch", "kv_type", "n_ctx", "decoder"):
        if key in runtime:
            facts.append(f"{key} {runtime[key]}")
    prefix = runtime.get("system_prompt")
    if isinstance(prefix, Mapping):
        facts.append(prompt_arrival(prefix))
    return " · ".join(facts)


def prompt_arrival(prefix: Mapping[str, Any]) -> str:
    """`system prompt 1,204 tokens loaded from the prompt cache in 0.1 s` and the like."""
    how = {"loaded": "loaded from the prompt cache", "evaluated": "evaluated", "present": "already in the context",
           "stopped": "evaluation stopped"}.get(str(prefix.get("status")), str(prefix.get("status")))
    text = f"system prompt {int(prefix.get('tokens') or 0):,} tokens {how}"
    if prefix.get("seconds"):
        text += f" in {float(prefix['seconds']):.1f} s"
    if prefix.get("status") == "evaluated" and prefix.get("file"):
        text += " (saved to the prompt cache)"
    if prefix.get("note"):
        text += f" ({prefix['note']})"
    return text


def progress_line(done: int, total: int, seconds_left: float) -> str:
    """`reading the prompt: 640 of 1,204 tokens, about 9 s left`."""
    left = f", about {seconds_left:.0f} s left" if seconds_left >= 0.5 and done < total else ""
    return f"reading the prompt: {done:,} of {total:,} tokens{left}"
