"""`wall.realpaths` (each shared directory resolved once) against `os.path.realpath` itself, on
generated trees of directories, files and symlinks (absolute and relative, to files, to
directories, dangling, through `..`, in loops) and generated paths into them (existing or not,
plain or with `.`, `..` and `//`), asked in one batch as the wall asks them."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.core.wall import realpaths

NAMES = ["a", "b", "c", "l1", "l2", "l3"]
name = st.sampled_from(NAMES)
rel_path = st.lists(st.one_of(name, st.sampled_from(["..", "."])), min_size=1, max_size=4)
node = st.tuples(st.lists(name, min_size=1, max_size=3),  # where, under the tree's root
                 st.sampled_from(["dir", "file", "link"]),
                 st.one_of(rel_path.map(lambda parts: ("rel", parts)), rel_path.map(lambda parts: ("abs", parts))))
query = st.tuples(st.lists(st.one_of(name, st.sampled_from(["missing", "..", ".", ""])), min_size=0, max_size=5),
                  st.booleans())


def build(root: Path, nodes) -> None:
    for where, kind, (anchor, parts) in nodes:
        path = root.joinpath(*where)
        if os.path.lexists(path):
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "dir":
                path.mkdir()
            elif kind == "file":
                path.write_text("x")
            else:
                target = "/".join(parts) if anchor == "rel" else str(root.joinpath(*parts))
                os.symlink(target, path)
        except OSError:
            pass  # a parent that is a file or a dangling link: the tree is what it could be


@settings(max_examples=300, deadline=None)
@given(nodes=st.lists(node, max_size=10), queries=st.lists(query, min_size=1, max_size=12))
def test_realpaths_is_os_path_realpath(tmp_path_factory, nodes, queries):
    root = tmp_path_factory.mktemp("tree")
    build(root, nodes)
    asked = [(str(root) + "/" + "/".join(parts)) if absolute else "/".join(parts) or "." for parts, absolute in queries]
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert realpaths(asked) == [os.path.realpath(path) for path in asked]
    finally:
        os.chdir(cwd)


def test_the_trees_have_links_to_follow(tmp_path):
    """Not vacuous: a link in the middle of a path changes what it resolves to."""
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "l1")
    os.symlink("l1/../missing", tmp_path / "l2")
    asked = [str(tmp_path / "l1" / "x"), str(tmp_path / "l2" / "y"), str(tmp_path / "l1")]
    assert realpaths(asked) == [str(tmp_path / "real" / "x"), str(tmp_path / "missing" / "y"), str(tmp_path / "real")]
