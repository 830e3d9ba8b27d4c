"""A command's start stays small: the command line itself never imports pydantic (a command that
reads the contract still does). typer 0.29 builds every parameter through pydantic,
about 0.3 s more at every start (`vacant runs --json`: 0.53 s against 0.15-0.22 s with 0.28),
which is why pyproject keeps typer below 0.29; the contract's own models still use pydantic."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import contextlib, io, json, sys
sys.argv = ["vacant", *json.loads(sys.argv[1])]
from vacant.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in ("pydantic", "pydantic_core"))))
"""


@pytest.mark.parametrize("argv", [["runs", "--json"], ["flags", "--json"], ["blame", "--help"], ["runs", "--help"],
                                  ["reputation", "--json", "--local"], ["report", "--json"], ["log", "--json"]],
                         ids=lambda argv: " ".join(argv))
def test_a_command_that_reads_no_contract_starts_without_pydantic(argv: list[str], tmp_path) -> None:
    ran = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == []
