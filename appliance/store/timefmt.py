"""Timestamps as ISO-8601 UTC text: readable in Datasette, sortable as strings, parseable by
SQLite's date functions. Events carry epoch seconds; the database carries these strings."""

from __future__ import annotations

import datetime as dt

from appliance.errors import UsageError


def iso(epoch: float) -> str:
    """2026-11-29T11:50:00.123Z for an epoch time."""
    moment = dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_date(text: str) -> str:
    """A user's DATE (2026-11-29, 2026-11-29T10:00, ...; UTC unless it says otherwise) in the
    stored format, for comparisons like `started_at < ?`."""
    value = text.strip()
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"not a date: {text!r}; use YYYY-MM-DD or YYYY-MM-DDTHH:MM (UTC)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return iso(moment.timestamp())


def epoch(text: str | None) -> float | None:
    """Epoch seconds for a stored timestamp (for displays that format times themselves)."""
    if not text:
        return None
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
