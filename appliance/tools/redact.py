"""One redactor for every observation: secrets never reach the model, the database or the screen.

Each secret is replaced by a marker that names its kind (`[REDACTED:aws-access-key]`), so the model
still learns that, say, a password is configured in a file, without ever seeing it. The patterns are
compiled once at import, and each rule runs only when a cheap substring test says it could match:
`redact` runs on every observation of every step.

What is caught: private key blocks; cloud and API tokens with a recognisable shape (AWS, GitHub,
GitLab, Slack, Google, Stripe, OpenAI/Anthropic-style `sk-`, npm, PyPI, Hugging Face, SendGrid, age,
JWTs); crypt(3) password hashes; passwords inside URLs; `Authorization:` and `Cookie:` headers;
values assigned to keys that name a secret (`password=`, `DB_PASSWORD:`, `"token": "..."`,
`--password X`, `mysql -pX`); and high-entropy values assigned to keys that only *may* hold a
secret (`session_key=`, `auth=`, `signature=`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any, Callable


def marker(kind: str) -> str:
    """The text that replaces a secret of this kind."""
    return f"[REDACTED:{kind}]"


# --- shapes that are secrets wherever they appear -------------------------------------------------

_PRIVATE_KEY = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END \1-----|\Z)", re.S
)
_PUTTY_KEY = re.compile(r"PuTTY-User-Key-File-\d:.*?(?:Private-MAC: *[0-9a-fA-F]+|\Z)", re.S)

# (kind, literal text one of which every match contains (lower-cased), pattern)
TOKEN_KINDS: list[tuple[str, tuple[str, ...], str]] = [
    # No \b before the distinctive prefixes and none after greedy bodies: a token glued to other
    # text ("id:0ghp_...", "...KEYAKIA...") must still be caught; erring towards redaction is fine.
    ("aws-access-key", ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa"),
     r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}"),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"),
    ("gitlab-token", ("gl",), r"gl(?:pat|dt|rt|ptt|cbt|imt|oas|ft|soat|agent)-[A-Za-z0-9_\-]{20,}"),
    ("slack-webhook", ("hooks.slack.com",), r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]+"),
    ("slack-token", ("xox",), r"xox[abposre]-[A-Za-z0-9\-]{10,}"),
    ("google-api-key", ("aiza",), r"AIza[0-9A-Za-z_\-]{30,}"),
    ("google-oauth-secret", ("gocspx-",), r"GOCSPX-[A-Za-z0-9_\-]{20,}"),
    ("stripe-key", ("_live_", "_test_"), r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}"),
    ("api-key", ("sk-",), r"(?<![A-Za-z])sk-(?:proj-|ant-(?:api\d\d-)?|live-)?[A-Za-z0-9_\-]{20,}"),
    ("npm-token", ("npm_",), r"npm_[A-Za-z0-9]{36,}"),
    ("pypi-token", ("pypi-age",), r"pypi-AgE[A-Za-z0-9_\-]{50,}"),
    ("huggingface-token", ("hf_",), r"hf_[A-Za-z0-9]{30,}"),
    ("sendgrid-key", ("sg.",), r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,64}"),
    ("age-secret-key", ("age-secret-key-",), r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    ("jwt", ("eyj",), r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("password-hash", ("$",), r"\$(?:1|2[abxy]|5|6|y|gy|7)\$[^\s:$]{1,64}\$[^\s:]{8,}"),
]

# scheme://user:password@host  ->  scheme://user:[REDACTED:url-password]@host
_URL_PASSWORD = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@\"'<>]*):([^/\s@\"'<>]+)@")

# Authorization / Proxy-Authorization headers (the credential after the scheme word), cookies.
_AUTH_HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?:bearer|basic|token|digest|negotiate)[ \t]+)?)"
    r"(?!\[REDACTED)([^\s\"',;]{6,})"
)
_COOKIE_HEADER = re.compile(r"(?i)\b((?:set-)?cookie[ \t]*:[ \t]*)([^\r\n]+)")

# Keys whose value is a secret whatever it looks like. Long words may be glued to a prefix
# (PGPASSWORD, csrftoken); short ones need a separator before them (DB_PASS, but not bypass).
_SECRET_KEY_WORDS = (
    r"[A-Za-z0-9_.\-]*?(?:password|passwd|passphrase|secret|token|api[_\-]?key|access[_\-]?key(?:[_\-]?id)?"
    r"|private[_\-]?key|credentials?|connection[_\-]?string|account[_\-]?key)"
    r"|(?:[A-Za-z0-9_.\-]*[_.\-])?(?:pass|pwd|pw)"
)
_SECRET_KEY_NAME = re.compile(r"(?i)^(?:" + _SECRET_KEY_WORDS + r")$")
# Keys that only sometimes hold a secret: their value is redacted when it looks random.
_MAYBE_SECRET_KEY = re.compile(
    r"(?i)(?:^|[_.\-])(?:key|auth|session|sid|sig|signature|cookie|salt|hash|nonce|bearer|jwt|dsn|cert)$"
    r"|^[a-z]*(?:key|auth|session|signature|cookie|salt|nonce|bearer|jwt|dsn)$"
)
_KIND_OF_KEY = [
    (re.compile(r"(?i)pass|pwd|pw$"), "password"),
    (re.compile(r"(?i)private"), "private-key"),
    (re.compile(r"(?i)secret"), "secret"),
    (re.compile(r"(?i)token"), "token"),
    (re.compile(r"(?i)api[_\-]?key"), "api-key"),
    (re.compile(r"(?i)access[_\-]?key|account[_\-]?key"), "access-key"),
]
_PLACEHOLDER = re.compile(
    r"^(?:\*+|x+|\.+|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%\([a-z_]+\)s|none|null|nil|true|false|yes|no|required|optional)$",
    re.I,
)

# key = value, key: value, "key": "value", key="value with spaces", key => value. Only the key and
# separator are matched by the scan (so "was: db_password = x" cannot swallow the real key as a
# value); `_redact_assignments` then reads the value after a key whose name says secret.
_KEY_SEP = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?P<key>[A-Za-z][A-Za-z0-9_.\-]{1,63})(?P<sep>[\"']?[ \t]*(?::|=>?)[ \t]*)"
)
_KEY_HINTS = ("pass", "pw", "secret", "token", "key", "credential", "string", "auth", "session", "sid", "sig",
              "cookie", "salt", "hash", "nonce", "bearer", "jwt", "dsn", "cert")
_VALUE = re.compile(r"(?P<q>[\"'])(?P<qval>[^\"'\n]{1,500})(?P=q)|(?P<val>[^\s\"',;&<>)}\]]{1,500})")
# --password VALUE (space-separated command-line options)
_OPTION = re.compile(
    r"(?i)(?P<key>(?<!\S)--?(?:[a-z0-9]+-)*(?:password|passwd|pass|secret|token|api-key|apikey|auth-token))"
    r"(?P<sep>[ \t]+)(?P<val>(?!-)(?!\[REDACTED)\S+)"
)
# mysql -pSECRET / sshpass -p SECRET (for mysql, "-p DB" means "prompt"; redacting DB is harmless)
_GLUED_P = re.compile(r"(\b(?:mysql|mysqldump|mysqladmin|mariadb|sshpass)\b[^\n]*?\s-p[ \t]*)(?!\[REDACTED)(\S+)")


def shannon_entropy(value: str) -> float:
    """Bits per character: random base64 scores ~5-6, words and paths ~2.5-3.5."""
    if not value:
        return 0.0
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in Counter(value).values())


_CLASSES = [re.compile(p) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[+/=_\-]")]


def looks_random(value: str) -> bool:
    """A value that is probably a generated secret: long, mixed character classes, high entropy."""
    if len(value) < 16 or value.startswith("/"):
        return False  # short values and paths are not generated secrets
    classes = sum(bool(c.search(value)) for c in _CLASSES)
    return classes >= 3 and shannon_entropy(value) >= 3.7


def _kind_for_key(key: str) -> str:
    for pattern, kind in _KIND_OF_KEY:
        if pattern.search(key):
            return kind
    return "secret"


def _redact_assignments(text: str) -> str:
    out: list[str] = []
    done = 0
    for match in _KEY_SEP.finditer(text):
        if match.start() < done:
            continue  # inside a value already replaced
        key = match.group("key")
        lowered = key.lower()
        if not any(hint in lowered for hint in _KEY_HINTS):
            continue  # most keys (user=, pid=, time:) name nothing secret: skip the full checks
        secret = _SECRET_KEY_NAME.match(key)
        if not secret and not _MAYBE_SECRET_KEY.search(key):
            continue
        value_match = _VALUE.match(text, match.end())
        if value_match is None:
            continue
        quoted = value_match.group("qval") is not None
        value = (value_match.group("qval") if quoted else value_match.group("val")).strip()
        if value.startswith("[REDACTED") or _KEY_SEP.match(text, match.end()) and not quoted and \
                _KEY_SEP.match(text, match.end()).end() <= value_match.end():
            continue  # the "value" is itself the next key (key: other_key = value)
        if secret:
            if _PLACEHOLDER.match(value):
                continue
            kind = _kind_for_key(key)
        elif looks_random(value):
            kind = "high-entropy-secret"
        else:
            continue
        start, end = (value_match.start("qval"), value_match.end("qval")) if quoted else value_match.span("val")
        out.append(text[done:start])
        out.append(marker(kind))
        done = end
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def _option(match: re.Match) -> str:
    return f"{match.group('key')}{match.group('sep')}{marker(_kind_for_key(match.group('key')))}"


# (texts one of which must occur in the lower-cased text for the rule to run, regex, replacement)
_RULES: list[tuple[tuple[str, ...], re.Pattern, Callable[[re.Match], str] | str]] = [
    (("private key",), _PRIVATE_KEY, marker("private-key")),
    (("putty-user-key",), _PUTTY_KEY, marker("private-key")),
    (("://",), _URL_PASSWORD, lambda m: f"{m.group(1)}:{marker('url-password')}@"),
    *[(needles, re.compile(pattern), marker(kind)) for kind, needles, pattern in TOKEN_KINDS],
    (("authoriz",), _AUTH_HEADER, lambda m: f"{m.group(1)}{marker('auth-header')}"),
    (("cookie",), _COOKIE_HEADER, lambda m: f"{m.group(1)}{marker('cookie')}"),
    ((" -p",), _GLUED_P, lambda m: f"{m.group(1)}{marker('password')}"),
    (("-",), _OPTION, _option),
    (("=", ":"), _KEY_SEP, _redact_assignments),
]


def redact(text: str) -> str:
    """Replace every secret in `text` by a marker naming its kind. Never raises."""
    if not text:
        return text
    lowered = text.lower()
    for needles, regex, replacement in _RULES:
        if any(needle in lowered for needle in needles):
            text = replacement(text) if regex is _KEY_SEP else regex.sub(replacement, text)
    return text


def redact_blocks(text: str) -> str:
    """Only the multi-line secrets (private key blocks). For tools that go on to handle text line
    by line, where a key's body lines would no longer look like a key."""
    if "PRIVATE KEY" in text or "PuTTY-User-Key" in text:
        text = _PUTTY_KEY.sub(marker("private-key"), _PRIVATE_KEY.sub(marker("private-key"), text))
    return text


def redact_value(obj: Any) -> Any:
    """Redact every string inside nested dicts/lists/tuples. A value under a secret-named key
    (`{"password": "x"}`) is replaced whole, whatever its type: structured data has no `=` to find."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if (
                isinstance(key, str)
                and _SECRET_KEY_NAME.match(key)
                and isinstance(value, (str, int, float))
                and not isinstance(value, bool)
                and value != ""
                and not (isinstance(value, str) and value.startswith("[REDACTED"))
            ):
                out[key] = marker(_kind_for_key(key))
            else:
                out[redact(key) if isinstance(key, str) else key] = redact_value(value)
        return out
    if isinstance(obj, list):
        return [redact_value(item) for item in obj]
    if isinstance(obj, tuple):
        return tuple(redact_value(item) for item in obj)
    return obj
