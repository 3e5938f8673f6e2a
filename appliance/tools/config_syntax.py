"""Whether a configuration file parses, and the line of its first error: JSON (json), TOML
(tomllib), INI (configparser), YAML (PyYAML, when it is installed). The format is told by the
file's name; a file named otherwise is not judged (a .conf can be any of a dozen formats)."""

from __future__ import annotations

import configparser
import importlib
import importlib.util
import json
import re

tomllib = importlib.import_module("tomllib")  # Python 3.11's TOML reader (mypy checks for 3.10)

_TOML_LINE = re.compile(r"line (\d+)")


def _json(text: str) -> tuple[int, str] | None:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc.lineno, exc.msg
    return None


def _toml(text: str) -> tuple[int, str] | None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        hit = _TOML_LINE.search(str(exc))
        return (int(hit.group(1)) if hit else 0), str(exc).split(" (at", 1)[0]
    return None


def _ini(text: str) -> tuple[int, str] | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.MissingSectionHeaderError as exc:
        return exc.lineno, "a setting before any [section] header"
    except configparser.ParsingError as exc:
        line, _ = exc.errors[0]
        return line, "a line that is neither a [section], a setting nor a comment"
    except configparser.Error as exc:
        return getattr(exc, "lineno", 0) or 0, exc.message
    return None


def _yaml(text: str) -> tuple[int, str] | None:
    import yaml  # type: ignore[import-untyped]

    try:
        yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        return (mark.line + 1 if mark is not None else 0), str(exc.problem or exc)
    except yaml.YAMLError as exc:
        return 0, str(exc)
    return None


def _has_yaml() -> bool:
    return importlib.util.find_spec("yaml") is not None


FORMATS = {".json": ("JSON", _json), ".toml": ("TOML", _toml), ".ini": ("INI", _ini), ".cfg": ("INI", _ini),
           ".yaml": ("YAML", _yaml), ".yml": ("YAML", _yaml)}


def syntax_of(raw: bytes, name: str) -> dict:
    """{"format", "syntax_ok", "first_error_line", "first_error"} for a file of a known format; {} else."""
    suffix = name[name.rfind("."):].lower() if "." in name else ""
    if suffix not in FORMATS:
        return {}
    label, check = FORMATS[suffix]
    if label == "YAML" and not _has_yaml():
        return {"format": label, "syntax": "not checked (PyYAML is not installed)"}
    problem = check(raw.decode("utf-8", errors="replace"))
    if problem is None:
        return {"format": label, "syntax_ok": True}
    line, message = problem
    return {"format": label, "syntax_ok": False, "first_error_line": line, "first_error": message[:160]}
