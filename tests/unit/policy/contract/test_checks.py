"""Running checks: caps, kills, output limits, PATH, locations of every tool format, env findings, gates."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from vacant.core.findings import finding_id
from vacant.policy.contract.acceptance import run_gates
from vacant.policy.contract.checks import (
    Location,
    missing_tool,
    parse_locations,
    run_check,
    run_command,
)
from vacant.policy.contract.contract import Check, Contract

APP = textwrap.dedent(
    """\
    import os


    def f():
        unused = 1
        return 1


    def g() -> str:
        return undefined  # a line that is long enough to be flagged by a line-length rule, yes it is
    """
)


pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws_files() -> dict:
    return {"src/app.py": APP}


def check(name: str, command: str, timeout: float = 60) -> SimpleNamespace:
    return SimpleNamespace(name=name, command=command, timeout=timeout)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


# -- run_command --------------------------------------------------------------------------------


def test_hanging_command_is_killed_with_its_whole_group_at_the_cap(ws):
    pidfile = ws / "grandchild.pid"
    started = time.monotonic()
    result = run_command(f"sleep 60 & echo $! > {pidfile}; sleep 60", ws, 0.5, ws)
    elapsed = time.monotonic() - started
    assert result.timed_out and result.exit_code is None
    assert elapsed < 5, elapsed
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 2
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(grandchild), "the background child survived the timeout"


def test_leftover_background_process_is_killed_when_the_check_exits(ws):
    result = run_command("sleep 60 & echo $!", ws, 10, ws)
    assert result.exit_code == 0 and not result.timed_out
    pid = int(result.output.strip())
    deadline = time.monotonic() + 2
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(pid)


def test_ten_megabytes_of_output_keep_head_and_tail_only(ws):
    command = "echo FIRST-LINE; head -c 10000000 /dev/zero | tr '\\0' x; echo; echo LAST-LINE"
    result = run_command(command, ws, 30, ws)
    assert result.exit_code == 0
    assert result.truncated
    assert len(result.output) < 1_100_000
    assert result.output.startswith("FIRST-LINE")
    assert result.output.rstrip().endswith("LAST-LINE")
    assert "truncated" in result.output


def test_small_output_is_kept_whole_and_stderr_is_merged(ws):
    result = run_command("echo out; echo err >&2; exit 3", ws, 10, ws)
    assert result.exit_code == 3 and not result.truncated
    assert result.output.split() == ["out", "err"]


def test_path_has_the_workspace_local_bin_first_and_stdin_is_closed(ws):
    tool = ws / ".local" / "bin" / "mytool"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho provisioned\n")
    tool.chmod(0o755)
    result = run_command("mytool; cat; echo after-cat", ws, 5, ws)
    assert result.output.split() == ["provisioned", "after-cat"]
    assert not result.timed_out


def test_signal_death_reports_128_plus_signal(ws):
    assert run_command("kill -9 $$", ws, 5, ws).exit_code == 137


# -- locations ----------------------------------------------------------------------------------

RUFF_CONCISE = """\
src/app.py:1:8: F401 [*] `os` imported but unused
src/app.py:5:5: F841 Local variable `unused` is assigned to but never used
Found 2 errors.
[*] 1 fixable with the `--fix` option.
"""

RUFF_FULL = """\
F401 [*] `os` imported but unused
 --> src/app.py:1:8
  |
1 | import os
  |        ^^
  |
help: Remove unused import: `os`

F841 Local variable `unused` is assigned to but never used
 --> src/app.py:5:5
  |
4 | def f():
5 |     unused = 1
  |     ^^^^^^
  |
