"""The README followed literally: its quickstart and its team section, the commands parsed from
README.md itself (so the README cannot drift from what works) and run in order with vacant from a
wheel in a fresh venv (tests/e2e/conftest.py), the real `claude` binary against a scripted upstream,
two people with homes and clones of their own, and a bare repository as their remote; and its
install without pipx or uv (plain pip), run as written in a clone whose remote is a local path."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from claude_harness import FakeUpstream, claude_env, isolated_home
from harness import AGENTS_BIN

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("wheel")]  # the wheel venv test_wheel.py builds, built once

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
GIT_ID = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
          "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def quickstart_commands() -> list[list[str]]:
    """Each `$ ` line of the quickstart's console block, as argv (its trailing comment dropped)."""
    [block] = blocks(section("Quickstart, in order"), "console")
    return [shlex.split(line[2:], comments=True) for line in block.splitlines() if line.startswith("$ ")]


def team_steps() -> list[tuple[str, str]]:
    """(person, shell line) for each command of the team section's first block, in order; a
    comment line `# NAME, …` says whose turn it is."""
    [block, *_] = blocks(section("Share with a team"), "sh")
    steps, person = [], None
    for line in block.splitlines():
        turn = re.match(r"^# (\w+),", line)
        if turn:
            person = turn.group(1)
        elif line.strip() and not line.startswith("#"):
            steps.append((person, line))
    return steps


def pip_install_steps() -> list[str]:
    """The Install section's plain-pip block (for a machine without pipx or uv), one shell line a step."""
    [block] = [block for block in blocks(section("Install"), "sh") if block.startswith("python3 -m venv")]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def user_env(venv: Path, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VACANT_", "VIRTUAL_ENV"))}
    env.update(PATH=f"{venv / 'bin'}:{AGENTS_BIN}:/usr/bin:/bin", HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               VACANT_HOME=str(home / "data"), VACANT_DAEMON_IDLE_S="30", **GIT_ID, **extra)
    return env


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ID})


def test_the_readme_names_the_commands_it_is_tested_with():
    assert [argv[:2] for argv in quickstart_commands()] == [
        ["vacant", "init"], ["vacant", "contract"], ["vacant", "contract"], ["vacant", "doctor"], ["claude", "-p"],
        ["vacant", "report"]]
    people = [person for person, _ in team_steps()]
    assert people[0] == "ann" and "bob" in people and None not in people


