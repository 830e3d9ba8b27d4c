"""vacant.toml: guards, the old precondition key, and errors that name the file, the line and the key.

The generated tests build a contract of random guard and check tables, damage one place (a
misspelt key, a bad value, a broken table header) and check the message against where the damage
was put: the oracle is the generator's own bookkeeping, not the parser.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.policy.contract.contract import ContractError, load_contract, parse_contract, rounds_hint

pytestmark = pytest.mark.usefixtures("isolated_home")


def test_guard_tables_and_the_old_precondition_key_are_both_guards():
    contract = parse_contract('[[guard]]\nname = "tests"\ncommand = "python -m unittest"\ntimeout = 900\n'
                              '[[precondition]]\nname = "data"\ncommand = "test -s data.csv"\n'
                              '[[check]]\nname = "report"\ncommand = "test -f report.md"\n')
    assert [c.name for c in contract.guards] == ["tests", "data"]
    assert [(c.name, guard) for c, guard in contract.all_checks()] == [("tests", True), ("data", True),
                                                                      ("report", False)]
    assert contract.is_guard("data") and not contract.is_guard("report")
    assert contract.guards[0].timeout == 900


def test_a_name_used_by_a_guard_and_a_check_is_refused():
    with pytest.raises(ContractError, match=r"'a' is used twice \(\[\[guard\]\] and \[\[check\]\]\)"):
        parse_contract('[[guard]]\nname = "a"\ncommand = "true"\n[[check]]\nname = "a"\ncommand = "false"\n')


def test_a_misspelt_key_is_named_with_the_nearest_one_not_as_a_missing_key():
    text = 'task_family = "x"\n\n[[check]]\nname = "totals"\ncomand = "pytest -q"\n'
    with pytest.raises(ContractError) as caught:
        parse_contract(text, "/w/vacant.toml")
    message = str(caught.value)
    assert message.startswith("/w/vacant.toml, line 5: [[check]] #1 ('totals'): unknown key 'comand' "
                              "(did you mean 'command'?)")
    assert "missing" not in message and "more problem" not in message
    assert (caught.value.line, caught.value.key) == (5, "check.comand")


def test_an_unrelated_missing_key_is_still_counted():
    with pytest.raises(ContractError) as caught:
        parse_contract('[[check]]\ncomand = "x"\n')  # `name` is missing as well
    assert "(did you mean 'command'?)" in str(caught.value) and "(and 1 more problem)" in str(caught.value)


def test_a_key_nothing_resembles_gets_no_guess():
    with pytest.raises(ContractError) as caught:
        parse_contract('[stop]\nzzqqy = 1\n')
    assert "unknown key 'zzqqy': allowed keys are rounds, budget_s" in str(caught.value)
    assert caught.value.line == 2


TABLE = st.tuples(st.sampled_from(["guard", "check", "precondition"]), st.booleans())
TYPOS = {"command": ["comand", "commnd", "Command"], "name": ["nmae", "nam"], "timeout": ["timout", "time_out"]}


def render(tables: list[tuple[str, bool]]) -> list[str]:
    lines = ['task_family = "general"', ""]
    for index, (table, timeout) in enumerate(tables):
        lines += [f"[[{table}]]", f'name = "c{index}"', f'command = "test -f out{index}"']
        lines += ["timeout = 60"] if timeout else []
        lines.append("")
    return lines


@settings(max_examples=60, deadline=None)
@given(tables=st.lists(TABLE, min_size=1, max_size=6), pick=st.integers(0, 100), key=st.sampled_from(list(TYPOS)),
       typo=st.integers(0, 2))
def test_generated_misspelt_keys_are_located(tables, pick, key, typo):
    lines = render(tables)
    headers = [n for n, line in enumerate(lines) if line.startswith("[[")]
    target = pick % len(tables)
    start = headers[target]
    end = headers[target + 1] if target + 1 < len(tables) else len(lines)
    rows = [n for n in range(start, end) if lines[n].startswith(f"{key} =")]
    if not rows:  # a table without a timeout: add the misspelt one instead of replacing
        rows = [start + 1]
        lines.insert(rows[0], f"{key} = 60")
    wrong = TYPOS[key][typo % len(TYPOS[key])]
    lines[rows[0]] = lines[rows[0]].replace(key, wrong, 1)
    with pytest.raises(ContractError) as caught:
        parse_contract("\n".join(lines) + "\n", "vacant.toml")
    message = str(caught.value)
    assert f"line {rows[0] + 1}:" in message and f"unknown key {wrong!r}" in message, message
    assert f"[[{tables[target][0]}]] #" in message
    if wrong.lower() != key:
        assert f"(did you mean {key!r}?)" in message


@settings(max_examples=30, deadline=None)
@given(tables=st.lists(TABLE, min_size=0, max_size=5), damage=st.sampled_from(["[[check]", "[stop", "name = ", "x = ]"]))
def test_generated_toml_syntax_errors_name_the_line(tables, damage):
    lines = render(tables) + [damage]
    with pytest.raises(ContractError) as caught:
        parse_contract("\n".join(lines) + "\n", "/w/vacant.toml")
    assert f"/w/vacant.toml is not valid TOML at line {len(lines)}," in str(caught.value)
    assert f"(it reads `{damage.strip()}`)" in str(caught.value)
    assert caught.value.line == len(lines)


def test_load_contract_errors_carry_the_path(ws: Path):
    (ws / "vacant.toml").write_text('[[check]]\nname = "a"\ncommand = "false"\n[[check]\n')
    with pytest.raises(ContractError) as caught:
        load_contract(ws)
    assert caught.value.path == str(ws / "vacant.toml") and caught.value.line == 4


@pytest.mark.parametrize("text, rounds", [
    ('[stop]\nrounds = 0\n[[check]\n', 0),
    ('[[check]\n[stop]\nrounds = 2  # fewer\n', 2),
    ('[gate]\nrounds = 0\n[[check]\n', 3),  # not the [stop] table
    ('[[check]]\ncomand = "x"\n[stop]\nrounds = 1\n', 1),
    ('[stop]\nrounds = 99\n[[check]\n', 3),
    ("", 3),
])
def test_rounds_are_read_from_a_broken_file_as_far_as_it_goes(ws: Path, text, rounds):
    (ws / "vacant.toml").write_text(text)
    assert rounds_hint(ws) == rounds


def test_rounds_of_no_file_are_the_default(ws: Path):
    assert rounds_hint(ws) == 3
