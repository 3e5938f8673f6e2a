"""Secrets whose shape gives them away wherever they appear.

Three sources, one pass each:
- the project's table of prefixed tokens (below), whose shapes follow the public gitleaks rule set
  (a distinctive prefix and a body; bodies are matched greedily to the token's end, without `\\b`,
  so a token glued to other text is still caught: erring towards redaction is fine);
- detect-secrets' regex plugins (AWS, Artifactory, Azure storage, Discord, Mailchimp, Telegram,
  Twilio, IBM, SoftLayer, Cloudant, ...), used as they are so their maintained rules count too;
- random-looking bare tokens (a bare AWS secret key has no prefix at all) and base64 blobs that
  decode to a credential (`Basic dXNlcjpwYXNz`, a base64-encoded `password=...`).
Each rule runs only when a cheap substring test says it could match: this runs on every observation.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from typing import Iterable, cast

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector

from appliance.tools.redaction import MARKER_PREFIX, marker

_B = r"[A-Za-z0-9_\-]"  # a url-safe token body character
# (kind, needles: space-separated lower-case texts one of which every match contains (a needle that
# starts with "!" is looked for as written, case and all), pattern)
TOKEN_KINDS: list[tuple[str, str, str]] = [
    ("aws-access-key", "a3t akia asia abia acca agpa aida aroa anpa anva aipa",
     r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}"),
    ("github-token", "ghp_ gho_ ghu_ ghs_ ghr_ github_pat_", r"(?:gh[pousr]_[A-Za-z0-9_]{30,255}|github_pat_\w{22,255})"),
    ("gitlab-token", "gl gr1348941",
     r"(?:gl(?:pat|dt|rt|ptt|cbt|imt|oas|ft|soat|agent|ffct|sa)-[\w\-.]{20,}|GR1348941[\w\-]{20,})"),
    ("slack-webhook", "hooks.slack.com", r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]+"),
    ("slack-token", "xox xapp-", r"(?:xox[abposre](?:\.xox[bp])?-[A-Za-z0-9\-]{10,}|xapp-\d-[A-Za-z0-9\-]{10,})"),
    ("teams-webhook", "webhook.office.com", r"https://[a-z0-9]+\.webhook\.office\.com/webhookb2/\S+"),
    ("google-api-key", "aiza", r"AIza[0-9A-Za-z_\-]{30,}"),
    ("google-oauth", "gocspx- ya29. 1//0", r"(?:GOCSPX-[\w\-]{20,}|ya29\.[\w\-]{20,}|(?<![\w/])1//0[\w\-]{30,})"),
    ("stripe-key", "_live_ _test_ _prod_", r"(?:sk|rk|pk|whsec)_(?:live|test|prod)_[0-9A-Za-z]{10,}"),
    ("api-key", "sk-", r"(?<![A-Za-z0-9])sk-(?:proj-|ant-(?:api\d\d-|admin\d\d-)?|svcacct-|admin-|live-|or-v1-)?[A-Za-z0-9_\-]{20,}"),
    ("npm-token", "npm_", r"npm_[A-Za-z0-9]{30,}"),
    ("pypi-token", "pypi-age", r"pypi-AgE[A-Za-z0-9_\-]{50,}"),
    ("huggingface-token", "hf_ api_org_", r"(?:hf|api_org)_[A-Za-z0-9]{30,}"),
    ("sendgrid-key", "sg.", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,64}"),
    ("age-secret-key", "age-secret-key-", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    ("jwt", "eyj", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-+/=]*"),
    ("password-hash", "$", r"\$(?:1|2[abxy]|5|6|y|gy|7|apr1|argon2(?:id|i|d)|pbkdf2(?:-sha\d+)?|scrypt)\$[^\s:$]{1,64}\$[^\s:]{8,}"),
    ("password-hash", "{", r"\{(?:SSHA|SHA|SMD5|MD5|CRYPT|SSHA256|SSHA512|SHA256|SHA512|PBKDF2[\w-]*|ARGON2)\}[A-Za-z0-9+/=.$]{8,}"),
    ("1password-key", "a3- ops_eyj", r"(?:A3-[A-Z0-9]{6}-[A-Z0-9\-]{20,}|ops_eyJ[A-Za-z0-9+/=]{100,})"),
    ("api-key", "p8e- ltai akcp cmvmd atatt3 absk bedrock-api-key- 4b1d clojars_ dapi fio-u- ico- lin_api_ pplx-"
     " pnu_ pul- rdme_ rubygems_ tk-us- xkeysib- sntrys_ sntryu_ sm_aat_ sm_pat_ sm_sat_ shippo_ sgp_ tfp_ ntn_",
     r"(?<![A-Za-z0-9])(?:p8e-|LTAI|AKCp|cmVmd|ATATT3|ABSK|bedrock-api-key-|4b1d|CLOJARS_|dapi|fio-u-|ico-|lin_api_"
     r"|pplx-|pnu_|pul-|rdme_|rubygems_|tk-us-|xkeysib-|sntrys_|sntryu_|sm_[aps]at_|shippo_(?:live|test)_|sgp_|tfp_|ntn_)"
     r"[A-Za-z0-9_\-=+/.]{12,}"),
    ("api-key", "do", r"do[opr]_v1_[a-f0-9]{64}"),
    ("api-key", "dp.", r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9_\-]{20,}"),
    ("api-key", "duffel_ dt0c01. ezak eztk flw shp sq0 eaa hrku- pmak- pscale_ nrak- nrjs- nrii- glc_ glsa_ fo1_ fm1 fm2_",
     r"(?:duffel_(?:test|live)_|dt0c01\.|EZ[AT]K|FLW(?:SECK|PUBK)(?:_TEST)?-|shp(?:at|ca|pa|ss)_|sq0(?:atp|csp)-|EAA[ACM]"
     r"|HRKU-|PMAK-|pscale_(?:tkn|oauth|pw)_|NRAK-|NRJS-|NRII-|glc_|glsa_|fo1_|fm1[ar]_|fm2_)[A-Za-z0-9_\-=+/.]{12,}"),
    ("api-key", "hvs. hvb. sha256~ s-s4t2 v1.0-",
     r"(?:\bhv[sb]\.[\w\-]{20,}|sha256~[\w\-]{30,}|s-s4t2(?:ud|af)-[a-f0-9]{32,}|v1\.0-[a-f0-9]{24}-[a-f0-9]{64,})"),
    ("api-key", ".atlasv1.", r"[A-Za-z0-9]{14}\.atlasv1\.[\w\-=]{20,}"),
    ("api-key", "_mmk", r"\b[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk"),
    ("api-key", "!API- key-", r"(?:\bAPI-[A-Z0-9]{26}\b|\b(?:pub)?key-[a-f0-9]{32}\b)"),
    ("api-key", "pat. sat.", r"\b[ps]at\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    ("api-key", "pat", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"),
    ("api-key", ".acc", r"\b(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_\-][A-Za-z0-9\-]{10,32}\.[A-Za-z0-9+/_=\-]{30,120}"),
    ("api-key", "eyj", r"(?<![A-Za-z0-9+/_\-])eyJ[A-Za-z0-9_\-+/]{30,}={0,2}"),
    ("api-key", "!AQVN !YC", r"\b(?:AQVN[A-Za-z0-9_\-]{35,38}|YC[A-Za-z0-9_\-]{38})\b"),
    ("twitter-bearer-token", "!AAAAAAAAAAAAAAAAAAAAA", r"A{22}[A-Za-z0-9%]{80,}"),
    ("api-key", "q~", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}"),
    ("telegram-token", ":aa", r"\b\d{5,16}:AA[0-9A-Za-z_\-]{30,}"),
    ("mailchimp-key", "-us", r"\b[0-9a-f]{32}-us\d{1,2}\b"),
    ("twilio-key", "!SK", r"\bSK[0-9a-fA-F]{32}\b"),
    ("facebook-token", "|", r"\b\d{15,16}\|[0-9A-Za-z\-_]{27,40}"),
    ("vault-token", "s.", r"(?<![\w.])s\.[A-Za-z0-9]{24}\b"),
]


# Texts (lower-cased) one of which a text must hold for each detect-secrets plugin to run ("a+b": both
# a and b; the keyword-assignment plugins need their vendor word and a secret word); a plugin not
# listed here runs on every text.
_PLUGIN_NEEDLES = {
    "ArtifactoryDetector": "!AKC|!AP", "AWSKeyDetector": "a3t|abia|acca|akia|asia|aws", "AzureStorageKeyDetector": "accountkey",
    "BasicAuthDetector": "://", "CloudantDetector": "cl+key|cl+pw|cl+pass|cl+token", "DiscordBotTokenDetector": ".", "GitHubTokenDetector": "gh",
    "GitLabTokenDetector": "gl|gr1348941", "IbmCloudIamDetector": "iam+key|iam+pw|iam+pass|iam+token",
    "IbmCosHmacDetector": "secret+cos|secret+hmac|secret_access_key|secretaccesskey|secret-access-key",
    "JwtTokenDetector": "eyj", "MailchimpDetector": "-us", "NpmDetector": "_authtoken", "OpenAIDetector": "t3blbkfj",
    "PypiTokenDetector": "pypi-", "SendGridDetector": "sg.", "SlackDetector": "xox|hooks.slack", "SoftlayerDetector": "sl+key|sl+pw|sl+pass|sl+token|softlayer",
    "SquareOAuthDetector": "sq0csp", "StripeDetector": "k_live", "TelegramBotTokenDetector": ":", "TwilioKeyDetector": "!AC|!SK",
}


def _detect_secrets_rules() -> list[tuple[str, tuple[str, ...], re.Pattern]]:
    """detect-secrets' regex plugins (except public IPs and the key-block one, which `blocks` does
    whole), as (kind, needles, regex)."""
    rules: list[tuple[str, tuple[str, ...], re.Pattern]] = []
    plugins: dict[str, type] = get_mapping_from_secret_type_to_class()
    for secret_type, plugin in plugins.items():
        if not issubclass(plugin, RegexBasedDetector) or plugin.__name__ in ("IPPublicDetector", "PrivateKeyDetector"):
            continue
        kind = re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")
        needles = tuple(_PLUGIN_NEEDLES[plugin.__name__].split("|")) if plugin.__name__ in _PLUGIN_NEEDLES else ()
        denylist = cast("Iterable[re.Pattern]", plugin.denylist)  # a class attribute on every regex plugin
        rules += [(kind, needles, regex) for regex in denylist]
    return rules


def _span(match: re.Match) -> tuple[int, int]:
    """The secret inside a match: its last group that matched (the value after its context), else all."""
    for group in range(match.re.groups, 0, -1):
        if match.group(group) and match.start(group) >= 0:
            return match.span(group)
    return match.span()


_RULES: list[tuple[str, tuple[str, ...], re.Pattern]] = [
    (kind, tuple(needles.split()), re.compile(pattern)) for kind, needles, pattern in TOKEN_KINDS
] + _detect_secrets_rules()
_ALWAYS = [index for index, (_kind, needles, _regex) in enumerate(_RULES) if not needles]
_BY_NEEDLE: dict[str, list[int]] = {}
for _index, (_kind, _needles, _regex) in enumerate(_RULES):
    for _needle in _needles:
        _BY_NEEDLE.setdefault(_needle, []).append(_index)
# (text to look for, or None; case-sensitive text, or None; all of these parts, or None; rules)
_NEEDLE_TESTS = [
    (None if needle[0] == "!" or "+" in needle else needle, needle[1:] if needle[0] == "!" else None,
     tuple(needle.split("+")) if "+" in needle else None, indexes)
    for needle, indexes in _BY_NEEDLE.items()
]


def mask_spans(text: str, spans: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, kind) span replaced by its marker; overlapping spans merge."""
    if not spans:
        return text
    out, done = [], 0
    for start, end, kind in sorted(spans, key=lambda span: (span[0], -span[1])):  # stable: first rule wins ties
        if end <= done:
            continue
        start = max(start, done)
        out += [text[done:start], marker(kind)]
        done = end
    out.append(text[done:])
    return "".join(out)


