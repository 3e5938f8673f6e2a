"""Which key names hold a secret, and which values under a doubtful name look like one.

Three kinds of name:
- a secret name (`password`, `DB_PASSWORD`, `PGPASSWORD`, `client_secret`, `api-key`, `bindpw`,
  `requirepass`, `psk`, `private_key_id`, `contraseña`, `passwort`, ...): its value is masked
  whatever it is, unless it is a placeholder (`${DB_PASSWORD}`, `<token>`, `none`);
- a name that only may hold one (`session_key`, `auth`, `signature`, `password_hash`, `pass`): its
  value is masked when it looks generated (`secretish`), so `password_min_length=8`,
  `pass: 12` and `token_url=https://...` stay readable;
- every other name: left alone.
The word list is detect-secrets' keyword detector's (its DENYLIST, which covers other languages),
plus words from common configuration files (redis, LDAP, WPA, keepalived, sssd) and more languages.
"""

from __future__ import annotations

import functools
import re
from typing import Callable

from detect_secrets.plugins.keyword import DENYLIST as DETECT_SECRETS_WORDS

from appliance.tools.redaction.tokens import shannon_entropy

_S = r"[_\-.]?"  # an optional separator inside a compound word
_OWN_WORDS = (
    "password", "passwd", "passphrase", "passwort", "kennwort", "senha", f"mot{_S}de{_S}passe", "wachtwoord",
    "has[łl]o", "l[öo]senord", "passord", "adgangskode", "salasana", "heslo", "jelsz[óo]", "[şs]ifre", "parola",
    "пароль", "密码", "密碼", "口令", "パスワード", "비밀번호", "contrase[ñn]a", "clave", "geheimnis",
    "secret", "secreto", "segreto", "token", f"api{_S}key", f"access{_S}key(?:{_S}id)?", f"private{_S}key(?:{_S}id)?",
    "credentials?", "creds", f"connection{_S}string", f"account{_S}key", f"auth{_S}key", f"service{_S}key",
    f"d(?:b|atabase){_S}(?:key|pass)", f"priv{_S}key", f"client{_S}key", f"key{_S}pass", "bindpw", "rootpw",
    "requirepass", "masterauth", "authtok", f"secret{_S}key", f"encryption{_S}key", f"signing{_S}key", f"master{_S}key",
    f"hmac{_S}key", f"license{_S}key", f"shared{_S}access{_S}key", f"pre{_S}shared{_S}key", "wpa_psk",
    f"auth{_S}pass", "pgpass", "htpasswd", "smtp_pass", "passcode", f"pin{_S}code", f"t?otp{_S}(?:seed|key|secret)",
    f"mfa{_S}(?:seed|key)", f"recovery{_S}codes?", f"backup{_S}codes?",
    # more languages' words for password, secret, token and key
    "lozinka", "geslo", "parool", "slapta[žz]odis", "κωδικός", "συνθηματικό", "סיסמה", "كلمة_?المرور", "كلمة_?السر",
    "पासवर्ड", f"m[aậ]t{_S}kh[aẩ]u", "รหัสผ่าน", f"kata{_S}sandi", "katalaluan", "jelsz[oó]", "jeton", "токен",
    "秘密", "秘钥", "トークン", "シークレット", "토큰", "비밀", "segredo", "chiave", "schl[üu]e?ssel", f"cl[ée]{_S}api",
    f"clave{_S}api", f"api{_S}schl[üu]e?ssel", "contrasenya", f"palavra{_S}passe",
)
# detect-secrets' words are regex fragments (`api_?key`, `db_?pass`): used as they are.
_WORDS = "|".join((*_OWN_WORDS, *DETECT_SECRETS_WORDS))
_SHORT = r"pwd|pw|pass|psk|sas|pin"  # secret only after a separator: DB_PASS yes, bypass no

# names that end in `pass` or name a key slot without saying password (`remotepass`, `wep_key0`,
# `pin`, `mnemonic`, a Nagios `$USER3$` resource macro)
_GLUED_PASS = (r"(?:remote|auth|user|db|root|admin|smtp|ftp|mail|ldap|bind|proxy|ssh|sql|api|master|mqtt|vnc|wifi|wlan|net|sys|"
               r"app|web|login|my|super|server|client|sa|sudo|enable|vpn|radius|snmp|rpc|xmpp|irc|nick|oper|ident)_?pass(?:wd)?")
_SECRET_NAME = re.compile(rf"(?i)^[\w.\-]*?(?:{_WORDS})$|^[\w.\-]*[_.\-](?:{_SHORT})$|^(?:psk|pw|pwd|pass|pin)$"
                          rf"|^[\w.\-]*?{_GLUED_PASS}$|^wep_?key\d*$|^[\w.\-]*(?:mnemonic|seed_?phrase|seed_?words)$|^\$USER\d+\$$")
