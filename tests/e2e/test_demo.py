"""The README's first command: `vacant demo`, replaying the bundled session (real payload shapes)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vacant.core.locations import state_dir

VACANT = Path(sys.executable).parent / "vacant"


@pytest.mark.slow
@pytest.mark.parametrize("args, edit_step", [([], 3)])
def test_demo_finds_the_planted_edit_and_the_fix_turns_green(tmp_path, args, edit_step):
    proc = subprocess.run([str(VACANT), "demo", *args, "--keep"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    kept = Path(out.split("demo workspace kept: ")[1].splitlines()[0].strip())
    try:
        assert_rerun_reproduces(kept)
    finally:
        shutil.rmtree(kept.parent, ignore_errors=True)
    first, last = out.split("== the first Stop's report")[1].split("== the last Stop's report")
    assert f"provable         config.py:1  step {edit_step} (Edit)" in first
    assert "0 finding(s)" in last and "check rate: pass" in last
    assert "hash chain: intact" in out
    assert "n=2 mean=0.50" in out  # one review against the Edit's cell, one for the green Stop


def assert_rerun_reproduces(workspace: Path) -> None:
    """Issue 12: on the kept demo run, the first Stop's evidence `rerun` command gives back the same
    finding, level and step (the run has since been fixed: a plain replay sees no finding)."""
    run_dir = next((state_dir(workspace) / "runs").iterdir())  # a git workspace: .git/vacant
    [finding] = json.loads((run_dir / "reports" / "0001.json").read_text())["findings"]
    command = finding["evidence"]["rerun"].split()
    proc = subprocess.run([str(VACANT), *command[1:], "--json"], capture_output=True, text=True, cwd=workspace,
                          check=False)
    again = json.loads(proc.stdout)["findings"]
    assert [(f["id"], f["level"], f["step"]) for f in again] == [(finding["id"], finding["level"], finding["step"])]
