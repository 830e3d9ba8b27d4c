"""The runners' own JSON readers (vacant/policy/contract/runner_json.py) against an independent oracle: a
generated model of Go packages and tests, written as the event stream test2json writes (by a
separate writer here), and a generated model of jest files and assertions, written as jest's
`--json` report; read back. Then hostile input: too large, too deep, malformed, not UTF-8, the wrong
shape, too many tests: a ReportError with one sentence, in fixed time."""

from __future__ import annotations

import json
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.policy.contract import runner_json, testreport
from vacant.policy.contract.runner_json import package_dirs, parse_go_json, parse_jest_json
from vacant.policy.contract.testreport import ReportError, frames

WORDS = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\x85\ufffe\uffff"),
                min_size=1, max_size=30).map(str.strip).filter(bool)
GO_NAME = st.text("AZaz09_|()[].+*?^$\\{}-", min_size=1, max_size=12)
GO_OUTCOMES = ("pass", "fail", "skip")


@st.composite
def go_tests(draw, depth=0):
    """A test: (name, own outcome, [(line number, words)], [subtests])."""
    name = draw(GO_NAME)
    lines = draw(st.lists(st.tuples(st.integers(1, 9999), WORDS), max_size=2))
    children = draw(st.lists(go_tests(depth + 1), max_size=2, unique_by=lambda t: t[0])) if depth < 2 else []
    return name, draw(st.sampled_from(GO_OUTCOMES)), lines, children


PACKAGES = st.lists(st.tuples(st.lists(st.sampled_from(["a", "sub", "x"]), max_size=2).map(
                                  lambda tail: "/".join(["example.com/m", *tail])),
                              st.lists(go_tests(), max_size=3, unique_by=lambda t: t[0])),
                    min_size=1, max_size=3, unique_by=lambda p: p[0])


def _effective(test) -> str:
    """Go's rule: a test with a failing subtest fails."""
    name, outcome, lines, children = test
    return "fail" if any(_effective(child) == "fail" for child in children) else outcome


def write_go(packages, shuffle: random.Random) -> bytes:
    """The separate writer: events as test2json writes them, per test in run order; packages'
    events interleaved by `shuffle`'s choices."""
    streams = []
    for package, tests in packages:
        events = []

        def emit(**fields):
            events.append({"Time": "2026-01-01T00:00:00Z", "Package": package, **fields})

        def run(test, prefix):
            name, _own, lines, children = test
            full = prefix + name
            emit(Action="run", Test=full)
            emit(Action="output", Test=full, Output=f"=== RUN   {full}\n")
            for number, words in lines:
                emit(Action="output", Test=full, Output=f"    x_test.go:{number}: {words}\n")
            for child in children:
                run(child, full + "/")
            outcome = _effective(test)
            emit(Action="output", Test=full, Output=f"--- {outcome.upper()}: {full} (0.00s)\n")
            emit(Action=outcome, Test=full, Elapsed=0)

        for test in tests:
            run(test, "")
        failed = any(_effective(test) == "fail" for test in tests)
        emit(Action="output", Output="FAIL\n" if failed else "PASS\n")
        emit(Action="fail" if failed else "pass", Elapsed=0.01)
        streams.append(events)
    lines = []
    while any(streams):
        live = [s for s in streams if s]
        lines.append(json.dumps(shuffle.choice(live).pop(0), ensure_ascii=shuffle.random() < 0.5))
    return ("\n".join(lines) + "\n").encode()


def expected_go(packages) -> dict:
    """The oracle: id -> (outcome, message, [(line number)]) for every test that is a finding of its
    own or passed/skipped; a test that failed only through a subtest (no line of its own) is not."""
    out = {}

    def walk(package, test, prefix):
        name, _own, lines, children = test
        full = prefix + name
        outcome = {"pass": "passed", "fail": "failed", "skip": "skipped"}[_effective(test)]
        failed_child = any(_effective(child) == "fail" for child in children)
        if not (outcome == "failed" and failed_child and not lines):
            out[f"go::{package}::{full}"] = (outcome, lines[0][1] if lines else "", [n for n, _ in lines])
        for child in children:
            walk(package, child, full + "/")

    for package, tests in packages:
        for test in tests:
            walk(package, test, "")
    return out


