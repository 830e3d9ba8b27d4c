"""A guard run through a test wrapper gets a finding per test, graded on the step that broke it:
`make test` (Debian's make), `npm test` (the system's npm), `uv run`, `nox` and `tox` (from PyPI,
pinned by hash at test time: fixtures/pypi/wrappers.txt), each calling the same real pytest suite.
Through the real recorder (two steps: notes, then a change to calc.py that breaks one test of two)
and the Stop pipeline, whose checks run behind the wall. The oracle is the suite itself: the test
the change breaks, run alone on the state after it, fails, and the other passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pinned import pinned_target

from vacant.attribute.stop import Pipeline
from vacant.core.locations import mark_installed
from vacant.policy.contract.contract import load_contract
from vacant.policy.contract.wrappers import unwrap

pytestmark = [pytest.mark.slow, pytest.mark.disk_tmp]

WRAPPERS_REQUIREMENTS = Path(__file__).resolve().parents[3] / "fixtures" / "pypi" / "wrappers.txt"
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider tests"
CALC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
# a change of another size: tox does not pass PYTHONDONTWRITEBYTECODE on, so its pytest leaves
# __pycache__ in the state directory, and a same-size change made in the same second is then read
# from the later state's bytecode (graded `heuristic`, "present at baseline"; reported separately)
BROKEN = CALC.replace("return a + b", "return a + b + 1")
SUITE = ("from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
         "def test_sub():\n    assert sub(3, 2) == 1\n")


def wrapper_files() -> dict[str, str]:
    """Each wrapper's configuration, calling the suite with this interpreter's pytest."""
    return {
        "Makefile": f".PHONY: test\ntest:\n\t{PYTEST}\n",
        "package.json": json.dumps({"name": "calc", "private": True, "scripts": {"test": PYTEST}}),
        "noxfile.py": ("import nox\n\n\n@nox.session(python=False)\ndef tests(session):\n"
                       f"    session.run({', '.join(repr(word) for word in PYTEST.split())})\n"),
        "tox.ini": ("[tox]\nno_package = true\n\n[testenv]\nskip_install = true\n"
                    f"pass_env = PYTEST_ADDOPTS, PYTHONPATH, VACANT_*\nallowlist_externals = {sys.executable}\n"
                    f"commands = {PYTEST}\n"),
    }


WRAPPED = ["make test", "npm test", f"uv run --no-project {PYTEST}", "nox", "tox"]


def shims(tmp_path: Path) -> Path:
    """nox and tox as programs on PATH, their pinned packages on their own path only (`-I`: the
    check's PYTHONPATH is not theirs; their children get the environment as it is)."""
    tools, bin_dir = pinned_target(WRAPPERS_REQUIREMENTS), tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("nox", "tox"):
        shim = bin_dir / name
        shim.write_text(f"#!{sys.executable} -I\nimport runpy, sys\nsys.path.insert(0, {str(tools)!r})\n"
                        f"runpy.run_module({name!r}, run_name='__main__', alter_sys=True)\n")
        shim.chmod(0o755)
    (bin_dir / "uv").symlink_to(tools / "bin" / "uv")
    return bin_dir


# one wrapper a test, so that xdist spreads them (together they were one 65 s test at the tier's end)
@pytest.mark.parametrize("wrapper", WRAPPED, ids=lambda wrapper: wrapper.split()[0])
def test_a_guard_behind_each_wrapper_gets_a_provable_finding_per_test(wrapper, tmp_path, isolated_home, monkeypatch):
    from step_histories import record_steps

    monkeypatch.setenv("PATH", f"{shims(tmp_path)}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("UV_NO_CACHE", "1")  # behind the wall uv's own cache (~/.cache/uv) is read-only
    monkeypatch.setenv("NPM_CONFIG_UPDATE_NOTIFIER", "false")
    root = tmp_path / "ws"
    root.mkdir()
    mark_installed(root)
    for rel, text in {"calc.py": CALC, "tests/test_calc.py": SUITE, **wrapper_files()}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    assert "pytest" in (unwrap(wrapper, root).command or ""), wrapper  # recognised as the runner it calls
    (root / "vacant.toml").write_text(f'[[guard]]\nname = "g"\ncommand = {json.dumps(wrapper)}\n')
    run_dir = record_steps(root, [{"notes.md": "calc\n"}, {"calc.py": BROKEN}])

    alone = {test: subprocess.run([sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                   f"tests/test_calc.py::{test}"], cwd=root, capture_output=True).returncode
             for test in ("test_add", "test_sub")}
    assert alone == {"test_add": 1, "test_sub": 0}  # the oracle: what the change broke

    report = Pipeline(root, run_dir, load_contract(root), budget_s=600).run()
    found = sorted((f["name"], f["test"], f["level"], f["flip_step"]) for f in report["findings"])
    broken = [test for test, code in alone.items() if code]
    assert found == [("g", f"pytest::tests.test_calc::{test}", "provable", 2) for test in broken], json.dumps([(f["name"], f["level"], f["evidence"]) for f in report["findings"]], indent=1)[:4000]
