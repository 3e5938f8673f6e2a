"""Remote models: catalog entries that name an OpenAI-compatible chat completions server.

A site's stronger machine serves a bigger model to every workstation (llama.cpp's `llama-server`,
llama-cpp-python's server, vLLM, Ollama). An entry records where it is and how to talk to it; it is
kept in `remote.json` beside the model files, like `imported.json`, and chosen with `--model NAME`.

What an entry never holds is the API key: only the name of the environment variable or the path of
the file it is read from when a run starts. So neither the entry, the run database nor an export
can carry it, and rotating a key needs no edit here.
"""

from __future__ import annotations

import json
import re
import stat
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping
from urllib.parse import urlsplit

from appliance.errors import ModelError, UsageError

REMOTE_FILE = "remote.json"
STRUCTURED_MODES = ("auto", "json_schema", "grammar")
DEFAULT_TIMEOUT = 120.0
DEFAULT_CONTEXT = 8192
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class Endpoint:
    """Where the server is: the one host and port the appliance ever connects to for it."""

    scheme: str
    host: str
    port: int
    base_path: str  # ends in /v1; the OpenAI routes hang below it

    @property
    def label(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}{self.base_path}"


def parse_url(url: str) -> Endpoint:
    """An http(s) URL of the server, with or without its trailing /v1.

    Refused: other schemes, a missing host, user:password@ (a secret in the catalog), a query or
    fragment (nothing the OpenAI routes take)."""
    text = (url or "").strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise UsageError(f"not a usable server URL {text!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"the server URL must be http://HOST[:PORT][/PATH] or https://…, not {text!r}")
    if parts.username or parts.password:
        raise UsageError("the server URL must not hold a user or password; use --api-key-env or --api-key-file")
    if parts.query or parts.fragment:
        raise UsageError(f"the server URL must not have a query or fragment: {text!r}")
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path += "/v1"
    default_port = 443 if parts.scheme == "https" else 80
    return Endpoint(parts.scheme, parts.hostname, port or default_port, path)


@dataclass(frozen=True)
class RemoteEntry:
    """One remote model. `model` empty: the server's only (or first) model.

    structured: how the step schema reaches the server — 'json_schema' (OpenAI `response_format`,
    understood by vLLM, Ollama, llama-server), 'grammar' (a GBNF `grammar`, llama.cpp servers), or
    'auto' (decided from what the server says it is on first contact)."""

    name: str
    url: str
    model: str = ""
    api_key_env: str = ""
    api_key_file: str = ""
    ca_file: str = ""
    structured: str = "auto"
    timeout: float = DEFAULT_TIMEOUT
    context_length: int = DEFAULT_CONTEXT
    added_at: str = ""

    @property
    def endpoint(self) -> Endpoint:
        return parse_url(self.url)


def check_entry(entry: RemoteEntry) -> RemoteEntry:
    """The entry with its URL normalised, or a one-line UsageError saying what is wrong."""
    if not _NAME.match(entry.name):
        raise UsageError(f"model name {entry.name!r} must be letters, digits, '.', '_' or '-' (at most 64)")
    if entry.structured not in STRUCTURED_MODES:
        raise UsageError(f"--structured must be one of {', '.join(STRUCTURED_MODES)}, not {entry.structured!r}")
    if entry.api_key_env and entry.api_key_file:
        raise UsageError("give the API key with --api-key-env or --api-key-file, not both")
    if entry.api_key_env and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", entry.api_key_env):
        raise UsageError(f"--api-key-env wants a variable name, not {entry.api_key_env!r}")
    if not 0 < entry.timeout <= 3600:
        raise UsageError(f"--timeout must be between 0 and 3600 seconds, not {entry.timeout:g}")
    if not 256 <= entry.context_length <= 1 << 20:
        raise UsageError(f"--context-length must be between 256 and 1048576, not {entry.context_length}")
    for label, path in (("--api-key-file", entry.api_key_file), ("--ca-file", entry.ca_file)):
        if path and not Path(path).is_file():
            raise UsageError(f"{label} {path} is not a readable file")
    return RemoteEntry(**{**asdict(entry), "url": parse_url(entry.url).url,
                          "api_key_file": _absolute(entry.api_key_file), "ca_file": _absolute(entry.ca_file)})


def _absolute(path: str) -> str:
    return str(Path(path).expanduser().resolve()) if path else ""


def read_api_key(entry: RemoteEntry, env: Mapping[str, str]) -> str | None:
    """The key, read now from its variable or file (None when the entry has none). The messages
    name where the key should be, never what it is."""
    if entry.api_key_env:
        value = env.get(entry.api_key_env, "").strip()
        if not value:
            raise ModelError(f"model {entry.name} takes its API key from ${entry.api_key_env}, which is not set")
        return value
    if entry.api_key_file:
        path = Path(entry.api_key_file)
        try:
            if path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise ModelError(f"the API key file {path} is readable by others; run: chmod 600 {path}")
            value = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ModelError(f"cannot read the API key file {path}: {exc.strerror}") from None
        if not value:
            raise ModelError(f"the API key file {path} is empty")
        return value
    return None


# --- the registry ------------------------------------------------------------------------------


def load_remotes(models_dir: Path) -> list[RemoteEntry]:
    path = Path(models_dir) / REMOTE_FILE
    if not path.exists():
        return []
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return [RemoteEntry(**item) for item in raw.get("models", [])]
    except (OSError, ValueError, TypeError) as exc:
        raise ModelError(f"remote-model registry {path} is unreadable: {exc}") from None


def save_remotes(models_dir: Path, entries: list[RemoteEntry]) -> None:
    from appliance.llm.catalog import write_atomically

    models_dir = Path(models_dir)
    models_dir.mkdir(parents=True, exist_ok=True)
    payload = json.dumps({"models": [asdict(e) for e in entries]}, indent=2) + "\n"
    write_atomically(models_dir / REMOTE_FILE, payload)


def find_remote(models_dir: Path, name: str) -> RemoteEntry | None:
    wanted = name.strip().lower()
    for entry in load_remotes(models_dir):
        if entry.name == wanted:
            return entry
    return None
