"""Load a GGUF through llama.cpp, and open the chat model a run uses.

`load_llama` is the only place that constructs `llama_cpp.Llama`: an explicit context length (the
library default of 512 is far too small for a ReAct transcript), threads from the physical cores
(the library default is half the logical CPUs), mmap on, and llama.cpp's log silenced unless the
person asked for --verbose (its log would scribble over the TUI). `open_chat_model` does everything
a run needs before that: resolve which model, check the file and its hash, check the memory, then
wrap the loaded model with the adaptive thread policy.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import threading
import time
from collections import deque
from pathlib import Path
from typing import Callable, Mapping

from appliance.config import Paths
from appliance.errors import ModelError
from appliance.llm.base import ChatModel, ModelInfo
from appliance.llm.catalog import Catalog, ResolvedModel, load_catalog, model_spec, resolve_model
from appliance.llm.gguf import GGUFInfo, check_file, kv_cache_bytes
from appliance.llm.memory import MemoryReading, check_memory, ensure_memory, estimate_need, read_memory
from appliance.llm.prompt_cache import PromptCache
from appliance.llm.pull import file_sha256
from appliance.llm.remotes import find_remote
from appliance.llm.speed import SpeedSettings
from appliance.llm.threads import AdaptiveThreadPolicy, FixedThreadPolicy, physical_cores

DEFAULT_CONTEXT = 8192
ENV_THREADS = "APPLIANCE_THREADS"  # a fixed thread count instead of the adaptive choice
ENV_IGNORE_MEMORY = "APPLIANCE_IGNORE_MEMORY"  # load even when the memory check says no
ENV_PROMPT_CACHE = "APPLIANCE_PROMPT_CACHE"  # 0: never read or write the prompt cache
PROMPT_CACHE_DIR = "prompt-cache"

# ctypes callbacks must outlive the C library's use of them: keep the one we install. The quiet
# callback still keeps the last lines, so a refused file can be explained with llama.cpp's reason.
_quiet_callback = None
_recent_log: deque[str] = deque(maxlen=64)


def _import_llama_cpp():
    try:
        import llama_cpp
    except ImportError as exc:
        raise ModelError(
            f"llama-cpp-python is not installed or cannot be imported ({exc}); run: bash scripts/setup.sh"
        ) from None
    return llama_cpp


def set_llama_log(verbose: bool) -> None:
    """Route llama.cpp's log to stderr (verbose) or nowhere."""
    global _quiet_callback
    llama_cpp = _import_llama_cpp()
    if verbose:
        from llama_cpp import _logger

        llama_cpp.llama_log_set(_logger.llama_log_callback, ctypes.c_void_p(0))
        return
    if _quiet_callback is None:

        def keep(level: int, text: bytes, user_data) -> None:
            _recent_log.append(text.decode("utf-8", errors="replace") if text else "")

        _quiet_callback = llama_cpp.llama_log_callback(keep)
    llama_cpp.llama_log_set(_quiet_callback, ctypes.c_void_p(0))


def load_llama(path: str | Path, *, n_ctx: int, n_threads: int, n_threads_batch: int | None = None,
               verbose: bool = False, speed: SpeedSettings | None = None):
    """Load a GGUF with llama.cpp; anything llama.cpp refuses becomes a one-line ModelError.

    Quiet without redirecting file descriptors: llama-cpp-python's own `verbose=False` points fds 1
    and 2 at /dev/null while it loads, which blanks a running TUI (the TUI loads the model in a
    worker while its screen is up). Instead llama.cpp's log goes to the quiet callback, the
    library's Python-level prints during construction go to a discarded buffer, and `verbose` is
    switched off on the object afterwards.
    """
    llama_cpp = _import_llama_cpp()
    speed = speed or SpeedSettings()
    set_llama_log(verbose)
    _recent_log.clear()
    try:
        with contextlib.ExitStack() as stack:
            if not verbose:
                sink = io.StringIO()
                stack.enter_context(contextlib.redirect_stdout(sink))
                stack.enter_context(contextlib.redirect_stderr(sink))
            stack.enter_context(_model_params(llama_cpp, use_extra_bufts=speed.extra_buffers))
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=int(n_ctx),
                n_batch=min(speed.n_batch, int(n_ctx)),
                n_ubatch=min(speed.n_ubatch, speed.n_batch, int(n_ctx)),
                flash_attn=speed.flash_attn,
                type_k=speed.kv_type_id(),
                type_v=speed.kv_type_id(),
                n_threads=int(n_threads),
                n_threads_batch=int(n_threads_batch or n_threads),
                n_gpu_layers=0,
                use_mmap=True,
                verbose=True,  # see above: False would redirect the process's file descriptors
            )
    except (ValueError, RuntimeError, OSError, AssertionError) as exc:
        reason = _log_reason() or (str(exc).strip().splitlines() or [exc.__class__.__name__])[0]
        raise ModelError(f"llama.cpp could not load model file {path}: {reason}") from None
    llama.verbose = verbose  # no per-call prints from the library unless asked for
    return llama


_params_lock = threading.Lock()


@contextlib.contextmanager
def _model_params(llama_cpp, **overrides):
    """Model parameters `llama_cpp.Llama` has no argument for (use_extra_bufts), set by wrapping
    the library's default-parameter function while one model is constructed."""
    module = llama_cpp.llama_cpp
    with _params_lock:
        original = module.llama_model_default_params

        def patched():
            params = original()
            for name, value in overrides.items():
                setattr(params, name, value)
            return params

        module.llama_model_default_params = patched
        try:
            yield
        finally:
            module.llama_model_default_params = original


