"""The rule-rich engine (Kingfisher, appliance.tools.redaction.engine) runs inside the redactor:
a vendor token that only its rules know is masked, and ordinary text is left alone."""

from appliance.tools.redact import redact
from appliance.tools.redaction import engine


def test_the_engine_is_installed_and_masks_what_its_rules_know():
    assert engine.available(), "kingfisher-secret-scanner is a dependency (pyproject.toml)"
    token = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6"
    text = f"deploy used {token} for the push"
    assert token not in engine.redact_engine(text) and token not in redact(text)
    assert engine.redact_engine("Dec  7 05:00:01 h systemd[1]: Started nginx.service.") == \
        "Dec  7 05:00:01 h systemd[1]: Started nginx.service."


def test_offsets_hold_after_non_ascii_text():
    token = "ghp_" + "Zz3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6"
    out = engine.redact_engine(f"Größe ✓ {token} ende")
    assert token not in out and out.startswith("Größe ✓ [REDACTED") and out.endswith(" ende")


def test_rules_loaded_early_on_their_own_thread_serve_the_first_scan(tmp_path, monkeypatch):
    """`warm` (what `appliance check THING` calls first) loads the rules beside the caller's work;
    the scan after it masks as one without it does. A fresh cache folder makes this a real load."""
    monkeypatch.setenv("KF_RULE_CACHE_DIR", str(tmp_path / "rules"))
    monkeypatch.setattr(engine, "_SCANNER", None)
    monkeypatch.setattr(engine, "_WARMING", None)
    engine.warm()
    first = engine._WARMING
    assert first is not None and first.name == "kingfisher-rules"
    engine.warm()
    assert engine._WARMING is first  # one load, however often it is asked for
    token = "ghp_" + "Qq3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6"
    assert token not in engine.redact_engine(f"pushed with {token}")
    engine.settle()
    assert not engine._WARMING.is_alive() and engine._SCANNER is not None
    assert list((tmp_path / "rules").iterdir())  # the load it made was stored for the next process
