"""Command lines as argument vectors: `/proc/PID/cmdline` is redacted word by word, before joining.

Joining first loses what a word is: `--password 'two words'` becomes two words of which the text
redactor masks one, `-P SECRET` is a port to one program and a password to another, and a password
given as the third positional argument of `htpasswd -b` has no key at all. Here each word is judged
with what came before it:
- an option that names a secret (`--password`, `-passwd`, `--db-token`, `-storepass`) masks the next
  word whole, whatever it holds (`''`, `two words`); `--password=x` masks after `=`;
- per program, the short options that take a password, glued or spaced (`mysql -pX`, `sshpass -p X`,
  `ssh-keygen -N X`, `sqlcmd -P X`, `redis-cli -a X`, `7z -pX`, ...), `user/password@service`
  (Oracle tools), `user,password` (`lftp -u`), `user%password` (`smbclient -U`), `user:password`
  (`curl -u`), and the positional arguments some programs take as passwords (`htpasswd -b f u PW`,
  `rabbitmqctl add_user U PW`, `redis-cli AUTH PW`, `nmcli ... password PW`, `wpa_passphrase S PW`);
- `VAR=value` words before the program (`env PGPASSWORD=x psql`) mask a value whose name is secret;
- every word then goes through the text redactor (tokens, URLs with passwords, `key=value` pairs,
  a shell's `-c` script with `echo PW | sudo -S`).

`redact_argv(argv)` is the one function every tool that shows a command line calls (through
`show_argv`, which also joins and clips); nothing here reads /proc.
"""

from __future__ import annotations

import os
import re
from typing import Sequence

from appliance.tools.redaction import MARKER_PREFIX, marker
from appliance.tools.redaction.blocks import redact_key_blocks
from appliance.tools.redaction.harmless import judge
from appliance.tools.redaction.keys import redact_keys
from appliance.tools.redaction.oracle import oracle_login
from appliance.tools.redaction.names import PLACEHOLDER, classify, secret_kind, secretish
from appliance.tools.redaction.structured import redact_structured
from appliance.tools.redaction.tokens import redact_bare, redact_tokens
from appliance.tools.redaction.urls import redact_urls

KIND = "password"

_MYSQL = ("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow", "mysqlpump", "mysqlslap",
          "mariadb", "mariadb-dump", "mariadb-admin", "mariadb-import", "mariadb-check", "mysqlsh")
