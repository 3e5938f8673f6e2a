"""Readings become numbered facts; a line an earlier reading showed word for word is not shown again."""

from __future__ import annotations

from appliance.agent.facts import FactBook

FIRST = "headline: largest: /srv 3.0 GiB\nlargest:\n  path=/srv size=\"3.0 GiB\"\nscan:\n  files=10 dirs=2\n  skipped:\n    symlinks_not_followed=4"
SECOND = "headline: largest file: /srv/a.img 2.0 GiB\nfiles:\n  path=/srv/a.img size=\"2.0 GiB\"\nscan:\n  files=10 dirs=2\n  skipped:\n    symlinks_not_followed=4"


def test_lines_shown_before_are_left_out_with_their_empty_headers():
    book = FactBook()
    book.number_body("dir_sizes", FIRST)
    second = book.number_body("largest_files", SECOND)
    assert "files=10 dirs=2" not in second and "scan:" not in second and "skipped:" not in second
    assert "F6 path=/srv/a.img" in second  # the new lines are numbered on from the first reading
    assert [f.text for f in book.facts].count("files=10 dirs=2") == 1


def test_a_header_keeps_its_place_while_a_new_line_stands_under_it():
    book = FactBook()
    book.number_body("dir_sizes", "scan:\n  files=10 dirs=2\n  skipped:\n    symlinks_not_followed=4")
    again = book.number_body("dir_sizes", "scan:\n  files=10 dirs=2\n  skipped:\n    symlinks_not_followed=9")
    assert again.splitlines() == ["scan:", "  skipped:", "F3 symlinks_not_followed=9"]


def test_a_reading_of_nothing_but_repeats_is_shown_whole():
    book = FactBook()
    book.number_body("top_processes", "pid=7 name=worker cpu=50.0")
    again = book.number_body("top_processes", "pid=7 name=worker cpu=50.0")
    assert again == "F2 pid=7 name=worker cpu=50.0"