@pytest.mark.slow
@settings(max_examples=30, deadline=None)  # each a stream of up to 3 packages x 27 tests
@given(PACKAGES, st.randoms(use_true_random=False))
def test_go_stream_read_back_what_a_separate_writer_wrote(packages, shuffle):
    results = parse_go_json(write_go(packages, shuffle))
    got = {r.id: (r.outcome, r.message, [line for _path, line in frames(r.details)]) for r in results}
    assert got == expected_go(packages)
    assert all(r.dirs == package_dirs(r.classname, None) for r in results)


def test_a_package_that_did_not_build_is_one_error_with_the_compiler_lines():
    stream = (b"# example.com/m [example.com/m.test]\n./lib.go:3:9: syntax error: unexpected }\n"
              b"FAIL\texample.com/m [build failed]\n"
              b'{"Action":"output","Package":"example.com/m/ok","Output":"ok\\n"}\n'
              b'{"Action":"pass","Package":"example.com/m/ok"}\n')
    [result] = parse_go_json(stream, "example.com/m")
    assert (result.id, result.outcome) == ("go::example.com/m", "error")
    assert result.message == "build failed: ./lib.go:3:9: syntax error: unexpected }"
    assert frames(result.details) == [("./lib.go", 3)]


def test_go_1_24_build_events_and_a_test_that_never_ended():
    events = [{"ImportPath": "example.com/m [example.com/m.test]", "Action": "build-output",
               "Output": "# example.com/m\n"},
              {"ImportPath": "example.com/m [example.com/m.test]", "Action": "build-output",
               "Output": "./a.go:2:1: undefined: x\n"},
              {"ImportPath": "example.com/m [example.com/m.test]", "Action": "build-fail"},
              {"Action": "fail", "Package": "example.com/m", "FailedBuild": "example.com/m [example.com/m.test]"},
              {"Action": "run", "Package": "example.com/m/t", "Test": "TestHang"},
              {"Action": "output", "Package": "example.com/m/t", "Test": "TestHang", "Output": "panic: test timed out\n"},
              {"Action": "fail", "Package": "example.com/m/t"}]
    built, hung = parse_go_json("\n".join(map(json.dumps, events)).encode(), "example.com/m")
    assert (built.id, built.outcome, built.message) == ("go::example.com/m", "error", "build failed: ./a.go:2:1: undefined: x")
    assert (hung.id, hung.outcome, hung.message) == ("go::example.com/m/t::TestHang", "error",
                                                     "did not finish: panic: test timed out")
    assert hung.dirs == ("t",)


def test_package_dirs_exact_under_the_module_else_every_tail():
    assert package_dirs("example.com/m/a/b", "example.com/m") == ("a/b",)
    assert package_dirs("example.com/m", "example.com/m") == ("",)
    assert package_dirs("other.org/x/y", "example.com/m") == ("other.org/x/y", "x/y", "y", "")


JEST_STATUS = {"passed": "passed", "failed": "failed", "pending": "skipped", "todo": "skipped", "skipped": "skipped",
               "disabled": "skipped"}
RED, RESET = "\x1b[31m", "\x1b[39m"


@st.composite
def jest_files(draw):
    """[(relative path, [(ancestors, title, status, [failure messages], line)], suite error or None)]."""
    paths = draw(st.lists(st.tuples(st.sampled_from(["", "src/", "test/a b/"]), st.text("abz.(", min_size=1, max_size=6)).map(
        lambda parts: f"{parts[0]}{parts[1]}.test.js"), min_size=1, max_size=3, unique=True))
    files = []
    for path in paths:
        cases = draw(st.lists(st.tuples(st.lists(WORDS, max_size=2), WORDS, st.sampled_from(sorted(JEST_STATUS)),
                                        st.lists(WORDS, max_size=2), st.one_of(st.none(), st.integers(1, 500))),
                              max_size=4))
        error = draw(st.one_of(st.none(), WORDS)) if not any(c[2] == "failed" for c in cases) else None
        files.append((path, cases, error))
    return files


