"""Secrets that only their line's structure gives away, not a key name in front of them:

- credential-file lines: `.pgpass` (`host:port:db:user:PW`), `host:port user:PW` (postfix
  `sasl_passwd`), davfs2 `secrets` (`URL user PW`), `ipsec.secrets` (`: PSK "PW"`), rsyncd secrets
  (`user:PW` alone on a line), samba `smbpasswd` (LM/NT hashes);
- SQL statements: `IDENTIFIED BY 'PW'`, `[WITH] [ENCRYPTED] PASSWORD 'PW'`, `PASSWORD('PW')`;
- protocol traces: `AUTH PLAIN <b64>`, `AUTH LOGIN` and the base64 lines after it, redis `AUTH [user] PW`
  (`"AUTH" "PW"` in MONITOR output), FTP/POP3 `PASS PW`, IMAP `tag LOGIN user PW`;
- a value given under a name on another line: Kubernetes `- name: DB_PASSWORD` then `value: PW`, and
  `{"name": "API_TOKEN", "value": "PW"}` (JSON, one line or several);
- a long hex or base64 value a few words after a word that names a secret, in prose (`the API key is
  3f9a...`, `token: a9f...`);
- a command line inside a log or history line (`... ran sqlcmd -S db -P PW`): its words go through the
  command-line redactor (`cmdline`), which knows which program takes which option.
Each rule runs only when a cheap needle says it could match: this runs on every observation.
"""

from __future__ import annotations

import re

from appliance.tools.redaction import MARKER_PREFIX, marker
from appliance.tools.redaction.names import PLACEHOLDER, classify, needle_test, secret_kind

KIND = "password"

_IPSEC_WORDS = (" PSK", " XAUTH", " EAP", " NTLM", " P12", " PIN", " RSA", " ECDSA", " BLISS", " PKCS8")
_SASL = ("AUTH PLAIN", "AUTH LOGIN", "AUTH XOAUTH2", "AUTH OAUTHBEARER", "AUTH CRAM-MD5", "AUTH DIGEST-MD5", "AUTH SCRAM",
         "AUTHENTICATE ")
# cheap first looks, on the lower-cased text (a case-insensitive regex costs ten times more)
_SPACED_NAMES = ("mot de passe", "kata sandi", "mat khau", "mật khẩu", "palavra passe", "palavra-passe", "clave de acceso",
                 "secret key", "api key", "access key")  # names written with spaces
