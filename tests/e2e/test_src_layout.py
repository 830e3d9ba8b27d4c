"""A src/ layout installed editable, on the real `claude` binary (issue 45): cachetools 8.0.3 from
its PyPI sdist (pinned by hash), `pip install -e .` into a venv outside the workspace (its `.pth`
names `<workspace>/src`), its own suite as the guard. An Edit breaks `Cache.__repr__` (7 tests) and
a shell `sed` breaks `Cache.maxsize` (95 tests, the 7 among them); every failing test is
`provable` on the step where it first failed.
Before the replays ran at the workspace's own path, every rebuilt state imported the live `src/`:
every finding was "already failing when the work began" and no step was named.

The oracle is the script: which step changed what; which tests each break fails was found by
running the sdist's suite on each break alone, outside vacant (the counts below)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from claude_harness import FakeUpstream, run_claude_p, tool, turn
from sdist import CACHETOOLS, fetch_sdist
from vacant_run import make_workspace

from vacant.core.locations import state_dir

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
DEV = Path(__file__).resolve().parents[2] / "fixtures" / "pypi" / "cachetools-dev.txt"
INIT = "src/cachetools/__init__.py"
REPR = ('        return "%s(%s, maxsize=%r, currsize=%r)" % (', '        return "<%s(%s, maxsize=%r, currsize=%r)" % (', 7)
# alone it fails 95 tests, the 7 repr tests among them: after step 2, 88 more flip at step 3
MAXSIZE = ("        return self.__maxsize\n", "        return self.__maxsize + 1\n", 95 - 7)


def editable_venv(where: Path, project: Path) -> Path:
    """A venv with cachetools' build and test requirements (pinned by hash) and the project installed
    editable, as its developers do; its python."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    python = where / "bin" / "python"
    env = {**os.environ, "PIP_CONSTRAINT": "", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for args in (["--require-hashes", "-r", str(DEV)], ["--no-build-isolation", "-e", str(project)]):
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", *args], check=True, env=env)
    (pth,) = (where / "lib").glob("python3*/site-packages/__editable__*cachetools*.pth")
    assert str(project / "src") in pth.read_text()  # the live workspace, by absolute path
    return python


def test_an_editable_src_layout_finds_each_step_on_claude(tmp_path, monkeypatch):
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "vacant-data"))
    workspace, home = make_workspace(tmp_path)
    shutil.copytree(fetch_sdist(tmp_path / "sdist", *CACHETOOLS), workspace, dirs_exist_ok=True)
    python = editable_venv(tmp_path / "venv", workspace)
    (workspace / "vacant.toml").write_text(
        f'[stop]\nbudget_s = 900\n\n[[guard]]\nname = "suite"\ncommand = "{python} -m pytest -q -p no:cacheprovider tests"\n'
        "timeout = 600\n")
    sed = f"sed -i 's/{MAXSIZE[0].strip()}$/{MAXSIZE[1].strip()}/' {INIT}"
    turns = [
        turn(tool("Read", file_path=str(workspace / INIT))),  # step 1
        turn(tool("Edit", file_path=str(workspace / INIT), old_string=REPR[0], new_string=REPR[1])),  # step 2
        turn(tool("Bash", command=sed)),  # step 3
        turn({"type": "text", "text": "Done."}),  # the Stop blocks
        turn({"type": "text", "text": "I will leave it."}),
    ]
    with FakeUpstream({"turns": turns}, tmp_path / "upstream") as upstream:
        proc = run_claude_p(workspace, home, upstream, "tidy the cache", timeout=900)
    assert proc.returncode == 0, proc.stderr
    [run_dir] = [p for p in (state_dir(workspace) / "runs").iterdir() if p.is_dir()]
    report = json.loads(sorted((run_dir / "reports").glob("*.json"))[0].read_text())
    assert report["walled"]["walled"] and report["faithful"]["faithful"], (report["walled"], report["faithful"])
    by_step: dict[tuple, int] = {}
    for finding in report["findings"]:
        key = (finding["level"], finding["step"], finding["tool"])
        by_step[key] = by_step.get(key, 0) + 1
    assert by_step == {("provable", 2, "Edit"): REPR[2], ("provable", 3, "Bash"): MAXSIZE[2]}, by_step
    assert (workspace / INIT).read_text().count("maxsize + 1") == 1  # the live workspace as the agent left it
