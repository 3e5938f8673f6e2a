"""The guard that keeps `pytest -m "not model"` free of real models: while a test without the
`model` marker runs, every GGUF load through llama.cpp is refused and written down, so the test
fails however the code under test handles the refusal.

conftest.py installs it in the test process and puts this folder on PYTHONPATH, so the same guard
runs in the appliance processes a test starts (Python imports `sitecustomize` at start-up). The
conftest's fixture names the record file in APPLIANCE_TEST_NO_GGUF for the test's duration; a
refused load in a child process also ends that process (exit 86), since a CLI would otherwise turn
the refusal into an ordinary one-line model error.
"""

from __future__ import annotations

import importlib.abc
import os
import sys

ENV = "APPLIANCE_TEST_NO_GGUF"
EXIT_CODE = 86
_LOADERS = ("llama_model_load_from_file", "llama_load_model_from_file")


class GGUFLoadRefused(RuntimeError):
    """A real model load in a test without the `model` marker."""


def _guarded(original, exit_on_refusal: bool):
    def load(path_model, *args, **kwargs):
        record = os.environ.get(ENV)
        if not record:
            return original(path_model, *args, **kwargs)
        path = path_model.decode(errors="replace") if isinstance(path_model, bytes) else str(path_model)
        with open(record, "a", encoding="utf-8") as out:
            out.write(f"{path} (pid {os.getpid()})\n")
        message = f"a GGUF load ({path}) in a test without the `model` marker"
        if exit_on_refusal:
            print(f"gguf guard: refused {message}", file=sys.stderr, flush=True)
            os._exit(EXIT_CODE)
        raise GGUFLoadRefused(message)

    load.gguf_guarded = True
    return load


def _wrap(module, exit_on_refusal: bool) -> None:
    for name in _LOADERS:
        original = getattr(module, name, None)
        if original is not None and not getattr(original, "gguf_guarded", False):
            setattr(module, name, _guarded(original, exit_on_refusal))


class _Finder(importlib.abc.MetaPathFinder):
    """Wraps llama.cpp's model loaders as soon as `llama_cpp.llama_cpp` is imported (the library
    stays lazily imported: the guard itself never imports it)."""

    gguf_guard = True  # the same guard may be loaded twice (as sitecustomize and as support.gguf_guard)

    def __init__(self, exit_on_refusal: bool) -> None:
        self.exit_on_refusal = exit_on_refusal

    def find_spec(self, name, path, target=None):
        if name != "llama_cpp.llama_cpp":
            return None
        for finder in sys.meta_path:
            if getattr(finder, "gguf_guard", False) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                break
        else:
            return None
        run_module = spec.loader.exec_module
        exit_on_refusal = self.exit_on_refusal

        def exec_module(module):
            run_module(module)
            _wrap(module, exit_on_refusal)

        spec.loader.exec_module = exec_module
        return spec


def install(*, exit_on_refusal: bool) -> None:
    loaded = sys.modules.get("llama_cpp.llama_cpp")
    if loaded is not None:
        _wrap(loaded, exit_on_refusal)
    elif not any(getattr(finder, "gguf_guard", False) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder(exit_on_refusal))


if __name__ == "sitecustomize" and os.environ.get(ENV):
    install(exit_on_refusal=True)
