"""The wall's seal (vacant/core/seal.py) against generated changes to a workspace, with what each
change did known by construction: every rename-and-replace of a sealed directory, `.git` swapped
for a `gitdir:` file, a settings file planted or removed is named; work that leaves the sealed
things alone (new directories, files, a directory made where none was sealed) is not."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from vacant.core import seal

SETTINGS = (".claude/settings.json", ".claude/settings.local.json", ".github/hooks/vacant.json", ".qwen/settings.json")

# (name, breaks the seal?) applied to a workspace with .git, .claude/settings.json and nothing else
CHANGES = {
    "rename .claude and make a fresh one": True,
    "rename .git and leave a gitdir file": True,
    "rename .git and make an empty one": True,
    "plant .qwen/settings.json": True,
    "plant .github/hooks/vacant.json": True,
    "remove .claude/settings.json": True,
    "replace .claude with a link": True,
    "mkdir -p .github/workflows": False,
    "write src/app.py": False,
    "mkdir .qwen (no settings)": False,
    "edit .claude/settings.json in place": False,
    "touch .git/index": False,
}


def apply(ws: Path, change: str) -> bool:
    """Make the change; False when an earlier change left nothing for it to act on."""
    try:
        _apply(ws, change)
    except OSError:
        return False
    return True


def _apply(ws: Path, change: str) -> None:
    if change == "rename .claude and make a fresh one":
        (ws / ".claude").rename(ws / "old-claude")
        (ws / ".claude").mkdir()
        (ws / ".claude" / "settings.json").write_text("{}")
    elif change == "rename .git and leave a gitdir file":
        (ws / ".git").rename(ws / "g")
        (ws / ".git").write_text("gitdir: g\n")
    elif change == "rename .git and make an empty one":
        (ws / ".git").rename(ws / "g")
        (ws / ".git").mkdir()
    elif change.startswith("plant "):
        path = ws / change.split(" ", 1)[1]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"hooks": {}}')
    elif change == "remove .claude/settings.json":
        (ws / ".claude" / "settings.json").unlink()
    elif change == "replace .claude with a link":
        (ws / ".claude").rename(ws / "old-claude")
        os.symlink(ws / "old-claude", ws / ".claude")
    elif change == "mkdir -p .github/workflows":
        (ws / ".github" / "workflows").mkdir(parents=True)
    elif change == "write src/app.py":
        (ws / "src").mkdir(exist_ok=True)
        (ws / "src" / "app.py").write_text("x = 1\n")
    elif change == "mkdir .qwen (no settings)":
        (ws / ".qwen").mkdir(exist_ok=True)
    elif change == "edit .claude/settings.json in place":  # in place: an existing file ("a" would make a removed one anew)
        with open(ws / ".claude" / "settings.json", "r+") as handle:
            handle.seek(0, os.SEEK_END)
            handle.write(" ")
    elif change == "touch .git/index":
        (ws / ".git" / "index").write_text("i")


def workspace(base: Path) -> Path:
    ws = base / "ws"
    if ws.exists():
        shutil.rmtree(ws)
    (ws / ".git").mkdir(parents=True)
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text("{}")
    return ws


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(sorted(CHANGES)), min_size=1, max_size=3, unique=True))
@example(["remove .claude/settings.json", "edit .claude/settings.json in place"])  # no file left to edit
def test_a_change_to_what_the_wall_holds_is_named_and_only_that(tmp_path_factory, changes):
    ws = workspace(tmp_path_factory.mktemp("seal"))
    taken = seal.take(ws, SETTINGS)
    changes = [change for change in changes if apply(ws, change)]
    found = seal.broken(ws, taken)
    if any(CHANGES[change] for change in changes):
        assert found is not None, changes
        named = found.split(" ")[0]
        assert any(named in change or named.rstrip("/") in change for change in changes if CHANGES[change]), (found, changes)
    else:
        assert found is None, (found, changes)


def test_no_seal_recorded_says_nothing(tmp_path):
    ws = workspace(tmp_path)
    assert seal.broken(ws, None) is None
    assert seal.broken(ws, {"directories": "x"}) is None


def test_the_seal_survives_json(tmp_path):
    """The install record keeps it as JSON: lists, not tuples."""
    import json

    ws = workspace(tmp_path)
    assert seal.broken(ws, json.loads(json.dumps(seal.take(ws, SETTINGS)))) is None