_PROSE_IS = re.compile(r"(?:password|passwd|passphrase|passcode|pin|secret|token|key)[ \t]+(?:is|was|=|:|will|set|changed|reset)[ \t]")
_PROMPT_AUTH = re.compile(r">[ \t]*auth[ \t]")
_PASS_START = re.compile(r"(?m)(?:^|[\s>:\]])PASS[ \t]")
_SQL_PASSWORD = re.compile(r"password[ \t]*(?:=[ \t]*)?(?:password[ \t]*)?\(?[ \t]*['\"]")  # a cheap first look
# (test on the whole text, pattern, anchored (match at a line's start only), kind): the group `val` is masked
_LINE_RULES = [(test, re.compile(("(?m)^" if anchored else "(?m)") + pattern.replace("(?i)", "")
                                  , re.I if pattern.startswith("(?i)") else 0), kind)
               for test, pattern, anchored, kind in (
    # .pgpass: host:port:database:user:password (port a number or *), the password to the line's end
    (lambda line: line.count(":") >= 4, r"[ \t]*[^:\s#]+:(?:\d{1,5}|\*):[^:\s]+:[^:\s]+:(?P<val>\S.*?)[ \t]*$", True, "password"),
    # postfix sasl_passwd and friends: [host]:port user:password
    (lambda line: line.count(":") >= 2, r"[ \t]*\[?[\w.\-]+\]?:\d{1,5}[ \t]+[^\s:]+:(?P<val>\S+)[ \t]*$", True, "password"),
    # davfs2 secrets: URL-or-mountpoint user password
    (lambda line: "/" in line, r"[ \t]*(?:\w+://\S+|/\S+)[ \t]+[^\s#=]+[ \t]+(?P<val>(?!#)(?=\S*\d)(?=\S*[A-Za-z])[^\s=]{6,})[ \t]*$",
     True, "password"),
    # ipsec.secrets: [ids] : PSK "secret" / XAUTH / EAP / NTLM / P12 file "pass" / RSA key "pass"
    (lambda text: ":" in text and any(word in text for word in _IPSEC_WORDS),
     r"(?:^|[ \t]):[ \t]*(?:PSK|XAUTH|EAP|NTLM|P12|PIN|(?:RSA|ECDSA|BLISS|PKCS8)[ \t]+\S+)[ \t]+(?P<val>\"[^\"\n]*\"?|'[^'\n]*'?|0[sx]\S+|\S+)",
     False, "psk"),
    # smbpasswd: user:uid:LMHASH:NTHASH:[flags]:LCT-...
    (lambda text: "LCT-" in text, r"[^:\s]+:\d+:(?P<lm>[0-9A-Fa-f]{32}|X{32}|\*{32}):(?P<val>[0-9A-Fa-f]{32}):", True, "password-hash"),
    # pppd chap-secrets / pap-secrets: client server "secret" [addresses]
    (lambda line: '"' in line, r"[ \t]*[^\s#\"]+[ \t]+[^\s\"]+[ \t]+\"(?P<val>[^\"\n]+)\"(?:[ \t]+(?:\*|[\d./\-]+|\"[^\"\n]*\"))?[ \t]*$",
     True, "password"),
    # SQL
    (lambda line: "identified" in line.lower(),
     r"(?i)\bIDENTIFIED[ \t]+(?:WITH[ \t]+\S+[ \t]+)?(?:BY|AS)[ \t]+(?:PASSWORD[ \t]+)?(?P<q>['\"`])(?P<val>.*?)(?P=q)", False, "password"),
    (lambda line: "identified" in line.lower(),
     r"(?i)\bIDENTIFIED[ \t]+(?:WITH[ \t]+\S+[ \t]+)?(?:BY|AS)[ \t]+(?:PASSWORD[ \t]+)?(?P<val>[^\s;'\"`]+)", False, "password"),
    (lambda text: _SQL_PASSWORD.search(text.lower()) is not None,
     r"(?i)(?<![\"'\w.\-])PASSWORD(?:[ \t]+|[ \t]*=[ \t]*(?:PASSWORD[ \t]*)?\([ \t]*|[ \t]*\([ \t]*|[ \t]*=[ \t]*)(?P<q>['\"])(?P<val>.*?)(?P=q)",
     False, "password"),
    # protocol traces: SASL with an initial response; redis AUTH (a MONITOR line, a prompt); FTP/POP3 PASS; IMAP LOGIN
    (lambda text: any(sasl in text for sasl in _SASL),
     r"\bAUTH(?:ENTICATE)?[ \t]+(?:PLAIN|LOGIN|XOAUTH2|OAUTHBEARER|CRAM-MD5|DIGEST-MD5|SCRAM-SHA-\d+(?:-PLUS)?)[ \t]+"
     r"(?P<val>(?!(?:PLAIN|LOGIN|XOAUTH2|OAUTHBEARER|CRAM-MD5|DIGEST-MD5)\b)[A-Za-z0-9+/=._\-]{4,})", False, "password"),
    (lambda text: " AUTH " in text or '"AUTH"' in text or text.startswith("AUTH ") or "\nAUTH " in text or ">AUTH " in text,
     r"(?:^|[\s\"'>\]])\"?AUTH\"?[ \t]+(?:\"?(?!PLAIN\b|LOGIN\b|XOAUTH2\b|OAUTHBEARER\b|CRAM-MD5\b)[\w.@\-]{1,64}\"?[ \t]+)?\"?"
     r"(?P<val>(?!PLAIN\b|LOGIN\b|XOAUTH2\b|OAUTHBEARER\b|CRAM-MD5\b|\[REDACTED)[^\s\"]{3,})\"?[ \t]*$", False, "password"),
    (lambda text: ">" in text and _PROMPT_AUTH.search(text.lower()) is not None,
     r"(?i)[^\n>]*>[ \t]*auth[ \t]+(?:[\w.@\-]{1,64}[ \t]+)?(?P<val>(?!\[REDACTED)\S{3,})[ \t]*$", True, "password"),
    # prose: "the password is X", "wifi password: X" (a value with a digit or a symbol: not "is required")
    (lambda text: _PROSE_IS.search(text.lower()) is not None,
     r"(?i)\b(?:password|passwd|passphrase|passcode|pin|secret|token|api[ _-]?key)[ \t]+(?:is|was|=|:|will be|set to|changed to|reset to)"
     r"[ \t]+[\"'`]?(?P<val>(?=[^\s\"'`]*(?:\d|[^\w\s]))(?!\[REDACTED)[^\s\"'`]{6,}?)[\"'`]?[.,;!)]?(?=\s|$)", False, "password"),
    # an HTML password field's value; HTML-escaped XML (`&lt;password&gt;X&lt;/password&gt;`)
    (lambda text: "password" in text and "value" in text,
     r"(?i)<input\b[^>]*\btype=[\"']?password[\"']?[^>]*\bvalue=[\"'](?P<val>[^\"'\n]*)[\"']", False, "password"),
    (lambda text: any(name in text.lower() for name in _SPACED_NAMES),
     r"(?i)\b(?:mot de passe|kata sandi|m[aậ]t kh[aẩ]u|palavra[- ]passe|clave de acceso|secret key|api key|access key)"
     r"[ \t]*[:=：][ \t]*[\"']?(?P<val>(?!\[REDACTED)[^\s\"']+)", False, "password"),
    (lambda text: "&lt;" in text, r"&lt;(?P<key>[\w:.\-]{1,64})&gt;(?P<val>[^&<\n]+)&lt;/(?P=key)&gt;", False, "secret-tag"),
    # a here-string or an expect `send` given to a program that reads a password
    (lambda text: "<<<" in text,
     r"\b(?:sudo\b[^\n|;]*?-S|passwd|chpasswd|kinit|smbpasswd|cryptsetup|docker[ \t]+login|podman[ \t]+login)\b[^\n|;]*?<<<[ \t]*"
     r"(?P<val>\"[^\"\n]*\"|'[^'\n]*'|[^\s;|]+)", False, "password"),
    (lambda text: "send" in text and "\\r" in text, r"\bsend[ \t]+(?:--[ \t]+)?\"(?P<val>[^\"\n]+?)(?:\\r|\\n)+\"", False, "password"),
    (lambda text: "PASS " in text and _PASS_START.search(text) is not None, r"(?:^|[\s>:\]])PASS[ \t]+(?P<val>\S+)[ \t]*$", False, "password"),
    (lambda line: "LOGIN " in line, r"(?:[\s>C:]*)?[A-Za-z]?\d{1,6}[ \t]+LOGIN[ \t]+\S+[ \t]+(?P<val>\"[^\"]*\"|\S+)[ \t]*$", True, "password"),
)]
# rsyncd secrets: user:password alone on a line; the password must look like one (not `status:ok`)
_USER_COLON_PW = re.compile(r"(?m)^[ \t]*(?P<user>[\w.@][\w.\-@]{0,63}):(?P<val>[^\s:]{6,})[ \t]*$")
# The kernel's names of its own objects, TYPE:NAME ("memfd:sealed-91", a process or a mapping named
# after a memfd; "anon_inode:[eventfd]"): no account's name, so no user:password line.
_KERNEL_OBJECTS = frozenset({"memfd", "anon_inode", "dmabuf"})
# named values: `- name: DB_PASSWORD` (then `value:` on a following line), `"name": "X", "value": "Y"`
_NAME_LINE = re.compile(r"""^[ \t]*(?:-[ \t]+)?["']?(?:name|key|id|Name|Key)["']?[ \t]*[:=][ \t]*["']?(?P<key>[\w.\-]{2,64})["']?[ \t]*,?[ \t]*$""")
_VALUE_LINE = re.compile(r"""^[ \t]*(?:-[ \t]+)?["']?(?:value|Value|VALUE)["']?[ \t]*[:=][ \t]*(?P<val>"(?:[^"\\]|\\.)*"|'[^']*'|[^\s,}]+)""")
_NAMED_INLINE = re.compile(
    r"""["']?(?:name|key|id|Name|Key)["']?[ \t]*[:=][ \t]*["'](?P<key>[\w.\-]{2,64})["'][ \t]*,[ \t]*["']?(?:value|Value)["']?[ \t]*[:=][ \t]*"""
    r"""(?P<val>"(?:[^"\\]|\\.)*"|'[^']*'|[^\s,}]+)""")
