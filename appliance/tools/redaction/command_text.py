"""Commands quoted in text (a shell history, a log line that shows what ran): each line that runs a
program whose arguments `cmdline` knows has that command's words redacted as an argument vector,
and `echo`/`printf` piped into a program that reads a password is masked; the rest of the line stays
as it was. Process command lines do not come here: the process tools hand their argument vectors to
`cmdline.show_argv` directly."""

from __future__ import annotations

import re

from appliance.tools.redaction import marker
from appliance.tools.redaction.cmdline import (
    _AFTER_WORD, _ORACLE, _SHORT, _USER_PASS, KIND, _reads_password, _script, redact_argv,
)
from appliance.tools.redaction.logged import redact_logged
from appliance.tools.redaction.names import classify


# Programs whose arguments this module knows, as they appear inside a line of text (a shell history,
# a log line quoting a command): a line naming none of them is never split into words.
_TEXT_PROGRAMS = tuple(sorted({*_SHORT, *_USER_PASS, *_AFTER_WORD, *_ORACLE, "htpasswd", "mkpasswd", "vncpasswd",
                               "wpa_passphrase", "isql"} - {"sql", "net", "exp", "imp", "wrap", "psql", "wget", "curl"}))
_PROGRAM_WORD = re.compile(r"(?<![\w\-.])(?:[\w.\-/]*/)?(?:" + "|".join(re.escape(p) for p in _TEXT_PROGRAMS) + r")(?![\w\-.])")
_PROGRAM_SET = frozenset(_TEXT_PROGRAMS)
_NAME_WORD = re.compile(r"[\w\-.]+")
_ECHO = re.compile(r"(?<![\w\-.])(?:echo|printf)[ \t]")
_TOKEN = re.compile(r"""'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'"|;&()<>]+|[|;&()<>]+""")


def redact_command_text(text: str) -> str:
    """Each line of `text` that runs a known program (`... sqlcmd -S db -P PW`, `sqlplus u/PW@db`) with
    that command's words redacted as an argument vector (`redact_argv`), the rest of the line as it was;
    logged commands (auditd's EXECVE records, sudo's `COMMAND=`, a shell history's lines that give an
    option a password) the same way."""
    text = redact_logged(text)
    piped = "|" in text and ("echo" in text or "printf" in text)
    named = _PROGRAM_SET.intersection(_NAME_WORD.findall(text))  # cheaper than the regex over the whole text
    if not piped and not named:
        return text
    lines = text.split("\n")
    for index, line in enumerate(lines):
        match = _PROGRAM_WORD.search(line) if any(name in line for name in named) else None
        if match:
            line = line[:match.start()] + _redact_command(line[match.start():])
        echo = _ECHO.search(line) if piped and "|" in line else None
        if echo:
            line = line[:echo.start()] + _script(line[echo.start():])
        lines[index] = line
    return "\n".join(lines)


def _redact_command(command: str) -> str:
    """One command (up to the line's end) with its secret words masked in place; quotes kept."""
    tokens = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(command)]
    words: list[str] = []
    places: list[tuple[int, int, int]] = []  # (start, end, quote length)
    here = -1  # the word given as a here-string (`<<< WORD`): the command's input
    for start, end, token in tokens:
        if token == "<<<" and here < 0:
            here = len(words)
            continue
        if token[0] in "|;&()<>":
            break
        quoted = token[0] in "'\"" and len(token) > 1 and token[-1] == token[0]
        words.append(token[1:-1] if quoted else token)
        places.append((start, end, 1 if quoted else 0))
    if len(words) < 2:
        return command
    redacted = redact_argv(words, text_pass=False)
    if 0 < here < len(words) and (_reads_password(words[:here]) or classify(words[here - 1].lstrip("-")) == "secret"):
        redacted[here] = marker(KIND)  # `smbpasswd -a bob <<< PW`, `gh auth login --with-token <<< TOKEN`
    out, done = [], 0
    for (start, end, quote), before, after in zip(places, words, redacted):
        if before != after:
            out += [command[done:start + quote], after]
            done = end - quote
    return "".join(out) + command[done:] if out else command