def test_the_install_without_pipx_as_written_in_a_clone_of_a_local_path(tmp_path):
    """The plain-pip install, each line as the README writes it, in a clone whose remote is a local
    path (this checkout), with a home of its own and the suite's interpreter as `python3`: vacant
    and vacant-hook land in ~/.local/bin and run from the venv the lines made, never the checkout."""
    steps = pip_install_steps()
    assert [step.split()[0] for step in steps] == ["python3", "~/.local/share/vacant-venv/bin/pip", "mkdir"]
    home, clone, python = tmp_path / "home", tmp_path / "clone", tmp_path / "python"
    home.mkdir()
    python.mkdir()
    (python / "python3").symlink_to(sys._base_executable)  # the interpreter itself, not the suite's venv
    git(tmp_path, "clone", "-q", str(REPO), str(clone))
    origin = subprocess.run(["git", "remote", "get-url", "origin"], cwd=clone, capture_output=True, text=True,
                            check=True).stdout.strip()
    assert Path(origin) == REPO  # a local path: the remote `git+…` cannot name as written
    local_bin = home / ".local" / "bin"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VACANT_", "VIRTUAL_ENV", "PYTHON"))}
    env.update(HOME=str(home), PATH=f"{local_bin}:{python}:/usr/bin:/bin", **GIT_ID)
    for line in steps:
        proc = subprocess.run(["bash", "-c", line], cwd=clone, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{line}\n{proc.stdout}{proc.stderr}"
    venv = home / ".local" / "share" / "vacant-venv"
    assert shutil.which("vacant", path=env["PATH"]) == str(local_bin / "vacant")
    assert (local_bin / "vacant-hook").resolve() == (venv / "bin" / "vacant-hook").resolve()
    version = subprocess.run(["vacant", "--version"], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("vacant "), version.stdout + version.stderr
    module = subprocess.run([str(venv / "bin" / "python"), "-c", "import vacant; print(vacant.__file__)"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
    assert module.startswith(str(venv)) and str(REPO) not in module and str(clone) not in module


def test_the_quickstart_as_written(wheel_venv, tmp_path):
    ws, home = tmp_path / "project", tmp_path / "home"
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / "config.py").write_text("RATE = 0.07\n")  # the check must be red first
    (ws / "test_config.py").write_text(  # the project's own suite: the guard, green now and at every Stop
        "import unittest\n\nimport config\n\n\nclass RateTests(unittest.TestCase):\n"
        "    def test_a_fraction(self):\n        self.assertTrue(0 < config.RATE < 1)\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "start")
    isolated_home(home, ws)
    config = str(ws / "config.py")
    turns = [  # a wrong value first; the Stop's located feedback gets it fixed
        {"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": config}}]},
        {"content": [{"type": "tool_use", "name": "Edit", "input": {
            "file_path": config, "old_string": "RATE = 0.07", "new_string": "RATE = 0.09"}}]},
        {"content": [{"type": "text", "text": "Done."}]},
        {"match": "must be fixed", "content": [{"type": "tool_use", "name": "Edit", "input": {
            "file_path": config, "old_string": "RATE = 0.09", "new_string": "RATE = 0.08"}}]},
        {"content": [{"type": "text", "text": "Fixed."}]},
    ]
    with FakeUpstream({"turns": turns}, tmp_path / "upstream") as upstream:
        env = user_env(wheel_venv, home, **{k: v for k, v in claude_env(home, upstream.url).items()
                                            if k.startswith(("ANTHROPIC", "DISABLE", "CLAUDE_CODE"))})
        outputs = []
        for argv in quickstart_commands():
            proc = subprocess.run(argv, cwd=ws, env=env, capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, f"{shlex.join(argv)}: {proc.stdout}{proc.stderr}"
            outputs.append(proc.stdout + proc.stderr)
    init, guarded, added, _doctor, _claude, report = outputs
    assert "hooks installed" in init and "added guard 'tests'" in guarded and "added check 'rate'" in added
    assert "check rate: pass" in report and (ws / "config.py").read_text() == "RATE = 0.08\n"
    first = json.loads(sorted((next((ws / ".git" / "vacant" / "runs").iterdir()) / "reports").glob("*.json"))[0]
                       .read_text())
    assert first["decision"] == "block" and len(first["findings"]) == 1  # the wrong value held the agent back


def test_the_team_section_as_written(wheel_venv, tmp_path):
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(bare), str(seed))
    (seed / "vacant.toml").write_text('[[check]]\nname = "written"\ncommand = "test -f out.txt"\n')
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "seed")
    git(seed, "push", "-q", "origin", "HEAD:refs/heads/main")
    git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
    people = {}
    for name in ("ann", "bob"):
        clone, home = tmp_path / f"clone-{name}", tmp_path / f"home-{name}"
        git(tmp_path, "clone", "-q", str(bare), str(clone))
        env = user_env(wheel_venv, home)
        people[name] = (clone, env)
        # a run of one's own to share (recorded before the README's steps, as anyone's would be)
        done = subprocess.run(["vacant", "do", "--", "sh", "-c", f"echo {name} > out.txt"], cwd=clone, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    outputs: dict[str, list[str]] = {"ann": [], "bob": []}
    for person, line in team_steps():
        clone, env = people[person]
        proc = subprocess.run(["bash", "-c", line], cwd=clone, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{person}: {line}\n{proc.stdout}{proc.stderr}"
        outputs[person].append(proc.stdout + proc.stderr)
    status = outputs["bob"][-1]
    assert "rejected: 0 record(s)" in status and "team keys: 2 trusted" in status
    reputation = outputs["bob"][-2]
    assert "2 review(s) counted" in reputation or "n=2" in reputation, reputation
    keys = subprocess.run(["git", "ls-tree", "--name-only", "HEAD", ".vacant-team-keys/"], cwd=people["bob"][0],
                          capture_output=True, text=True, check=True).stdout.split()
    assert keys == [".vacant-team-keys/ann.pub", ".vacant-team-keys/bob.pub"]
