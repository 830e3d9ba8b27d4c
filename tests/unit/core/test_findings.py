"""Findings: ids that survive line moves and re-indentation, and nothing else."""

from __future__ import annotations

import re

from vacant.core.findings import (
    Finding,
    finding_id,
    line_text,
    read_text_lines,
    split_lines,
)


def test_id_is_twelve_hex_and_depends_on_name_path_and_text():
    base = finding_id("lint", "src/a.py", "x = 1")
    assert re.fullmatch(r"[0-9a-f]{12}", base)
    assert finding_id("lint", "src/a.py", "x = 1") == base
    assert finding_id("tests", "src/a.py", "x = 1") != base
    assert finding_id("lint", "src/b.py", "x = 1") != base
    assert finding_id("lint", "src/a.py", "x = 2") != base
    assert finding_id("lint", None, "x = 1") != base


def test_id_ignores_outer_whitespace_but_not_inner():
    assert finding_id("c", "a.py", "    return x\t") == finding_id("c", "a.py", "return x")
    assert finding_id("c", "a.py", "return  x") != finding_id("c", "a.py", "return x")


def test_id_does_not_confuse_field_boundaries():
    # a naive concatenation would make these equal
    assert finding_id("ab", "c", "d") != finding_id("a", "bc", "d")
    assert finding_id("a", "b:c", "") != finding_id("a:b", "c", "")


def test_split_lines_numbers_like_an_editor():
    assert split_lines("a\r\nb\n\nc") == ["a", "b", "", "c"]
    assert split_lines("a\n") == ["a"]
    assert split_lines("") == []
    assert split_lines("a\x0bb\n") == ["a\x0bb"]  # only '\n' separates lines


def test_line_text_out_of_range_is_empty(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"one\r\ntwo\n\xff\n")
    lines = read_text_lines(path)
    assert line_text(lines, 1) == "one"
    assert line_text(lines, 3) == "\ufffd"
    assert line_text(lines, 0) == "" and line_text(lines, 4) == "" and line_text(lines, None) == ""
    assert read_text_lines(tmp_path / "missing") is None


def test_to_json_and_location():
    finding = Finding("0123456789ab", "check", "lint", "a.py", 3, 7, "E1 bad", "x=1")
    assert finding.to_json() == {
        "id": "0123456789ab", "source": "check", "name": "lint", "path": "a.py", "line": 3, "col": 7,
        "message": "E1 bad", "text": "x=1", "env": False, "test": None,
    }
    assert finding.location == "a.py:3:7"
    assert Finding("x", "check", "t", None, None, None, "m", "").location == ""
