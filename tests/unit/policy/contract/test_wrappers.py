"""Wrapped test commands (vacant/policy/contract/wrappers.py): what `make test`, `npm test`, `tox`,
`nox`, `uv run` and `hatch test` run, read from their real configuration formats; make's reading
checked against make itself (`make -n`, the commands it would run); and through the real make
and npm, the wrapped runner reports per test and runs one test alone."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runner_tools import run_planned

from vacant.policy.contract.red_first import add_check
from vacant.policy.contract.wrappers import make_recipe, nox_commands, tox_commands, unwrap, wrapper_note

PY = sys.executable


def _make() -> str:
    found = shutil.which("make")
    if found is None:
        pytest.fail("make is missing: Debian's make (apt-get install make)")
    return found


# a recipe line: words of the shell, never make syntax (no `$`, `-` or `@` at its start: those are make's)
_WORD = st.text(st.sampled_from("abcxyz019_./=,:'\" #;"), min_size=1, max_size=12).map(str.strip).filter(
    lambda word: word and word[0] not in "-@+#")
_LINE = st.lists(_WORD, min_size=1, max_size=4).map(lambda words: "echo " + " ".join(words))


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(recipe=st.lists(_LINE, min_size=1, max_size=3), silent=st.booleans(), others=st.booleans())
def test_a_plain_recipe_is_what_make_would_run(recipe, silent, others, tmp_path):
    lines = [("@" if silent else "") + line for line in recipe]
    text = (".PHONY: test\n" + ("build:\n\techo building\n\n" if others else "") + "test:\n"
            + "".join(f"\t{line}\n" for line in lines) + ("\nlint:\n\techo lint\n" if others else ""))
    (tmp_path / "Makefile").write_text(text)
    dry = subprocess.run([_make(), "-n", "test"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert dry.returncode == 0, dry.stderr
    read = make_recipe(text, "test")
    if isinstance(read, str):  # refused: only for a line that is no whole shell command
        assert "open quote" in read and any(_open(line) for line in dry.stdout.splitlines())
        return
    assert read == dry.stdout.splitlines()
    found = unwrap("make test", tmp_path)
    assert found.command == "\n".join(read) and found.in_place == (len(read) == 1)
    if found.in_place:  # run in make's place as vacant runs it, it prints what make's run prints
        ran = subprocess.run(["/bin/sh", "-c", found.command], cwd=tmp_path, capture_output=True, text=True, timeout=30)
        made = subprocess.run([_make(), "-s", "test"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
        assert (ran.stdout, ran.returncode == 0) == (made.stdout, made.returncode == 0)


def _open(line):
    """An independent quote count: an odd number of unescaped quotes outside the other kind."""
    quote = None
    for char in line:
        if quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
    return quote is not None


@pytest.mark.parametrize("makefile, why", [
    ("test: build\n\tpytest\n", "prerequisites"), ("PY = python\ntest:\n\t$(PY) -m pytest\n", "make variables"),
    ("test:\n\t-pytest\n", "ignores"), (".ONESHELL:\ntest:\n\tpytest\n", ".ONESHELL"),
    ("include common.mk\ntest:\n\tpytest\n", "include"), ("build:\n\tcc x.c\n", "no recipe for `test`"),
    ("test:\n\tpytest\ntest:\n\tpytest -x\n", "more than once"),
])
def test_a_recipe_make_would_not_run_as_written_is_not_read(makefile, why, tmp_path):
    (tmp_path / "Makefile").write_text(makefile)
    found = unwrap("make test", tmp_path)
    assert found.command is None and why in found.why
    note = wrapper_note("make test", tmp_path)
    assert note.startswith("`make test` runs whole") and why in note


def test_a_target_that_is_a_file_runs_only_when_phony(tmp_path):
    (tmp_path / "Makefile").write_text("test:\n\tpytest\n")
    (tmp_path / "test").mkdir()
    assert unwrap("make test", tmp_path).command is None
    (tmp_path / "Makefile").write_text(".PHONY: lint test\ntest:\n\tpytest\n")
    assert unwrap("make test", tmp_path).command == "pytest"


@pytest.mark.parametrize("command, script, runs", [
    ("npm test", "jest --ci", "jest --ci"), ("npm run test -- -k x", "pytest -q", "pytest -q -k x"),
    ("pnpm test", "vitest run", "vitest run"), ("yarn test --watch=false", "jest", "jest --watch=false"),
    ("npm run build", "vitest", None),
])
def test_a_package_script_is_what_npm_pnpm_and_yarn_testrun_planned(command, script, runs, tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": script, "build": "tsc"}}))
    found = unwrap(command, tmp_path)
    assert (found.command if found else None) == runs


@pytest.mark.parametrize("command, runs", [
    ("uv run pytest -q", "pytest -q"), ("uv run --with pytest-xdist --frozen pytest tests/", "pytest tests/"),
    ("uv run -- python -m unittest", "python -m unittest"), ("hatch test", "pytest"), ("hatch test -x", "pytest -x"),
    ("make test && echo done", None), ("pytest", None), ("uv sync", None),
])
def test_uv_run_and_hatch_test_run_the_program_they_name(command, runs, tmp_path):
    found = unwrap(command, tmp_path)
    assert (found.command if found else None) == runs


NOXFILE = textwrap.dedent('''\
    import nox

    @nox.session(python=["3.11", "3.12"])
    def tests(session):
        session.install("pytest")
        session.run("pytest", "-q", "tests/")

    @nox.session
    def lint(session):
        session.run("ruff", "check", ".")

    def helper(session):
        session.run("never", "this")
    ''')


def test_nox_runs_its_sessions_commands(tmp_path):
    assert nox_commands(NOXFILE, ["tests"]) == ["pytest -q tests/"]
    assert nox_commands(NOXFILE, []) == ["pytest -q tests/", "ruff check ."]
    assert "cannot read" in nox_commands(NOXFILE.replace('"-q"', "*ARGS"), ["tests"])
    (tmp_path / "noxfile.py").write_text(NOXFILE)
    assert unwrap("nox -s tests", tmp_path).command == "pytest -q tests/"


TOX_INI = textwrap.dedent('''\
    [tox]
    env_list = py312, lint

    [testenv]
    deps = pytest
    commands =
        pytest -q {posargs}

    [testenv:lint]
    commands = ruff check {toxinidir}
    ''')


def test_tox_runs_its_envs_commands_and_says_its_environment_is_its_own(tmp_path):
    assert tox_commands(TOX_INI, None) == ["pytest -q"]
    assert "substitutions" in tox_commands(TOX_INI, "lint")
    (tmp_path / "tox.ini").write_text(TOX_INI)
    found = unwrap("tox -e py312", tmp_path)
    assert found.command == "pytest -q" and not found.env_reaches
    assert "pass_env" in wrapper_note("tox", tmp_path)


UNITTEST_SUITE = {"tests/__init__.py": "",
                  "tests/test_calc.py": "import unittest\n\nclass Calc(unittest.TestCase):\n"
                                        "    def test_add(self):\n        self.assertEqual(1 + 1, 3)\n\n"
                                        "    def test_sub(self):\n        self.assertEqual(1 - 1, 0)\n"}


@pytest.mark.parametrize("wrapper", ["make", pytest.param("npm", marks=pytest.mark.slow)])
def test_unittest_behind_make_test_and_npm_test_reports_per_test_and_runs_one_alone(wrapper, tmp_path):
    for rel, text in UNITTEST_SUITE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    inner = f"{shlex.quote(PY)} -m unittest discover -s tests -t ."
    if wrapper == "make":
        _make()
        (tmp_path / "Makefile").write_text(f".PHONY: test\ntest:\n\t@{inner}\n")
    else:
        (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": inner}}))
    result, reported, ran = run_planned(f"{wrapper} test", tmp_path)
    assert ran == f"{wrapper} test" and result.exit_code != 0  # the wrapper runs, as written
    assert reported.outcomes() == {"unittest::tests.test_calc.Calc::test_add": "failed",
                                   "unittest::tests.test_calc.Calc::test_sub": "passed"}
    result, reported, _ = run_planned(f"{wrapper} test", tmp_path, ("unittest::tests.test_calc.Calc::test_sub",))
    assert result.exit_code == 0 and reported.outcomes() == {"unittest::tests.test_calc.Calc::test_sub": "passed"}


@pytest.mark.slow
def test_vitest_behind_make_test_runs_in_makes_place_per_test(tmp_path, monkeypatch):
    from runner_tools import jest_modules

    vitest = jest_modules() / ".bin" / "vitest"
    monkeypatch.setenv("CLAUDECODE", "1")
    (tmp_path / "package.json").write_text('{"type": "module"}\n')
    (tmp_path / "a.test.js").write_text("import { test, expect } from 'vitest';\n"
                                        "test('one', () => { expect(1).toBe(2); });\ntest('two', () => {});\n")
    (tmp_path / "Makefile").write_text(f".PHONY: test\ntest:\n\t{vitest} run\n")
    result, reported, ran = run_planned("make test", tmp_path, ("vitest::a.test.js::one",))
    assert ran.startswith(f"/bin/sh -c '{vitest} run --reporter=default") and ran.endswith(" a.test.js'")
    assert result.exit_code == 1
    assert reported.outcomes() == {"vitest::a.test.js::one": "failed", "vitest::a.test.js::two": "skipped"}


@pytest.mark.usefixtures("isolated_home")
def test_contract_add_says_when_a_wrapper_runs_whole(ws):
    (ws / "Makefile").write_text(f"PY = {PY}\n.PHONY: test\ntest:\n\t$(PY) -c 'raise SystemExit(1)'\n")
    added = add_check(ws, "tests", "make test")
    assert any(w.startswith("`make test` runs whole") and "make variables" in w for w in added.warnings)
    (ws / "Makefile").write_text(f".PHONY: test2\ntest2:\n\t{PY} -c 'raise SystemExit(1)'\n")
    added = add_check(ws, "tests2", "make test2")
    assert not any("runs whole" in w for w in added.warnings)
