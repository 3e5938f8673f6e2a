"""Values given to a key that names a secret, masked to the value's end, in every form text uses:
`key=value`, `key: value`, `"key": "value"`, `key => 'value'`, `$key = "value";`, `--key=value`,
`--key value`, `define('KEY', 'value')`, `<password>value</password>`, `<add key="Password"
value="..."/>`, directives without a separator (`requirepass X`, `bindpw X`, netrc's `password X`),
`curl -u user:password`, `mysql -pX`, `sshpass -p X`, `openssl -passin pass:X`, and the
`Authorization:` and `Cookie:` headers.

A value ends at its closing quote, or (unquoted) at the end of the token, or at the end of the line
when the key starts the line (configuration files: `password = two words`). It never ends at the
first `:`, `=`, `;`, `&` or `,` inside it. A value can go on to the next lines (an unclosed quote,
a trailing backslash, a YAML block scalar `|`, a key whose value is on the next line, a long value
wrapped onto a line of its own): the lines are read in order with that state carried along.
detect-secrets' keyword detector then reads each line as a second opinion.
"""

from __future__ import annotations

import re

from detect_secrets.plugins.keyword import CONFIG_DENYLIST_REGEX_TO_GROUP, KeywordDetector

from appliance.tools.redaction import MARKER_PREFIX, marker
from appliance.tools.redaction.names import PLACEHOLDER, classify, hinted, is_secret_value, needle_test, secret_kind, secretish
from appliance.tools.redaction.tokens import shannon_entropy

