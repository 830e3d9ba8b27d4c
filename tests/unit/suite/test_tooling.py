"""The linters as pyproject.toml configures them: ruff over the repository and mypy (strict) over
the modules its [tool.mypy] names. Both come with the test extras; a missing one fails."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent


def _run(tool: str, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    binary = BIN / tool
    assert binary.exists(), f"{binary} is missing: the test extras install it (pip install -e '.[test]')"
    return subprocess.run([str(binary), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_ruff_passes_as_configured():
    proc = _run("ruff", "check", "--no-cache", ".")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_mypy_passes_as_configured():
    proc = _run("mypy", "--cache-dir", str(REPO / ".mypy_cache"))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_the_configured_checks_catch_what_they_are_for(tmp_path):
    """The same configuration flags an unused import (ruff) and an untyped function (mypy strict)."""
    (tmp_path / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
    core = tmp_path / "vacant" / "core"
    core.mkdir(parents=True)
    (tmp_path / "vacant" / "__init__.py").write_text("")
    (core / "__init__.py").write_text("")
    (core / "planted.py").write_text(textwrap.dedent("""\
        import os


        def untyped(x):
            return x
        """))
    ruff = _run("ruff", "check", "--no-cache", ".", cwd=tmp_path)
    assert ruff.returncode != 0 and "F401" in ruff.stdout
    mypy = _run("mypy", "--cache-dir", str(tmp_path / ".mypy_cache"), "vacant/core", cwd=tmp_path)
    assert mypy.returncode != 0 and "no-untyped-def" in mypy.stdout
