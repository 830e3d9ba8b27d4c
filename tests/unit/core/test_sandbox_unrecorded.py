"""`unrecorded_paths`: the live entries the record leaves out, each as high up as it goes, held to
an oracle over generated trees (every left-out path is under exactly one entry returned; nothing
returned is kept by the record or lies under another entry; bytecode caches never)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.core.sandbox import unrecorded_paths

NAMES = st.sampled_from(["a", "b", "__pycache__", ".git", "c.txt"])
TREES = st.lists(st.lists(NAMES, min_size=1, max_size=4).map("/".join), min_size=1, max_size=12, unique=True)


def build(root: Path, files: list[str]) -> set[str]:
    """Files at each generated path (a path that is already a directory is skipped); every path made."""
    made = set()
    for rel in files:
        target = root / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.is_dir():
                target.write_text(rel)
        except (NotADirectoryError, FileExistsError):
            continue
    for top, dirs, names in os.walk(root):
        for name in dirs + names:
            made.add(os.path.relpath(os.path.join(top, name), root))
    return made


@settings(max_examples=150, deadline=None)
@given(files=TREES, left=st.sets(st.lists(NAMES, min_size=1, max_size=3).map("/".join), max_size=6))
def test_each_left_out_path_is_under_exactly_one_topmost_entry(files, left):
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        every = build(root, files)

        def left_out(rel: str, is_dir: bool) -> bool:
            return rel in left

        found = unrecorded_paths(root, left_out)
        assert found is not None
        # the oracle: a path is left out when it or an ancestor is; the topmost such, minus caches
        def ancestors(rel: str) -> list[str]:
            parts = rel.split("/")
            return ["/".join(parts[:depth]) for depth in range(1, len(parts) + 1)]

        topmost = {rel for rel in every if rel in left and not any(a in left for a in ancestors(rel)[:-1])}
        expected = {rel for rel in topmost if rel.rsplit("/", 1)[-1] != "__pycache__"}
        assert set(found) == expected


def test_more_than_the_limit_is_none(tmp_path):
    for number in range(5):
        (tmp_path / f"f{number}").write_text("x")
    assert unrecorded_paths(tmp_path, lambda rel, is_dir: True, limit=4) is None
    assert len(unrecorded_paths(tmp_path, lambda rel, is_dir: True, limit=5)) == 5
