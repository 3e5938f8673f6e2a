"""Evidence that looks like a secret but is none, kept out of the other passes' reach.

A troubleshooter that hides an SSH public key, a certificate, a key's fingerprint, a checksum
beside its file, a placeholder (`********`, `(sensitive value)`, `<redacted>`, `$(pass show x)`,
`${VAR}`), `using password: YES` or `token_type=bearer` hides what the person needs to see, and
none of them gives a secret away. Each such span is swapped for a short stand-in before the passes
run (`shield`), and put back after (`unshield`); the stand-ins count as placeholders to the key
rules (names.PLACEHOLDER), so `password=$(pass show db)` keeps its value. What a pass masks over a
stand-in stays masked: the safe direction.
"""

from __future__ import annotations

import re

STAND_IN = "\x00E{}\x00"
_STAND_IN = re.compile("\x00E(\\d+)\x00")

_B64 = r"[A-Za-z0-9+/]"
_EVIDENCE = re.compile(
    # certificate, public key and certificate request blocks: public by design
    r"-----BEGIN (?:TRUSTED |X509 )?(?:CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|CERTIFICATE REQUEST|NEW CERTIFICATE REQUEST|X509 CRL"
    r"|PGP PUBLIC KEY BLOCK|PGP SIGNATURE|SSH2 PUBLIC KEY)-----[\s\S]{0,20000}?-----END [A-Z0-9 ]+-----"
    r"|---- BEGIN SSH2 PUBLIC KEY ----[\s\S]{0,8000}?---- END SSH2 PUBLIC KEY ----"
    # an OpenSSH public key (authorized_keys, known_hosts, *.pub)
    rf"|(?<![\w-])(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp(?:256|384|521)|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com"
    rf"|ssh-(?:rsa|ed25519)-cert-v01@openssh\.com)[ \t]+AAAA{_B64}{{20,}}={{0,3}}"
    # fingerprints and digests that are named as such
    rf"|(?<![\w])(?:SHA256|SHA384|SHA512|sha256|sha384|sha512|sha1|SHA1|MD5|md5):(?:{_B64}{{27,86}}={{0,2}}|[0-9a-fA-F]{{32,128}}"
    r"|(?:[0-9a-fA-F]{2}:){15,63}[0-9a-fA-F]{2})(?![\w+/=])"
    # a checksum line: a hex digest, then the file it is of (sha256sum, md5sum, SHA256SUMS)
    r"|(?m:^[0-9a-f]{32,128}(?=[ \t]+\*?[\w./\-]+[ \t]*$))"
    # placeholders written where a secret is left out
    r"|\((?:sensitive value|sensitive|redacted|hidden|secret)\)|<(?i:redacted|hidden|secret|password|token|sensitive|your[_\-]\w{1,20})>(?![^\n]*</)"
    r"|\$\((?:pass|gopass|op|vault|cat|security|secret-tool|bw|lpass|keyring|aws|gcloud|az|kubectl)[ \t][^()\n$`;|&]{1,120}\)"
    r"|\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=?][^}\s]{0,40})?\}"
    # mysql's `(using password: YES)`, OAuth's `token_type=bearer`
    r"|(?i:using[ \t]+password:[ \t]*(?:yes|no)\b)"
    r"|(?i:[\"']?token_type[\"']?[ \t]*[:=][ \t]*[\"']?(?:bearer|mac|dpop|n_a|basic)\b[\"']?)"
)
_NEEDLES = ("-----BEGIN", "---- BEGIN", "ssh-", "ecdsa-", "sk-", "sha", "SHA", "md5", "MD5", "(", "<", "${", "$(", "token_type",
            "password", "PASSWORD", "Password")
_HEX_LINE = re.compile(r"(?m)^[0-9a-f]{32}")


def shield(text: str) -> tuple[str, list[str]]:
    """`text` with each piece of evidence replaced by a stand-in, and the pieces in order."""
    if not any(needle in text for needle in _NEEDLES) and not _HEX_LINE.search(text):
        return text, []
    kept: list[str] = []

    def stand_in(match: re.Match) -> str:
        kept.append(match.group(0))
        return STAND_IN.format(len(kept) - 1)

    return _EVIDENCE.sub(stand_in, text), kept


def unshield(text: str, kept: list[str]) -> str:
    """The stand-ins the passes left in place, put back."""
    if not kept:
        return text
    return _STAND_IN.sub(lambda match: kept[int(match.group(1))] if int(match.group(1)) < len(kept) else "", text)