_KEY_SEP = re.compile(
    r"(?<![\w.])(?P<key>[^\W\d][\w.\-]{0,63})(?P<sep>[\"'\]]{0,2}[ \t]*(?::=|=>|\?=|={1,3}|:(?!//)|：)[ \t]*@?)"
)
_LINE_START = re.compile(r"^[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+|\$)?[\"']?$")
# --key value: the value is the next token unless that is itself an option (a value may start with "-")
_OPTION = re.compile(
    r"(?<!\S)(?P<key>--?[^\W\d][\w\-.]*)(?P<sep>[ \t]+)"
    r"(?P<val>(?!--?[A-Za-z][\w\-]*(?:[=\s]|$))(?![\[(]REDACTED)(?:\"[^\"]*\"|'[^']*'|\S+))"
)
_DIRECTIVE = re.compile(
    r"(?im)(?P<key>^[ \t]*(?:requirepass|masterauth|bindpw|rootpw|olcrootpw|psk|wpa_psk|password|passwd|secret|auth_pass|"
    r"private_key|key_password|client_secret|token|api_key|passphrase)|\b(?:requirepass|masterauth|bindpw|rootpw)|"
    r"\b(?:login|user|account)[ \t]+\S+[ \t]+password)(?P<sep>[ \t]+)(?P<val>(?![=:])(?!\[REDACTED)\S.*?)[ \t]*$"
)
# (kind, texts one of which the lower-cased line must hold for the rule to run, pattern)
# "KEY VALUE" alone on a line, or "set KEY VALUE" anywhere (redis CONFIG SET, shells, consoles):
# masked when KEY is a secret name (see _directive_pairs).
_PAIR_LINE = re.compile(r"^[ \t]*(?:(?:config[ \t]+)?set[ \t]+)?(?P<key>[^\W\d][\w.\-]{1,63})[ \t]+(?P<val>[^\s=:]\S*)[ \t]*$", re.I)
_SET_PAIR = re.compile(r"(?i)\b(?:set|setenv)[ \t]+(?P<key>[^\W\d][\w.\-]{1,63})[ \t]+(?P<val>(?!\[REDACTED)[^\s=]\S*)")
_SPECIAL = [(kind, needle_test(needles.split("|")), re.compile(pattern)) for kind, needles, pattern in (
    # curl -u user:password, --user user:password, --proxy-user, smbclient -U user%password
    ("password", "curl|--user|--proxy-user",
     r"(?:\bcurl\b.*?(?<!\S)-[uU][ \t]*|(?<!\S)--(?:proxy-)?user[= \t][ \t]*)[\"']?[^\s:\"']*:(?P<val>[^\s\"']+)"),
    ("password", "%", r"(?<!\S)(?:-U|--user(?:name)?)[= \t][ \t]*[^\s%]+%(?P<val>\S+)"),
    # mysql -pSECRET / sshpass -p SECRET / redis-cli -a SECRET / openssl -passin pass:SECRET
    ("password", "-p", r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?(?<!\S)-p(?P<val>(?!\[REDACTED)[^\s-]\S*)"),
    ("password", "-p", r"\b(?:sshpass|mongo|mongosh|mongodump)\b[^\n]*?(?<!\S)-p[ \t]*(?P<val>(?!\[REDACTED)[^\s-]\S*)"),
    ("password", "login", r"\b(?:docker|podman|nerdctl|helm|buildah|skopeo)\b[^\n]*?\blogin\b[^\n]*?(?<!\S)-p[ \t]+(?P<val>\S+)"),
    ("password", "ldap", r"\bldap[a-z]*\b[^\n]*?(?<!\S)-w[ \t]+(?P<val>\S+)"),
    ("password", "sqlcmd bcp osql isql".replace(" ", "|"), r"\b(?:sqlcmd|bcp|osql|isql)\b[^\n]*?(?<!\S)-P[ \t]*(?P<val>\S+)"),
    ("password", "sudo", r"\becho[ \t]+(?P<q>['\"]?)(?P<val>[^'\"|\s]+)(?P=q)[ \t]*\|[ \t]*sudo[ \t]+-S"),
    ("password", "redis-cli", r"\bredis-cli\b[^\n]*?(?<!\S)-a[ \t]+(?P<val>\S+)"),
    ("password", "-pass|-k", r"(?<!\S)-(?:pass(?:in|out)?|passphrase|k)[ \t]+(?:pass:|env:)?(?P<val>\S+)"),
    ("password", "htpasswd", r"\bhtpasswd\b[ \t]+-\w*b\w*[ \t]+\S+[ \t]+\S+[ \t]+(?P<val>\S+)"),
    # headers
    ("auth-header", "authoriz", r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:[A-Za-z][\w\-.]{0,30}[ \t]+)?"
     r"(?P<val>(?!\[REDACTED)(?![^\s\"',;]+[ \t]+\[REDACTED)[^\s\"',;]{6,}(?:[ \t]*,[ \t]*[^\s\"',;]+)*)"),
    ("cookie", "cookie", r"(?i)\b(?:set-)?cookie[ \t]*:[ \t]*(?P<val>[^\r\n]+)"),
)]
_DEFINE = re.compile(r"(?i)\bdefine\(\s*(['\"])(?P<key>[^'\"]{1,64})\1\s*,\s*(['\"])(?P<val>.*?)(?<!\\)\3")
_XML_TAG = re.compile(r"<(?P<key>[\w:.\-]{1,64})(?P<attrs>(?:\s[^<>]*)?)>(?P<val>[^<]+)</(?P=key)\s*>")
_XML_NAMED = re.compile(r"(?i)\b(?:name|key|id)\s*=\s*[\"'](?P<key>[^\"']{1,64})[\"'][^<>]*?\bvalue\s*=\s*([\"'])(?P<val>.*?)\2")
_XML_NAME_ATTR = re.compile(r"(?i)\b(?:name|key|id)\s*=\s*[\"']([^\"']{1,64})[\"']")
_LONE = re.compile(r"^[ \t]*(?P<val>[A-Za-z0-9+/_\-.~]{8,}={0,2})[ \t]*[\"']?[ \t]*$")
_NEXT_PAIR = re.compile(r"\s[^\W\d][\w.\-]*=")  # "password=x user=bob": a log line's pairs, not one value
_BLOCK_SCALAR = re.compile(r"^[|>][+-]?$")
_DETECTOR = KeywordDetector()
_has_form = needle_test(("curl", "--user", "--proxy-user", "%", "-p", "redis-cli", "-k", "htpasswd", "define", "authoriz", "cookie",
                         "login", "ldap", "sqlcmd", "bcp", "osql", "isql", "sudo"))
_has_directive = needle_test(("requirepass", "masterauth", "bindpw", "rootpw", "psk", "password", "passwd", "secret", "auth_pass",
                      "private_key", "key_password", "token", "api_key", "passphrase"))
_detector_may_match = needle_test(("key", "pass", "pwd", "secret", "contrase"))  # detect-secrets' keyword list


_ESCAPED_OPEN = re.compile(r'\\"(?=[\w\[{(])')  # an escaped quote that opens a string: read as ` "`
_ESCAPED_CLOSE = re.compile(r'\\"')  # one that closes it: read as `" `


class _Line:
    """One line and the spans of it to mask. JSON escaped inside a JSON string (`{\\"password\\": \\"x\\"}`)
    is read with each `\\"` seen as ` "` (same length, so the spans fit the line as written)."""

    def __init__(self, text: str) -> None:
        self.shown = text
        self.text = _ESCAPED_CLOSE.sub('" ', _ESCAPED_OPEN.sub(' "', text)) if '\\"' in text else text
        self.spans: list[tuple[int, int, str]] = []

    def masked(self, start: int) -> bool:
        return any(s <= start < e for s, e, _ in self.spans) or self.text.startswith(MARKER_PREFIX, start)

    def add(self, start: int, end: int, kind: str) -> None:
        if end > start and not self.masked(start):
            self.spans.append((start, end, kind))

    def result(self) -> str:
        out, done = [], 0
        for start, end, kind in sorted(self.spans):
            if start < done:
                continue
            out += [self.shown[done:start], marker(kind)]
            done = end
        return "".join(out) + self.shown[done:]


def _close(text: str, start: int, quote: str) -> int:
    """Index of the closing `quote` at or after `start` (not escaped by a backslash), or -1."""
    at = start
    while True:
        at = text.find(quote, at)
        if at < 0 or text[at - 1] != "\\" or at == start:
            return at
        at += 1


def _value(line: _Line, pos: int, starts_line: bool) -> tuple[int, int, tuple | None]:
    """The span of the value at `pos`, and what it leaves open for the next line."""
    text = line.text
    rest = text[pos:].rstrip()
    if not rest:
        return pos, pos, ("empty",)
    if rest[0] in "\"'`":
        close = _close(text, pos + 1, rest[0])
        if close < 0:
            return pos + 1, len(text.rstrip()), ("quote", rest[0])
        return pos + 1, close, None
    word = re.match(r"\S+", rest)
    token = word.group(0) if word else ""
    end = pos + (len(rest) if starts_line and not _NEXT_PAIR.search(rest) else len(token))
    value = text[pos:end]
    if _BLOCK_SCALAR.match(value):
        return end, end, ("block", len(text) - len(text.lstrip()))
    if value.endswith("\\"):
        return pos, end, ("next",)
    return pos, end, ("lone",) if starts_line and end == pos + len(rest) else None


def _assignments(line: _Line) -> tuple | None:
    """Mask `key <sep> value` pairs; returns what the last one leaves open for the next line."""
    carry = None
    for match in _KEY_SEP.finditer(line.text):
        key = match.group("key").strip(".-")
        if line.masked(match.start()) or classify(key) is None:
            continue
        whole = classify(key) == "secret" and bool(_LINE_START.match(line.text[:match.start()]))
        start, end, left = _value(line, match.end(), whole)
        value = line.text[start:end]
        if left and left[0] in ("empty", "block"):
            if classify(key) == "secret":
                carry = left
            continue
        if not is_secret_value(key, value) or value.startswith(MARKER_PREFIX):
            continue
        line.add(start, end, secret_kind(key) if classify(key) == "secret" else "high-entropy-secret")
        carry = left
    return carry


def _options_and_forms(line: _Line, lower: str) -> None:
    """Every form but `key <sep> value`; each regex runs only when its needle is in the line."""
    if "-" in lower:
        for match in _OPTION.finditer(line.text):
            key, value = match.group("key").lstrip("-"), match.group("val")
            if is_secret_value(key, value.strip("\"'")) and not value.startswith(MARKER_PREFIX):
                quoted = value[0] in "\"'" and len(value) > 1
                line.add(match.start("val") + quoted, match.end("val") - quoted, secret_kind(key))
    for kind, may_match, regex in ((None, _has_directive, _DIRECTIVE), *_SPECIAL):
        if may_match(lower):
            for match in regex.finditer(line.text):
                if not PLACEHOLDER.match(match.group("val").strip()):
                    line.add(*match.span("val"), kind or secret_kind(match.group("key")))
    for regex in (_PAIR_LINE, _SET_PAIR):
        for match in regex.finditer(line.text):
            if classify(match.group("key")) == "secret" and is_secret_value(match.group("key"), match.group("val")):
                line.add(*match.span("val"), secret_kind(match.group("key")))
    for needle, regex in (("define", _DEFINE), ("value", _XML_NAMED)):
        if needle in lower:
            for match in regex.finditer(line.text):
                if is_secret_value(match.group("key"), match.group("val")):
                    line.add(*match.span("val"), secret_kind(match.group("key")))
    if "</" in lower:
        for match in _XML_TAG.finditer(line.text):
            named = _XML_NAME_ATTR.search(match.group("attrs"))
            key = named.group(1) if named else match.group("key").rpartition(":")[2]
            if is_secret_value(key, match.group("val")):
                line.add(*match.span("val"), secret_kind(key))


def _detect_secrets_net(line: _Line) -> None:
    """detect-secrets' keyword detector on what is left: a value it finds (the first token of it;
    its values run to the end of the line) is masked when it looks generated."""
    shown = line.result()
    if shown == line.text or MARKER_PREFIX not in shown:
        for value in _DETECTOR.analyze_string(shown, CONFIG_DENYLIST_REGEX_TO_GROUP):
            token = value.split()[0] if value.split() else ""
            at = line.text.find(token) if token else -1
            if at >= 0 and secretish(token):
                line.add(at, at + len(token), "secret")


def _fragment(value: str) -> bool:
    """A line of its own that continues a wrapped secret: generated-looking, even when it starts with `/`."""
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value),
                   any(c in "+/=_-" for c in value)))
    return classes >= 3 and shannon_entropy(value) >= 3.0


