"""Which words of a command line are shown to be harmless: everything else is masked.

A command line is judged the other way round from text: instead of knowing which flag of which
program takes a password (a new program is a new rule), each word is kept only when its shape shows
it is no secret, and masked otherwise. Kept: option names, numbers, sizes and versions, paths (that
start like one, or end in a file's extension, or exist), host names and addresses, URLs (their
passwords are masked by `urls`), words the option before them names as harmless (`--port`,
`--config`, `--user`, `-id`), and plain words of a language (lower-case letters, a capitalised word,
a camel-cased name, a device name like `eth0`). A word after an option that takes a password
(`-p`, `-P`, `-w`, `-storepass`, `--db-pass`) is masked unless it is a number or a path. A word is
judged on its own; a word made of parts (`a,b`, `k=v`, `host:port`, `user@host`, `2 words`) part by
part, so only the part that is not shown harmless is masked.
"""

from __future__ import annotations

import functools
import os
import re

from appliance.tools.redaction import MARKER_PREFIX, marker
from appliance.tools.redaction.names import PLACEHOLDER, classify, is_secret_value, secret_kind, secretish

KIND = "unverified-word"  # a word that nothing shows to be harmless

_NUMBER = re.compile(r"^[+\-]?(?:\d[\d_.:\-]*\d|\d)(?:[a-zA-Z%µ]{0,3})$|^0x[0-9a-fA-F]+$|^\d+[smhdwkKMGTP]i?[bB]?$|^-?\d+(?:e[+\-]?\d+)?$")
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+[\w.\-+~]*$")
_EXTENSION = re.compile(
    r"(?i)\.(?:conf|cnf|cfg|ini|json|ya?ml|toml|xml|jar|war|ear|py|pyc|rb|js|mjs|ts|sh|bash|pl|php|lua|so|a|sock|socket|pid|log|"
    r"lock|service|timer|target|mount|txt|pem|crt|cer|csr|pub|db|sqlite3?|properties|env|class|html?|css|gz|tgz|tar|zip|xz|zst|"
    r"bz2|img|iso|qcow2|raw|vmdk|d|so\.\d+|desktop|rules|list|repo|key|p12|pfx|jks|keystore|asc|gpg|sig|md|csv|dat|bin|out|"
    r"err|tmp|bak|old|new|local|cache|map|wasm|rs|go|c|h|cpp|hpp|java|kt|scala|cs|swift|exe|dll|dylib)(?:[:@][\w.\-/]*)?$")
_PATH_START = ("/", "./", "../", "~/", "~", "@/")
_IPV4 = re.compile(r"^(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?(?:/\d{1,2})?$")
_IPV6 = re.compile(r"^\[?[0-9a-fA-F:]*:[0-9a-fA-F:.]*\]?(?::\d{1,5})?(?:/\d{1,3})?(?:%\w+)?$")
_HOST = re.compile(r"^(?=.{3,253}$)(?:[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}\.?(?::\d{1,5})?$")
_URL = re.compile(r"^[a-zA-Z][\w+.\-]{0,20}:(?://)?[^\s]*$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-f]{8,128}$")
_FORMAT = re.compile(r"^%[\w{}.\-:]*$|^\\\w$|^\{[\w.]*\}$|^\$\{?\w+\}?$|^\*+$|^[\W_]{1,3}$")
# A device, unit or tool with a short number (eth0, sda1, tty1, v8, x86_64, h2, ipv6, log4j, k8s)
_TECH = re.compile(r"^(?:[a-z]{1,5}\d{1,3}[a-z]{0,2}\d{0,2}|x86_64|i[3-6]86|aarch64|(?:amd|arm)64|utf-?(?:8|16|32)|sha\d{1,3}|"
                   r"base\d\d|[a-z]{2,12}[\-_.]\d{1,4}(?:\.\d+)*|[a-z]+\d+\.\d+[\w.\-]*)$", re.I)
_ALPHA_RUN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_VOWELS = frozenset("aeiouyAEIOUY")
_CONSONANT_RUN = re.compile(r"[^aeiouyAEIOUY\d]{6,}")

# Options whose values the programs' own grammar makes names, places or numbers, not secrets.
_HARMLESS_OPTION = re.compile(
    r"(?i)^-{0,2}(?:[\w.\-]*[-_.])?(?:id|uid|gid|uuid|guid|name|names|namespace|ns|pid|pidfile|port|ports|host|hostname|addr|"
    r"address|bind|listen|dir|directory|path|root|file|config|conf|cfg|log|logfile|log-level|level|loglevel|verbosity|user|"
    r"username|group|mode|type|profile|format|lang|locale|timezone|tz|timeout|interval|size|limit|max|min|count|threads|"
    r"workers|jobs|socket|unit|service|target|image|tag|label|labels|env|role|cluster|region|zone|node|driver|engine|"
    r"backend|runtime|class|module|app|script|command|shell|cwd|home|prefix|output|input|from|to|channel|topic|queue|"
    r"database|db|schema|table|realm|domain|url|uri|endpoint|server|proxy|interface|iface|device|dev|protocol|proto|scheme|"
    r"version|arch|platform|os|codec|color|colour|theme|priority|nice|weight|rate|ttl|depth|seed-version|handle|fd|ticks)$|"
    r"^-[cCfFdDLlnNtTuUgGHhiIoOmMsSvVxXeEjJqQrRzZ]$")