def write_jest(files, root) -> bytes:
    """The separate writer: jest's `--json` document, failure text coloured as jest colours it."""
    results = []
    for path, cases, error in files:
        assertions = [{"ancestorTitles": ancestors, "title": title, "fullName": " ".join([*ancestors, title]),
                       "status": status, "failureMessages": [f"{RED}{m}{RESET}" for m in messages],
                       **({"location": {"line": line, "column": 1}} if line else {})}
                      for ancestors, title, status, messages, line in cases]
        results.append({"name": f"{root}/{path}", "assertionResults": assertions,
                        "status": "failed" if error or any(c[2] == "failed" for c in cases) else "passed",
                        "message": f"  {RED}● Test suite failed to run{RESET}\n\n    {error}\n" if error else ""})
    return json.dumps({"numTotalTests": 0, "testResults": results, "success": False}).encode()


def expected_jest(files) -> list:
    out = []
    for path, cases, error in files:
        for ancestors, title, status, messages, line in cases:
            out.append((f"jest::{path}::{' '.join([*ancestors, title])}", JEST_STATUS[status],
                        messages[0] if messages else "", path, line))
        if error:
            out.append((f"jest::{path}", "error", "● Test suite failed to run", path, None))
    return out


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(files=jest_files())
def test_jest_report_read_back_what_a_separate_writer_wrote(files, tmp_path_factory):
    root = tmp_path_factory.getbasetemp() / "jest-root"
    results = parse_jest_json(write_jest(files, root), root)
    assert [(r.id, r.outcome, r.message, r.file, r.line) for r in results] == expected_jest(files)
    assert all("\x1b" not in r.details for r in results)


def test_a_jest_file_outside_the_check_directory_keeps_its_path(tmp_path):
    data = json.dumps({"testResults": [{"name": "/elsewhere/a.test.js", "assertionResults": [
        {"fullName": "x", "status": "failed", "failureMessages": ["boom\n    at Object.<anonymous> (/elsewhere/a.test.js:3:1)"]}]}]})
    [result] = parse_jest_json(data.encode(), tmp_path)
    assert result.id == "jest::/elsewhere/a.test.js::x" and frames(result.details) == [("/elsewhere/a.test.js", 3)]


