"""Is a configuration file a person names well-formed? Its settings checked the way a person
checks them before restarting the service: the file parses (JSON, TOML), ports are
1–65535, numbers with a unit in their name are non-negative numbers, addresses that look numeric
are valid IPs.

Why: "the service won't start, its config is in X" is answered by the setting at fault, and a
small model reading ten settings cannot tell 99999 from 2525 as a port. Only rules that hold for
any program are checked, and what a setting means is read from its name alone ("listen_port",
"retry_interval_seconds", "bind_address"), never from one program's documentation; a value no
rule can judge is left alone, so a well-formed file gets an ok verdict that says what was checked.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import stat
import sys
from dataclasses import dataclass

from appliance.analyzers.base import OK, UNKNOWN, WARNING, Finding
from appliance.analyzers.common import plural, quote
from appliance.analyzers.naming import shown_path
from appliance.analyzers.readings import Readings
from appliance.tools.logs import is_log_path
from appliance.tools.paths import PathDenied, read_capped

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 has no TOML parser of its own: a TOML file is read as key = value lines
    tomllib = None

FAMILY = "config"
MAX_BYTES = 256 * 1024
# Names of configuration files: by suffix, or any file under an etc/ folder that is not a log.
_CONFIG_NAME = re.compile(r"\.(?:conf|cfg|cnf|ini|toml|json|ya?ml|properties|env)$|(?:^|/)etc/[^/]+/[^/]+$", re.I)
# Programs, not settings: scripts and units under etc/ (init.d, cron.daily, systemd) are not judged.
_NOT_CONFIG = re.compile(r"\.(?:sh|bash|py|pl|rb|service|socket|timer|target|mount|rules)$|/(?:init\.d|cron\.\w+|rc\d\.d)/", re.I)
_SETTING = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*(=|:)\s*(.*?)\s*$")
_SECTION = re.compile(r"^\s*\[[^\]]+\]\s*$")
_SPACED = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s+(\S.*?)\s*;?\s*$")
_COMMENT = re.compile(r"^\s*(?:#|;|//|$)")
_STRUCTURE = re.compile(r"^\s*(?:[{}\[\]()]+[,;]?|-\s.*|---|\.\.\.)\s*$")
_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?\s*(?:[a-zA-Z%]{0,3})$")
_DOTTED = re.compile(r"^\d+(?:\.\d+){3}(?::(\d+))?$")
# The last word of a setting's name that says its value is a number of something.
_UNIT_WORDS = {"seconds", "secs", "sec", "ms", "millis", "milliseconds", "minutes", "mins", "hours", "days",
               "bytes", "kb", "mb", "gb", "count", "retries", "workers", "threads", "size", "timeout",
               "interval", "ttl", "limit"}
_ADDRESS_WORDS = {"address", "addr", "ip", "bind", "listen", "host"}


@dataclass(frozen=True)
class Setting:
    line: int
    key: str
    value: str


def is_config_path(path: str) -> bool:
    """A path a person would call a configuration file (not a log, not a folder)."""
    return bool(_CONFIG_NAME.search(path)) and not is_log_path(path) and not _NOT_CONFIG.search(path)


def _words(key: str) -> list[str]:
    return [w for w in re.split(r"[_.\-]+|(?<=[a-z])(?=[A-Z])", key.lower()) if w]


def _value(raw: str) -> str:
    value = re.split(r"\s+[#;]", raw, maxsplit=1)[0].strip().rstrip(";").strip()
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'" else value


def value_problem(key: str, value: str) -> str | None:
    """Why a setting's value cannot be right for what its name says, or None."""
    words = _words(key)
    if not value or not words:
        return None
    last = words[-1]
    if last == "port":
        if not re.fullmatch(r"\d+", value):
            return "is not a port number" if not value.startswith("$") else None
        return None if 0 < int(value) < 65536 else "is not a valid port (1–65535)"
    if last in _UNIT_WORDS:
        if value.startswith(("$", "%", "{")) or value.lower() in ("unlimited", "infinity", "none", "off", "auto", "-1"):
            return None
        if not _NUMBER.match(value):
            if re.search(r"[\s,]", value) or re.fullmatch(r"0x[0-9a-fA-F]+", value):
                return None  # a list, a sentence or a hex number: not a value this rule reads
            return f"is not a number (the name says {last})"
        return "is negative" if value.startswith("-") else None
    if set(words) & _ADDRESS_WORDS:
        dotted = _DOTTED.match(value)
        if dotted:
            host = value.rsplit(":", 1)[0] if dotted.group(1) else value
            try:
                ipaddress.IPv4Address(host)
            except ValueError:
                return "is not a valid IPv4 address"
            if dotted.group(1) and not 0 < int(dotted.group(1)) < 65536:
                return "has a port outside 1–65535"
    return None


