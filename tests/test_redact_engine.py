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
