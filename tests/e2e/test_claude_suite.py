"""A real project's own test suite as the check, on the real `claude` binary (issue 21): the agent
breaks one of more-itertools' tests by an Edit to its source, the Stop blocks with feedback that
names the test, its assert line and the source file the Edit changed (never only the test file),
and after the fix in round 2 the Stop is green. The suite comes from the pinned PyPI sdist
(tests/e2e/sdist.py), fetched once per session."""

from __future__ import annotations

import json
import shutil

import pytest
from claude_harness import FakeUpstream, run_claude_p, tool, turn
from sdist import MORE_ITERTOOLS, SUITE, fetch_sdist
from vacant_run import make_workspace

from vacant.core.locations import state_dir

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
SOURCE = "more_itertools/recipes.py"
GOOD, BAD = "def quantify(iterable, pred=bool):", "def quantify(iterable, pred=lambda x: 1):"
TEST = "pytest::tests.test_recipes.QuantifyTests::test_happy_path"


@pytest.fixture(scope="session")
def suite_tree(tmp_path_factory):
    return fetch_sdist(tmp_path_factory.getbasetemp() / "sdist-cache", *MORE_ITERTOOLS)


def test_a_regression_by_edit_is_blamed_on_the_source_change_and_fixed_in_round_two(tmp_path, monkeypatch, suite_tree):
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "vacant-data"))
    workspace, home = make_workspace(tmp_path)
    shutil.copytree(suite_tree, workspace, dirs_exist_ok=True)
    (workspace / "vacant.toml").write_text(f'[stop]\nbudget_s = 900\n\n[[check]]\nname = "suite"\n'
                                           f'command = "{SUITE}"\ntimeout = 600\n')
    source = str(workspace / SOURCE)
    turns = [
        turn(tool("Read", file_path=source)),
        turn(tool("Edit", file_path=source, old_string=GOOD, new_string=BAD)),
        turn({"type": "text", "text": "Done."}),
        turn(tool("Edit", file_path=source, old_string=BAD, new_string=GOOD)),  # after the feedback
        turn({"type": "text", "text": "Fixed."}),
    ]
    with FakeUpstream({"turns": turns}, tmp_path / "upstream") as upstream:
        proc = run_claude_p(workspace, home, upstream, "tidy quantify", timeout=1200)
        requests = upstream.requests()
    assert proc.returncode == 0, proc.stderr
    [run_dir] = [p for p in (state_dir(workspace) / "runs").iterdir() if p.is_dir()]
    first, last = (json.loads((run_dir / "reports" / f"{n:04d}.json").read_text()) for n in (1, 2))
    [finding] = first["findings"]
    assert (finding["test"], finding["level"], finding["tool"]) == (TEST, "provable", "Edit")
    assert finding["path"] == "tests/test_recipes.py" and finding["changed"] == [SOURCE]
    assert f"+{BAD}" in finding["diff"]
    feedback = next(json.dumps(r) for r in requests if "Stop hook feedback" in json.dumps(r))
    assert TEST in feedback and f"which changed {SOURCE}" in feedback and "tests/test_recipes.py:" in feedback
    assert (last["decision"], last["findings"]) == ("stop", [])
