"""An X.509 certificate or chain, read with `cryptography` (what `openssl x509 -noout -text`
shows): subject, issuer, validity with the days left, the key's type and size.

Why: "certificate has expired" and "unable to get local issuer certificate" are answered by the
dates and the order of the chain, which the file's text does not show a person. A certificate is
public; a private key is never passed here (content_kind refuses it first).
"""

from __future__ import annotations

import datetime as dt

MAX_CERTS = 6


def _key(cert) -> str:
    from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa

    key = cert.public_key()
    if isinstance(key, rsa.RSAPublicKey):
        return f"RSA {key.key_size} bits"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return f"EC {key.curve.name} ({key.key_size} bits)"
    if isinstance(key, dsa.DSAPublicKey):
        return f"DSA {key.key_size} bits"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "Ed25519"
    if isinstance(key, ed448.Ed448PublicKey):
        return "Ed448"
    return type(key).__name__


def describe(cert, now: dt.datetime) -> dict:
    before, after = cert.not_valid_before_utc, cert.not_valid_after_utc
    left = (after - now).total_seconds() / 86400
    out = {"subject": cert.subject.rfc4514_string(), "issuer": cert.issuer.rfc4514_string(),
           "not_before": before.strftime("%Y-%m-%d %H:%M UTC"), "not_after": after.strftime("%Y-%m-%d %H:%M UTC"),
           "expired": left < 0, "public_key_type": _key(cert)}
    if left < 0:
        out["expired_days_ago"] = int(-left)
    else:
        out["days_left"] = int(left)
    if before > now:
        out["not_yet_valid"] = True
    return out


def certificates(sample: bytes) -> dict:
    """The certificates in PEM text (or one DER certificate), or {} when there are none. The
    library is imported only for a sample shaped like one (a twentieth of a second otherwise spent
    on every file profiled)."""
    if b"-----BEGIN CERTIFICATE-----" not in sample and sample[:2] != b"\x30\x82":
        return {}
    try:
        from cryptography import x509
    except ImportError:  # pragma: no cover - a dependency of the project
        return {"kind": "certificate (not decoded: the cryptography library is missing)"} if b"BEGIN CERTIFICATE" in sample else {}
    certs = []
    if b"-----BEGIN CERTIFICATE-----" in sample:
        end = sample.rfind(b"-----END CERTIFICATE-----")
        try:
            certs = x509.load_pem_x509_certificates(sample[: end + 25])
        except ValueError:
            return {"kind": "certificate (PEM), not decodable"}
    elif sample[:2] == b"\x30\x82":
        try:
            certs = [x509.load_der_x509_certificate(sample)]
        except ValueError:
            return {}
    if not certs:
        return {}
    now = dt.datetime.now(dt.timezone.utc)
    shown = [describe(c, now) for c in certs[:MAX_CERTS]]
    out: dict = {"kind": "X.509 certificate" if len(certs) == 1 else f"X.509 certificate chain ({len(certs)} certificates)",
                 "certificates": shown}
    if len(certs) > 1:
        out["chain_in_order"] = all(certs[i].issuer == certs[i + 1].subject for i in range(len(certs) - 1))
    return out