GO_HOSTILE = {
    "deep nesting": b'{"Action":"output","Package":"p","Output":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
    "not json": b'{"Action":"output","Package":"p"\n',
    "not an object": b'{"Action":"run","Package":"p"}\n{"x"}\n',
    "action not a string": b'{"Action":"run","Package":"p"}\n' + b'{"Action": 1, "Package": "p"}\n',
    "no package": b'{"Action":"run","Test":"T"}\n',
    "output not a string": b'{"Action":"output","Package":"p","Test":"T","Output":7}\n',
    "test not a string": b'{"Action":"pass","Package":"p","Test":["T"]}\n',
    "not utf-8": b'{"Action":"output","Package":"p","Test":"T","Output":"\xff\xfe"}\n',
}
JEST_HOSTILE = {
    "deep nesting": b'{"testResults":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "not json": b'{"testResults": [',
    "not an object": b"[]",
    "no testResults": b'{"success": false}',
    "a file without a name": b'{"testResults": [{"assertionResults": []}]}',
    "assertions not a list": b'{"testResults": [{"name": "/a.js", "assertionResults": {}}]}',
    "an assertion not an object": b'{"testResults": [{"name": "/a.js", "assertionResults": [3]}]}',
    "messages not strings": b'{"testResults": [{"name": "/a.js", "assertionResults": '
                            b'[{"fullName": "x", "status": "failed", "failureMessages": [{}]}]}]}',
    "not utf-8": b'{"testResults": [{"name": "/a\xc3(.js", "assertionResults": []}]}',
    "empty": b"",
}


def _refused(call) -> str:
    # CPU time: the parse is pure computation, and a loaded machine stretched its wall time (1.4 s at
    # load 12) where its CPU time is what a bomb would blow up
    started = time.process_time()
    with pytest.raises(ReportError) as caught:
        call()
    assert time.process_time() - started < 1.0
    message = str(caught.value)
    assert message and "\n" not in message and len(message) < 200
    return message


@pytest.mark.parametrize("name", sorted(GO_HOSTILE))
def test_hostile_go_streams_are_refused_with_one_sentence_in_fixed_time(name):
    _refused(lambda: parse_go_json(GO_HOSTILE[name]))


@pytest.mark.parametrize("name", sorted(JEST_HOSTILE))
def test_hostile_jest_reports_are_refused_with_one_sentence_in_fixed_time(name, tmp_path):
    _refused(lambda: parse_jest_json(JEST_HOSTILE[name], tmp_path))


def test_too_many_bytes_is_refused_before_parsing(monkeypatch, tmp_path):
    monkeypatch.setattr(testreport, "MAX_BYTES", 1000)
    assert "cap" in _refused(lambda: parse_go_json(b"\n" * 2000))
    assert "cap" in _refused(lambda: parse_jest_json(b" " * 2000, tmp_path))


def test_too_many_tests_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(testreport, "MAX_TESTS", 10)
    go = "\n".join(json.dumps({"Action": "pass", "Package": "p", "Test": f"T{n}"}) for n in range(11))
    assert "more than 10" in _refused(lambda: parse_go_json(go.encode()))
    jest = {"testResults": [{"name": "/a.js", "assertionResults": [
        {"fullName": f"t{n}", "status": "passed", "failureMessages": []} for n in range(11)]}]}
    assert "more than 10" in _refused(lambda: parse_jest_json(json.dumps(jest).encode(), tmp_path))


def test_huge_failure_text_is_kept_to_its_head():
    line = json.dumps({"Action": "output", "Package": "p", "Test": "T", "Output": "    x_test.go:1: " + "y" * 1000 + "\n"})
    stream = "\n".join([line] * 500 + [json.dumps({"Action": "fail", "Package": "p", "Test": "T"})])
    [result] = parse_go_json(stream.encode())
    assert len(result.details) == testreport.MAX_TEXT and result.outcome == "failed"
    jest = {"testResults": [{"name": "/a.js", "assertionResults": [
        {"fullName": "t", "status": "failed", "failureMessages": ["z" * 100_000, "w" * 100_000]}]}]}
    [case] = parse_jest_json(json.dumps(jest).encode(), runner_json.Path("/"))
    assert len(case.details) == testreport.MAX_TEXT and case.details == "z" * testreport.MAX_TEXT


def test_brackets_inside_strings_and_wide_flat_arrays_are_not_depth():
    output = "    x_test.go:4: " + "[{" * 5000 + "\n"
    stream = [{"Action": "output", "Package": "p", "Test": "T", "Output": output, "Extra": [[] for _ in range(50_000)]},
              {"Action": "fail", "Package": "p", "Test": "T"}]
    started = time.monotonic()
    [result] = parse_go_json("\n".join(map(json.dumps, stream)).encode())
    assert time.monotonic() - started < 1.0
    assert (result.outcome, frames(result.details)) == ("failed", [("x_test.go", 4)])


# -- cargo test's text -------------------------------------------------------------------------------

RS_NAME = st.lists(st.text("abcxyz_09", min_size=1, max_size=8), min_size=1, max_size=3).map("::".join)
CARGO_OUTCOMES = {"ok": "passed", "FAILED": "failed", "ignored": "skipped", "ignored, slow": "skipped"}


@st.composite
def cargo_binaries(draw):
    """Test binaries: (crate, source, {test path: (libtest word, panic line, message)}, finished)."""
    binaries = []
    for number in range(draw(st.integers(1, 3))):
        crate = draw(st.sampled_from(["calc", "it", "more_tests"]))
        source = draw(st.sampled_from(["src/lib.rs", "src/main.rs", "tests/it.rs"])) if number else "src/lib.rs"
        tests = draw(st.dictionaries(RS_NAME, st.tuples(st.sampled_from(sorted(CARGO_OUTCOMES)), st.integers(1, 999),
                                                        WORDS.filter(lambda w: "----" not in w and "\n" not in w)),
                                     max_size=5))
        binaries.append((crate, source, tests, draw(st.booleans()) or not tests))
    return binaries


def write_cargo(binaries, shuffle: random.Random) -> bytes:
    """What cargo test prints (stderr's framing and stdout's results, in the order written)."""
    out = ["   Compiling calc v0.1.0 (/w)", "    Finished `test` profile [unoptimized] target(s) in 0.1s"]
    for crate, source, tests, finished in binaries:
        kind = "unittests " if source.startswith("src/") else ""
        out += [f"     Running {kind}{source} (target/debug/deps/{crate}-0123456789abcdef)", "",
                f"running {len(tests)} tests"]
        names = list(tests)
        shuffle.shuffle(names)  # libtest prints each as it finishes, in any order
        out += [f"test {name} ... {tests[name][0]}" for name in names]
        if not finished:
            out.append("error: test failed, to rerun pass `--lib`")
            continue
        failed = [name for name in names if tests[name][0] == "FAILED"]
        if failed:
            out += ["", "failures:", ""]
            for name in failed:
                out += [f"---- {name} stdout ----", "", f"thread '{name}' (4242) panicked at {source}:{tests[name][1]}:5:",
                        tests[name][2], "note: run with `RUST_BACKTRACE=1`", ""]
            out += ["", "failures:", *[f"    {name}" for name in failed], ""]
        out += [f"test result: {'FAILED' if failed else 'ok'}. 0 passed; 0 failed; 0 ignored", ""]
    return "\n".join(out).encode()


def expected_cargo(binaries) -> dict:
    expected = {}
    for crate, source, tests, finished in binaries:
        for name, (word, line, message) in tests.items():
            failed = word == "FAILED" and finished
            expected[f"cargo::{crate}::{source}::{name}"] = (CARGO_OUTCOMES[word], message if failed else "",
                                                            (source, line) if failed else None)
        if tests and not finished:
            expected[f"cargo::{crate}::{source}"] = ("error", "the test binary did not finish (it crashed or was killed)", None)
    return expected


@settings(max_examples=30, deadline=None)
@given(binaries=cargo_binaries(), shuffle=st.randoms(use_true_random=False))
def test_cargo_text_read_back_what_a_separate_writer_wrote(binaries, shuffle):
    results = runner_json.parse_cargo_text(write_cargo(binaries, shuffle))
    got = {r.id: (r.outcome, r.message, (frames(r.details) or [None])[0]) for r in results}
    assert got == expected_cargo(binaries)


def test_cargo_a_crate_that_did_not_build_is_one_error_at_the_compiler_line():
    text = ("   Compiling calc v0.1.0 (/w)\nerror[E0308]: mismatched types\n --> src/lib.rs:6:40\n  |\n"
            "error: could not compile `calc` (lib) due to 1 previous error\n"
            "warning: build failed, waiting for other jobs to finish...\n"
            "error: could not compile `calc` (lib test) due to 1 previous error\n")
    [result] = runner_json.parse_cargo_text(text.encode())
    assert (result.id, result.outcome, result.message) == ("cargo::calc", "error", "build failed: error[E0308]: mismatched types")
    assert frames(result.details) == [("src/lib.rs", 6)]


def test_cargo_text_is_bounded_like_the_other_reports(monkeypatch):
    monkeypatch.setattr(testreport, "MAX_TESTS", 3)
    many = "     Running tests/it.rs (target/debug/deps/it-0123456789abcdef)\n" + "".join(
        f"test t{n} ... ok\n" for n in range(5))
    assert "more than 3" in _refused(lambda: runner_json.parse_cargo_text(many.encode()))
    assert "not UTF-8" in _refused(lambda: runner_json.parse_cargo_text(b"test a ... ok\n\xff"))
