"""Values that their place in a structure gives away, where no `key=value` rule can see them:

- a value on the line or element after the one that names it: a plist's `<key>Password</key>` then
  `<string>X</string>`, `<Name>Password</Name>` then `<Value>X</Value>`, and every element of a list
  given under a secret name (`"credentials": ["a", "b"]`, a plist `<array>`, a YAML `- item` list);
- CDATA under a secret-named element (`<password><![CDATA[X]]></password>`);
- forms without a separator: haproxy's `stats auth user:PW`, Nagios' `$USER3$=PW`;
- an Authorization header of any scheme: what follows the scheme is masked, known scheme or not;
- a bare token in a header-like or log-field place (a query string's value, a HAR entry's value, a
  custom header), judged by its entropy whatever its case or alphabet;
- recovery codes listed under a line that says so, and a wallet's mnemonic (12 to 24 plain words
  alone on a line);
- prose that names whose password it is (`the new password for svc is X`).
"""

from __future__ import annotations

import re

from appliance.tools.redaction import MARKER_PREFIX
from appliance.tools.redaction.names import PLACEHOLDER, classify, needle_test, secret_kind
from appliance.tools.redaction.tokens import mask_spans, shannon_entropy

_NEXT_ELEMENT = re.compile(
    r"<(?P<t1>[\w:.\-]{1,40})\b[^<>]*>[ \t]*(?P<key>[^<>\n]{2,64}?)[ \t]*</(?P=t1)>\s{0,200}?"
    r"<(?P<t2>[\w:.\-]{1,40})\b[^<>/]*>(?P<body>[\s\S]{0,4000}?)</(?P=t2)>")
_WRAPPED = re.compile(r"<(?P<tag>[\w:.\-]{1,64})\b[^<>/]*>\s*<(?P<t2>(?i:value|string|data|text|content|secret|plaintext))\b[^<>/]*>"
                      r"(?P<val>[^<>]+)</(?P=t2)>")
