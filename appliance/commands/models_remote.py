"""`appliance models add-remote NAME URL …`: a model served by a site's inference server.

The entry is checked and stored without contacting the server (an air-gapped site often sets up the
workstations before the server is up); the first question contacts it, and `appliance ask` then
says in one line what is wrong if anything is.
"""

from __future__ import annotations

import datetime as _dt

from appliance.commands.common import add_common_options, command_paths
from appliance.errors import UsageError
from appliance.llm.catalog import find_imported, load_catalog
from appliance.llm.remotes import (
    DEFAULT_CONTEXT,
    DEFAULT_TIMEOUT,
    STRUCTURED_MODES,
    RemoteEntry,
    check_entry,
    load_remotes,
    save_remotes,
)


def register(actions) -> None:
    p = actions.add_parser(
        "add-remote", help="use a model served by an OpenAI-compatible server (llama-server, vLLM, Ollama, …)",
        description="Add a catalog entry for a model on an OpenAI-compatible chat completions server. "
                    "The API key is never stored: only where to read it from.")
    add_common_options(p)
    p.add_argument("name", help="the name to use it by (--model NAME)")
    p.add_argument("url", help="the server, e.g. http://gpu-box:8080 or https://llm.site.lan/v1")
    p.add_argument("--model-id", "--served-model", dest="model_id", default="", metavar="ID",
                   help="the server's name of the model (default: the one it serves first)")
    key = p.add_mutually_exclusive_group()
    key.add_argument("--api-key-env", default="", metavar="VAR", help="read the API key from $VAR at each run")
    key.add_argument("--api-key-file", default="", metavar="PATH",
                     help="read the API key from PATH (mode 600) at each run")
    p.add_argument("--ca-file", default="", metavar="PATH", help="trust the site's own CA (PEM) for https")
    p.add_argument("--structured", choices=STRUCTURED_MODES, default="auto",
                   help="how the step schema reaches the server: json_schema (response_format), grammar "
                        "(GBNF, llama.cpp servers) or auto (default: decided on first contact)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                   help=f"seconds to wait for the server at any moment (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--context-length", type=int, default=DEFAULT_CONTEXT, metavar="N",
                   help=f"the context the server runs the model with (default {DEFAULT_CONTEXT})")
    p.set_defaults(handler=cmd_add_remote)


def cmd_add_remote(args) -> int:
    catalog, paths = load_catalog(), command_paths(args)  # not models._context: no import circle
    # `--model` is the common option naming the model a run uses; here it may also give the served id.
    served = args.model_id or getattr(args, "model", None) or ""
    entry = check_entry(RemoteEntry(
        name=args.name.strip().lower(), url=args.url, model=served.strip(), api_key_env=args.api_key_env,
        api_key_file=args.api_key_file, ca_file=args.ca_file, structured=args.structured, timeout=args.timeout,
        context_length=args.context_length,
        added_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    ))
    if catalog.find(entry.name) is not None or find_imported(paths.models_dir, entry.name) is not None:
        raise UsageError(f"{entry.name!r} is already a local model's name; choose another")
    others = [e for e in load_remotes(paths.models_dir) if e.name != entry.name]
    save_remotes(paths.models_dir, others + [entry])
    key = (f", API key from ${entry.api_key_env}" if entry.api_key_env
           else f", API key from {entry.api_key_file}" if entry.api_key_file else "")
    print(f"added remote model {entry.name}: {entry.url}"
          f"{' model ' + entry.model if entry.model else ''}{key}, structured output {entry.structured}")
    print(f"use it with: appliance --model {entry.name}")
    return 0


def remote_rows(models_dir) -> list[tuple[str, str, str, str, str]]:
    """Rows for `models list`: the remote entries (no status: listing never contacts a server)."""
    return [(e.name, "", "remote", e.url + (f" ({e.model})" if e.model else ""), f"remote, {e.structured}")
            for e in load_remotes(models_dir)]


def remove_remote(models_dir, name: str) -> bool:
    entries = load_remotes(models_dir)
    kept = [e for e in entries if e.name != name.strip().lower()]
    if len(kept) == len(entries):
        return False
    save_remotes(models_dir, kept)
    return True