_MONGO = ("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "mongostat", "mongotop", "mongofiles")
_LDAP = ("ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapcompare", "ldapmodrdn", "ldapwhoami", "ldapexop",
         "ldappasswd", "ldapurl")
_REDIS = ("redis-cli", "valkey-cli", "keydb-cli", "redis-benchmark")
_MSSQL = ("sqlcmd", "bcp", "osql", "isql")
_ORACLE = ("sqlplus", "rman", "exp", "imp", "expdp", "impdp", "sqlldr", "dgmgrl", "tkprof", "sql", "orapwd", "wrap")
_LOGIN = ("docker", "podman", "nerdctl", "helm", "buildah", "skopeo", "oras", "crane", "regctl")

# mysql's `-p` takes its password glued only (`-p shop` asks for one and names the database)
_GLUED_ONLY = frozenset(_MYSQL)
# program -> short options whose value is a password: (option, may be glued to its value)
_SHORT: dict[str, tuple[tuple[str, bool], ...]] = {
    **{p: (("-p", True),) for p in _MYSQL},
    **{p: (("-p", True),) for p in _MONGO},
    **{p: (("-w", False), ("-s", False), ("-a", False)) for p in _LDAP},
    **{p: (("-a", True),) for p in _REDIS},
    **{p: (("-P", True),) for p in _MSSQL},
    **{p: (("-p", False),) for p in _LOGIN},
    "sshpass": (("-p", True),),
    "ssh-keygen": (("-N", True), ("-P", True)),
    "ipmitool": (("-P", True), ("-k", False), ("-y", False)),
    "mosquitto_pub": (("-P", True),), "mosquitto_sub": (("-P", True),), "mosquitto_rr": (("-P", True),),
    "zip": (("-P", False),), "zipcloak": (("-P", False),), "unzip": (("-P", False),), "funzip": (("-P", False),),
    "7z": (("-p", True),), "7za": (("-p", True),), "7zr": (("-p", True),), "unrar": (("-p", True),), "rar": (("-p", True), ("-hp", True)),
    "useradd": (("-p", False),), "usermod": (("-p", False),), "groupadd": (("-p", False),), "groupmod": (("-p", False),),
    "rdesktop": (("-p", False),), "x11vnc": (("-passwd", False), ("-viewpasswd", False)),
    "openssl": (("-k", False), ("-pass", False), ("-passin", False), ("-passout", False), ("-password", False)),
    "pg_basebackup": (), "psql": (),
    "smbclient": (("-P", False),), "rpcclient": (), "net": (),
    "wget": (), "curl": (), "lftp": (),
    "xfreerdp": (), "sshfs": (),
    "keytool": (("-storepass", False), ("-keypass", False), ("-srcstorepass", False), ("-deststorepass", False),
                ("-srckeypass", False), ("-destkeypass", False), ("-new", False)),
    "pure-pw": (), "vncpasswd": (), "htdigest": (),
    "snmpwalk": (("-A", True), ("-X", True), ("-c", True)), "snmpget": (("-A", True), ("-X", True), ("-c", True)),
    "snmpset": (("-A", True), ("-X", True), ("-c", True)), "snmpbulkwalk": (("-A", True), ("-X", True), ("-c", True)),
    "wpa_passphrase": (), "iwctl": (),
    "az": (("-p", False),), "ncftp": (("-p", False),), "ncftpget": (("-p", False),), "ncftpput": (("-p", False),),
    "aws": (), "rclone": (), "smbpasswd": (), "kinit": (), "gh": (), "influx": (),
}
# program -> options whose value is `user<sep>password` (sep, options)
_USER_PASS: dict[str, tuple[str, tuple[str, ...]]] = {
    "curl": (":", ("-u", "--user", "-U", "--proxy-user")),
    "wget": (":", ()),
    "lftp": (",", ("-u", "--user")),
    "smbclient": ("%", ("-U", "--user", "--username")), "rpcclient": ("%", ("-U", "--user")),
    "smbcacls": ("%", ("-U", "--user")), "smbget": ("%", ("-U", "--user")), "net": ("%", ("-U", "--user")),
    "mount.cifs": ("%", ()), "xfreerdp": (":", ()),
}
# program -> (words after which the next positional argument is a password, positions counted among
# positionals that are passwords when a triggering flag is present)
_AFTER_WORD: dict[str, frozenset[str]] = {
    **{p: frozenset({"auth"}) for p in _REDIS},
    "rabbitmqctl": frozenset({"add_user", "change_password", "authenticate_user"}),
    "mysqladmin": frozenset({"password"}),
    "nmcli": frozenset({"password", "wifi-sec.psk", "802-11-wireless-security.psk", "psk", "wep-key0", "wifi-sec.wep-key0",
                        "802-1x.password", "vpn.secrets", "pin"}),
    "openssl": frozenset({"passwd"}),
    "vault": frozenset({"login", "token"}),
    "mkpasswd": frozenset(), "wpa_cli": frozenset({"psk", "password"}),
    "iwctl": frozenset({"--passphrase"}),
    "net": frozenset({"use", "user"}),
}
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "busybox", "fish"})
_ENV_WORD = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<val>.*)$", re.S)
_NAME = re.compile(r"^[A-Za-z_][\w.\-]{1,63}$")
_OPTION_WORD = re.compile(r"^--?[A-Za-z][\w.\-]*$")


def _program(word: str) -> str:
    """The program's name as a person would say it: `/usr/bin/mysql` -> `mysql`, `python3.11` stays."""
    return os.path.basename(word).lower()


def _masked(value: str) -> bool:
    return value.startswith(MARKER_PREFIX)


def _mask_value(name: str, value: str) -> str | None:
    """The marker for `value` given under option/variable `name`, or None to leave it alone."""
    kind = classify(name)
    if kind == "secret":
        if _masked(value) or PLACEHOLDER.match(value.strip()) and value.strip():
            return None
        if name.lower().lstrip("-") == "pwd" and value.startswith(("/", "~")):
            return None
        return marker(secret_kind(name))
    if kind == "maybe" and secretish(value):
        return marker("high-entropy-secret")
    return None