def parse_lines(text: str) -> list[Setting]:
    """The settings of a line-based file — `key = value`, `key: value` (YAML's too) or `key value`
    (sshd_config, nginx) — with INI sections prefixed to their names; comments, braces and list
    items are skipped. An indented setting belongs to a block, not to the INI section."""
    settings: list[Setting] = []
    section = ""
    for number, line in enumerate(text.splitlines(), 1):
        if _COMMENT.match(line) or _STRUCTURE.match(line):
            continue
        if _SECTION.match(line):
            section = line.strip()[1:-1].strip() + "."
            continue
        match = _SETTING.match(line) or _SPACED.match(line)
        if match is None:
            continue
        nested = line[:1].isspace()
        settings.append(Setting(number, ("" if nested else section) + match.group(1),
                                _value(match.group(match.lastindex or 1))))
    return settings


def _structured(text: str, suffix: str) -> str | None:
    """The parse error of a JSON or TOML file, or None when it parses (or is another format)."""
    try:
        if suffix == ".json":
            json.loads(text)
        elif suffix == ".toml" and tomllib is not None:
            tomllib.loads(text)
    except json.JSONDecodeError as exc:
        return f"does not parse as JSON: {exc.msg} at line {exc.lineno}"
    except ValueError as exc:  # tomllib.TOMLDecodeError
        return f"does not parse as TOML: {exc}"
    return None


def _read(path: str, readings: Readings) -> tuple[str, str, bool]:
    """(real path, text, whether it is a program: executable or starting with #!)."""
    fd, real, st = readings.policy.open_file(path)
    try:
        data = read_capped(fd, MAX_BYTES)
    finally:
        os.close(fd)
    text = data.decode("utf-8", errors="replace")
    return str(real), text, text.startswith("#!") or bool(st.st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))


def config_findings(path: str, readings: Readings) -> list[Finding]:
    """The verdict on a named configuration file: its first malformed setting (with the others
    counted), or ok with what was checked; unknown when it cannot be read; nothing for a program
    or an XML file (a script is no configuration file, whatever its name)."""
    try:
        real, text, program = _read(path, readings)
    except (PathDenied, OSError) as exc:
        return [Finding(FAMILY, UNKNOWN, quote(str(exc), 240), {}, path=path)]
    if program or text.lstrip().startswith("<"):
        return []  # a program, or XML (its settings are elements, not key = value lines)
    shown = shown_path(readings, real)
    broken = _structured(text, os.path.splitext(real)[1].lower())
    if broken is not None:
        return [Finding(FAMILY, WARNING, f"invalid file: {shown} {broken}", {"path": shown, "error": broken},
                        culprit=os.path.basename(real), path=shown)]
    settings = parse_lines(text)
    problems = _problems(settings)
    values = {"path": shown, "settings": len(settings), "problems": len(problems)}
    if not problems:
        return [Finding(FAMILY, OK, f"settings fine: {shown}: {plural(len(settings), 'setting')} read, none malformed "
                        "(ports in range, numbers and addresses valid)", values, path=shown)]
    (line, key, why), more = problems[0], len(problems) - 1
    extra = f"; {plural(more, 'more problem')}" if more else ""
    return [Finding(FAMILY, WARNING, f"invalid setting: {shown} line {line}: {quote(why, 200)}{extra}",
                    {**values, "line": line, "setting": key}, culprit=key, path=shown)]


def _problems(settings: list[Setting]) -> list[tuple[int, str, str]]:
    """(line, setting, why) for each value that cannot be right for what its name says, in line
    order. A setting given twice is not judged: many formats repeat directives on purpose
    (systemd's ExecStart=, nginx's listen, sensors' chip blocks)."""
    found = []
    for setting in settings:
        why = value_problem(setting.key.rsplit(".", 1)[-1], setting.value)
        if why is not None:
            found.append((setting.line, setting.key, f"{setting.key} = {setting.value} {why}"))
    return found


__all__ = ["FAMILY", "config_findings", "is_config_path", "parse_lines", "value_problem"]
