"""The contract: validation with one clear message, globs, and red-first where a check is born."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from vacant.policy.contract.checks import run_command
from vacant.policy.contract.contract import MULTILINE, CheckRefused, ContractError, load_contract
from vacant.policy.contract.globs import matches
from vacant.policy.contract.red_first import add_check, probe_vacuous

pytestmark = pytest.mark.usefixtures("isolated_home")


def write(ws: Path, text: str) -> None:
    (ws / "vacant.toml").write_text(text)


def error_of(ws: Path, text: str) -> str:
    write(ws, text)
    with pytest.raises(ContractError) as caught:
        load_contract(ws)
    return str(caught.value)


# -- loading ------------------------------------------------------------------------------------


def test_no_file_is_no_contract(ws):
    assert load_contract(ws) is None


def test_a_full_contract_loads_with_defaults(ws):
    write(ws, """
task_family = "report"
pinned = ["data/*.csv"]
deliverables = ["report.md"]

[[precondition]]
name = "data-present"
command = "test -s data/sales.csv"

[[check]]
name = "totals"
command = "python -m pytest -q tests/test_report.py"
timeout = 60

[[check]]
name = "lint2"
command = "ruff check ."

[stop]
rounds = 2

[gate]
remove = ["http-write"]

[[gate.act]]
name = "release"
command = '^make release$'
""")
    contract = load_contract(ws)
    assert contract.task_family == "report"
    assert [c.name for c in contract.check] == ["totals", "lint2"]
    assert [c.timeout for c in contract.check] == [60.0, 300.0]
    assert contract.precondition[0].command == "test -s data/sales.csv"
    assert (contract.stop.rounds, contract.stop.budget_s) == (2, 300.0)
    assert contract.gate.remove == ["http-write"] and contract.gate.arms == "arms"
    assert [(rule.name, rule.command, rule.tool) for rule in contract.gate.act] == [("release", "^make release$", None)]


def test_a_bad_gate_table_names_the_key(ws):
    message = error_of(ws, '[gate]\nanything = { goes = true }\n')
    assert "[gate]" in message and "'anything'" in message and "arms, defaults, remove, act, allow" in message
    message = error_of(ws, '[[gate.allow]]\nname = "x"\ntool = "("\n')
    assert "[[gate.allow]] #1" in message and "not a valid regular expression" in message


def test_defaults_of_an_empty_file(ws):
    write(ws, "")
    contract = load_contract(ws)
    assert contract.task_family == "general" and contract.check == [] and contract.stop.rounds == 3


def test_unknown_top_level_key_names_it_and_the_allowed_ones(ws):
    message = error_of(ws, 'task_family = "x"\nchecks = []\n')
    assert "'checks' (did you mean 'check'?)" in message and ", line 2:" in message
    assert "task_family, pinned, deliverables, check, guard, precondition, stop, gate" in message


def test_unknown_key_inside_a_check(ws):
    message = error_of(ws, '[[check]]\nname = "a"\ncommand = "false"\ncmd = "x"\n')
    assert "[[check]] #1 ('a')" in message and "'cmd'" in message and "name, command, timeout, probe" in message


@pytest.mark.parametrize("name", ["Lint", "-lint", "lint_tests", "lint tests", "", "ünï"])
def test_bad_check_names(ws, name):
    message = error_of(ws, f'[[check]]\nname = "{name}"\ncommand = "false"\n')
    assert "'name'" in message and "^[a-z0-9][a-z0-9-]*$" in message


def test_multi_line_command_in_the_file(ws):
    message = error_of(ws, '[[check]]\nname = "a"\ncommand = """\necho one\necho two\n"""\n')
    assert "'command'" in message and MULTILINE in message


@pytest.mark.parametrize("text, key, allowed", [
    ('[[check]]\nname = "a"\ncommand = "false"\ntimeout = "300"\n', "'timeout'", "number of seconds"),
    ('[[check]]\nname = "a"\ncommand = "false"\ntimeout = 0\n', "'timeout'", "greater than 0"),
    ('[[check]]\nname = "a"\ncommand = 5\n', "'command'", "one line of shell"),
    ('pinned = "data/*.csv"\n', "'pinned'", "list of glob strings"),
    ('deliverables = [3]\n', "'deliverables' item #1", "list of glob strings"),
    ('deliverables = ["../elsewhere.md"]\n', "'deliverables'", "without '..'"),
    ('task_family = 7\n', "'task_family'", "string"),
    ('check = "lint"\n', "'check'", "array of tables"),
    ('[stop]\nrounds = 40\n', "'rounds'", "from 0"),
    ('[stop]\nrounds = true\n', "'rounds'", "integer"),
    ('[stop]\nbudget_s = -1\n', "'budget_s'", "greater than 0"),
    ('[[check]]\ncommand = "false"\n', "'name' is missing", "lowercase"),
])
def test_wrong_types_and_ranges_name_the_key_and_what_is_allowed(ws, text, key, allowed):
    message = error_of(ws, text)
    assert key in message and allowed in message
    assert message.startswith(str(ws / "vacant.toml"))


def test_duplicate_names_across_tables(ws):
    message = error_of(ws, '[[precondition]]\nname = "a"\ncommand = "true"\n[[check]]\nname = "a"\ncommand = "false"\n')
    assert "'a' is used twice" in message


def test_toml_syntax_error_and_non_utf8_file(ws):
    assert "not valid TOML" in error_of(ws, "name = \n")
    (ws / "vacant.toml").write_bytes(b'task_family = "\xff"\n')
    with pytest.raises(ContractError, match="not UTF-8"):
        load_contract(ws)


# -- globs --------------------------------------------------------------------------------------


def test_globs_anchor_at_the_root_recurse_with_double_star_and_skip_state(ws):
    for rel in ["report.md", "docs/a.md", "docs/deep/b.md", "data/x.csv", "data/sub/y.csv", ".vacant/c.md", ".git/d.md"]:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("x\n")
    assert matches(ws, ["*.md"]) == ["report.md"]
    assert matches(ws, ["**/*.md"]) == ["docs/a.md", "docs/deep/b.md", "report.md"]
    assert matches(ws, ["docs/**/*.md"]) == ["docs/a.md", "docs/deep/b.md"]
    assert matches(ws, ["data/*.csv"]) == ["data/x.csv"]
    assert matches(ws, ["data"]) == ["data/sub/y.csv", "data/x.csv"]
    assert matches(ws, ["./report.md", "nothing/*.txt"]) == ["report.md"]
    assert matches(ws, ["data/[xz].csv", "data/?.csv"]) == ["data/x.csv"]


# -- red-first ----------------------------------------------------------------------------------


def test_a_check_that_passes_now_is_refused_and_nothing_is_written(ws):
    with pytest.raises(CheckRefused) as caught:
        add_check(ws, "always", "true")
    message = str(caught.value)
    assert "cannot measure the work" in message and "--keep" in message and "false now" in message
    assert not (ws / "vacant.toml").exists()


def test_a_red_check_is_accepted_with_its_probe_evidence(ws):
    added = add_check(ws, "has-report", "test -f report.md")
    assert added.env is None and added.warnings == []
    stored = tomllib.loads((ws / "vacant.toml").read_text())
    entry = stored["check"][0]
    assert (entry["name"], entry["command"]) == ("has-report", "test -f report.md")
    assert entry["probe"]["exit_code"] == run_command("test -f report.md", ws, 5, ws).exit_code == 1
    assert 0 <= entry["probe"]["seconds"] < 5
    assert entry["probe"]["at"][:4].isdigit()
    assert load_contract(ws).check[0].probe.exit_code == 1


def test_multi_line_command_is_refused_with_the_advice(ws):
    with pytest.raises(CheckRefused) as caught:
        add_check(ws, "two", "echo one\necho two")
    assert MULTILINE in str(caught.value)
    assert not (ws / "vacant.toml").exists()


def test_a_missing_tool_is_added_flagged_env_and_a_misspelt_one_only_with_allow_broken(ws):
    added = add_check(ws, "lint", "nosuch-linter-xyz check .")
    assert added.env == "env/nosuch-linter-xyz" and added.verdict.reason == "missing_program"
    assert any("env/nosuch-linter-xyz" in warning and ".local/bin" in warning for warning in added.warnings)
    with pytest.raises(CheckRefused, match="program_not_found"):
        add_check(ws, "tests", "pytset -q")
    added = add_check(ws, "tests", "pytset -q", allow_broken=True)
    assert added.env == "env/pytset"
    lint, tests = tomllib.loads((ws / "vacant.toml").read_text())["check"]
    assert lint["probe"]["exit_code"] == 127 and lint["probe"]["env"] == "nosuch-linter-xyz"
    assert "broken" not in lint["probe"]
    assert tests["probe"]["env"] == "pytset" and tests["probe"]["broken"] == "program_not_found"


def test_a_hanging_probe_is_killed_at_its_cap_and_refused_with_the_figure(ws):
    started = time.monotonic()
    with pytest.raises(CheckRefused, match=r"ran past its cap of 0.4 s \(stopped at 0\.\d s"):
        add_check(ws, "hangs", "sleep 60", probe_cap=0.4)
    assert time.monotonic() - started < 5
    assert not (ws / "vacant.toml").exists()


def test_duplicate_and_badly_named_checks_are_refused(ws):
    add_check(ws, "has-report", "test -f report.md")
    with pytest.raises(CheckRefused, match="already exists"):
        add_check(ws, "has-report", "test -f other.md")
    with pytest.raises(CheckRefused, match=r"\^\[a-z0-9\]"):
        add_check(ws, "Has Report", "test -f report.md")
    assert len(load_contract(ws).check) == 1


def test_guards_must_hold_now(ws):
    added = add_check(ws, "has-git", "test -d .", precondition=True)  # the old keyword still works
    assert added.guard
    with pytest.raises(CheckRefused, match="does not hold now"):
        add_check(ws, "has-data", "test -f data.csv", guard=True)
    contract = load_contract(ws)
    assert [c.name for c in contract.guards] == ["has-git"] and contract.check == []
    assert "[[guard]]" in (ws / "vacant.toml").read_text()


def test_adding_keeps_comments_and_round_trips_awkward_commands(ws):
    write(ws, '# my contract\ntask_family = "report"  # the family\n\n[stop]\nrounds = 2\n')
    command = """grep -q "total: 1\\\\.5" report.md && test "$(printf 'a\\tb')" != '' """
    add_check(ws, "quoted", command)
    text = (ws / "vacant.toml").read_text()
    assert text.startswith('# my contract\ntask_family = "report"  # the family\n')
    contract = load_contract(ws)
    assert contract.check[0].command == command.strip()
    assert contract.stop.rounds == 2
    (ws / "report.md").write_text("total: 1.5\n")
    assert run_command(contract.check[0].command, ws, 5, ws).exit_code == 0


def test_adding_to_an_invalid_contract_reports_the_file_problem(ws):
    write(ws, "bogus = 1\n")
    with pytest.raises(ContractError, match="unknown key 'bogus'"):
        add_check(ws, "has-report", "test -f report.md")
    assert (ws / "vacant.toml").read_text() == "bogus = 1\n"


def test_probe_vacuous_reports_checks_green_before_any_work(ws):
    add_check(ws, "has-report", "test -f report.md")
    add_check(ws, "has-notes", "test -f notes.md")
    assert probe_vacuous(ws) == []
    (ws / "notes.md").write_text("drifted in\n")
    assert probe_vacuous(ws) == ["has-notes"]
    assert probe_vacuous(ws.parent / "nowhere") == []