def _split_user(value: str, sep: str) -> str:
    """`user<sep>password` with the password masked (a value without `sep` is left alone)."""
    user, found, password = value.partition(sep)
    if not found or not password or _masked(password):
        return value
    return f"{user}{sep}{marker(KIND)}"


class _Argv:
    """One command line being redacted: the words, which are done, and the program in force."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.words = [str(word) for word in argv]  # a copy: the caller's list is never changed
        self.done = [False] * len(self.words)

    def set(self, index: int, text: str) -> None:
        self.words[index] = text
        self.done[index] = True


def redact_argv(argv: Sequence[str], *, text_pass: bool = True) -> list[str]:
    """The argument vector with every secret masked, word by word (see the module docstring).
    The result has as many words as `argv`. `text_pass=False` leaves out the text redactor's pass over
    each word (for a caller that runs it over the whole text anyway). Never raises."""
    cmd = _Argv(argv)
    words = cmd.words
    original = list(words)
    _mask_prefixes(cmd)
    programs = _programs(words)
    for index in range(len(words)):
        if cmd.done[index]:
            continue
        program, at = programs[index]
        handled = _option(cmd, index, program) or _user_pass(cmd, index, program) or _positional(cmd, index, program, at)
        if not handled and not cmd.done[index]:
            word = words[index]
            if program in _SHELLS and index > at and words[index - 1] in _SCRIPT_FLAGS:
                word = _script(word)
            cmd.set(index, oracle_login(program in _ORACLE, word))
    changed = [after != before for after, before in zip(words, original)]
    lenient = frozenset(i for i in range(1, len(words)) if words[i - 1] == "-p" and programs[i][0] in _GLUED_ONLY)
    words = judge(words, changed, {at for _program_name, at in programs}, lenient)
    return [_redact_word(word) for word in words] if text_pass else words


# The text redactor's passes that judge one word (all but this module's own command pass; the
# order is appliance.tools.redact's), imported here rather than `redact` itself: no import circle.
_WORD_PASSES = (redact_key_blocks, redact_urls, redact_tokens, redact_structured, redact_keys, redact_bare)


def _redact_word(word: str) -> str:
    for step in _WORD_PASSES:
        word = step(word)
    return word


def show_argv(argv: Sequence[str], fallback: str = "?") -> str:
    """The redacted command line as one line of text, words joined by spaces as `ps` shows them (the
    words are redacted first, so joining loses nothing secret); `[fallback]` for a process without
    one (a kernel thread)."""
    if not argv:
        return f"[{fallback}]"
    return " ".join(word.replace("\n", " ").replace("\r", " ") for word in redact_argv(argv))


_SEPARATORS = frozenset({"|", "||", "&&", ";", "&", "(", ")", "|&", ";;"})
_PASSWORD_READERS = frozenset({"passwd", "chpasswd", "smbpasswd", "vncpasswd", "chgpasswd", "kinit", "cryptsetup", "smbpasswd", "htpasswd", "sshpass",
                               "openssl", "gpg", "gpg2", "vault", "ldappasswd", "pdbedit", "ipa", "expect", "su", "sudo"})


def _script(script: str) -> str:
    """A shell's `-c` script: split into commands the way the shell would (shlex), each command's
    words redacted as an argument vector, and an `echo`/`printf` piped into a program that reads a
    password from its input (`echo PW | sudo -S`, `| passwd --stdin`, `| docker login --password-stdin`)
    masked; the script's text keeps its form, with each secret word replaced."""
    import shlex

    try:
        lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return script  # an unclosed quote: the text redactor alone
    commands: list[list[str]] = [[]]
    pipes: list[bool] = []
    for token in tokens:
        if token in _SEPARATORS:
            pipes.append(token in ("|", "|&"))
            commands.append([])
        else:
            commands[-1].append(token)
    changed: dict[str, str] = {}
    for number, words in enumerate(commands):
        if not words:
            continue
        redacted = redact_argv(words) if _program(words[0]) not in _SHELLS else list(words)
        piped_to = commands[number + 1] if number < len(pipes) and pipes[number] and number + 1 < len(commands) else []
        if _program(words[0]) in ("echo", "printf") and _reads_password(piped_to):
            redacted = [w if w.startswith("-") and i == 1 or i == 0 else marker(KIND) for i, w in enumerate(words)]
        for before, after in zip(words, redacted):
            if before != after and before:
                changed[before] = after
    for before in sorted(changed, key=len, reverse=True):
        script = script.replace(before, changed[before])
    return script