_ELEMENT_TEXT = re.compile(r"<!\[CDATA\[(?P<cdata>[\s\S]*?)\]\]>|>(?P<text>[^<>]+)<")
_CDATA = re.compile(r"<(?P<tag>[\w:.\-]{1,64})\b[^<>]*>[ \t]*<!\[CDATA\[(?P<val>[\s\S]*?)\]\]>")
_JSON_LIST = re.compile(r"[\"'](?P<key>[^\"'\n]{2,64})[\"'][ \t]*:[ \t]*\[(?P<body>[^\[\]]{0,4000})\]")
_QUOTED = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'([^'\n]*)'")
_YAML_LIST_KEY = re.compile(r"(?m)^(?P<indent>[ \t]*)(?:-[ \t]+)?(?P<key>[\w.\-]{2,64})[ \t]*:[ \t]*$")
_YAML_ITEM = re.compile(r"^(?P<indent>[ \t]*)-[ \t]+(?P<val>.+?)[ \t]*$")
_STATS_AUTH = re.compile(r"\bstats[ \t]+auth[ \t]+[^:\s]+:(?P<val>\S+)")
_MACRO = re.compile(r"(?m)^[ \t]*\$(?:USER\d+|[A-Z_]*PASS\w*)\$[ \t]*=[ \t]*(?P<val>.*?)[ \t]*$")
_AUTHORIZATION = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?(?:[ \t]*[:=]|[ \t]+(?=[\"']))[ \t]*[\"']?(?:[A-Za-z][\w\-.]{0,30}[ \t]+)?(?P<val>(?!\[REDACTED)[^\s\"',;]"
    r"[^\"\n\r]*?)[ \t]*(?=[\"'\r\n]|$)")
_QUERY = re.compile(r"[?&;](?P<key>[\w.\-\[\]]{1,40})=(?P<val>[^&\s\"'#;]{10,})")
_HEADER = re.compile(r"(?m)^[ \t]*(?P<key>X-[\w\-]{1,40}|[\w\-]{2,40}-(?:Key|Token|Auth|Signature|Session|Id))[ \t]*:[ \t]*(?P<val>\S{10,})[ \t]*$")
_HAR_VALUE = re.compile(r"\"name\"[ \t]*:[ \t]*\"(?P<key>[^\"]{1,64})\"[ \t]*,[ \t]*\"value\"[ \t]*:[ \t]*\"(?P<val>[^\"]{10,})\"")
_RECOVERY = re.compile(r"(?i)(?:recovery|backup|emergency|scratch)[ \t_\-]*(?:codes?|keys?)|\bone-time codes\b")
_CODE_LINE = re.compile(r"^[ \t]*(?:\d+[.)][ \t]*)?(?P<val>[A-Za-z0-9]{4,12}(?:[- ][A-Za-z0-9]{4,12}){0,3}|\d{6,12})[ \t]*$")
_MNEMONIC = re.compile(r"(?m)^[ \t]*(?:\d{1,2}[.)][ \t]*)?(?P<val>[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23})[ \t]*$")
_STOPWORDS = frozenset("the and of to is in for with that this on be are it as at by or an was not but from have has you we they".split())
_PROSE_FOR = re.compile(
    r"(?i)\b(?:password|passwd|passphrase|passcode|pin|secret|token|api[ _-]?key)(?:[ \t]+(?:for|of|to)[ \t]+[^\s]{1,64})?[ \t]+"
    r"(?:is(?: now)?|was|=|:|will be|set to|changed to|reset to)[ \t]+[\"'`]?(?P<val>(?!\[REDACTED)(?=[^\s\"'`]*(?:\d|[^\w\s]))[^\s\"'`]{4,}?)[\"'`]?[.,;!)]?(?=\s|$)")

_GRUB = re.compile(r"\bgrub\.pbkdf2\.sha\d+\.\d+\.(?P<val>\S+)")
# a secret-named directive in the middle of a line (`user bob insecure-password PW`, `sentinel auth-pass
# NAME PW`): the rest of the line is masked
_MID_LINE = re.compile(r"(?m)\S[ \t]+(?P<key>[A-Za-z]+[\-_][\w\-]*pass(?:word|wd)?)[ \t]+(?P<val>[^\s#;][^\n#;]*?)[ \t]*$")
_has_any = needle_test(("grub.", "pass", "</", "cdata", "[", "stats", "$", "authoriz", "=", ":", "recovery", "backup", "emergency", "scratch",
                        "one-time", " for ", " of ", " to "))


def _tokenish(value: str) -> bool:
    """A value that looks generated, whatever its case or alphabet: letters and digits mixed, high entropy."""
    value = value.strip()
    if value.startswith(MARKER_PREFIX) or len(value) < 10 or PLACEHOLDER.match(value) or value.isdigit() or "/" in value.strip("/"):
        return False
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    return letters >= 4 and digits >= 2 and shannon_entropy(value) >= 3.3


def _secret_name(key: str) -> bool:
    """A name of a secret, or of a list of them (`tokens`, `credentials`)."""
    return classify(key) == "secret" or key.endswith("s") and classify(key[:-1]) == "secret"


def _mnemonic(words: list[str]) -> bool:
    return len(words) in (12, 15, 18, 21, 24) and not _STOPWORDS.intersection(words) and len(set(words)) >= len(words) - 2


def redact_values(text: str) -> str:
    lowered = text.lower()
    if not _has_any(lowered) and text.count(" ") < 11:
        return text
    spans: list[tuple[int, int, str]] = []
    if "</" in text:
        for match in _NEXT_ELEMENT.finditer(text):
            key = match.group("key").strip()
            if _secret_name(key.replace(" ", "_")):
                offset = match.start("body") - 1
                for piece in _ELEMENT_TEXT.finditer(">" + match.group("body") + "<"):
                    group = "cdata" if piece.group("cdata") is not None else "text"
                    if piece.group(group).strip() and not PLACEHOLDER.match(piece.group(group).strip()):
                        spans.append((offset + piece.start(group), offset + piece.end(group), secret_kind(key)))
    if "</" in text:
        for match in _WRAPPED.finditer(text):
            if _secret_name(match.group("tag").rpartition(":")[2]) and match.group("val").strip() \
                    and not PLACEHOLDER.match(match.group("val").strip()):
                spans.append((*match.span("val"), secret_kind(match.group("tag"))))
    if "cdata" in lowered:
        for match in _CDATA.finditer(text):
            if classify(match.group("tag").rpartition(":")[2]) == "secret" and match.group("val").strip():
                spans.append((*match.span("val"), secret_kind(match.group("tag"))))
    if "[" in text:
        for match in _JSON_LIST.finditer(text):
            if _secret_name(match.group("key")):
                base = match.start("body")
                for item in _QUOTED.finditer(match.group("body")):
                    number = 1 if item.group(1) is not None else 2
                    if item.group(number) and not PLACEHOLDER.match(item.group(number)):
                        spans.append((base + item.start(number), base + item.end(number), secret_kind(match.group("key"))))
    spans += _line_state(text)
    for needle, regex, kind in (("stats", _STATS_AUTH, "password"), ("$", _MACRO, "password"), ("authoriz", _AUTHORIZATION, "auth-header"),
                                ("pass", _PROSE_FOR, "password"), ("secret", _PROSE_FOR, "password"), ("token", _PROSE_FOR, "password"),
                                ("pin", _PROSE_FOR, "password"), ("key", _PROSE_FOR, "password"), ("grub.", _GRUB, "password-hash"),
                                ("pass", _MID_LINE, "password")):
        if needle in lowered:
            for match in regex.finditer(text):
                value = match.group("val").strip()
                if value and not value.startswith(MARKER_PREFIX) and not PLACEHOLDER.match(value):
                    spans.append((*match.span("val"), kind))
    for needle, regex in (("=", _QUERY), (":", _HEADER), ("value", _HAR_VALUE)):
        if needle in lowered:
            for match in regex.finditer(text):
                if _tokenish(match.group("val")) or classify(match.group("key")) == "secret" and match.group("val").strip() \
                        and not PLACEHOLDER.match(match.group("val")) and not match.group("val").startswith(MARKER_PREFIX):
                    spans.append((*match.span("val"), "token"))
    return mask_spans(text, spans) if spans else text


def _line_state(text: str) -> list[tuple[int, int, str]]:
    """What only the lines before a line give away: a YAML list under a secret name, codes under a
    line that says they are recovery codes, a line of mnemonic words."""
    spans: list[tuple[int, int, str]] = []
    has_codes = _RECOVERY.search(text) is not None
    has_list = "- " in text and ":" in text
    if not (has_codes or has_list or text.count(" ") >= 11):
        return spans
    list_indent = -1  # the indent of the secret-named key whose list items follow
    codes = 0  # lines of codes still expected
    offset = 0
    for line in text.split("\n"):
        at = offset
        offset += len(line) + 1
        if list_indent >= 0:
            item = _YAML_ITEM.match(line)
            if item and len(item.group("indent")) >= list_indent:
                spans.append((at + item.start("val"), at + item.end("val"), "secret"))
                continue
            if line.strip():
                list_indent = -1
        if has_list and line.rstrip().endswith(":"):
            key = _YAML_LIST_KEY.match(line)
            if key and _secret_name(key.group("key")):
                list_indent = len(key.group("indent"))
        if has_codes and _RECOVERY.search(line):
            codes = 40
            continue
        if codes:
            code = _CODE_LINE.match(line)
            if code and any(c.isdigit() for c in code.group("val")):
                spans.append((at + code.start("val"), at + code.end("val"), "recovery-code"))
            elif line.strip():
                codes = 0
        if line.count(" ") >= 11:
            words = _MNEMONIC.match(line)
            if words and _mnemonic(words.group("val").split()):
                spans.append((at + words.start("val"), at + words.end("val"), "mnemonic"))
    return spans