# prose: a long hex or base64 value, and before it on its line a secret word and up to three short
# words (`is`, `=`, `:`); the value is found first (cheap), the words are looked for just before it
_LONG_VALUE = re.compile(r"(?<![\w+/=\-])(?:[0-9a-fA-F]{32,128}|[A-Za-z0-9+/_\-]{24,}={0,2})(?![\w+/=\-])")
_PROSE_BEFORE = re.compile(
    r"(?i)\b(?P<key>[\w\-]{0,40}?(?:secret|token|key|password|passwd|credential|signature|session|cookie|auth)s?)\b"
    r"(?:[ \t]+(?:is|was|are|=|:|of|for|set|to|value|id|[\w\-]{1,12}[:=]?)){0,3}[ \t]*[:=]?[ \t]*[\"'(]?$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_DIGEST_BEFORE = re.compile(r"(?i)(?:sha\d*|md5|digest|checksum|hash|fingerprint|commit|integrity|etag|uuid|trace|span|request)[\w\- ]{0,12}[:=\s]*$")
_AUTH_LOGIN = re.compile(r"\bAUTH[ \t]+LOGIN\b")
_B64_LINE = re.compile(r"^(?P<pre>[ \t]*(?:(?:C|S|<|>|->|<-|\[\w+\])[:\s]+)?)(?P<val>[A-Za-z0-9+/]{4,}={0,2})[ \t]*$")
_SERVER_PROMPT = re.compile(r"^[ \t]*(?:(?:S|<|<-)[:\s]+)?334\b")

_has_line_rule = needle_test(("psk", "xauth", "eap", "ntlm", "p12", "rsa", "ecdsa", "pin", "identified", "password", "auth",
                              "pass", "login", ":", "/", '"', "<<<", "&lt;", "send", "value", "kata sandi", "khau", "khẩu",
                              "palavra", "clave de acceso"))
_has_named = needle_test(("name", "key", "id"))
_has_prose = needle_test(("secret", "token", "key", "password", "passwd", "credential", "signature", "session", "cookie", "auth"))


def _secretish_password(value: str) -> bool:
    """A `user:VALUE` value that is a password rather than a word, a number or a time."""
    if not any(c.isdigit() for c in value) or not any(c.isalpha() for c in value):
        return False
    return not re.match(r"^(?:\d+[a-z]{0,3}|v?\d+(?:\.\d+)+\S*|[a-f0-9]{7,12})$", value)


def _text_spans(text: str, lowered: str) -> list[tuple[int, int, str]]:
    """The spans of the rules that look at one line at a time, found over the whole text at once
    (each rule a single scan of the text: far cheaper than every rule on every line)."""
    spans: list[tuple[int, int, str]] = []
    for test, regex, kind in _LINE_RULES:
        if not test(text):
            continue
        for match in regex.finditer(text):
            value = match.group("val")
            if not value or value.startswith(MARKER_PREFIX) or PLACEHOLDER.match(value.strip("\"'")):
                continue
            start, end = match.span("val")
            if value[0] in "\"'" and len(value) > 1:
                start, end = start + 1, end - (value[-1] == value[0])
            if kind == "password-hash" and match.group("lm")[0] not in "X*":
                spans.append((*match.span("lm"), kind))
            if kind == "secret-tag":  # a tag that names a secret, or nothing
                if classify(match.group("key").rpartition(":")[2]) != "secret":
                    continue
                kind = secret_kind(match.group("key"))
            spans.append((start, end, kind))
    if ":" in text:
        for match in _USER_COLON_PW.finditer(text):
            if _secretish_password(match.group("val")) and not match.group("val").startswith(MARKER_PREFIX) \
                    and match.group("user") not in _KERNEL_OBJECTS:
                spans.append((*match.span("val"), KIND))
    if ("value" in lowered) and ('"value"' in lowered or "'value'" in lowered or "value:" in lowered or "value=" in lowered):
        for match in _NAMED_INLINE.finditer(text):
            _add_named(spans, match.group("key"), match)
    if _has_prose(lowered):
        for match in _LONG_VALUE.finditer(text):
            line_start = text.rfind("\n", 0, match.start()) + 1
            before = text[max(line_start, match.start() - 80):match.start()]
            words = _PROSE_BEFORE.search(before) if before and _has_prose(before.lower()) else None
            if words and _prose_secret(text[line_start:match.start()], words.group("key"), match.group(0)):
                spans.append((*match.span(), secret_kind(words.group("key"))))
    return spans


def _prose_secret(before: str, key: str, value: str) -> bool:
    """A long value after a secret word `key` (`before` is its line up to the value) that is not a
    digest, an id or a path."""
    if value.startswith(MARKER_PREFIX) or _DIGEST_BEFORE.search(before):
        return False
    if classify(key) is None and not re.search(r"(?i)secret|token|key|passw|credential", key):
        return False
    if _HEX.match(value):
        return True
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value)))
    digits = sum(c.isdigit() for c in value)
    shaped = classes >= 3 or classes == 2 and len(value) >= 32 and digits >= 4
    return shaped and value.count("/") <= 2 and value.count("-") <= 2