# Options whose value is a password to the programs that have them (any program: masked unless a
# number or a path); `-p` is a port or a pid as often, hence the exception for numbers.
_PASSWORD_OPTION = re.compile(
    r"^-(?:p|P|w|a|xp|ap|pw|pwd|pass|passwd|secret|key|storepass|keypass|srcstorepass|deststorepass|srckeypass|"
    r"destkeypass|passin|passout|password|token|auth|psk|pin|cred|credentials|passphrase)$")
_PASSWORD_PREFIX = ("pass:", "pw:", "pwd:", "password:", "secret:", "token:")
_USER_OPTION = re.compile(r"^-{1,2}(?:u|U|user|username|login|login-name|account|as)$")
# Subcommands after which the words are a user and then that user's password
_LOGIN_WORDS = frozenset({"login", "auth", "adduser", "add_user", "add-user", "useradd", "passwd", "chpasswd", "set-password",
                          "change_password", "change-password", "create-user", "createuser", "authenticate", "authenticate_user",
                          "user-add", "useradd", "setpassword", "set_password", "identify", "bind"})
_KEYSTORE = re.compile(r"(?i)\.(?:p12|pfx|jks|keystore|pem|key|kdb|p8|bcfks)$")
_SEPARATORS = re.compile(r"([,;()\[\]{}|\"'`<>]+|\s+)")


@functools.lru_cache(maxsize=8192)
def plain(word: str) -> bool:
    """A word of a language or a name made of such words: letters in runs that can be pronounced
    (a vowel in each run longer than three letters, no long run of consonants), with `-_.+`
    between them, or a device-like name with a short number."""
    word = word.strip(".:!?+-")
    if not word:
        return True
    if _TECH.match(word) or _FORMAT.match(word):
        return True
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9\-_.+']*$", word) or word[0].isdigit() and not re.match(r"^\d+[\-_.]", word):
        return False
    for part in re.split(r"[\-_.+']+", word):
        if not part or part.isdigit() and len(part) <= 4 or _TECH.match(part):
            continue
        if not (part.islower() or part.isupper() and len(part) <= 24 or part[0].isupper() and part[1:].islower()
                or _camel(part)):
            return False
        for run in _ALPHA_RUN.findall(part):
            if len(run) > 3 and not (_VOWELS & set(run)) or _CONSONANT_RUN.search(run) or len(run) > 24:
                return False
    return True


def _camel(part: str) -> bool:
    """A camel-cased name (`UseG1GC`, `CastMediaRouteProvider`): capitalised runs joined."""
    runs = _ALPHA_RUN.findall(part)
    return "".join(runs) == part and all((r.islower() or r[0].isupper() and r[1:].islower()) and bool(_VOWELS & set(r.lower()))
                                         or r.isupper() and len(r) <= 5 or r.isdigit() and len(r) <= 2 for r in runs)


@functools.lru_cache(maxsize=8192)
def _exists(word: str) -> bool:
    try:
        return len(word) < 256 and "/" in word and os.path.lexists(word)
    except (OSError, ValueError):
        return False


def _pathlike(word: str) -> bool:
    """A path: starts like one, or its parts are plain and it ends in a file's extension, or it exists.
    Base64 holding `/` is not a path unless it starts like one."""
    if word.startswith(_PATH_START) or _exists(word):
        return True
    if "/" in word or _EXTENSION.search(word):
        parts = [p for p in re.split(r"[/]", word) if p]
        return bool(parts) and all(plain(p) or _NUMBER.match(p) or _EXTENSION.search(p) and plain(p.rsplit(".", 1)[0].replace(".", "-"))
                                   or p in ("*", "**") for p in parts)
    return False


def harmless(word: str) -> bool:
    """Whether this single piece of a word (no separators inside) is shown to be no secret."""
    if not word or word.startswith(MARKER_PREFIX) or PLACEHOLDER.match(word):
        return True
    if _NUMBER.match(word) or _VERSION.match(word) or _UUID.match(word):
        return True
    if _IPV4.match(word) or ":" in word and _IPV6.match(word) and word.count(":") >= 2 or _HOST.match(word):
        return True
    if _pathlike(word):
        return True
    return plain(word)


