"""The one git-HEAD reader against git itself (`git rev-parse HEAD`, `git symbolic-ref HEAD`), on
real repositories: a plain checkout, a linked worktree (its refs live in the common directory), a
detached HEAD, packed refs, an unborn branch. The approval fingerprint reads HEAD through it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from vacant.core.githead import head_commit, head_state
from vacant.policy.gate.asks.fingerprint import git_head

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def oracle(cwd: Path) -> str | None:
    done = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=cwd, capture_output=True, text=True)
    if done.returncode == 0:
        return done.stdout.strip()
    return "unborn " + git(cwd, "symbolic-ref", "HEAD")


def _repo(tmp_path: Path, shape: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    if shape == "unborn":
        return repo
    (repo / "a.txt").write_text("1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    (repo / "a.txt").write_text("2\n")
    git(repo, "commit", "-q", "-am", "two")
    if shape == "detached":
        git(repo, "checkout", "-q", "HEAD~1")
    elif shape == "packed":
        git(repo, "pack-refs", "--all")
    elif shape in ("worktree", "worktree-unborn"):
        other = tmp_path / "linked"
        git(repo, "worktree", "add", "-q", "-b", "side", str(other), "HEAD~1")
        if shape == "worktree-unborn":
            git(other, "checkout", "-q", "--orphan", "fresh")
        return other
    return repo


@pytest.mark.parametrize("shape", ["plain", "detached", "packed", "unborn", "worktree", "worktree-unborn"])
def test_head_is_what_git_says(tmp_path, shape):
    where = _repo(tmp_path, shape)
    want = oracle(where)
    assert head_state(where) == want and git_head(where) == want
    assert head_commit(where) == (None if want.startswith("unborn ") else want)


def test_no_repository_is_none(tmp_path):
    assert head_state(tmp_path) is None and git_head(tmp_path) is None
