"""No control sequence reaches a terminal: what `runs show`, `runs list`, `ask` and the error lines
print of text from the machine, a model server or the database is passed through
`appliance.errors.terminal_safe` first (the one place that knows what a terminal would act on)."""

from __future__ import annotations

import io

from appliance.cli import main
from appliance.commands.ask import LivePrinter
from appliance.errors import ApplianceError, one_line, terminal_safe
from appliance.store import open_store
from support.store import record_all, run_events

# A retitle (OSC 0), a clear screen (CSI 2J), a colour, a hyperlink (OSC 8), an 8-bit CSI, a bell,
# a carriage return that would overwrite the line, and a right-to-left override.
HOSTILE = "a\x1b]0;pwned\x07b\x1b[2J\x1b[31mc\x1b]8;;http://evil.example\x1b\\d\x9b5Ae\x07\rf\u202eg"
SHOWN = "abcdefg"


def _clean(text: str) -> bool:
    return not any(ch in text for ch in "\x1b\x9b\x07\r\u202e")


def test_terminal_safe_removes_every_kind_and_keeps_text_newlines_and_tabs():
    assert terminal_safe(HOSTILE) == SHOWN
    assert terminal_safe("plain text, ünïcode, tabs\tand\nlines") == "plain text, ünïcode, tabs\tand\nlines"
    assert one_line(ApplianceError(f"model server said: {HOSTILE}")) == f"model server said: {SHOWN}"
    assert one_line(ValueError(HOSTILE)) == f"ValueError: {SHOWN}"


def test_runs_show_and_list_print_stored_text_without_control_sequences(tmp_path, capsys):
    db = tmp_path / "runs.db"
    store = open_store(db)
    record_all(store, run_events("cccc1111", 2, question=f"why {HOSTILE}?", answer=f"it is {HOSTILE}",
                                 observation=f"/srv/{HOSTILE}.log 2G"))
    store.close()
    assert main(["runs", "show", "cccc1111", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert _clean(out) and "why abcde" in out and "/srv/abcde" in out  # (the wrapper breaks lines at a \r)
    assert main(["runs", "list", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert _clean(out) and "cccc1111" in out


def test_ask_prints_events_without_control_sequences():
    out = io.StringIO()
    printer = LivePrinter(out)
    for event in run_events("dddd1111", 2, question=HOSTILE, answer=HOSTILE, observation=HOSTILE):
        printer.show(event)
    assert _clean(out.getvalue()) and SHOWN in out.getvalue()


def test_an_error_line_holding_control_sequences_is_printed_clean(tmp_path, capsys):
    db = tmp_path / "runs.db"
    open_store(db).close()
    code = main(["runs", "show", f"zz{HOSTILE}", "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 2 and _clean(err) and err.count("\n") == 1, err


def test_json_for_a_terminal_keeps_the_data_and_escapes_what_json_leaves_raw():
    import json

    from appliance.errors import terminal_json

    value = {"name": "a\x9b2Jb\x7fc\u202ed", "plain": "ümlaut"}
    shown = terminal_json(value, indent=2)
    assert not any(ch in shown for ch in "\x9b\x7f\u202e") and "ümlaut" in shown
    assert json.loads(shown) == value  # the same data, escaped
