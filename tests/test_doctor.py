"""`appliance doctor`: the checklist, and exit 0 only when the appliance can run."""

from __future__ import annotations

from appliance.cli import main


def run_doctor(capsys, *argv: str) -> tuple[int, str]:
    code = main(["doctor", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out


def test_ready_with_an_installed_model(smollm2_path, tmp_home, capsys):
    code, out = run_doctor(capsys, "--model", "tiny")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[-1] == "verdict: ready; start it with: appliance --model tiny"
    labels = {line[7:].split("  ")[0].strip() for line in lines[:-1]}
    for label in ("python", "llama-cpp-python", "textual", "sqlite-utils", "psutil", "llama.cpp", "cpu",
                  "memory", "data directory", "model: smollm2-135m-instruct", "model to use",
                  "sensor: temperatures", "sensor: fans", "sensor: battery"):
        assert label in labels, label
    assert any(line.startswith("[ ok ] llama.cpp") and "CPU:" in line for line in lines)
    assert any(line.startswith("[ ok ] model: smollm2-135m-instruct") and line.endswith("verified") for line in lines)


def test_not_ready_without_the_model(tmp_models, tmp_home, capsys):
    code, out = run_doctor(capsys)
    assert code == 1
    assert out.splitlines()[-1].startswith("verdict: NOT READY: model to use: model qwen2.5-coder-1.5b-instruct "
                                          "is not installed")
    assert "run: appliance models pull qwen2.5-coder-1.5b-instruct" in out


def test_not_ready_when_the_data_directory_cannot_be_written(smollm2_path, tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("APPLIANCE_HOME", str(blocker / "home"))
    code, out = run_doctor(capsys, "--model", "tiny")
    assert code == 1
    assert "[FAIL] data directory" in out and "is not writable" in out
