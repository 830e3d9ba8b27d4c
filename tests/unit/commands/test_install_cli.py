"""`vacant init`, `uninstall`, `doctor` as a person runs them: every file touched is listed (inside
the workspace or not), a bad name changes nothing, uninstall finds every scope by itself and
removes the directories it created, project scope writes nothing machine-local, and doctor
separates advice from a broken install."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from vacant.cli import main
from vacant.core.exitcodes import Exit
from vacant.core.locations import state_dir


@pytest.fixture(autouse=True)
def in_ws(isolated_home, ws, monkeypatch) -> None:
    monkeypatch.chdir(ws)
    ws.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)  # a real repository: git passes over an empty .git


def vacant(capsys, monkeypatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["vacant", *args])
    with pytest.raises(SystemExit) as done:
        main()
    out, err = capsys.readouterr()
    return done.value.code, out, err


def tree(*roots: Path) -> dict[str, bytes | None]:
    """Every file and directory under the roots, with file contents: the independent oracle."""
    found: dict[str, bytes | None] = {}
    for root in roots:
        for path in [root, *root.rglob("*")] if root.exists() else []:
            found[str(path)] = path.read_bytes() if path.is_file() else None
    return found


def test_a_bad_platform_or_scope_changes_nothing(ws, isolated_home, capsys, monkeypatch):
    before = tree(ws, isolated_home, ws.parent / "data")
    code, _, err = vacant(capsys, monkeypatch, "init", "--platform", "nope")
    assert code != 0 and "unknown platform" in err
    code, _, _ = vacant(capsys, monkeypatch, "init", "--platform", "codex", "--scope", "galaxy")
    assert code != 0
    assert tree(ws, isolated_home, ws.parent / "data") == before


def test_init_lists_every_file_it_touched_and_uninstall_takes_it_all_back(ws, isolated_home, capsys, monkeypatch):
    before = tree(ws, isolated_home)
    code, out, _ = vacant(capsys, monkeypatch, "init", "--platform", "claude", "--json")
    assert code == 0
    touched = {item["path"] for item in json.loads(out)["touched"]}
    after = tree(ws, isolated_home)
    changed = {path for path in set(before) | set(after) if before.get(path, 0) != after.get(path, 0)}
    covered = {path for path in changed if any(p in touched for p in (path, *map(str, Path(path).parents)))}
    assert covered == changed and str(ws / ".claude" / "settings.local.json") in touched
    vacant(capsys, monkeypatch, "init", "--platform", "opencode", "--scope", "project")
    vacant(capsys, monkeypatch, "init", "--platform", "claude", "--scope", "user")
    code, out, _ = vacant(capsys, monkeypatch, "uninstall")  # no platform, no scope: it finds them all
    assert code == 0
    for gone in (ws / ".claude", ws / ".opencode", isolated_home / ".claude" / "settings.json"):
        assert not gone.exists(), out
    assert str(ws / ".opencode" / "plugins") in out  # a directory the install created, listed as removed


def test_project_scope_writes_no_path_of_this_machine(ws, capsys, monkeypatch):
    vacant(capsys, monkeypatch, "init", "--platform", "claude", "--scope", "project")
    text = (ws / ".claude" / "settings.json").read_text()
    commands = {h["command"] for groups in json.loads(text)["hooks"].values() for g in groups for h in g["hooks"]}
    assert commands == {"vacant-hook claude"}
    assert sys.executable not in text and str(Path(sys.executable).parent.parent) not in text


def test_uninstall_all_removes_the_state_directory_and_says_what_remains(ws, capsys, monkeypatch):
    vacant(capsys, monkeypatch, "init", "--platform", "claude")
    state = state_dir(ws)
    assert state.is_dir() and state.parent != ws  # never in the work tree, out of cleanup's reach
    code, out, _ = vacant(capsys, monkeypatch, "uninstall", "--all")
    assert code == 0 and "left outside this workspace" in out
    assert sorted(entry.name for entry in ws.iterdir()) == [".git"] and not state.exists()


@pytest.mark.slow
def test_doctor_advice_exits_zero_and_a_missing_install_fails(ws, capsys, monkeypatch):
    code, out, _ = vacant(capsys, monkeypatch, "doctor", "--platform", "claude", "--json")
    report = json.loads(out)
    assert code == Exit.FAILED and report["ok"] is False
    assert {"name": "hooks installed", "status": "fail"}.items() <= next(
        line for line in report["lines"] if line["name"] == "hooks installed").items()
    vacant(capsys, monkeypatch, "init", "--platform", "claude")
    code, out, _ = vacant(capsys, monkeypatch, "doctor", "--platform", "claude", "--json")
    statuses = {line["name"]: line["status"] for line in json.loads(out)["lines"]}
    assert code == 0 and statuses["permission mode"] == "warn" and "fail" not in statuses.values()


def test_uninstall_all_removes_vacants_refs_and_lists_them(ws, capsys, monkeypatch):
    import shutil
    import subprocess

    shutil.rmtree(ws / ".git")
    git = ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "one"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    ours = ["refs/vacant/authors/abc123", "refs/vacant/authors/def456"]
    for ref in [*ours, "refs/heads/keep", "refs/notes/vacantish"]:
        subprocess.run([*git, "update-ref", ref, head], check=True)
    def refs() -> set[str]:
        return set(subprocess.run([*git, "for-each-ref", "--format=%(refname)"], capture_output=True, text=True,
                                  check=True).stdout.split())

    before = refs()
    vacant(capsys, monkeypatch, "init", "--platform", "claude")
    code, out, _ = vacant(capsys, monkeypatch, "uninstall", "--all")
    assert code == 0
    assert refs() == before - set(ours)
    assert all(f"  {ref}" in out.splitlines() for ref in ours) and "removed 2 shared-record ref(s)" in out
    assert "removed the recorded runs:" in out