def _reads_password(words: list[str]) -> bool:
    """A command that reads a password on its input."""
    if not words:
        return False
    names = [_program(w) for w in words if not w.startswith("-") and not _ENV_WORD.match(w)]
    flags = " ".join(w for w in words if w.startswith("-"))
    return (bool(names) and names[0] in _PASSWORD_READERS) or "stdin" in flags or "-S" in words or "pass" in flags


def _mask_prefixes(cmd: _Argv) -> None:
    """Mask the values of `VAR=value` words that name a secret (before the program, after `env`)."""
    words = cmd.words
    for index, word in enumerate(words):
        match = _ENV_WORD.match(word)
        if match and not (index and words[index - 1] in _SCRIPT_FLAGS):
            masked = _mask_value(match.group("name"), match.group("val"))
            if masked:
                cmd.set(index, f"{match.group('name')}={masked}")


_WRAPPERS = frozenset({"env", "sudo", "nohup", "timeout", "nice", "ionice", "exec", "time", "stdbuf", "chroot", "setsid",
                       "runuser", "su", "doas", "xargs", "watch", "strace", "ltrace", "flock", "unbuffer", "chrt", "taskset"})
# A shell or interpreter running a file hands over to the file: `sh /opt/bin/mysql -pX` is mysql's.
_INTERPRETERS = frozenset({*_SHELLS, "python", "python2", "python3", "perl", "ruby", "node", "php", "lua", "tclsh"})
_SCRIPT_FLAGS = frozenset({"-c", "-lc", "-ic", "-ec", "-xc", "-cl"})
_KNOWN = frozenset({*_SHORT, *_USER_PASS, *_AFTER_WORD, *_ORACLE, *_SHELLS, "htpasswd", "mkpasswd", "vncpasswd", "wpa_passphrase",
                    "isql", "echo", "printf"})


def known_program(name: str) -> bool:
    """A program whose arguments this module knows."""
    return name.lower() in _KNOWN


def _programs(words: list[str]) -> list[tuple[str, int]]:
    """For each word, the program it is an argument of and that program's index: a wrapper (`env`,
    `sudo -u bob`, `nohup`, `timeout 5`) hands over to the next known program, or to the first word
    after it that is neither an option nor a `VAR=value`."""
    out = []
    program, at = "", 0
    wrapping, wrapped = True, False
    for index, word in enumerate(words):
        after_c = index > 0 and words[index - 1] in _SCRIPT_FLAGS and program in _SHELLS
        if wrapping and after_c:
            wrapping = False  # `sh -c SCRIPT`: the script is the shell's argument (see _script)
        elif wrapping and word and not word.startswith("-") and not _ENV_WORD.match(word) and not word.isdigit():
            name = _program(word)
            program, at = name, index
            wrapped = wrapped or name in _WRAPPERS
            wrapping = name in _WRAPPERS or name in _INTERPRETERS or (wrapped and name not in _KNOWN)
        out.append((program, at))
    return out