def _carry_on(line: _Line, carry: tuple) -> tuple | None:
    """Mask what a value left open on the line before continues on this line."""
    text = line.text
    body = text.strip()
    indent = len(text) - len(text.lstrip())
    if carry[0] == "quote":
        close = _close(text, 0, carry[1])
        line.add(indent, close if close >= 0 else len(text.rstrip()), "secret")
        return None if close >= 0 else carry
    if carry[0] == "next":
        line.add(indent, len(text.rstrip()), "secret")
        return carry if body.endswith("\\") else None
    if carry[0] == "block":
        if body and indent > carry[1]:
            line.add(indent, len(text.rstrip()), "secret")
            return carry
        return None if body else carry
    if carry[0] == "empty":
        if body and body[0] in "\"'":
            line.add(indent, len(text), "secret")
            return None
        lone = _LONE.match(text)
        if lone and not _KEY_SEP.search(text):
            line.add(*lone.span("val"), "secret")
        return None
    lone = _LONE.match(text)  # "lone": a long value wrapped onto a line of its own
    if lone and not _KEY_SEP.search(text) and _fragment(lone.group("val")):
        line.add(*lone.span("val"), "secret")
    return None


def redact_keys(text: str) -> str:
    lowered = text.lower()
    if not hinted(lowered) and not _has_form(lowered):
        return text
    lines = text.split("\n")
    carry = None
    for i, raw in enumerate(lines):
        lower = raw.lower()
        hint = hinted(lower)
        if carry is None and not hint and not _has_form(lower):
            continue
        line = _Line(raw)
        carry = _carry_on(line, carry) if carry else None
        _options_and_forms(line, lower)
        if hint:
            carry = _assignments(line) or carry
        if _detector_may_match(lower):
            _detect_secrets_net(line)
        lines[i] = line.result()
    return "\n".join(lines)
