"""`appliance.errors.one_line`: the one line an exception becomes, for the CLI, the TUI and a run."""

from __future__ import annotations

from appliance.errors import ModelError, one_line


def test_an_appliance_error_is_its_message_and_anything_else_is_named_by_its_type():
    assert one_line(ModelError("the model server at http://x:8080 is down")) == "the model server at http://x:8080 is down"
    assert one_line(KeyError("pid")) == "KeyError: 'pid'"
    assert one_line(RuntimeError()) == "RuntimeError"  # no message: the type alone, not "RuntimeError: RuntimeError"


def test_it_is_one_line_and_bounded():
    assert one_line(ValueError("bad value\n  at line 3\n\tin file x")) == "ValueError: bad value at line 3 in file x"
    assert len(one_line(OSError("x" * 1000))) == 300 and len(one_line(ModelError("y" * 1000), 80)) == 80
