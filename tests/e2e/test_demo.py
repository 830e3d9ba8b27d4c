"""The README's first command: `vacant demo`, replaying the bundled session (real payload shapes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

VACANT = Path(sys.executable).parent / "vacant"


@pytest.mark.parametrize("args, edit_step", [([], 3)])
def test_demo_finds_the_planted_edit_and_the_fix_turns_green(tmp_path, args, edit_step):
    proc = subprocess.run([str(VACANT), "demo", *args], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    first, last = out.split("== the first Stop's report")[1].split("== the last Stop's report")
    assert f"provable         config.py:1  step {edit_step} (Edit)" in first
    assert "0 finding(s)" in last and "check rate: pass" in last
    assert "hash chain: intact" in out
    assert "n=2 mean=0.50" in out  # one review against the Edit's cell, one for the green Stop