def shown(word: str, *, strict: bool = False, ids: bool = False) -> str:
    """`word` with every part that is not shown harmless masked. `strict`: the word stands where a
    password goes (only numbers and paths are kept); `ids`: the option before it names an id or a
    name (hex ids and uuids are kept)."""
    if not word or word.startswith(MARKER_PREFIX):
        return word
    if strict:
        return word if _NUMBER.match(word) or word.startswith(_PATH_START) or _FORMAT.match(word) or PLACEHOLDER.match(word) \
            else marker("password")
    if "://" in word and _URL.match(word):
        return word  # a URL: its password is `urls`' to mask, its query's secrets `keys`'
    if ids and (_HEX.match(word) or _UUID.match(word)):
        return word
    pieces = _SEPARATORS.split(word)
    if len(pieces) > 1:
        return "".join(piece if i % 2 else shown(piece, ids=ids) for i, piece in enumerate(pieces))
    return _piece(word, ids)


def _piece(word: str, ids: bool) -> str:
    head, colon, tail = word.rpartition(":")
    if colon and tail and _KEYSTORE.search(head):
        return f"{shown(head)}:{marker('password')}"  # keystore.p12:PASSWORD
    if harmless(word):
        return word
    if word[0] in ":@" and len(word) > 1:
        return word[0] + shown(word[1:], ids=ids)
    if word.lower().startswith(_PASSWORD_PREFIX):
        cut = word.index(":") + 1
        return word[:cut] + marker("password")
    name, eq, value = word.partition("=")
    if eq and name and re.match(r"^[\w.\-:]+$", name):
        if classify(name) == "secret" and is_secret_value(name, value):
            return f"{name}={marker(secret_kind(name))}"
        return f"{shown(name)}={shown(value, ids=ids or bool(_HARMLESS_OPTION.match(name)))}" if value else shown(name) + "="
    for sep in (":", "@"):
        if sep in word.strip(sep):
            head, _, tail = word.partition(sep)
            return f"{shown(head, ids=ids)}{sep}{shown(tail, ids=ids)}"
    if ids and (_HEX.match(word) or re.match(r"^[\w\-.]{1,80}$", word) and not secretish(word)):
        return word
    return marker(KIND)


def judge(words: list[str], done: list[bool], starts: set[int], lenient: frozenset[int] = frozenset()) -> list[str]:
    """Every word of an argument vector not already handled (`done`), and not a program's own name
    (`starts`), kept when shown harmless and masked otherwise (see the module docstring). A word in
    `lenient` follows an option that its program says takes no value (`mysql -p shop`)."""
    out = list(words)
    user_at = -10
    login_at = -10
    for index, word in enumerate(words):
        previous = words[index - 1] if index else ""
        if index in starts:
            continue
        if done[index] or word.startswith(MARKER_PREFIX):
            continue
        lower = word.lower()
        if word.startswith("-") and len(word) > 1 and not _NUMBER.match(word):
            out[index] = _option_word(word)
            continue
        option = previous if previous.startswith("-") and len(previous) > 1 and "=" not in previous and not _NUMBER.match(previous) else ""
        if option and index not in lenient and (_PASSWORD_OPTION.match(option) or classify(option.lstrip("-")) == "secret"):
            if not (done[index - 1] and words[index - 1].startswith(MARKER_PREFIX)):
                out[index] = shown(word, strict=True)
            continue
        if option and _USER_OPTION.match(option):
            user_at = index
        elif not option and index - 1 == user_at and not (_pathlike(word) or _HOST.match(word) or _IPV4.match(word) or "://" in word):
            out[index] = shown(word, strict=True)  # `prog -u bob PASSWORD`: the positional after a user
            continue
        if lower in _LOGIN_WORDS:
            login_at = index
        elif login_at >= 0 and index == login_at + 2 and not option and not _pathlike(word) and not _HOST.match(word):
            out[index] = shown(word, strict=True)  # `prog login USER PASSWORD`
            continue
        out[index] = shown(word, ids=bool(option and _HARMLESS_OPTION.match(option)))
    return out


def _option_word(word: str) -> str:
    """An option: its name is kept; a value after `=` is judged under that name; a value glued to
    a short option that takes a password (`-pSECRET`) is masked unless plain or a number."""
    name, eq, value = word.partition("=")
    if eq:
        key = name.lstrip("-")
        if classify(key) == "secret" and is_secret_value(key, value):
            return f"{name}={marker(secret_kind(key))}"
        return f"{name}={shown(value, ids=bool(_HARMLESS_OPTION.match(name)))}"
    if not word.startswith("--") and len(word) > 2 and word[1] in "pPw":
        rest = word[2:]
        if not (_NUMBER.match(rest) or plain(rest) or _pathlike(rest)):
            return word[:2] + marker("password")
    if not word.startswith("--") and len(word) > 2:
        rest = word[2:]  # -XX:+UseG1GC, -Xss1m, -MBas: a name, unless what follows its letter looks generated
        if shown(rest) != rest and secretish(rest):
            return word[:2] + marker("high-entropy-secret")
    return word
