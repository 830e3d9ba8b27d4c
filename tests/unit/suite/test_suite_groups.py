"""`xdist_group` holds (tests/plugins/xdist_groups.py): a generated suite run under `-n 2 --dist
loadgroup`, as `scripts/test` runs, puts every test of a group on one worker and spreads the rest.
Under pytest 9 without the plugin, each group was split across both workers."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
from pathlib import Path

import pytest

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"

pytestmark = pytest.mark.slow  # a pytest run of its own with two workers

GROUPED = '''import os, pytest
pytestmark = pytest.mark.xdist_group("{group}")

@pytest.mark.parametrize("n", range(4))
def test_member(n):
    with open(os.environ["GROUPS_OUT"], "a") as out:
        out.write(f"{group} {{os.environ['PYTEST_XDIST_WORKER']}}\\n")
'''
UNGROUPED = '''import os, time, pytest

@pytest.mark.parametrize("n", range(16))
def test_loose(n):
    time.sleep(0.05)  # long enough that both workers take some
    with open(os.environ["GROUPS_OUT"], "a") as out:
        out.write(f"loose {os.environ['PYTEST_XDIST_WORKER']}\\n")
'''


def test_each_group_runs_on_one_worker_and_the_rest_on_both(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    for group in ("wheel", "recorded"):
        for half in ("a", "b"):  # a group spans modules, as test_wheel and test_readme share one
            (suite / f"test_{group}_{half}.py").write_text(GROUPED.format(group=group))
    (suite / "test_loose.py").write_text(UNGROUPED)
    out = tmp_path / "ran.txt"
    env = {**os.environ, "GROUPS_OUT": str(out), "PYTHONPATH": str(PLUGINS)}
    ran = subprocess.run([sys.executable, "-m", "pytest", "-p", "xdist", "-n", "2", "--dist", "loadgroup",
                          "-p", "xdist_groups", "-q", str(suite)], cwd=suite, env=env, capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    workers: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for line in out.read_text().splitlines():
        group, worker = line.split()
        workers[group][worker] += 1
    assert sum(workers["wheel"].values()) == sum(workers["recorded"].values()) == 8
    assert len(workers["wheel"]) == 1, workers["wheel"]
    assert len(workers["recorded"]) == 1, workers["recorded"]
    assert sum(workers["loose"].values()) == 16 and len(workers["loose"]) == 2, workers["loose"]
