"""Turning a tool's `{status, data, error}` into the text the model reads.

Why this is its own step: tool output is untrusted (a log line can say "ignore your instructions"),
can hold secrets, and can be huge. So every observation is rendered compactly (one line per record,
`key=value`), stripped of control characters, redacted, cut to a token budget that keeps the
ERROR / WARN / FAIL lines a troubleshooter needs, and wrapped in delimiters that the prompt declares
to be data. A delimiter inside the data is defused so the data cannot close its own wrapper.
"""

from __future__ import annotations

import json
import re
from typing import Any

from appliance.agent.facts import ENTITY_KEYS
from appliance.agent.plain_words import EMPTY_PART

CHARS_PER_TOKEN = 3  # conservative for JSON-ish text in BPE vocabularies (English prose is ~4)
IMPORTANT = re.compile(r"\b(error|err|warn(ing)?|fail(ed|ure)?|fatal|critical|crit|panic|denied|oom|killed)\b", re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_TAG = re.compile(r"<\s*(/?)\s*(observation|reply|plan)", re.I)
_LINE_MAX = 240


def redact(text: str) -> str:
    """The tools area's one redactor (imported late so the engine loads without the tools)."""
    from appliance.tools.redact import redact as _redact

    return _redact(text)


def clean(text: str) -> str:
    """Remove control and bidi characters (tabs become spaces) and defuse our own delimiters."""
    text = text.replace("\t", " ").replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    return _TAG.sub(lambda m: f"[{m.group(1)}{m.group(2)}", text)


def _scalar(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) < 1e6 else f"{value:.3g}"
    if isinstance(value, str):
        return value if value and not any(c in value for c in " =,") else json.dumps(value, ensure_ascii=False)
    return str(value)


def _one_line(value: Any) -> bool:
    """A value that fits on a `k=v` line: not a record, not a long list, not a multi-line text
    (a file's text rendered inline became one JSON string cut at 240 characters: the model read
    four lines of a config file and answered without the wrong setting in view)."""
    if isinstance(value, str):
        return "\n" not in value
    return not isinstance(value, (dict, list)) or _short_list(value)


def _is_flat(value: Any) -> bool:
    return isinstance(value, dict) and all(_one_line(v) for v in value.values())


def _short_list(value: Any) -> bool:
    """A list that reads well inline: a few short scalars. Longer items (a log's lines) go one per
    line, so no line of the log is cut at the observation's line limit."""
    return (isinstance(value, list) and len(value) <= 8 and all(not isinstance(v, (dict, list)) for v in value)
            and sum(len(str(v)) + 2 for v in value) <= _LINE_MAX // 2)


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(f"{k}={_inline(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return _scalar(value)


def _record_lines(record: dict, pad: str) -> list[str]:
    """A flat record on one `k=v` line, or, when that is wider than a line may be (lines are cut
    there), on as many as it needs, each led by the field that says what the record is about (a
    process's pid and name, a path, a port, ...), so no field is cut away and every line still
    names its thing."""
    whole = pad + _inline(record)
    if len(whole) <= _LINE_MAX:
        return [whole]
    key = next((k for k, _ in ENTITY_KEYS if record.get(k) not in (None, "")), None)
    leading = [k for k in (key, "name" if key == "pid" else None) if k is not None and k in record]
    lead = "".join(f"{k}={_inline(record[k])} " for k in leading)
    lines: list[str] = []
    current = ""
    for k, v in record.items():
        if k in leading:
            continue
        part = f"{k}={_inline(v)}"
        if current and len(pad) + len(lead) + len(current) + 1 + len(part) > _LINE_MAX:
            lines.append(pad + lead + current)
            current = part
        else:
            current = f"{current} {part}" if current else part
    if current or not lines:
        lines.append(pad + lead + current)
    return lines


def render_data(data: Any, indent: int = 0) -> list[str]:
    """Compact lines: a flat record is one `k=v k=v` line, a list of records one line each."""
    pad = "  " * indent
    if data is None:
        return []
    if isinstance(data, str):
        return [pad + line for line in data.splitlines()] or [pad + '""']
    if _is_flat(data):
        return _record_lines(data, pad)
    if _short_list(data) or not isinstance(data, (dict, list)):
        return [pad + _inline(data)]
    lines: list[str] = []
    if isinstance(data, list):
        for item in data:
            if isinstance(item, (dict, list)):
                lines.extend(render_data(item, indent))
            else:  # a text item (a log line) reads best as itself, one per line
                lines.append(pad + (" ".join(item.split()) if isinstance(item, str) and item.strip() else _scalar(item)))
        return lines
    flat = {k: v for k, v in data.items() if _one_line(v)}
    if flat:
        lines.extend(_record_lines(flat, pad))
    for key, value in data.items():
        if key in flat:
            continue
        if isinstance(value, str) and "\n" in value:
            lines.append(f"{pad}{key}:")
            lines.extend(render_data(value, indent + 1))
        elif isinstance(value, (dict, list)) and not value:
            lines.append(f"{pad}{key}: {EMPTY_PART}")
        else:
            lines.append(f"{pad}{key}:")
            lines.extend(render_data(value, indent + 1))
    return lines


def truncate_lines(lines: list[str], max_chars: int) -> list[str]:
    """Keep the text within max_chars: every ERROR/WARN/FAIL-like line first (up to 60% of the
    budget), then the other lines from the top, in their original order, with a marker for what
    was cut so the model knows it saw only part."""
    lines = [line if len(line) <= _LINE_MAX else line[: _LINE_MAX - 1] + "…" for line in lines]
    if sum(len(line) + 1 for line in lines) <= max_chars:
        return lines
    budget = max_chars - 40
    keep: set[int] = set()
    used = 0
    for index, line in enumerate(lines):
        if IMPORTANT.search(line) and used + len(line) + 1 <= budget * 0.6:
            keep.add(index)
            used += len(line) + 1
    for index, line in enumerate(lines):
        if index in keep:
            continue
        if used + len(line) + 1 > budget:
            break
        keep.add(index)
        used += len(line) + 1
    out = _with_markers(lines, keep)
    while sum(len(line) + 1 for line in out) > max_chars:
        plain = [i for i in keep if not IMPORTANT.search(lines[i])] or sorted(keep)
        if not plain:
            break
        keep.discard(max(plain))  # the markers took more room than reserved: drop the last plain line
        out = _with_markers(lines, keep)
    return out


def _with_markers(lines: list[str], keep: set[int]) -> list[str]:
    out: list[str] = []
    skipped = 0
    for index, line in enumerate(lines):
        if index in keep:
            if skipped:
                out.append(f"… {skipped} lines cut …")
                skipped = 0
            out.append(line)
        else:
            skipped += 1
    if skipped:
        out.append(f"… {skipped} more lines cut …")
    return out


def render_result(result: Any, token_budget: int) -> tuple[str, str]:
    """(status, body) of a tool result, cleaned, redacted and cut to token_budget."""
    if not isinstance(result, dict) or "status" not in result:
        result = {"status": "ok", "data": result, "error": None}
    status = str(result.get("status") or "ok")
    lines: list[str] = []
    if result.get("error"):
        lines.append(f"error: {result['error']}")
    data = result.get("data")
    if data in (None, "", [], {}) and status in ("ok", "empty"):
        lines.append("(nothing found)")
    else:
        lines.extend(render_data(data))
    text = redact(clean("\n".join(lines)))
    body = "\n".join(truncate_lines(text.splitlines(), token_budget * CHARS_PER_TOKEN))
    return status, body


def wrap(source: str, status: str, body: str) -> str:
    """The delimited form the model sees."""
    return f'<observation tool="{source}" status="{status}">\n{body}\n</observation>'


def summarize(body: str, max_chars: int = 160) -> str:
    """One short line of what an observation established (for the store and for compaction):
    its first lines and any ERROR/WARN/FAIL line, squeezed."""
    lines = [line.strip() for line in body.splitlines()
             if line.strip() and not line.startswith("…") and not line.rstrip().endswith(":")]
    picked = lines[:2] + [line for line in lines[2:] if IMPORTANT.search(line)][:2]
    text = " | ".join(picked)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