Found 2 errors.
"""

MYPY = """\
src/app.py:10: error: Returning Any from function declared to return "str"  [no-any-return]
src/app.py:10: note: See https://mypy.readthedocs.io/en/stable/_refs.html#code-no-any-return
src/app.py:10:12: error: Name "undefined" is not defined  [name-defined]
Found 2 errors in 1 file (checked 1 source file)
"""

FLAKE8 = """\
./src/app.py:1:1: F401 'os' imported but unused
./src/app.py:5:5: F841 local variable 'unused' is assigned to but never used
./src/app.py:10:80: E501 line too long (98 > 79 characters)
"""


def test_ruff_concise_output(ws):
    assert parse_locations(RUFF_CONCISE, ws) == [
        Location("src/app.py", 1, 8, "F401 [*] `os` imported but unused"),
        Location("src/app.py", 5, 5, "F841 Local variable `unused` is assigned to but never used"),
    ]


def test_ruff_full_output_takes_the_message_above_the_arrow(ws):
    assert parse_locations(RUFF_FULL, ws) == [
        Location("src/app.py", 1, 8, "F401 [*] `os` imported but unused"),
        Location("src/app.py", 5, 5, "F841 Local variable `unused` is assigned to but never used"),
    ]


def test_mypy_output_skips_notes(ws):
    assert parse_locations(MYPY, ws) == [
        Location("src/app.py", 10, None, 'error: Returning Any from function declared to return "str" [no-any-return]'),
        Location("src/app.py", 10, 12, 'error: Name "undefined" is not defined [name-defined]'),
    ]


def test_flake8_output_normalises_dot_slash(ws):
    locations = parse_locations(FLAKE8, ws)
    assert [(loc.path, loc.line, loc.col) for loc in locations] == [
        ("src/app.py", 1, 1), ("src/app.py", 5, 5), ("src/app.py", 10, 80),
    ]
    assert locations[2].message.startswith("E501 line too long")


def test_tsc_and_plain_formats_and_ansi_colours(ws):
    output = (
        "src/app.py(3,7): error TS2322: Type 'number' is not assignable to type 'string'.\n"
        "\x1b[1msrc/app.py\x1b[0m:4:1: \x1b[31mE302\x1b[0m expected 2 blank lines\n"
        "src/app.py:6: something is off\n"
    )
    assert parse_locations(output, ws) == [
        Location("src/app.py", 3, 7, "error TS2322: Type 'number' is not assignable to type 'string'."),
        Location("src/app.py", 4, 1, "E302 expected 2 blank lines"),
        Location("src/app.py", 6, None, "something is off"),
    ]


def test_outside_missing_and_junk_locations_are_dropped_and_duplicates_removed(ws, tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("x\n")
    (ws / "escape.py").symlink_to(outside)
    output = "\n".join([
        f"{outside}:1: outside by absolute path",
        "../outside.py:1: outside by ..",
        "escape.py:1: outside through a symlink",
        "nothere.py:3: no such file",
        "localhost:8080: connection refused",
        "2024-01-01 12:30:45: a timestamp",
        "src/app.py:1:8: F401 unused",
        f"{ws}/src/app.py:1:8: F401 unused",
        "src/app.py:1:8: F401 unused",
        ".vacant/objects:1: vacant's own state",
    ])
    (ws / ".vacant").mkdir()
    (ws / ".vacant" / "objects").write_text("x\n")
    assert parse_locations(output, ws) == [Location("src/app.py", 1, 8, "F401 unused")]


def test_python_traceback_keeps_the_innermost_frame_inside_the_workspace(ws):
    (ws / "src" / "mod.py").write_text("def div(a):\n    return a / 0\n")
    result = run_command(f"{sys.executable} -c 'import sys; sys.path.insert(0, \"src\"); import mod; mod.div(1)'", ws, 30, ws)
    assert result.exit_code == 1
    assert parse_locations(result.output, ws) == [
        Location("src/mod.py", 2, None, "ZeroDivisionError: division by zero"),
    ]


# plugin autoload off: the real pytest, without seconds of third-party plugin imports
PYTEST = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider"


@pytest.fixture
def pytest_ws(ws) -> Path:
    (ws / "src" / "mod.py").write_text("def add(a, b):\n    return a - b\n\n\ndef div(a):\n    return a / 0\n")
    (ws / "test_mod.py").write_text(textwrap.dedent(
        """\
        import sys
        sys.path.insert(0, "src")
        from mod import add, div


        def test_add():
            assert add(1, 2) == 3


        def test_div():
            div(1)


        def test_ok():
            pass
        """
    ))
    return ws


@pytest.mark.parametrize("tb", ["auto", "short", "line", "native"])
def test_real_pytest_output_in_every_traceback_style(pytest_ws, tb):
    command = f"{PYTEST} --tb={tb} test_mod.py"
    result = run_command(command, pytest_ws, 60, pytest_ws)
    assert result.exit_code == 1, result.output
    locations = parse_locations(result.output, pytest_ws)
    assert [(loc.path, loc.line) for loc in locations] == [("test_mod.py", 7), ("src/mod.py", 6)]
    assert "assert -1 == 3" in locations[0].message
    assert "ZeroDivisionError" in locations[1].message


def test_real_pytest_without_tracebacks_falls_back_to_failed_lines(pytest_ws):
    command = f"{PYTEST} --tb=no test_mod.py"
    result = run_command(command, pytest_ws, 60, pytest_ws)
    locations = parse_locations(result.output, pytest_ws)
    assert [(loc.path, loc.line) for loc in locations] == [("test_mod.py", None), ("test_mod.py", None)]
    assert locations[0].message == "test_add: assert -1 == 3"


@pytest.mark.parametrize("tool, command, expected", [
    ("ruff", "ruff check --no-cache --output-format=concise --select F401,F841 src", {("src/app.py", 1), ("src/app.py", 5)}),
    ("flake8", "flake8 --select F401,F841 src", {("src/app.py", 1), ("src/app.py", 5)}),
    ("mypy", "mypy --no-incremental --strict src/app.py", {("src/app.py", 10)}),
])
@pytest.mark.slow
def test_real_linters(ws, tool, command, expected):
    """The linters come with the test extras (pyproject); a missing one fails, never skips."""
    binary = Path(sys.executable).parent / tool
    assert binary.exists(), f"{tool} missing: install the test extras (scripts/setup)"
    result = run_command(str(binary) + command[len(tool):], ws, 120, ws)
    assert result.exit_code != 0
    assert expected <= {(loc.path, loc.line) for loc in parse_locations(result.output, ws)}


# -- run_check: findings ------------------------------------------------------------------------


def test_failing_check_yields_one_finding_per_location_with_the_exact_line(ws):
    result = run_check(check("lint", f"printf '%s' '{RUFF_CONCISE}'; exit 1"), ws)
    assert not result.passed and result.exit_code == 1 and not result.env_missing
    assert [(f.path, f.line, f.text) for f in result.findings] == [
        ("src/app.py", 1, "import os"),
        ("src/app.py", 5, "    unused = 1"),
    ]
    first = result.findings[0]
    assert first.source == "check" and first.name == "lint" and first.col == 8
    assert first.id == finding_id("lint", "src/app.py", "import os")


def test_finding_ids_survive_a_line_move_and_come_back_after_a_fix(ws):
    command = "grep -n 'unused = 1' src/app.py | sed 's|^|src/app.py:|' | grep . && exit 1 || exit 0"
    before = run_check(check("no-unused", command), ws)
    assert [f.line for f in before.findings] == [5]
    (ws / "src" / "app.py").write_text("# header\n# more header\n" + APP)
    moved = run_check(check("no-unused", command), ws)
    assert [f.line for f in moved.findings] == [7]
    assert moved.findings[0].id == before.findings[0].id
    (ws / "src" / "app.py").write_text(APP.replace("unused = 1", "used = 1"))
    assert run_check(check("no-unused", command), ws).passed
    (ws / "src" / "app.py").write_text(APP)
    assert run_check(check("no-unused", command), ws).findings[0].id == before.findings[0].id


def test_same_text_twice_is_one_finding_with_both_messages(ws):
    output = "src/app.py:1:1: F401 unused\nsrc/app.py:1:8: E999 also bad\n"
    result = run_check(check("lint", f"printf '{output}'; exit 1"), ws)
    assert len(result.findings) == 1
    assert "F401" in result.findings[0].message and "E999" in result.findings[0].message


def test_failure_without_locations_is_one_finding_with_its_own_words(ws):
    result = run_check(check("has-report", "echo 'report.md is missing' >&2; exit 2"), ws)
    assert len(result.findings) == 1
    finding = result.findings[0]
    assert (finding.path, finding.line, finding.text) == (None, None, "")
    assert "report.md is missing" in finding.message and "exit 2" in finding.message
    assert finding.id == finding_id("has-report", None, "")


def test_passing_check_has_no_findings(ws):
    result = run_check(check("ok", "true"), ws)
    assert result.passed and result.findings == [] and result.exit_code == 0


def test_hanging_check_is_reported_as_timed_out(ws):
    result = run_check(check("slow", "sleep 30", timeout=0.3), ws)
    assert not result.passed and result.timed_out
    assert len(result.findings) == 1 and "timed out" in result.findings[0].message
    assert result.seconds < 5


def test_missing_tool_is_an_env_finding_never_a_located_one(ws):
    result = run_check(check("lint", "nosuch-linter-xyz check src"), ws)
    assert result.exit_code == 127 and result.env_missing
    assert len(result.findings) == 1
    finding = result.findings[0]
    assert finding.env and finding.name == "env/nosuch-linter-xyz" and finding.path is None
    assert "cannot fix" in finding.message
    assert str(ws / ".local" / "bin") in finding.message


@pytest.mark.parametrize("output, code, expected", [
    ("bash: line 1: ruff: command not found\n", 127, "ruff"),
    ("bash: mypy: command not found\n", 127, "mypy"),
    ("/bin/sh: 1: flake8: not found\n", 127, "flake8"),
    ("/usr/bin/env: 'python9': No such file or directory\n", 127, "python9"),
    ("timeout: failed to run command 'jq': No such file or directory\n", 127, "jq"),
    ("bash: line 1: /opt/tools/bin/lint: Permission denied\n", 126, "lint"),
    ("bash: line 1: ruff: command not found\n", 1, None),  # not a 127: the tool ran
    ("some test failed\n", 127, None),  # 127 without the signature
    ("bash: line 1: ./run.sh: No such file or directory\n", 127, None),  # the work's own file
    ("bash: line 1: ./run.sh: Permission denied\n", 126, None),
])
def test_missing_tool_signatures(ws, output, code, expected):
    assert missing_tool(code, output, ws) == expected


def test_a_workspace_script_not_written_yet_is_a_plain_failure(ws):
    result = run_check(check("runs", "./run.sh"), ws)
    assert result.exit_code == 127 and not result.env_missing
    assert result.findings[0].name == "runs"


# -- run_gates ----------------------------------------------------------------------------------


def test_no_contract_and_no_flags_is_nothing_to_verify(ws):
    report = run_gates(None, ws)
    assert report.nothing_to_verify and not report.passed and report.findings == []


def test_preconditions_alone_verify_nothing(ws):
    contract = Contract(precondition=[Check(name="src-exists", command="test -d src")])
    report = run_gates(contract, ws)
    assert report.nothing_to_verify
    assert [r.passed for r in report.preconditions] == [True]


def test_gates_collect_precondition_and_check_findings(ws):
    contract = Contract(
        precondition=[Check(name="has-data", command="test -f data.csv")],
        check=[Check(name="has-report", command="test -f report.md"), Check(name="ok", command="true")],
    )
    report = run_gates(contract, ws)
    assert not report.nothing_to_verify and not report.passed
    assert [f.name for f in report.findings] == ["has-data", "has-report"]
    assert [r.precondition for r in (*report.preconditions, *report.checks)] == [True, False, False]
    (ws / "data.csv").write_text("a\n")
    (ws / "report.md").write_text("r\n")
    assert run_gates(contract, ws).passed


def test_gate_report_json_is_serialisable(ws):
    import json

    contract = Contract(check=[Check(name="has-report", command="test -f report.md")])
    data = json.loads(json.dumps(run_gates(contract, ws).to_json()))
    assert data["passed"] is False and data["findings"][0]["name"] == "has-report"


def test_run_command_does_not_touch_a_real_terminal(ws):
    # a check that tries to read a password from the terminal must not hang the gate
    result = run_command("read -r line || echo no-input", ws, 5, ws)
    assert result.output.strip() == "no-input" and not result.timed_out


def test_subprocess_helper_sanity():
    # the tests above rely on bash being present, as checks do
    assert subprocess.run(["bash", "-c", "exit 0"]).returncode == 0


def test_ten_megabytes_of_output_never_sit_in_memory(ws):
    import tracemalloc

    tracemalloc.start()
    try:
        result = run_command("head -c 10000000 /dev/zero | tr '\\0' y", ws, 30, ws)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.truncated and result.exit_code == 0
    assert peak < 4_000_000, peak


def test_flags_count_as_something_to_verify_even_without_checks(ws):
    from vacant.policy.contract.flags import add_flag

    (ws / "notes.md").write_text("right\nwrong\n")
    flag = add_flag(ws, "notes.md:2", "this line is wrong")
    report = run_gates(None, ws)
    assert not report.nothing_to_verify and not report.passed
    assert [(f.source, f.name, f.line) for f in report.findings] == [("flag", flag.id, 2)]
    assert [pair[0].id for pair in report.flags] == [flag.id]
    (ws / "notes.md").write_text("right\nfixed\n")
    resolved = run_gates(None, ws)
    assert resolved.passed and not resolved.nothing_to_verify


def test_gates_on_a_scratch_copy_use_the_live_workspace_flags(ws, tmp_path):
    from vacant.policy.contract.flags import add_flag

    (ws / "notes.md").write_text("wrong\n")
    add_flag(ws, "notes.md:1", "wrong")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "notes.md").write_text("other\nwrong\n")
    report = run_gates(None, scratch, flags_root=ws)
    assert [(f.path, f.line) for f in report.findings] == [("notes.md", 2)]