def _log_reason() -> str | None:
    """llama.cpp's own explanation of a failed load, from the log lines it just wrote."""
    for line in reversed("".join(_recent_log).splitlines()):
        if "error loading model:" in line:
            return line.split("error loading model:", 1)[1].strip()
    return None


def memory_need(info: GGUFInfo, n_ctx: int) -> int:
    return estimate_need(info.size, kv_cache=kv_cache_bytes(info, n_ctx), n_ctx=n_ctx)


def _smaller_installed(resolved: ResolvedModel, catalog: Catalog, models_dir: Path) -> list[tuple[str, int]]:
    """(name, bytes needed) of smaller catalog models that are installed, largest first."""
    size = resolved.expected_size or (resolved.path.stat().st_size if resolved.path.exists() else 0)
    options = []
    for entry in sorted(catalog.entries, key=lambda e: -e.size):
        path = entry.path_in(models_dir)
        if entry.size >= size or not path.is_file():
            continue
        try:
            options.append((entry.name, memory_need(check_file(path, expected_size=entry.size), entry.context_length)))
        except ModelError:
            continue
    return options


def check_model_memory(resolved: ResolvedModel, info: GGUFInfo, n_ctx: int, *, catalog: Catalog,
                       models_dir: Path, reading: MemoryReading) -> None:
    """Refuse (NotEnoughMemory, a ModelError) a model that would push the machine into swap, naming
    the largest smaller installed catalog model that would fit."""
    needed = memory_need(info, n_ctx)
    if check_memory(needed, reading).fits:
        return
    ensure_memory(resolved.name, needed, reading, _smaller_installed(resolved, catalog, models_dir))


def _check_hash(resolved: ResolvedModel, models_dir: Path) -> str:
    sha = file_sha256(resolved.path, models_dir)
    if resolved.sha256 and sha != resolved.sha256:
        how = f"appliance models pull {resolved.name}" if resolved.origin != "imported" else "import it again"
        raise ModelError(
            f"model file {resolved.path} does not match its recorded sha256 (corrupt or replaced); {how}"
        )
    return sha


def default_thread_policy(env: Mapping[str, str], cores: int) -> Callable[[], tuple[int, int]]:
    """$APPLIANCE_THREADS as a fixed count, else the adaptive choice from the idle cores."""
    fixed = env.get(ENV_THREADS, "").strip()
    if not fixed:
        return AdaptiveThreadPolicy(cores)
    if not fixed.isdigit() or int(fixed) < 1:
        raise ModelError(f"{ENV_THREADS} must be a positive whole number, not {fixed!r}")
    return FixedThreadPolicy(int(fixed))


def open_chat_model(
    spec: str | None,
    *,
    paths: Paths,
    verbose: bool = False,
    decoder: str = "fast",
    env: Mapping[str, str] | None = None,
    n_ctx: int | None = None,
    thread_policy: Callable[[], tuple[int, int]] | None = None,
    memory_reader: Callable[[], MemoryReading] = read_memory,
    catalog: Catalog | None = None,
) -> ChatModel:
    """Resolve --model / APPLIANCE_MODEL / default, check the file, its hash and the memory, load it
    and wrap it as the ChatModel the engine drives. A remote entry (`appliance models add-remote`)
    opens its server's model instead."""
    env = os.environ if env is None else env
    catalog = catalog or load_catalog()
    remote = find_remote(paths.models_dir, model_spec(spec, env, catalog))
    if remote is not None:  # served over the network: no file, hash or memory to check here
        from appliance.llm.remote_model import open_remote

        return open_remote(remote, env)
    resolved = resolve_model(spec, models_dir=paths.models_dir, catalog=catalog, env=env)
    info = check_file(resolved.path, expected_size=resolved.expected_size)
    context = int(n_ctx or resolved.context_length or min(info.context_length or DEFAULT_CONTEXT, DEFAULT_CONTEXT))
    if not env.get(ENV_IGNORE_MEMORY):
        check_model_memory(resolved, info, context, catalog=catalog, models_dir=paths.models_dir,
                           reading=memory_reader())
    sha = _check_hash(resolved, paths.models_dir)

    cores = physical_cores()
    thread_policy = thread_policy or default_thread_policy(env, cores)
    speed = SpeedSettings.from_env(env)
    started = time.perf_counter()
    llama = load_llama(resolved.path, n_ctx=context, n_threads=cores, verbose=verbose, speed=speed)
    load_seconds = time.perf_counter() - started
    from appliance.llm.chat_model import LlamaChatModel  # written by the decoder area; loaded lazily

    model_info = ModelInfo(name=resolved.name, path=str(resolved.path), size=info.size, sha256=sha,
                           context_length=context)
    return LlamaChatModel(llama, model_info, decoder=decoder, thread_policy=thread_policy, lookup=speed.lookup,
                          prompt_cache=prompt_cache_for(paths, env), runtime=speed.as_dict(),
                          load_seconds=load_seconds)


def prompt_cache_for(paths: Paths, env: Mapping[str, str]) -> PromptCache | None:
    """The prompt cache under the data directory, unless $APPLIANCE_PROMPT_CACHE is 0."""
    if env.get(ENV_PROMPT_CACHE, "").strip() == "0":
        return None
    return PromptCache(paths.home / PROMPT_CACHE_DIR)