def _add_named(spans: list, key: str, match: re.Match) -> None:
    """The value given under a name that names a secret, quotes kept."""
    if classify(key) != "secret":
        return
    value = match.group("val")
    start, end = match.span("val")
    if value[:1] in "\"'" and len(value) > 1:
        start, end = start + 1, end - 1
    if end > start and not value.strip("\"'").startswith(MARKER_PREFIX) and not PLACEHOLDER.match(value.strip("\"'")):
        spans.append((start, end, secret_kind(key)))


_NAME_START = re.compile(r"(?im)^[ \t]*(?:-[ \t]+)?[\"']?(?:name|key|id)[\"']?[ \t]*[:=]")


def _needs_state(text: str, lowered: str) -> bool:
    """Whether a text holds anything whose secret is on a later line."""
    return ("AUTH" in text or "VXNlcm5hbWU6" in text or "UGFzc3dvcmQ6" in text or "<auth-user-pass>" in lowered
            or _NAME_START.search(text) is not None)


def redact_structured(text: str) -> str:
    """Mask the secrets this module knows (see the module docstring): the one-line rules over the
    whole text, then, only where a text holds one, the state that crosses lines (a secret name
    waiting for its `value:` line, an AUTH LOGIN exchange, an OpenVPN inline credentials block)."""
    from appliance.tools.redaction.tokens import mask_spans

    lowered = text.lower()
    if not (_has_line_rule(lowered) or _has_named(lowered) or _has_prose(lowered)):
        return text
    spans = _text_spans(text, lowered)
    if _needs_state(text, lowered):
        spans += _state_spans(text)
    return mask_spans(text, spans) if spans else text


