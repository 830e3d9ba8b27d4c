"""vacant as a user installs it: a wheel built from this checkout, installed into a fresh venv
outside the checkout, then `vacant demo`, `vacant init` for each platform and `vacant doctor` run
from there, in a workspace and a home of their own. Nothing may come from the checkout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("wheel")]  # one wheel built and installed


@pytest.fixture
def installed(wheel_venv) -> Path:
    return wheel_venv  # built and installed once per session (tests/e2e/conftest.py)


def run(venv: Path, args: list[str], cwd: Path, home: Path, check: bool = True) -> subprocess.CompletedProcess:
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(home), "VACANT_HOME": str(home / "data"),
           "XDG_CONFIG_HOME": str(home / ".config"), "CODEX_HOME": str(home / ".codex"), "LANG": "C.UTF-8"}
    proc = subprocess.run([str(venv / "bin" / "vacant"), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_the_demo_runs_from_the_installed_wheel(installed, tmp_path):
    out = run(installed, ["demo"], tmp_path, tmp_path / "home").stdout
    assert "provable" in out and "hash chain: intact" in out
    module = subprocess.run([str(installed / "bin" / "python"), "-c", "import vacant; print(vacant.__file__)"],
                            capture_output=True, text=True, cwd=tmp_path, check=True).stdout
    assert str(REPO) not in module and str(installed) in module


@pytest.mark.parametrize("platform", ["claude", "codex", "opencode"])
def test_init_and_doctor_for_each_platform_outside_any_checkout(installed, tmp_path, platform):
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    out = run(installed, ["init", "--platform", platform], workspace, home).stdout
    assert "touched:" in out
    doctor = run(installed, ["doctor", "--platform", platform, "--json"], workspace, home, check=False)
    lines = {line["name"]: line for line in __import__("json").loads(doctor.stdout)["lines"]}
    broken = [line for line in lines.values() if line["status"] == "fail" and line["name"] != "hooks would fire"]
    assert broken == [], broken  # (codex's "would fire" needs the codex binary's trust list; not here)
    hooks = "\n".join(p.read_text() for p in workspace.rglob("*") if p.is_file() and ".git" not in p.parts
                      and p.suffix in (".json", ".js"))
    assert str(installed) in hooks and str(REPO) not in hooks  # the hook runs the installed vacant
    run(installed, ["uninstall"], workspace, home)
    assert sorted(p.name for p in workspace.iterdir() if p.name != ".git") in ([], [".vacant"])
    assert os.environ.get("VACANT_STATE_DIR") is None