def _skip(text: str, start: int, end: int) -> bool:
    """A match that is (inside) a marker already, or too short to be a secret."""
    return end - start < 8 or text.startswith(MARKER_PREFIX, start) or text.rfind(MARKER_PREFIX, 0, start) > text.rfind("]", 0, start)


def redact_tokens(text: str) -> str:
    lowered = text.lower()
    active = set(_ALWAYS)
    for plain, exact, parts, indexes in _NEEDLE_TESTS:
        if plain is not None:
            if plain in lowered:
                active.update(indexes)
        elif exact is not None:
            if exact in text:
                active.update(indexes)
        elif parts is not None and all(part in lowered for part in parts):
            active.update(indexes)
    spans = []
    for index in sorted(active):
        kind, _, regex = _RULES[index]
        for match in regex.finditer(text):
            start, end = _span(match)
            if not _skip(text, start, end):
                spans.append((*to_token_ends(text, start, end), kind))
    return mask_spans(text, spans)


_TAIL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=")
_HEAD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def to_token_ends(text: str, start: int, end: int) -> tuple[int, int]:
    """A matched token's span grown to the whole run of token characters around it: a rule that
    knows a token's first 20 characters must not leave its last 14 showing after the marker."""
    size = len(text)
    while end < size and (text[end] in _TAIL or text[end] == "." and end + 1 < size and text[end + 1] in _HEAD):
        end += 1
    while start > 0 and text[start - 1] in _HEAD:
        start -= 1
    return start, end


