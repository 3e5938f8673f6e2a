"""`appliance doctor`: can the appliance run on this machine, and if not, what to do about it.

Each check is a small function returning a `Check` value (ok / warn / fail, one line); the command
prints them as a checklist and a one-line verdict, and exits 0 only when nothing failed. Warnings
(no temperature sensors, a smaller model missing) never block: plenty of machines lack sensors.
"""

from __future__ import annotations

import os
import platform
import sqlite3
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from urllib.parse import quote

from appliance.commands.common import add_common_options
from appliance.config import Paths, resolve_paths
from appliance.errors import ApplianceError

OK, WARN, FAIL = "ok", "warn", "FAIL"
MB = 1024 * 1024


@dataclass(frozen=True)
class Check:
    status: str
    label: str
    detail: str


def register(subparsers) -> None:
    parser = subparsers.add_parser("doctor", help="check that this machine can run the appliance")
    add_common_options(parser)
    parser.set_defaults(handler=cmd_doctor)


def check_python() -> Check:
    version = platform.python_version()
    good = sys.version_info >= (3, 10)
    return Check(OK if good else FAIL, "python", f"{version} ({sys.executable})" + ("" if good else "; need 3.10+"))


def check_packages() -> list[Check]:
    checks = []
    for name, required in (("llama-cpp-python", True), ("textual", True), ("sqlite-utils", True), ("psutil", True),
                           ("detect-secrets", True)):
        try:
            checks.append(Check(OK, name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            checks.append(Check(FAIL if required else WARN, name, "not installed; run: bash scripts/setup.sh"))
    return checks


def check_llama_cpp() -> Check:
    try:
        import llama_cpp
    except Exception as exc:  # a broken build fails at import with many exception types
        return Check(FAIL, "llama.cpp", f"cannot be imported: {exc}")
    info = llama_cpp.llama_print_system_info().decode("utf-8", errors="replace").strip()
    features = [part.strip() for part in info.replace("|", ";").split(";") if "= 1" in part]
    return Check(OK, "llama.cpp", f"{llama_cpp.__version__}; CPU: " + (", ".join(features) or info))


def check_cpu_memory() -> list[Check]:
    import psutil

    from appliance.llm.threads import physical_cores

    logical = psutil.cpu_count(logical=True) or 0
    vm = psutil.virtual_memory()
    return [
        Check(OK, "cpu", f"{physical_cores()} physical cores, {logical} logical; load {psutil.getloadavg()[0]:.2f}"),
        Check(OK if vm.available > 512 * MB else WARN, "memory",
              f"{vm.available / MB:,.0f} MB available of {vm.total / MB:,.0f} MB"),
    ]


def check_sensors() -> list[Check]:
    """Which psutil readings this machine supports (tools report 'not available' for the rest)."""
    import psutil

    checks = []
    for label, reader in (("temperatures", getattr(psutil, "sensors_temperatures", None)),
                          ("fans", getattr(psutil, "sensors_fans", None)),
                          ("battery", getattr(psutil, "sensors_battery", None))):
        try:
            value = reader() if reader else None
        except Exception as exc:
            value, note = None, f"reading failed: {exc}"
        else:
            note = "not available on this machine"
        if value:
            detail = f"{sum(len(v) for v in value.values())} readings" if isinstance(value, dict) else "present"
            checks.append(Check(OK, f"sensor: {label}", detail))
        else:
            checks.append(Check(WARN, f"sensor: {label}", note))
    return checks


def check_data_dir(paths: Paths) -> Check:
    try:
        paths.home.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=paths.home, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check(FAIL, "data directory", f"{paths.home} is not writable: {exc.strerror or exc}")
    return Check(OK, "data directory", f"{paths.home} is writable (database {paths.db})")


def check_database(paths: Paths) -> Check:
    """The run database opens and passes SQLite's own consistency check (read-only: doctor never
    changes it). A missing database is fine: the first run creates it."""
    if not paths.db.exists():
        return Check(OK, "database", f"{paths.db} does not exist yet; the first run creates it")
    try:
        conn = sqlite3.connect(f"file:{quote(str(paths.db.absolute()))}?mode=ro", uri=True)
        try:
            rows = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return Check(FAIL, "database", f"{paths.db} cannot be read as a database ({exc}); move it aside and start afresh")
    if rows != ["ok"]:
        return Check(FAIL, "database", f"{paths.db} is damaged (quick_check: {'; '.join(rows[:2])}); move it aside")
    return Check(OK, "database", f"{paths.db} passes SQLite's quick_check")


def check_prompt_cache(paths: Paths) -> Check:
    """The prompt cache (the system prompt's saved KV state): its files and their size."""
    from appliance.llm.runtime import prompt_cache_for

    cache = prompt_cache_for(paths, os.environ)
    if cache is None:
        return Check(WARN, "prompt cache", "off ($APPLIANCE_PROMPT_CACHE=0): every start evaluates the system prompt")
    summary = cache.summary()
    return Check(WARN if "damaged" in summary else OK, "prompt cache", summary)


def check_models(paths: Paths, spec: str | None) -> list[Check]:
    """Every catalog model's state, then whether the model a run would use can be loaded."""
    from appliance.llm.catalog import load_catalog, model_spec, resolve_model
    from appliance.llm.gguf import check_file
    from appliance.llm.remotes import find_remote
    from appliance.llm.memory import check_memory, read_memory
    from appliance.llm.pull import verify
    from appliance.llm.runtime import memory_need

    try:
        catalog = load_catalog()
    except ApplianceError as exc:
        return [Check(FAIL, "catalog", exc.message)]
    checks = []
    for entry in catalog.entries:
        result = verify(entry, paths.models_dir)
        status = OK if result.ok else (WARN if result.state == "missing" else FAIL)
        checks.append(Check(status, f"model: {entry.name}", result.describe()))
    remote = find_remote(paths.models_dir, model_spec(spec, None, catalog))
    if remote is not None:
        return checks + [check_remote(remote)]
    try:
        resolved = resolve_model(spec, models_dir=paths.models_dir, catalog=catalog)
        info = check_file(resolved.path, expected_size=resolved.expected_size)
        n_ctx = resolved.context_length or 8192
        verdict = check_memory(memory_need(info, n_ctx), read_memory())
    except ApplianceError as exc:
        return checks + [Check(FAIL, "model to use", exc.message)]
    if not verdict.fits:
        return checks + [Check(FAIL, "model to use", verdict.message(resolved.name))]
    return checks + [Check(OK, "model to use", f"{resolved.name} ({resolved.path}); needs about "
                           f"{verdict.needed / MB:,.0f} MB, {verdict.available / MB:,.0f} MB available")]


def check_remote(entry) -> Check:
    """A remote model is ready when its server answers with the model list and serves it."""
    import os

    from appliance.llm.remote_model import open_remote

    try:
        model = open_remote(entry, os.environ)
        model.connect()
    except ApplianceError as exc:
        return Check(FAIL, "model to use", f"{entry.name}: {exc.message}")
    return Check(OK, "model to use", f"{entry.name}: {model.model_id} on {model.server_kind} at "
                                     f"{entry.url} (structured output: {model.structured})")


def run_checks(paths: Paths, spec: str | None) -> list[Check]:
    return ([check_python()] + check_packages() + [check_llama_cpp()] + check_cpu_memory()
            + [check_data_dir(paths), check_database(paths), check_prompt_cache(paths)] + check_models(paths, spec) + check_sensors())


def cmd_doctor(args) -> int:
    paths = resolve_paths(db=getattr(args, "db", None))
    checks = run_checks(paths, getattr(args, "model", None))
    width = max(len(c.label) for c in checks)
    for check in checks:
        print(f"[{check.status:^4}] {check.label.ljust(width)}  {check.detail}")
    failed = [c for c in checks if c.status == FAIL]
    if failed:
        print(f"verdict: NOT READY: {failed[0].label}: {failed[0].detail}"
              + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""))
        return 1
    print("verdict: ready; start it with: appliance" + (f" --model {args.model}" if getattr(args, "model", None) else ""))
    return 0
