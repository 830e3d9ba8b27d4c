"""Which ancestor is a workspace's git top level: git itself is the oracle, including a `.git`
that is not a repository (Codex's sandbox leaves an empty one under every writable root)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from vacant.core import locations

from vacant.core.locations import git_dir, git_top


def _git_toplevel(path: Path) -> Path | None:
    done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "GIT_CEILING_DIRECTORIES": str(path.parents[2])})
    return Path(done.stdout.strip()) if done.returncode == 0 else None


# Each layout: what sits at a/ and a/b/ (the workspace is a/b/c).
LAYOUTS = ["none", "empty_dotgit", "repo", "dotgit_with_only_vacant"]


def _make(where: Path, kind: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    if kind == "empty_dotgit":
        (where / ".git").mkdir()
    elif kind == "dotgit_with_only_vacant":
        (where / ".git" / "vacant" / "runs").mkdir(parents=True)
    elif kind == "repo":
        subprocess.run(["git", "init", "-q", str(where)], check=True)


@pytest.mark.parametrize("outer", LAYOUTS)
@pytest.mark.parametrize("inner", LAYOUTS)
def test_git_top_agrees_with_git(tmp_path, outer, inner):
    base = tmp_path / "ceil" / "x"
    _make(base / "a", outer)
    _make(base / "a" / "b", inner)
    work = base / "a" / "b" / "c"
    work.mkdir(parents=True)
    expected = _git_toplevel(work)
    found = git_top(work)
    assert found == expected
    if found is not None:
        assert git_dir(found) is not None


@given(st.text(max_size=40))
def test_safe_name_replaces_what_the_pattern_replaces(text):
    assert locations.safe_name(text) == re.sub(r"[^A-Za-z0-9._-]", "_", text)