# --- random-looking bare tokens, and base64 that decodes to a credential ----------------------------

def shannon_entropy(value: str) -> float:
    """Bits per character: random base64 scores ~5-6, words and paths ~2.5-3.5."""
    if not value:
        return 0.0
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in Counter(value).values())


# A run of base64 / base64url characters, not preceded by a digest's name ("SHA256:", "sha512-"): digests
# are meant to be read (ssh fingerprints, package integrity), and hex digests never reach here (no upper case).
_BARE = re.compile(
    r"(?<![A-Za-z0-9+/_\-])(?<!(?i:sha1)[:\-=])(?<!(?i:md5)[:\-=])(?<!(?i:sha256|sha384|sha512)[:\-=])"
    r"(?P<tok>[A-Za-z0-9+/_\-]{12,}={0,2})(?![A-Za-z0-9+/=_\-])"
)


_DIGEST_NAME = re.compile(r"(?i)(?:sha\d{1,3}|md5)[:\-=]")  # sha512-<base64>: a package's integrity digest


def bare_secret(token: str) -> bool:
    """A token that is almost surely generated (long; upper and lower case; digits or base64's `+/`;
    high entropy; not a path or a dashed name), or base64 that decodes to a credential."""
    if token.startswith("/") or token.count("/") > 4 or token.count("-") > 3 or _DIGEST_NAME.match(token):
        return False
    if (len(token) % 4 == 0 or token.endswith("=")) and _decodes_to_credential(token):
        return True
    if len(token) < 24:
        return False
    upper = sum(c.isupper() for c in token)
    lower = sum(c.islower() for c in token)
    digits = sum(c.isdigit() for c in token)
    symbols = sum(c in "+/" for c in token)
    if min(upper, lower) < 2 or digits + symbols < 2 or digits == 0 and len(token) < 40:
        return False
    return shannon_entropy(token) >= (4.0 if len(token) >= 32 else 3.7)


_CREDENTIAL_TEXT = re.compile(r"(?i)pass|secret|token|key|auth|pwd|^[\w.@+\-]{1,64}:[^\s:]{3,}$")


def _decodes_to_credential(token: str) -> bool:
    """Base64 that decodes to readable text naming a secret (`password=...`) or `user:password`."""
    body = token.replace("-", "+").replace("_", "/")
    try:
        decoded = base64.b64decode(body + "=" * (-len(body) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return decoded.isprintable() and bool(_CREDENTIAL_TEXT.search(decoded))


def redact_bare(text: str) -> str:
    spans = [(m.start("tok"), m.end("tok"), "high-entropy-secret")
             for m in _BARE.finditer(text) if bare_secret(m.group("tok")) and not _skip(text, m.start(), m.end())]
    return mask_spans(text, spans)

