"""Commands that a log recorded, redacted as the argument vectors they were: auditd's EXECVE
records (`a0="mysql" a1="-pPW"`, a word with a space or a quote written in hex), sudo's
`COMMAND=...`, and a shell history's lines (bash, zsh's `: 1700000000:0;cmd`, fish's `- cmd: cmd`)
that give a password-taking option a value. Each goes through `cmdline.redact_argv`, the one
function every tool that shows a command line uses."""

from __future__ import annotations

import binascii
import functools
import re
import shlex
import shutil

_EXECVE = re.compile(r"\ba(?P<n>\d{1,4})=(?:\"(?P<q>[^\"\n]*)\"|(?P<hex>[0-9A-F]{2,}|\(null\)))")
_SUDO = re.compile(r"\bCOMMAND=(?P<cmd>[^\n]+)")
# a history line: a prefix, then a program's word, and somewhere a password-taking option
_HISTORY = re.compile(r"(?m)^(?P<pre>[ \t]*(?::[ \t]*\d+:\d+;|-[ \t]+cmd:[ \t]+)?(?:sudo[ \t]+)?)(?P<cmd>[\w.~/\-]*[A-Za-z][\w.\-]*[ \t][^\n]*)$")
# a line that starts like a command: a program's word, then an option, a URL or a path among its words
_PROGRAM_WORD = re.compile(r"^[a-z][\w.+\-]{0,40}[ \t]+[a-z0-9]")
_OPTION_OR_URL = re.compile(r"[ \t]--?[A-Za-z]|://")
_ASSIGNED = re.compile(r"(?:^|\s)[A-Za-z_][\w.]*[\"']?(?:[ \t]*(?:=>|:=|=)|:[ \t]+)")  # `key = value`, `key: value`: configuration, not a command
_KNOWN_START = re.compile(r"(?m)^[ \t]*(?::[ \t]*\d+:\d+;|-[ \t]+cmd:[ \t]+)?(?:sudo[ \t]+)?[a-z][\w.+\-]{0,40}[ \t]+\S")
_PASSWORD_OPTION = re.compile(r"(?<![^\s'\"])(?:-(?:p|P|w|xp|ap|pw|pass\w*|storepass|keypass|srcstorepass|deststorepass|passin|passout|"
                              r"password|token|secret|auth|psk|pin)\b|--[\w\-]*(?:pass|token|secret|key|auth|cred)[\w\-]*"
                              r"|[A-Za-z]+[\-:_][\w\-:]*(?:pass(?:word|wd)|secret|token)\b|\S*\.(?:p12|pfx|jks|keystore|bcfks):\S)")


def redact_logged(text: str) -> str:
    if "EXECVE" in text:
        text = "\n".join(_execve(line) if "type=EXECVE" in line else line for line in text.split("\n"))
    if "COMMAND=" in text:
        text = _SUDO.sub(lambda m: "COMMAND=" + _shell_words(m.group("cmd")), text)
    if _PASSWORD_OPTION.search(text) or _KNOWN_START.search(text):
        text = _HISTORY.sub(_history_line, text)
    return text


def _history_line(match: re.Match) -> str:
    command = match.group("cmd")
    # A line whose first word is a program, that gives an option a password, or that starts like a
    # command and has an option or a URL among its words; a sentence that merely starts with a
    # lowercase word and names a path ("www-data may not pass through /srv/x") is evidence, not a command.
    if re.match(r"^(?:\d|[^\s=:]+[ \t]*[=:])", command) or _ASSIGNED.search(command) or not (
            _PASSWORD_OPTION.search(command) or _command(command.split(None, 1)[0])
            or _OPTION_OR_URL.search(command) and _PROGRAM_WORD.match(command)):
        return match.group(0)
    return match.group("pre") + _shell_words(command)


@functools.lru_cache(maxsize=1024)
def _command(word: str) -> bool:
    """A word that names a program: one whose arguments `cmdline` knows, or one on this machine's PATH."""
    from appliance.tools.redaction.cmdline import known_program

    name = word.rpartition("/")[2]
    return known_program(name) or bool(re.match(r"^[a-z][\w.+\-]{1,40}$", name)) and shutil.which(name) is not None


def _shell_words(command: str) -> str:
    """A command written as text, redacted word by word (quotes and spacing as written when it splits)."""
    from appliance.tools.redaction.cmdline import redact_argv

    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        words = command.split()
    redacted = redact_argv(words)
    out = command
    for before, after in sorted(zip(words, redacted), key=lambda pair: -len(pair[0])):
        if before != after and before:
            out = out.replace(before, after)
    return out


def _execve(line: str) -> str:
    """One EXECVE record with each argument that `redact_argv` changes replaced by its redaction."""
    from appliance.tools.redaction.cmdline import redact_argv

    found = list(_EXECVE.finditer(line))
    if not found:
        return line
    words = []
    for match in found:
        if match.group("q") is not None:
            words.append(match.group("q"))
            continue
        try:
            words.append(binascii.unhexlify(match.group("hex")).decode("utf-8", "replace"))
        except (binascii.Error, ValueError):
            words.append(match.group("hex"))
    redacted = redact_argv(words)
    out, done = [], 0
    for match, before, after in zip(found, words, redacted):
        if before != after:
            out += [line[done:match.start()], f'a{match.group("n")}="{after}"']
            done = match.end()
    return "".join(out) + line[done:]
