"""The list of analyzers, in the order `appliance check` prints them. Each family lives in its own
module beside this one; adding a family is one import and one entry here."""

from __future__ import annotations

from appliance.analyzers.base import Analyzer

FAMILIES: tuple[Analyzer, ...] = ()
