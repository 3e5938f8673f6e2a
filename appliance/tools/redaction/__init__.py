"""The pieces of the one redactor (`appliance.tools.redact.redact` is the only entry point).

Each module masks one family of secrets and knows nothing of the others:
- `blocks`: private key blocks (PEM, OpenSSH, SSH2, PuTTY), by state across lines, so a block whose
  BEGIN line fell outside a log window is still masked;
- `tokens`: secrets whose shape gives them away wherever they appear (cloud and API tokens, from the
  project's rules, the gitleaks rule set's shapes and detect-secrets' regex plugins), random-looking
  bare tokens, and base64 blobs that decode to credentials;
- `urls`: passwords in URLs, found by parsing the URL (a password may contain `@` or `/`);
- `keys`: values given to a key that names a secret, in any of the forms configuration files,
  logs and command lines use, masked to the value's end.
"""

MARKER_PREFIX = "[REDACTED"


def marker(kind: str) -> str:
    """The text that replaces a secret of this kind."""
    return f"[REDACTED:{kind}]"
