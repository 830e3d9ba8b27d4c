"""The weakened-guard set on a real third-party suite (issue 45): cachetools 8.0.3 from its PyPI
sdist (pinned by hash, fetched at test time: tests/plugins/sdist.py), its own 480 tests the
person's guard. The run breaks `typedkey` (keyword values' types no longer in the key: exactly
tests/test_keys.py::test_typedkey fails), then weakens the guard so that it passes, each way in
turn; the Stop pipeline runs directly on the recorded run (no agent binary: its time is the
suite's). Each way is a question for the person naming step 2; a test changed together with the
code it tests, whose old version still passes, is nothing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from sdist import CACHETOOLS, SUITE, fetch_sdist
from step_histories import record_steps
from weakened_suite import the_question

from vacant.attribute.stop import Pipeline
from vacant.core.locations import mark_installed
from vacant.policy.contract.contract import load_contract

pytestmark = [pytest.mark.slow, pytest.mark.disk_tmp]

KEYS, TESTS = "src/cachetools/keys.py", "tests/test_keys.py"
TYPED_KWARGS = "        key += tuple([type(v) for _, v in sorted_kwargs])\n"
TEST_DEF = "    def test_typedkey(self, key=cachetools.keys.typedkey):\n"
TYPED_ASSERT = "self.assertNotEqual(key(1, 2, 3, x=0), key(1, 2, 3, x=0.0))"
TYPED_ASSERTS = (TYPED_ASSERT, "self.assertNotEqual(key(1, 2, 3, x=0), key(1, 2, 3, x=False))")  # both fail


def sources(tmp_path: Path) -> tuple[Path, str, str]:
    """The workspace (the sdist, git, vacant's guard on its suite) and keys.py and test_keys.py as shipped."""
    root = tmp_path / "ws"
    shutil.copytree(fetch_sdist(tmp_path.parent / "sdist", *CACHETOOLS), root)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    (root / "vacant.toml").write_text(f'[[guard]]\nname = "suite"\ncommand = "PYTHONPATH=src {SUITE}"\n')
    return root, (root / KEYS).read_text(), (root / TESTS).read_text()


def broken(keys: str) -> str:
    """typedkey without its keyword values' types (typedmethodkey, below it, keeps them)."""
    at = keys.index("def typedkey")
    return keys[:at] + keys[at:].replace(TYPED_KWARGS, "", 1)


def weakened(way: str, tests: str) -> dict[str, str]:
    if way == "assertion rewritten":
        for line in TYPED_ASSERTS:
            tests = tests.replace(line, line.replace("assertNotEqual", "assertEqual"), 1)
        return {TESTS: tests}
    if way == "test deleted":
        start = tests.index(TEST_DEF)
        end = tests.index("    def ", start + len(TEST_DEF))
        return {TESTS: tests[:start] + tests[end:]}
    if way == "skip marker":
        return {TESTS: tests.replace(TEST_DEF, '    @unittest.skip("flaky")\n' + TEST_DEF, 1)}
    if way == "-k in addopts":
        return {"pytest.ini": "[pytest]\naddopts = -k 'not test_typedkey'\n"}
    assert way == "renamed out of collection"
    return {TESTS: tests.replace("def test_typedkey", "def check_typedkey", 1)}


WAYS = ("assertion rewritten", "test deleted", "skip marker", "-k in addopts", "renamed out of collection")


@pytest.mark.parametrize("way", WAYS)
def test_each_weakening_of_a_real_suite_is_a_question_with_its_step(tmp_path, way):
    root, keys, tests = sources(tmp_path)
    steps = [{KEYS: broken(keys)}, weakened(way, tests)]
    report = Pipeline(root, record_steps(root, steps), load_contract(root), budget_s=600).run()
    question = the_question(report, step=2)
    assert "test_typedkey" in (question["test"] or ""), question


def test_a_test_changed_with_its_code_whose_old_version_still_passes_is_nothing(tmp_path):
    """The task done honestly: typedkey also types positional None (a new branch), and the test
    gains an assertion for it; the old test_keys.py passes on the new code."""
    root, keys, tests = sources(tmp_path)
    at = keys.index("def typedkey")
    code = keys[:at] + keys[at:].replace("    return key + tuple(map(type, args))\n",
                                         "    return key + tuple(map(type, args)) + ((None,) if None in args else ())\n", 1)
    more = tests.replace(TYPED_ASSERT, TYPED_ASSERT + "\n        self.assertNotEqual(key(None), key(None, None))", 1)
    report = Pipeline(root, record_steps(root, [{KEYS: code}, {TESTS: more}]), load_contract(root), budget_s=600).run()
    assert report["findings"] == [] and [c["passed"] for c in report["checks"]] == [True], report["findings"]
