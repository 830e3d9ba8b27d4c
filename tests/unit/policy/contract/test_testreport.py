"""The JUnit reader (vacant/policy/contract/testreport.py) against an independent oracle: a generated model
of test results, rendered as JUnit XML by a separate writer (xml.etree, escaping its own way),
read back; and hostile documents: entities, external entities, depth, size, wrong shapes. Every
refusal is a ReportError with one sentence, within a fixed time."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.policy.contract import testreport
from vacant.policy.contract.testreport import ReportError, assert_frame, frames, parse_junit

# names with everything XML must escape, and text the reader must keep as is
TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufffe\uffff"), max_size=40)
OUTCOMES = ("passed", "failed", "error", "skipped")


@st.composite
def suites(draw, depth=0):
    """A model: (suite name, [cases], [child suites]); a case is (classname, name, outcome, message, details)."""
    cases = draw(st.lists(st.tuples(TEXT, TEXT, st.sampled_from(OUTCOMES), TEXT, TEXT), max_size=4))
    children = draw(st.lists(suites(depth + 1), max_size=2)) if depth < 3 else []
    return draw(TEXT), cases, children


def render(model, wrap: bool) -> bytes:
    """The separate writer: ElementTree, one <testsuite> per suite, nested."""
    def suite(parent, node):
        name, cases, children = node
        element = ET.SubElement(parent, "testsuite", name=name) if parent is not None else ET.Element("testsuite", name=name)
        for classname, case_name, outcome, message, details in cases:
            case = ET.SubElement(element, "testcase", classname=classname, name=case_name, time="0.01")
            if outcome != "passed":
                tag = {"failed": "failure", "error": "error", "skipped": "skipped"}[outcome]
                child = ET.SubElement(case, tag, message=message)
                child.text = details
        for node_child in children:
            suite(element, node_child)
        return element

    if wrap:
        root = ET.Element("testsuites")
        for node in model:
            suite(root, node)
    else:
        root = suite(None, model[0])
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def expected(model) -> list[tuple]:
    """The oracle: every case with its suite path, in document order."""
    out = []

    def walk(node, path):
        name, cases, children = node
        here = path + (name,)
        for classname, case_name, outcome, message, details in cases:
            kept_message = message if outcome != "passed" else ""
            kept_details = details if outcome in ("failed", "error") else ""
            if outcome in ("failed", "error", "skipped") and not kept_message:
                kept_message = next((line.strip() for line in kept_details.splitlines() if line.strip()), "")
            out.append((here, classname, case_name, outcome, kept_message, kept_details))
        for child in children:
            walk(child, here)

    for node in model:
        walk(node, ())
    return out


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(suites(), min_size=1, max_size=3), st.booleans())
def test_read_back_what_a_separate_writer_wrote(model, wrap):
    model = model if wrap else model[:1]
    results = parse_junit(render(model, wrap))
    got = [(r.suites, r.classname, r.name, r.outcome, r.message, r.details) for r in results]
    want = [(e[0], e[1], e[2], e[3], e[4], e[5].replace("\r\n", "\n").replace("\r", "\n")) for e in expected(model)]
    assert got == want


def test_ids_are_stable_and_distinct_across_suites():
    data = render([("pytest", [("tests.test_a.T", "test_x[1]", "failed", "m", "d")], [("inner", [("c", "n", "passed", "", "")], [])])], True)
    first, second = parse_junit(data)
    assert first.id == "pytest::tests.test_a.T::test_x[1]" and second.id == "pytest::inner::c::n"
    assert [r.id for r in parse_junit(data)] == [first.id, second.id]


HOSTILE = {
    "billion laughs": b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">'
                      b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><testsuite><testcase name="&c;"/></testsuite>',
    "external entity": b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                       b'<testsuite><testcase name="&x;"/></testsuite>',
    "parameter entity": b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]><testsuite/>',
    "doctype only": b'<!DOCTYPE testsuite SYSTEM "http://127.0.0.1:9/junit.dtd"><testsuite/>',
    "deep nesting": b"<testsuites>" + b"<testsuite>" * 5000 + b"</testsuite>" * 5000 + b"</testsuites>",
    "wrong root": b"<html><body>not a report</body></html>",
    "not xml": b"FAILED tests/test_x.py::test_a - assert 1 == 2\n",
    "truncated": b'<testsuite><testcase name="a"><failure message="x">Traceback',
    "empty": b"",
    "nested testcase": b'<testsuite><testcase name="a"><testcase name="b"/></testcase></testsuite>',
    "undefined entity": b'<testsuite><testcase name="&nope;"/></testsuite>',
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_documents_are_refused_with_one_sentence_in_fixed_time(name):
    started = time.monotonic()
    with pytest.raises(ReportError) as caught:
        parse_junit(HOSTILE[name])
    assert time.monotonic() - started < 1.0
    message = str(caught.value)
    assert message and "\n" not in message and len(message) < 200


def test_too_many_bytes_is_refused_before_parsing(monkeypatch):
    monkeypatch.setattr(testreport, "MAX_BYTES", 1000)
    with pytest.raises(ReportError, match="cap"):
        parse_junit(b"<testsuite>" + b" " * 2000 + b"</testsuite>")


def test_huge_failure_text_is_kept_to_its_head_in_bounded_memory():
    body = "Traceback line\n" * 200_000  # 3 MB of text in one failure
    data = render([("s", [("c", "n", "failed", "m", body)], [])], False)
    [result] = parse_junit(data)
    assert len(result.details) == testreport.MAX_TEXT and body.startswith(result.details)


def test_too_many_cases_is_refused(monkeypatch):
    monkeypatch.setattr(testreport, "MAX_TESTS", 10)
    data = render([("s", [("c", f"t{i}", "passed", "", "") for i in range(11)], [])], False)
    with pytest.raises(ReportError, match="more than 10"):
        parse_junit(data)


def test_a_case_that_fails_and_errors_is_an_error_and_a_skip_never_hides_a_failure():
    data = (b'<testsuite><testcase classname="c" name="n"><skipped message="s"/><failure message="f">F</failure>'
            b'<error message="e">E</error></testcase></testsuite>')
    [result] = parse_junit(data)
    assert (result.outcome, result.message, result.details) == ("error", "e", "E")


def test_frames_python_pytest_and_node():
    pytest_text = "    def test_a():\n>       assert f() == 2\nE       assert 3 == 2\n\ntests/test_a.py:5: AssertionError"
    helper = "tests/test_a.py:5: in test_a\n    f()\nsrc/lib.py:9: in f\n    raise ValueError\nE   ValueError"
    native = 'Traceback (most recent call last):\n  File "/w/tests/t.py", line 7, in test\n    x()\n  File "/w/lib.py", line 2, in x\n'
    node = ("cause: AssertionError: 2 !== 3\n      at TestContext.<anonymous> (/w/a.test.js:2:29)\n"
            "      at Test.run (node:internal/test_runner/test:796:25)\n      at helper (file:///w/lib.js:4:3)\n")
    assert frames(pytest_text) == [("tests/test_a.py", 5)]
    assert frames(helper) == [("tests/test_a.py", 5), ("src/lib.py", 9)]
    assert frames(native) == [("/w/tests/t.py", 7), ("/w/lib.py", 2)]
    assert frames(node) == [("/w/lib.js", 4), ("/w/a.test.js", 2)]
    located = [("tests/test_a.py", 5), ("src/lib.py", 9)]
    assert assert_frame(located, "tests/test_a.py") == ("tests/test_a.py", 5)
    assert assert_frame(located, None) == ("src/lib.py", 9)
    assert assert_frame([], "tests/test_a.py") is None