_SUFFIXED_NAME = re.compile(rf"(?i)^[\w.\-]*?(?:{_WORDS})[\w.\-]+$|^(?:{_SHORT})$")
_MAYBE_NAME = re.compile(
    r"(?i)(?:^|[_.\-])(?:key|auth|session|sid|sig|signature|cookie|salt|nonce|bearer|jwt|dsn|cert|pat|access|license|"
    r"hmac|otp)$|^[a-z]*(?:key|auth|session|signature|cookie|salt|nonce|bearer|jwt|dsn)$|^[\w.\-]*sess(?:ion)?[_\-]?id$"
)
# Cheap pre-test: a name holds one of these (lower-cased) before the regexes above are tried.
HINTS = ("pass", "pw", "pin", "otp", "seed", "mnem", "wep", "code", "secret", "token", "key", "cred", "string", "auth", "session", "sid", "sig", "cookie", "salt",
         "nonce", "bearer", "jwt", "dsn", "cert", "psk", "sas", "pat", "access", "license", "hmac", "otp", "pin",
         "contrase", "senha", "parol", "пароль", "密", "口令", "パスワード", "비밀번호", "has", "sifre", "şifre", "clave",
         "geheim", "segre", "wacht", "kennw", "mot", "heslo", "jelsz", "l\u00f6senord", "losenord", "salasana", "adgangs",
         "lozinka", "geslo", "parool", "slapta", "κωδικ", "συνθηματ", "סיסמ", "كلمة", "पासवर्ड", "kh", "รหัส", "sandi",
         "katalaluan", "jeton", "токен", "秘", "トークン", "シークレット", "토큰", "비밀", "chiave", "schl", "cl", "palavra",
         "contrasenya", "sess")

PLACEHOLDER = re.compile(
    r"^(?:\*+|x+|\.+|<(?!%)[^>]*>|\{\{[^}]*\}\}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%\([a-z_]+\)s|%[A-Za-z_]+%|none|null|nil|"
    r"true|false|yes|no|on|off|required|optional|changeme|redacted|hidden|\[REDACTED[^\]]*\]|\x00E\d+\x00)$",
    re.I,
)
_KINDS = [
    (re.compile(r"(?i)private"), "private-key"),
    (re.compile(r"(?i)pass|pwd|pw$|bindpw|rootpw|psk|authtok|contrase|senha|parol|has[łl]o|sifre|şifre|пароль|密|口令"
                r"|パスワード|비밀번호|wacht|kennw|mot.?de.?passe|heslo|jelsz|l[öo]senord|salasana|adgangs|clave|lozinka|geslo"
                r"|slapta|κωδικ|סיסמ|كلمة|पासवर्ड|kh[aẩ]u|รหัสผ่าน|sandi|katalaluan"), "password"),
    (re.compile(r"(?i)secret|geheim|segre"), "secret"),
    (re.compile(r"(?i)token"), "token"),
    (re.compile(r"(?i)api.?key"), "api-key"),
    (re.compile(r"(?i)access.?key|account.?key"), "access-key"),
]


def needle_test(needles) -> Callable[[str], bool]:
    """A fast test for "one of these literal texts occurs in the (lower-cased) text"."""
    search = re.compile("|".join(re.escape(needle) for needle in needles)).search
    return lambda text: search(text) is not None


hinted = needle_test(HINTS)  # hinted(lower-cased text): it may hold a secret-naming key


def secret_kind(name: str) -> str:
    """The marker kind for a value under this key name."""
    for pattern, kind in _KINDS:
        if pattern.search(name):
            return kind
    return "secret"


@functools.lru_cache(maxsize=4096)
def classify(name: str) -> str | None:
    """'secret', 'maybe' or None for a key name (see the module docstring)."""
    if not hinted(name.lower()):
        return None
    if _SECRET_NAME.match(name):
        return "secret"
    if _SUFFIXED_NAME.match(name) or _MAYBE_NAME.search(name):
        return "maybe"
    return None


_NOT_SECRET_VALUE = re.compile(r"^(?:[\d.,:\-+TZ ]+|[~.]?/\S*|\w+://\S*|[a-z]+(?:[_\-][a-z]+)*|[a-z]+(?:[_\-.][a-z0-9]+)+)$")


def secretish(value: str) -> bool:
    """A value under a doubtful name that looks generated rather than a word, number, time or path."""
    value = value.strip().strip("\"'")
    if len(value) < 8 or PLACEHOLDER.match(value) or _NOT_SECRET_VALUE.match(value):
        return False
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value),
                   any(not c.isalnum() for c in value)))
    entropy = shannon_entropy(value)
    if classes == 1:
        return len(value) >= 20 and entropy >= 3.8
    return entropy >= 3.0 and (classes >= 3 or any(c.isdigit() for c in value))


def is_secret_value(name: str, value: str) -> bool:
    """Whether `value`, given to key `name`, is to be masked."""
    kind = classify(name)
    if kind == "secret":
        if name.lower() == "pwd" and value.startswith(("/", "~")):
            return False  # the shell's working directory, not a password
        if name.lower() in ("pass", "pw") and value.strip().isdigit() and len(value.strip()) < 6:
            return False  # a test report's `pass=3 fail=0`
        return bool(value.strip()) and not PLACEHOLDER.match(value.strip())
    return kind == "maybe" and secretish(value)