def _option(cmd: _Argv, index: int, program: str) -> bool:
    """An option that takes a secret: `--password X`, `--password=X`, a program's `-pX` or `-P X`."""
    words = cmd.words
    word = words[index]
    if not word.startswith("-") or word in ("-", "--"):
        return False
    name, eq, value = word.partition("=")
    if eq and _OPTION_WORD.match(name):
        masked = _mask_value(name.lstrip("-"), value)
        if masked:
            cmd.set(index, f"{name}={masked}")
            return True
    for option, glued in _SHORT.get(program, ()):
        if program in _LOGIN and "login" not in words:
            break  # `docker run -p 8080:80`: a port; `docker login -p PW`: a password
        if word == option and program not in _GLUED_ONLY:
            if index + 1 < len(words) and not cmd.done[index + 1]:
                cmd.set(index + 1, marker(KIND))
            return True
        if glued and word.startswith(option) and len(word) > len(option) and not _masked(word[len(option):]):
            cmd.set(index, option + marker(KIND))
            return True
    if not eq and _OPTION_WORD.match(word) and index + 1 < len(words) and not cmd.done[index + 1]:
        key = word.lstrip("-")
        following = words[index + 1]
        if classify(key) == "secret" and not _masked(following):
            if _OPTION_WORD.match(following) and following.startswith("--"):
                return False  # `psql --password --host x`: a flag that asks for the password
            masked = _mask_value(key, following) if following else marker(secret_kind(key))
            if masked:
                cmd.set(index + 1, masked)
            return True
        if classify(key) == "maybe" and secretish(following):
            cmd.set(index + 1, marker("high-entropy-secret"))
            return True
    return False


def _user_pass(cmd: _Argv, index: int, program: str) -> bool:
    """`curl -u user:PW`, `lftp -u user,PW`, `smbclient -U user%PW`, glued or spaced or `--user=`."""
    if program not in _USER_PASS:
        return False
    sep, options = _USER_PASS[program]
    word = cmd.words[index]
    for option in options:
        if word == option and index + 1 < len(cmd.words):
            cmd.set(index + 1, _split_user(cmd.words[index + 1], sep))
            return True
        for joiner in ("=", ""):
            if word.startswith(option + joiner) and len(word) > len(option + joiner) and (joiner or len(option) == 2):
                cmd.set(index, option + joiner + _split_user(word[len(option + joiner):], sep))
                return True
    if program == "xfreerdp" and word.lower().startswith("/p:"):
        cmd.set(index, word[:3] + marker(KIND))
        return True
    if program == "mount.cifs" and "%" in word and not word.startswith(("/", "-")):
        cmd.set(index, _split_user(word, "%"))
        return True
    return False


def _positional(cmd: _Argv, index: int, program: str, at: int) -> bool:
    """Programs whose positional arguments are passwords."""
    words = cmd.words
    word = words[index]
    lower = word.lower()
    if program in _AFTER_WORD and lower in _AFTER_WORD[program] and index + 1 < len(words):
        rest = [i for i in range(index + 1, len(words)) if not words[i].startswith("-") or words[i] == "-"]
        if program in _REDIS or program == "rabbitmqctl":
            targets = rest[-1:] if program in _REDIS else rest[1:2]  # AUTH [user] PW; add_user USER PW
        elif program == "openssl" or program == "net":
            targets = rest[-1:] if program == "openssl" else rest[1:2]  # openssl passwd [-6] PW; net use \\srv PW
        else:
            targets = rest[:1]
        for target in targets:
            if not cmd.done[target]:
                cmd.set(target, marker(KIND))
        return True
    if index > at and not word.startswith("-") and _NAME.match(word) and classify(word) == "secret" and index + 1 < len(words):
        following = words[index + 1]
        if following and not following.startswith(("-", "/", "./", "~/")) and not cmd.done[index + 1] and not _masked(following):
            cmd.set(index + 1, marker(secret_kind(word)))  # `aws configure set aws_secret_access_key X`, `... password X`
            return True
    if index <= at:
        return False
    positionals = [i for i in range(at + 1, len(words)) if not words[i].startswith("-")]
    if program == "htpasswd" and any(w.startswith("-") and "b" in w for w in words[at + 1:]) and index in positionals:
        return _mask_nth(cmd, index, positionals, -1)
    if program in ("wpa_passphrase", "mkpasswd", "vncpasswd") and index in positionals:
        return _mask_nth(cmd, index, positionals, 1 if program == "wpa_passphrase" else -1)
    if program == "isql" and index in positionals:
        return _mask_nth(cmd, index, positionals, 2)
    return False


def _mask_nth(cmd: _Argv, index: int, positionals: list[int], nth: int) -> bool:
    """Mask the `nth` positional argument (when it exists) once, when `index` reaches it."""
    if len(positionals) > abs(nth) - (nth < 0) and positionals[nth] == index:
        cmd.set(index, marker(KIND))
        return True
    return False
