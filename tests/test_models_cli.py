"""`appliance models ...` and the one-line errors a bad model file gets on the command line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from appliance.cli import main
from appliance.config import CHECKOUT_DIR
from appliance.llm.catalog import load_imported


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("appliance: ") and "Traceback" not in err
    return lines[0]


def test_list_on_an_empty_folder(tmp_models, capsys):
    code, out, _ = run_cli(capsys, "models", "list")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith(("qwen", "smollm2"))}
    assert set(rows) == {"qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct"}
    assert all(line.endswith("not installed") for line in rows.values())
    assert "(default)" in rows["qwen2.5-coder-1.5b-instruct"]
    assert f"models folder: {tmp_models}" in out


def test_import_of_a_catalog_file_installs_it_under_its_name(tmp_models, tmp_path, smollm2_path, capsys):
    usb = tmp_path / "usb" / "whatever.gguf"
    usb.parent.mkdir()
    shutil.copyfile(smollm2_path, usb)
    code, out, _ = run_cli(capsys, "models", "import", str(usb))
    assert code == 0 and "is the catalog model smollm2-135m-instruct" in out
    assert (tmp_models / "smollm2-135m-instruct-q4_1.gguf").stat().st_size == 98_362_432
    code, out, _ = run_cli(capsys, "models", "list")
    smol = next(line for line in out.splitlines() if line.startswith("smollm2"))
    assert smol.endswith("verified")
    code, out, _ = run_cli(capsys, "models", "verify")
    assert code == 0 and out.strip() == "smollm2-135m-instruct: verified"
    code, out, _ = run_cli(capsys, "models", "rm", "tiny")
    assert code == 0 and not (tmp_models / "smollm2-135m-instruct-q4_1.gguf").exists()


def test_import_verify_and_remove_an_own_model(tmp_models, tmp_path, make_gguf, capsys):
    source = make_gguf(tmp_path / "My-Model.gguf", architecture="qwen2", context_length=4096)
    code, out, _ = run_cli(capsys, "models", "import", str(source))
    assert code == 0 and "imported my-model (qwen2, trained context 4,096" in out
    [record] = load_imported(tmp_models)
    assert record.path == str(tmp_models / "my-model.gguf") and record.header["architecture"] == "qwen2"
    code, out, _ = run_cli(capsys, "models", "list")
    assert any(line.startswith("my-model") and line.endswith("verified") for line in out.splitlines())

    with open(tmp_models / "my-model.gguf", "r+b") as handle:  # the copy changes behind our back
        handle.seek(-4, os.SEEK_END)
        handle.write(b"XXXX")
    code, out, err = run_cli(capsys, "models", "verify", "my-model")
    assert code == 1 and "my-model: FAILED" in out

    code, out, _ = run_cli(capsys, "models", "rm", "my-model")
    assert code == 0 and load_imported(tmp_models) == [] and not (tmp_models / "my-model.gguf").exists()


def test_import_refuses_a_catalog_name(tmp_models, tmp_path, make_gguf, capsys):
    source = make_gguf(tmp_path / "x.gguf")
    code, _, err = run_cli(capsys, "models", "import", str(source), "--name", "small")
    assert code == 2 and "is a catalog model name" in one_line_error(err)


def test_unknown_and_not_installed_names(tmp_models, capsys):
    code, _, err = run_cli(capsys, "models", "pull", "gpt-5")
    assert code == 2 and "no model called 'gpt-5'" in one_line_error(err)
    code, _, err = run_cli(capsys, "models", "verify", "small")
    assert code == 3 and "run: appliance models pull qwen2.5-coder-0.5b-instruct" in one_line_error(err)
    code, _, err = run_cli(capsys, "models", "rm", "small")
    assert code == 3 and "is not installed" in one_line_error(err)


# --- bad model files: each gets one line naming the file and the reason ------------------------------

def _bad_files(tmp_path: Path, smollm2_path: Path) -> dict[str, tuple[Path, str]]:
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    magic = tmp_path / "magic.gguf"
    magic.write_bytes(b"<html>not a model</html>" * 10)
    truncated = tmp_path / "truncated.gguf"
    with open(smollm2_path, "rb") as src, open(truncated, "wb") as dst:
        dst.write(src.read(50_000_000))
    folder = tmp_path / "folder.gguf"
    folder.mkdir()
    return {
        "empty": (empty, "is empty (0 bytes)"),
        "wrong magic": (magic, "is not a GGUF file"),
        "truncated": (truncated, "is truncated"),
        "directory": (folder, "is a directory"),
        "missing": (tmp_path / "nowhere.gguf", "does not exist"),
    }


def test_bad_files_on_import(tmp_models, tmp_path, smollm2_path, capsys):
    for label, (path, reason) in _bad_files(tmp_path, smollm2_path).items():
        code, out, err = run_cli(capsys, "models", "import", str(path))
        line = one_line_error(err)
        assert code == 3, label
        assert str(path) in line and reason in line, (label, line)
    assert load_imported(tmp_models) == []


def test_bad_files_when_asking(tmp_path, tmp_home, smollm2_path):
    """The real user path, in fresh processes: `appliance ask --model PATH` with each bad file."""
    cases = _bad_files(tmp_path, smollm2_path)
    running = {
        label: subprocess.Popen(
            [sys.executable, "-m", "appliance.cli", "ask", "--json", "--model", str(path), "why is it slow?"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=CHECKOUT_DIR,
        )
        for label, (path, _) in cases.items()
    }
    for label, process in running.items():
        _, stderr = process.communicate(timeout=120)
        path, reason = cases[label]
        line = one_line_error(stderr)
        assert process.returncode == 3, (label, stderr)
        assert f"model file {path}" in line and reason in line, (label, line)


def test_unusable_models_folder_is_one_line(tmp_path, monkeypatch, make_gguf, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("APPLIANCE_MODELS_DIR", str(blocker / "models"))
    code, _, err = run_cli(capsys, "models", "pull", "tiny")
    assert code == 3 and "cannot create the models directory" in one_line_error(err)
    code, _, err = run_cli(capsys, "models", "import", str(make_gguf(tmp_path / "x.gguf")))
    assert code == 3 and "Not a directory" in one_line_error(err)
