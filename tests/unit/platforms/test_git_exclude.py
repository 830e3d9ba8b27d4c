"""Everyday git behind Claude's wall (issue 41): `vacant init` writes the clone's
`.git/info/exclude` lines for the sandbox's placeholders and vacant's own local settings, so that
`git add -A` run inside the real bubblewrap with a `/dev/null` bound over each placeholder (as
Claude's sandbox does, measured on 2.1.197) passes them by and adds only the work; and `vacant
uninstall` gives the exclude file back byte for byte, whatever it held."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.cli import main
from vacant.platforms import git_exclude
from vacant.platforms.claude import Claude

pytestmark = pytest.mark.usefixtures("isolated_home")


def vacant(monkeypatch, *args: str) -> None:
    monkeypatch.setattr(sys, "argv", ["vacant", *args])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 0


def git(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-c", "user.email=t@t.invalid", "-c", "user.name=t", *args], cwd=ws,
                          capture_output=True, text=True)


def clone(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    return path


def in_claudes_sandbox(ws: Path, script: str) -> subprocess.CompletedProcess:
    """`script` inside bubblewrap with /dev/null bound over each placeholder name missing from the
    workspace, as Claude Code's sandbox binds them (a character device while the command runs; the
    empty mount points are removed after it, as Claude removes them)."""
    missing = [ws / name for name in Claude.sandbox_placeholders if not (ws / name).exists() and (ws / name).parent.is_dir()]
    binds = [word for path in missing for word in ("--ro-bind", "/dev/null", str(path))]
    wrap = [shutil.which("bwrap") or "bwrap", "--ro-bind", "/", "/", "--bind", str(ws), str(ws), *binds,
            "--dev", "/dev", "--proc", "/proc", "--chdir", str(ws), "--", "sh", "-c", script]
    try:
        return subprocess.run(wrap, capture_output=True, text=True, timeout=60)
    finally:
        for path in missing:
            path.unlink(missing_ok=True)


@pytest.mark.disk_tmp  # bubblewrap mounts a fresh /dev: tmpfs paths would not be seen
def test_git_add_all_passes_the_sandboxs_placeholders_by(tmp_path, monkeypatch):
    ws = clone(tmp_path / "work")
    (ws / ".vscode").mkdir()  # the person's own: bound as it is, and still seen by git
    (ws / ".vscode" / "settings.json").write_text("{}")
    monkeypatch.chdir(ws)
    vacant(monkeypatch, "init", "--platform", "claude")
    (ws / "work.txt").write_text("the agent's work\n")
    run = in_claudes_sandbox(ws, "git add -A && git status --porcelain")
    assert run.returncode == 0, run.stderr  # exit 128 without the exclude: a character device
    assert sorted(run.stdout.splitlines()) == ["A  .vscode/settings.json", "A  work.txt"]
    # after the run the placeholders' mount points are gone; a directory made later under an
    # excluded name is seen, vacant's local settings (this machine's paths) never are
    (ws / ".idea").mkdir()
    (ws / ".idea" / "x.xml").write_text("<x/>")
    assert sorted(git(ws, "status", "--porcelain").stdout.splitlines()) == ["?? .idea/", "A  .vscode/settings.json", "A  work.txt"]


def test_without_the_wall_only_vacants_own_local_settings_are_excluded(tmp_path, monkeypatch):
    ws = clone(tmp_path / "work")
    monkeypatch.chdir(ws)
    vacant(monkeypatch, "init", "--platform", "claude", "--no-wall")
    assert (ws / ".claude" / "settings.local.json").exists()
    assert git(ws, "status", "--porcelain").stdout == ""
    assert git(ws, "check-ignore", ".bashrc").returncode == 1  # no sandbox: no placeholder to pass by


originals = st.one_of(st.none(), st.text(st.characters(blacklist_categories=("Cs",)), max_size=80),
                      st.lists(st.sampled_from(["*.log", "# mine", "", "/build", "!keep", git_exclude.end("claude").strip()]),
                               max_size=6).map("\n".join))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(original=originals, twice=st.booleans())
def test_uninstall_gives_the_exclude_file_back_byte_for_byte(tmp_path, original, twice):
    ws = tmp_path / "ws" if (tmp_path / "ws").exists() else clone(tmp_path / "ws")  # one clone: each example sets its file
    exclude = ws / ".git" / "info" / "exclude"
    if original is None:
        exclude.unlink(missing_ok=True)
    else:
        exclude.write_bytes(original.encode())
    before = exclude.read_bytes() if exclude.exists() else None
    for _ in range(2 if twice else 1):
        git_exclude.install(ws, "claude", ["/.bashrc", "/.vscode", "!/.vscode/"])
    assert git(ws, "check-ignore", "-q", ".bashrc").returncode == 0
    git_exclude.uninstall(ws, "claude")
    assert (exclude.read_bytes() if exclude.exists() else None) == before


def test_vacant_do_passes_the_placeholders_by_for_its_run_and_takes_the_lines_back(tmp_path):
    """`vacant do claude` runs Claude's sandbox too (its settings given inline): the placeholders
    are excluded while the run lasts, and the exclude file is as it was after it."""
    from vacant.core.wall import wall_for
    from vacant.platforms.claude import ClaudeDriver

    ws = clone(tmp_path / "work")
    before = (ws / ".git" / "info" / "exclude").read_bytes()
    driver = ClaudeDriver(["claude", "-p", "task"], ws, {}, tmp_path / "do")
    driver.wall = wall_for(ws)
    driver.prepare()
    assert git(ws, "check-ignore", "-q", ".bashrc").returncode == 0
    driver.close()
    assert (ws / ".git" / "info" / "exclude").read_bytes() == before


@pytest.mark.disk_tmp  # bubblewrap mounts a fresh /dev: tmpfs paths would not be seen
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(made=st.sets(st.sampled_from([name for name in Claude.sandbox_placeholders if name != Claude.local_file]),
                    max_size=4),
       as_dir=st.booleans())
def test_a_placeholders_path_made_for_real_is_seen_by_git_from_the_next_stop(tmp_path_factory, monkeypatch, made, as_dir):
    """The person makes a file (or directory) under a name the install excluded because it was
    missing (a project's .mcp.json, .claude/settings.json): from the next Stop's refresh git sees
    it; the names still missing stay excluded, so git add -A inside the sandbox still passes their
    placeholders by; the sandbox's own character device is never taken for the person's file."""
    ws = clone(tmp_path_factory.mktemp("refresh") / "work")
    monkeypatch.chdir(ws)
    vacant(monkeypatch, "init", "--platform", "claude")
    made_dirs = {name for name in made if as_dir and name in Claude.sandbox_placeholder_dirs}
    for name in sorted(made):
        path = ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name in made_dirs:
            path.mkdir()
            (path / "x").write_text("x\n")
        else:
            path.write_text("{}\n")
    inside = in_claudes_sandbox(ws, "git status --porcelain --untracked-files=all")  # a Stop while a command runs
    assert git_exclude.refresh(ws) or not made
    seen = {line[3:] for line in git(ws, "status", "--porcelain", "--untracked-files=all").stdout.splitlines()}
    expected = {f"{name}/x" if name in made_dirs else name for name in made}
    assert seen == expected  # the oracle: what the person made, and nothing vacant wrote
    assert inside.returncode == 0, inside.stderr
    run = in_claudes_sandbox(ws, "git add -A && git status --porcelain --untracked-files=all")
    assert run.returncode == 0, run.stderr  # the names still missing: their placeholders passed by
    assert git_exclude.refresh(ws) == []  # a second Stop: nothing more to drop
