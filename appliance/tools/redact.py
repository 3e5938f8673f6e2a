"""One redactor for every observation: secrets never reach the model, the database or the screen.

`redact(text)` is the one entry point: the tools call it on what they show, the registry's guard
on every result (`redact_value`), the engine on the question, the store on everything it writes
and the export on everything it writes out. Each secret is replaced by a marker that names its kind
(`[REDACTED:aws-access-key]`), so the model still learns that, say, a password is configured in a
file, without ever seeing it. Redacting twice changes nothing more.

Evidence that only looks like a secret (public keys, certificates, fingerprints, checksums,
placeholders) is set aside first and put back last (`evidence`). The passes, in order (each in `appliance.tools.redaction`): private key blocks (by state across
lines), passwords and tokens in URLs (parsed), tokens whose shape gives them away (the project's
table after the gitleaks rule set, and Yelp's detect-secrets regex plugins), masked to the token's
end; tokens split across two lines; secrets only a line's structure gives away (credential files,
SQL, protocol traces, `name:`/`value:` pairs, long values after a secret word in prose); values their
place in a structure gives away (`values`: the next element or list under a secret name, CDATA, any
Authorization scheme, tokens in log fields, recovery codes, mnemonics); commands quoted in text and
logged commands (auditd, sudo, shell histories), redacted as argument vectors (`cmdline`, which the
process tools call on /proc/PID/cmdline directly, and which keeps a word only when `harmless` shows
it is no secret); values of keys that name a secret (detect-secrets' keyword list and its keyword
detector as a second opinion); Kingfisher's rule set (`engine`); and last random-looking bare tokens
and base64 that decodes to a credential. Speed: scripts/bench_redact.py (`--log-mb 50 --baseline main`).
"""

from __future__ import annotations

from typing import Any

from appliance.tools.redaction import MARKER_PREFIX, marker
from appliance.tools.redaction.blocks import redact_key_blocks
from appliance.tools.redaction.command_text import redact_command_text
from appliance.tools.redaction.engine import redact_engine
from appliance.tools.redaction.evidence import shield, unshield
from appliance.tools.redaction.keys import redact_keys
from appliance.tools.redaction.names import PLACEHOLDER, classify, secret_kind, secretish
from appliance.tools.redaction.split import redact_split
from appliance.tools.redaction.structured import redact_structured
from appliance.tools.redaction.tokens import redact_bare, redact_tokens, shannon_entropy
from appliance.tools.redaction.urls import redact_urls
from appliance.tools.redaction.values import redact_values

__all__ = ["redact", "redact_blocks", "redact_value", "marker", "looks_random", "shannon_entropy"]

_PLACEHOLDER = PLACEHOLDER  # the values under a secret name that are left alone (`${DB_PASSWORD}`, `<token>`)
looks_random = secretish


def redact(text: str) -> str:
    """Replace every secret in `text` by a marker naming its kind. Never raises."""
    if not text:
        return text
    text, kept = shield(text)
    for step in _PASSES:
        text = step(text)
    return unshield(text, kept)


_PASSES = (redact_key_blocks, redact_urls, redact_tokens, redact_split, redact_structured, redact_values, redact_command_text, redact_keys, redact_engine,
           redact_bare)


def redact_blocks(text: str) -> str:
    """Only the multi-line secrets (private key blocks), for tools that go on to handle text line
    by line, where a key's body lines would no longer look like a key."""
    return redact_key_blocks(text)


def redact_value(obj: Any) -> Any:
    """Redact every string inside nested dicts/lists/tuples. A value under a secret-named key
    (`{"password": "x"}`) is replaced whole, whatever its type: structured data has no `=` to find."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {_key(key): _under(key, value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [redact_value(item) for item in obj]
    if isinstance(obj, tuple):
        return tuple(redact_value(item) for item in obj)
    return obj


def _key(key: Any) -> Any:
    return redact(key) if isinstance(key, str) else key


def _under(key: Any, value: Any) -> Any:
    """`value` as stored under `key`: masked whole when the key names a secret."""
    if isinstance(key, str) and isinstance(value, (str, int, float)) and not isinstance(value, bool) and value != "":
        kind = classify(key)
        text = str(value)
        if text.startswith(MARKER_PREFIX):
            return value
        if kind == "secret" and not PLACEHOLDER.match(text) or kind == "maybe" and secretish(text):
            return marker(secret_kind(key) if kind == "secret" else "high-entropy-secret")
    return redact_value(value)