def _state_spans(text: str) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    waiting_name: str | None = None  # a secret name whose value comes on a following line
    waiting_for = 0
    auth_login = 0  # base64 lines still to mask after AUTH LOGIN
    inline_auth = -1  # lines read inside an OpenVPN <auth-user-pass> block (the second is the password)
    offset = 0
    for line in text.split("\n"):
        at = offset
        offset += len(line) + 1
        lower = line.lower()
        found: list[tuple[int, int, str]] = []
        if waiting_name is not None:
            match = _VALUE_LINE.match(line)
            if match:
                _add_named(found, waiting_name, match)
                waiting_name = None
            else:
                waiting_for -= 1
                waiting_name = None if waiting_for <= 0 else waiting_name
        named = _NAME_LINE.match(line) if "name" in lower or "key" in lower or "id" in lower else None
        if named and classify(named.group("key")) == "secret":
            waiting_name, waiting_for = named.group("key"), 3
        if auth_login:
            b64 = _B64_LINE.match(line)
            if b64 and not _SERVER_PROMPT.match(line):
                found.append((*b64.span("val"), KIND))
                auth_login -= 1
            elif not _SERVER_PROMPT.match(line):
                auth_login = 0
        if "AUTH" in line and _AUTH_LOGIN.search(line):
            auth_login = 2
        elif "VXNlcm5hbWU6" in line or "UGFzc3dvcmQ6" in line:  # a server's base64 "Username:" / "Password:" prompt
            auth_login = max(auth_login, 1)
        if inline_auth >= 0:
            inline_auth = -1 if "</auth-user-pass>" in lower else inline_auth + 1
            if inline_auth >= 2 and line.strip():
                found.append((len(line) - len(line.lstrip()), len(line.rstrip()), KIND))
        elif "<auth-user-pass>" in lower:
            inline_auth = 0
        spans += [(start + at, end + at, kind) for start, end, kind in found]
    return spans
